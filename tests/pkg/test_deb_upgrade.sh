#!/bin/bash
# A package upgrade keeps connections (issue 36): the previous release's .debs (built from its
# commit in this repository's history, cached by commit under CVS_PREV_CACHE) are installed
# and their /usr/bin/cubevs-fp serves a namespace test bed with the 50 long-lived flows; this
# tree's .debs are installed over them with apt-get, and the daemon is restarted the way the
# unit does it (SIGTERM, then the installed binary with the same flags): the packages are
# upgraded in place, the new binary adopts what the old one left, 50/50 flows kept. Both
# packages are purged at the end, also when a check fails or the test is stopped.
set -u
SRC_ROOT=${SRC_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
source "$(dirname "${BASH_SOURCE[0]}")/pkglib.sh"
pkg_preconditions
prev=$(bash "$SRC_ROOT/tools/prev-release.sh")
rc=$?
[ $rc = 77 ] && { echo "SKIP: no previous release in this clone"; exit 77; }
[ $rc = 0 ] || { echo "FAIL: the previous release does not build"; exit 1; }
# tools/prev-release.sh left the previous release's source beside its build.
PREV_SRC=$(dirname "$(dirname "$(dirname "$prev")")")/src
PREV_VER=$(cd "$PREV_SRC" && dpkg-parsechangelog -S Version)
VERSION=$(cd "$SRC_ROOT" && dpkg-parsechangelog -S Version)

export CUBEVS_FP=/usr/bin/cubevs-fp
source "$SRC_ROOT/tests/netns/lib.sh"
source "$SRC_DIR/flows.sh"
WORK=$(mktemp -d /tmp/cvs-debup.XXXXXX)
INSTALLED=0

pkg_purge() {
	[ "$INSTALLED" = 1 ] && "${APT[@]}" purge "${PKGS[@]}" >/dev/null 2>&1
	rm -rf "$WORK" "$TB_DIR"
}
# lib.sh's traps remove the bed; these purge the packages after it, the same on a signal.
pkg_traps() {
	trap 'tb_teardown; pkg_purge' EXIT
	trap 'trap - EXIT TERM INT HUP; setsid bash -c "$(declare -f tb_teardown pkg_purge)
		$(declare -p TB_PIDS TB_SANDBOXES TB_ID NS_C NS_N NS_W TB_DIR INSTALLED WORK APT PKGS)
		tb_teardown; pkg_purge" </dev/null >/dev/null 2>&1 & exit 143' TERM INT HUP
}
trap pkg_purge EXIT

# The .debs of a source tree (a copy without build directories), into $2; cached for the
# previous release, whose tree never changes.
debs_of() { # tree outdir
	mkdir -p "$2"
	if ls "$2"/cubevs-fp_*.deb >/dev/null 2>&1; then
		return 0
	fi
	(cd "$1" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" \
		dpkg-buildpackage -b -us -uc) >"$2/build.log" 2>&1 &&
		mv "$(dirname "$1")"/{cubevs-fp,mcp-gateway}_*.deb "$2"/
}

mkdir -p "$WORK/new-src"
git -C "$SRC_ROOT" ls-files -z --cached --others --exclude-standard |
	tar -C "$SRC_ROOT" --null -T - --ignore-failed-read -cf - 2>/dev/null |
	tar -C "$WORK/new-src" -xf -
PREV_DEBS=$(dirname "$PREV_SRC")/debs
check "the previous release's packages ($PREV_VER) build" debs_of "$PREV_SRC" "$PREV_DEBS"
check "this tree's packages ($VERSION) build" debs_of "$WORK/new-src" "$WORK/new-debs"
[ "$FAILS" = 0 ] || die "no packages to test with"

INSTALLED=1
check "apt-get install of the previous release's packages" \
	"${APT[@]}" install "$PREV_DEBS"/cubevs-fp_*.deb "$PREV_DEBS"/mcp-gateway_*.deb
check "cubevs-fp $PREV_VER is installed" \
	eq "$(dpkg-query -W -f='${Version}' cubevs-fp)" "$PREV_VER"

export TB_OFFLOADS=off	# the previous release cannot carry partial checksums (issue 33)
tb_setup
pkg_traps
flows_net
check "the installed $PREV_VER daemon starts" fp_start
flows_register
flows_start

check "apt-get install of this tree's packages over them (an upgrade)" \
	"${APT[@]}" install "$WORK"/new-debs/cubevs-fp_*.deb "$WORK"/new-debs/mcp-gateway_*.deb
check "cubevs-fp $VERSION is installed" eq "$(dpkg-query -W -f='${Version}' cubevs-fp)" "$VERSION"
check "the upgrade left the running daemon alone (the unit is not enabled)" kill -0 "$FP_PID"
check "SIGTERM → exit 0" fp_stop
check "the upgraded daemon starts with the same flags" fp_start
check "it is this release" bash -c "grep -q 'cubevs-fp $VERSION (commit' $TB_DIR/fp.log"
check "it took the sessions over" bash -c "grep -q 'session region .*: \(adopted\|carried\) [1-9]' \
	$TB_DIR/fp.log && ! grep -q refused $TB_DIR/fp.log"
flows_mark 1
check "a new connection through the upgraded daemon" \
	eq "$(nsc curl -s -m 5 "http://$NODE_IP:$(hostport_of s1 8080)/name")" "sandbox1 $CLIENT_IP"
flows_check "a package upgrade"
tb_done
