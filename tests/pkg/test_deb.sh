#!/bin/bash
# The Debian packages: the README's "Install as a package" commands, as written, in a clean
# copy of the source tree (dpkg-buildpackage -b -us -uc, apt-get install of the two .debs on
# this machine); then the installed binaries are run (and the README's first start with the
# installed daemon), the unit, man pages, BPF objects and state directory checked, and the
# packages purged. The machine is left as it was, also when a check fails or the test is
# stopped: the trap purges what was installed.
set -u
SRC_ROOT=${SRC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
README=$SRC_ROOT/README.md
source "$(dirname "${BASH_SOURCE[0]}")/pkglib.sh"

fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
check() { # description, command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
eq() { [ "$1" = "$2" ] || { echo "#   expected '$2', got '$1'"; return 1; }; }
contains() { case "$1" in *"$2"*) return 0 ;; esac; echo "#   '$1' lacks '$2'"; return 1; }
installed_list() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Package}:${Architecture}\n' |
		awk '$1 ~ /^.i/ { print $2 }' | LC_ALL=C sort
}
not() { ! "$@"; }

pkg_preconditions

WORK=$(mktemp -d /tmp/cvs-deb.XXXXXX)
INSTALLED=0
installed_list >"$WORK/before"

# Purge our packages and whatever their installation pulled in, nothing else.
cleanup() {
	set +e
	if [ "$INSTALLED" = 1 ]; then
		local extra
		extra=$(installed_list | LC_ALL=C comm -13 "$WORK/before" - |
			grep -v -e '^cubevs-fp:' -e '^mcp-gateway:')
		apt-get -y -qq -o DPkg::Lock::Timeout=300 purge "${PKGS[@]}" $extra >/dev/null 2>&1
	fi
	rm -rf "$WORK"
}
# meson's timeout SIGKILLs the process group 0.5 s after SIGTERM: too soon for a purge, so the
# clean-up then runs in a session of its own.
on_signal() {
	trap - EXIT TERM INT HUP
	setsid bash -c "$(declare -f cleanup installed_list)
		$(declare -p WORK INSTALLED PKGS)
		cleanup" </dev/null >/dev/null 2>&1 &
	exit "$1"
}
trap cleanup EXIT
trap 'on_signal 143' TERM
trap 'on_signal 130' INT
trap 'on_signal 129' HUP

# A clean copy: the files git knows of (tracked and not ignored), as they are in the work tree;
# no build directories, node_modules or earlier package builds.
VERSION=$(sed -n "s/^[[:space:]]*version : '\([^']*\)',$/\1/p" "$SRC_ROOT/meson.build" | head -n1)
TREE=$WORK/cubevs-fp-$VERSION
mkdir "$TREE"
if git -C "$SRC_ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$SRC_ROOT" ls-files -z --cached --others --exclude-standard |
		tar -C "$SRC_ROOT" --null -T - --ignore-failed-read -cf - 2>/dev/null |
		tar -C "$TREE" -xf -
else
	tar -C "$SRC_ROOT" --exclude='./build*' --exclude=node_modules --exclude=./.git \
		--exclude='./obj-*' --exclude=./debian/tmp --exclude=./debian/.debhelper -cf - . |
		tar -C "$TREE" -xf -
fi
check "the copy has the packaging and no build directory" \
	bash -c "[ -x '$TREE/debian/rules' ] && ! ls -d '$TREE'/build* >/dev/null 2>&1"
check "debian/changelog has the meson project's version ($VERSION)" \
	test "$(cd "$TREE" && dpkg-parsechangelog -S Version)" = "$VERSION"

