#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The burst functions of the pipeline must still hold their prefetch instructions after the
# compiler is done with them. GCC once deleted the whole session-prefetch stage (a loop of
# plain __builtin_prefetch calls has no side effects), which cost about 50 ns per packet with
# 1M sessions and passed every functional test. Reads the disassembly of the given binary.
# Exit 77 (skipped) when objdump is missing or the target is not x86-64.
set -u
bin=$1
command -v objdump >/dev/null || { echo "skip: objdump not installed"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "skip: prefetch check is written for x86-64"; exit 77; }
fail=0
for fn in dp_world_rx_burst dp_sandbox_rx_burst; do
	n=$(objdump -d --no-show-raw-insn "$bin" |
		awk -v f="<$fn>:" '$2 == f { on = 1; next } on && /^$/ { on = 0 } on' |
		grep -c 'prefetch')
	# One prefetch of the bucket (stage 1) and one of the session (stage 2), at least.
	if [ "$n" -lt 2 ]; then
		echo "FAIL: $fn has $n prefetch instructions, expected at least 2"
		fail=1
	else
		echo "ok: $fn has $n prefetch instructions"
	fi
done
exit $fail
