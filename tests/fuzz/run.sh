#!/bin/sh
# Bounded libFuzzer run: run.sh BINARY SEED_DIR WORK_DIR SECONDS
# New inputs and any crash go to WORK_DIR, never into the source tree.
set -eu
bin=$1
seeds=$2
work=$3
secs=$4
mkdir -p "$work/corpus"
echo "# $(basename "$bin"): ${secs}s, seeds $(ls "$seeds" 2>/dev/null | wc -l), work $work"
rm -f "$work/fail.log"
rc=0
FUZZ_FAIL_LOG="$work/fail.log" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=4096 -error_exitcode=1 -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$work/" \
	"$work/corpus" "$seeds" || rc=$?
# The target's own output is closed: show why a check failed, and the input that did it.
[ -f "$work/fail.log" ] && cat "$work/fail.log" >&2
[ $rc -eq 0 ] || ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* 2>/dev/null >&2 || true
exit $rc