# The shell lines of the first ```sh block after "## Install as a package", without comments.
awk '/^## Install as a package/ { sect = 1; next }
     sect && /^```sh/ { code = 1; next }
     code && /^```/ { exit }
     code && !/^[ \t]*(#|$)/ { print }' "$README" >"$WORK/readme.sh"
sed 's/^/# README: /' "$WORK/readme.sh"
check "the README builds with dpkg-buildpackage -b -us -uc" \
	grep -q '^dpkg-buildpackage -b -us -uc\( \|$\)' "$WORK/readme.sh"
check "the README installs with apt-get" grep -q '^apt-get install ' "$WORK/readme.sh"

# The packages are installed from here on (the trap purges them). apt waits for a dpkg lock
# that another apt holds instead of failing at once (the README's lines stay as written).
INSTALLED=1
printf 'DPkg::Lock::Timeout "300";\n' >"$WORK/apt.conf"
log=$WORK/readme.log
if ! (cd "$TREE" && APT_CONFIG=$WORK/apt.conf DEB_BUILD_OPTIONS="parallel=$(nproc)" \
	bash -e -x "$WORK/readme.sh") \
	>"$log" 2>&1; then
	tail -n 40 "$log" | sed 's/^/# /'
	echo "FAIL: the README's install commands"
	exit 1
fi
ok "the README's install commands, as written"
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
DEBS=()
for p in "${PKGS[@]}"; do
	DEBS+=("$WORK/${p}_${VERSION}_${ARCH}.deb")
	check "built ${p}_${VERSION}_${ARCH}.deb" test -s "${DEBS[-1]}"
done
check "no warning in the package build (compiler or packaging)" bash -c "! grep 'warning:' '$log'"
for p in "${PKGS[@]}"; do
	check "$p $VERSION is installed" \
		eq "$(dpkg-query -W -f='${db:Status-Abbrev}${Version}' "$p" 2>&1)" "ii $VERSION"
done
check "cubevs-fp depends on the libraries it links (shlibs)" contains \
	"$(dpkg-deb -f "${DEBS[0]}" Depends)" "librte-eal"
check "mcp-gateway does not depend on DPDK" \
	bash -c "! dpkg-deb -f '${DEBS[1]}' Depends | grep -q librte"


out=$(/usr/bin/cubevs-fp -- --version 2>&1)
# The copy has no .git: the commit is 'unknown' there, a 12-digit hash in a checkout.
check "/usr/bin/cubevs-fp -- --version" \
	bash -c "[[ '$out' =~ ^cubevs-fp\ $VERSION\ \(commit\ ([0-9a-f]{12}|unknown)\)$ ]]"
check "cubevs-fpctl and mcp-gateway are found in PATH, in /usr/bin" \
	eq "$(command -v cubevs-fpctl) $(command -v mcp-gateway)" \
	"/usr/bin/cubevs-fpctl /usr/bin/mcp-gateway"
out=$(cubevs-fpctl --help 2>&1)
rc=$?
check "cubevs-fpctl --help: usage, exit 0" eq "$rc ${out%%:*}" "0 Usage"
out=$(mcp-gateway --help 2>&1)
rc=$?
check "mcp-gateway --help: usage, exit 2 as documented" eq "$rc ${out%%:*}" "2 Usage"
check "mcp-gateway --help names its flags" contains "$out" "-config-file"
check "mcp-gateway version" eq "$(mcp-gateway version 2>&1)" "$VERSION"
out=$(echo '{"cniVersion":"1.1.0"}' | CNI_COMMAND=VERSION /usr/lib/cni/cubevs-fp-cni 2>&1)
check "the CNI plugin is where Debian's CNI plugins are, and answers VERSION" \
	contains "$out" '"supportedVersions"'
for b in /usr/bin/cubevs-fp /usr/bin/cubevs-fpctl /usr/bin/mcp-gateway /usr/lib/cni/cubevs-fp-cni; do
	check "$b: every library resolves" bash -c "! ldd $b | grep -q 'not found'"
done

unit=/lib/systemd/system/cubevs-fp.service
check "the unit is installed as $unit" test -f "$unit"
check "the unit starts the installed binary" grep -q '^ExecStart=/usr/bin/cubevs-fp ' "$unit"
check "the unit is not enabled by the package" \
	test ! -e /etc/systemd/system/multi-user.target.wants/cubevs-fp.service
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify --man=no "$unit" 2>&1)
	check "systemd-analyze verify $unit" test -z "$out"
	[ -z "$out" ] || echo "#   $out"
fi
for m in man8/cubevs-fp.8 man8/cubevs-fpctl.8 man1/mcp-gateway.1; do
	f=/usr/share/man/$m.gz
	if command -v groff >/dev/null; then
		check "$f renders without warnings" \
			bash -c "[ -s '$f' ] && [ -z \"\$(zcat '$f' | groff -man -ww -z 2>&1)\" ]"
	else
		check "$f is installed" test -s "$f"
	fi
done
for o in steer sbx; do
	f=/usr/lib/$MULTIARCH/cubevs-fp/$o.bpf.o
	check "$f is a BPF object with its BTF (not stripped)" bash -c \
		"readelf -h '$f' | grep -q 'Linux BPF' && readelf -S '$f' | grep -q '\.BTF '"
done
check "$STATE_DIR is there, 0700, root's" test "$(stat -c '%a %U' "$STATE_DIR" 2>&1)" = "700 root"

# The installed daemon on a fresh machine (namespaces of its own, empty /var/lib and /run):
# as the README starts it, and as the installed unit does.
for how in readme unit; do
	args=()
	[ $how = unit ] && args=(unit "$unit")
	CUBEVS_FP=/usr/bin/cubevs-fp bash "$SRC_ROOT/tests/netns/test_firststart.sh" "${args[@]}" \
		>"$WORK/first.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$WORK/first.log"
	if [ $rc = 77 ]; then
		echo "# first start ($how) skipped: $(grep -m1 SKIP "$WORK/first.log")"
	else
		check "first start of /usr/bin/cubevs-fp ($how) on a fresh machine" test $rc = 0
	fi
done

# Purge, and the machine is as before.
if "${APT[@]}" purge "${PKGS[@]}" >"$WORK/purge.log" 2>&1; then
	ok "apt-get purge ${PKGS[*]}"
else
	sed 's/^/# /' "$WORK/purge.log"
	bad "apt-get purge ${PKGS[*]}"
fi
for p in "${PKGS[@]}"; do
	check "$p is gone" not is_installed "$p"
done
check "binaries, unit and state directory are gone" bash -c "! ls -d /usr/bin/cubevs-fp \
	/usr/bin/cubevs-fpctl /usr/bin/mcp-gateway /usr/lib/cni/cubevs-fp-cni $unit $STATE_DIR \
	/usr/lib/$MULTIARCH/cubevs-fp \
	2>/dev/null | grep -q ."
extra=$(installed_list | LC_ALL=C comm -13 "$WORK/before" -)
[ -z "$extra" ] && INSTALLED=0
check "no package was left behind" test -z "$extra"
[ $fails = 0 ]
