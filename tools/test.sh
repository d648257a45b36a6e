#!/bin/bash
# The README's test command: installs what the tests need, builds, runs every suite.
# Ends with meson's summary (Ok/Fail/Skipped counts). Run as root on Debian 12.
set -euo pipefail
cd "$(dirname "$0")/.."

bash tools/deps.sh
if [ -f tests/gateway/package-lock.json ]; then
	npm ci --prefix tests/gateway --no-audit --no-fund --loglevel=error
fi
if [ -d build-test ]; then
	meson setup --reconfigure build-test >/dev/null
else
	meson setup build-test >/dev/null
fi
ninja -C build-test
exec meson test -C build-test --print-errorlogs --num-processes 2
