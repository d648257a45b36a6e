#!/bin/bash
# Registration benchmark (issue 20), on the netns test bed of tests/netns (root): PUT and
# DELETE latency through the HTTP API with N idle veth sandboxes registered, sequential and
# from 20 concurrent clients, and the time to register them. One JSON line per figure on
# stdout; printed, never judged.
#   regbench.sh [BUILD_DIR]   (NS="100 1000 4096" the registered counts, SEQ=200 rounds,
#                              CONC_S=10 seconds of 20 clients, KIND=veth or tap: what the
#                              sandboxes' interfaces are; a TAP also gets a TC link)
# Per N also the memory: MemAvailable against before the fill, the process's RSS and its
# open fds.
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
export CUBEVS_FP=${CUBEVS_FP:-$BUILD/control/cubevs-fp}
NS=${NS:-100 1000 4096}
SEQ=${SEQ:-200}
CONC_S=${CONC_S:-10}
KIND=${KIND:-veth}
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
# A TAP here has no VMM: it is persistent and its carrier is down, which XDP and TC take.
iface_lines() { # name
	if [ "$KIND" = tap ]; then
		echo "tuntap add dev $1 mode tap"
		echo "link set $1 up"
	else
		echo "link add $1 type veth peer name ${1}p"
		echo "link set $1 up"
		echo "link set ${1}p up"
	fi
}
{
	for i in $(seq "$max"); do iface_lines "c$i"; done
	for i in $(seq 100); do iface_lines "m$i"; done
} | nsn ip -batch -
mem_kib() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }
avail0=$(mem_kib)
have=0
for n in $NS; do
	echo "{\"N\": $n, \"fill\": $(nsn python3 "$HERE/regbench.py" fill "$API" $((have + 1)) \
		"$n" 8)}"
	have=$n
	echo "{\"N\": $n, \"kind\": \"$KIND\", \"mem_used_kib\": $((avail0 - $(mem_kib))), \
\"rss_kib\": $(awk '/VmRSS/ {print $2}' /proc/$FP_PID/status), \
\"fds\": $(ls /proc/$FP_PID/fd | wc -l)}"
	echo "{\"N\": $n, \"state_bytes\": $(stat -c %s "$TB_DIR/state.json"), \"seq\": \
$(nsn python3 "$HERE/regbench.py" seq "$API" 40 "$SEQ")}"
	echo "{\"N\": $n, \"conc20\": $(nsn python3 "$HERE/regbench.py" conc "$API" 100 \
		"$CONC_S" 20)}"
done
