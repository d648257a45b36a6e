#!/bin/bash
# Registration benchmark (issue 20), on the netns test bed of tests/netns (root): PUT and
# DELETE latency through the HTTP API with N idle veth sandboxes registered, sequential and
# from 20 concurrent clients, and the time to register them. One JSON line per figure on
# stdout; printed, never judged.
#   regbench.sh [BUILD_DIR]   (NS="100 1000 4096" the registered counts, SEQ=200 rounds,
#                              CONC_S=10 seconds of 20 clients)
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
export CUBEVS_FP=${CUBEVS_FP:-$BUILD/control/cubevs-fp}
NS=${NS:-100 1000 4096}
SEQ=${SEQ:-200}
CONC_S=${CONC_S:-10}
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/netns/lib.sh"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FP_EAL_ARGS=(--file-prefix "cvs-regbench-$$")

max=0
for n in $NS; do [ "$n" -gt "$max" ] && max=$n; done
tb_setup
# The smallest frame pool per sandbox socket: memory for thousands of them on a test machine.
fp_start --max-sandboxes 8192 --sandbox-umem-frames 512 --host-port-range 20000-29999
# Then the registered sandboxes' interfaces c1..cMAX and the measured ones m1..m100 (after the
# start, which would otherwise spend its 10 s looking at thousands of interfaces).
{
	for i in $(seq "$max"); do
		echo "link add c$i type veth peer name c${i}p"
		echo "link set c$i up"
		echo "link set c${i}p up"
	done
	for i in $(seq 100); do
		echo "link add m$i type veth peer name m${i}p"
		echo "link set m$i up"
		echo "link set m${i}p up"
	done
} | nsn ip -batch -
have=0
for n in $NS; do
	echo "{\"N\": $n, \"fill\": $(nsn python3 "$HERE/regbench.py" fill "$API" $((have + 1)) \
		"$n" 8)}"
	have=$n
	echo "{\"N\": $n, \"state_bytes\": $(stat -c %s "$TB_DIR/state.json"), \"seq\": \
$(nsn python3 "$HERE/regbench.py" seq "$API" 40 "$SEQ")}"
	echo "{\"N\": $n, \"conc20\": $(nsn python3 "$HERE/regbench.py" conc "$API" 100 \
		"$CONC_S" 20)}"
done
