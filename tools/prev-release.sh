#!/bin/bash
# The previous release's cubevs-fp, built from this repository's history for the upgrade and
# rollback tests (tests/netns/test_upgrade.sh): prints the binary's path. Built once into a
# cache (CVS_PREV_CACHE, default /var/cache/cubevs-fp-test) keyed by the commit, so later runs
# on the same machine take it from there. Exit 77 (a skip, with the reason on stderr) only when
# the commit is not in this clone (a shallow clone); a failed build is an error.
# Usage: tools/prev-release.sh [COMMIT]   (default: the newest release in docs/CHANGELOG.md
# that is not this tree's meson version)
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
# The newest release in the changelog that is not this tree's version.
cur=$(sed -n "s/^[[:space:]]*version : '\([^']*\)'.*/\1/p" "$src/meson.build" | head -n1)
rel=${1:-$(sed -n 's/^## \([0-9.]*\) (commit \([0-9a-f]\{7,40\}\)).*/\1 \2/p' \
	"$src/docs/CHANGELOG.md" | awk -v cur="$cur" '$1 != cur { print $2; exit }')}
[ -n "$rel" ] || { echo "prev-release: no previous release in docs/CHANGELOG.md" >&2; exit 1; }
if ! full=$(git -C "$src" rev-parse -q --verify "$rel^{commit}" 2>/dev/null); then
	echo "prev-release: commit $rel is not in this clone (shallow?): nothing to upgrade from" >&2
	exit 77
fi
cache=${CVS_PREV_CACHE:-/var/cache/cubevs-fp-test}/$full
bin=$cache/build/control/cubevs-fp
if [ -x "$bin" ] && "$bin" -- --version >/dev/null 2>&1; then
	echo "$bin"
	exit 0
fi
rm -rf "$cache"
mkdir -p "$cache/src"
git -C "$src" archive "$full" | tar -x -C "$cache/src"
# Only what the binary needs: its BPF objects and itself.
if ! { meson setup "$cache/build" "$cache/src" && ninja -C "$cache/build" control/cubevs-fp; } \
	>"$cache/build.log" 2>&1; then
	tail -n 30 "$cache/build.log" >&2
	echo "prev-release: building $full failed (log: $cache/build.log)" >&2
	exit 1
fi
echo "$bin"
