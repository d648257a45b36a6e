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
exec "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
	-print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$work/" "$work/corpus" "$seeds"
