#!/bin/bash
# The README's test command: installs what the tests need, builds, runs every suite.
# Ends with meson's summary (Ok/Fail/Skipped counts). Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/deps.sh
# The gateway tests run each MCP server under a uid of its own (issue 23): those servers must
# be able to reach their scripts in this tree. A clone made under a private directory (mktemp
# -d, /root) would hide it from them, so the directories above the tree get search permission
# (o+x: reach a known path, not list it), and the run says which.
d=$PWD
while [ "$d" != / ]; do
	if [ $(($(stat -c '%#a' "$d") & 1)) = 0 ]; then
		chmod o+x "$d" && echo "tools/test.sh: $d made searchable (o+x) for the gateway's server uids"
	fi
	d=$(dirname "$d")
done
# The registry is reached over a network that sometimes resets a download midway (seen:
# ECONNRESET on a 40 MB tarball, after 11 s per fetch): a few tries, npm's own retries longer.
if [ -f tests/gateway/package-lock.json ]; then
	for try in 1 2 3 4; do
		npm ci --prefix tests/gateway --no-audit --no-fund --loglevel=error \
			--fetch-retries 5 --fetch-retry-mintimeout 5000 --fetch-timeout 600000 && break
		[ $try = 4 ] && { echo "tools/test.sh: npm ci failed 4 times" >&2; exit 1; }
		echo "tools/test.sh: npm ci failed (try $try of 4); again in $((try * 20)) s" >&2
		sleep $((try * 20))
	done
fi
if [ -d build-test ]; then
	meson setup --reconfigure build-test >/dev/null
else
	meson setup build-test >/dev/null
fi
ninja -C build-test

# Sanitizer build (clang, ASan + UBSan, libFuzzer): unit tests and the malformed-packet
# catalogue, a bounded run of every fuzz target, the whole binary on pcap input
# (docs/reliability.md), and mcp-gateway's suite with its real clients and servers (about 80 s
# on two cores). Its failures fail the run, after the main suites have run too.
san_rc=0
if [ -d build-san ]; then
	meson setup --reconfigure build-san >/dev/null
else
	CC=clang meson setup build-san -Db_sanitize=address,undefined -Db_lundef=false \
		-Dfuzz=true >/dev/null
fi
ninja -C build-san
meson test -C build-san --print-errorlogs --num-processes 2 --suite unit --suite fuzz \
	--suite gateway ||
	san_rc=$?
meson test -C build-san --print-errorlogs hard-pcap || san_rc=$?

# The Debian packages: built from a clean copy, installed, run and purged again (not in meson's
# default setup, because it installs packages on this machine). Before the main suites, so
# that their summary stays the last thing printed.
rc=0
meson test -C build-test --print-errorlogs --setup pkg --suite pkg || rc=$?
meson test -C build-test --print-errorlogs --num-processes 2 || rc=$?
if [ $san_rc -ne 0 ]; then
	echo "sanitizer build (build-san): tests failed" >&2
	exit $san_rc
fi
exit $rc
