#!/bin/bash
# Hitless restart (issue 12): long-lived flows of every kind survive a SIGTERM restart and a
# kill -9 restart; the steering program holds fast-path frames back during the gap and hands
# them to the kernel after the grace; a region of another layout, or a corrupt one, is refused
# and moved aside. Usage: test_restart.sh CASE  (RESTART_WORKERS=2 for two workers)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FP_OPTS=()
if [ "${RESTART_WORKERS:-1}" = 2 ]; then
	export FP_EAL="--lcores 0@0,1@1,2@0"
	FP_OPTS=(--workers 2 --world-queues 1 --idle-sleep-us 20)
fi

# The 50 long-lived flows of the issue (flows_net, flows_start, flows_mark, flows_check).
source "$SRC_DIR/flows.sh"

bed() { # extra cubevs-fp options
	tb_setup
	flows_net
	fp_start "${FP_OPTS[@]}" "$@"
	flows_register
}


PINS=(cvs_steer cvs_cfg cvs_cfg6 cvs_stats xsks_map cvs_frag cvs_frag6 sbx_cvs_sbx_if sbx_cvs_sbx_out sbx_cvs_fun_dev
	sbx_cvs_fun_xsks sbx_cvs_fun_press sbx_cvs_stats sbx_cvs_fun_ifx sbx_cvs_gso_mtu)
pins_there() { # what
	local p
	if [ "${FP_PIN[1]}" = none ]; then
		log "$1: no pins in this run (TB_PIN=0 or no BPF file system)"
		return 0
	fi
	for p in "${PINS[@]}"; do
		check "$1: map $p is pinned" test -e "$TB_DIR/bpf/cubevs-fp/nic0/$p"
	done
}

region_stat() { # field of /stats "region"
	api_body GET /stats | python3 -c '
import json, sys
print(json.load(sys.stdin)["region"][sys.argv[1]])' "$1"
}

umem_is() { # frames what: each worker's funnel socket has that size, whatever the sandboxes
	local nw=${RESTART_WORKERS:-1}
	check "$2: /stats buffers.umemFrames is $nw x $1" \
		eq "$(stat_wait buffers umemFrames $((nw * $1)))" $((nw * $1))
}

case_flows() {
	bed
	umem_is 8192 "the default"
	flows_start
	local t0
	t0=$(date +%s%N)
	check "SIGTERM → exit 0" fp_stop
	check "the steering program stays on the world interface" \
		xdp_on nic0
	check "the sandbox interfaces keep their program" \
		xdp_on sb1 sb2
	pins_there "after SIGTERM"
	# Each start sizes the funnel UMEMs anew: the sessions it adopts do not care.
	check "a new instance starts, with smaller funnel UMEMs" \
		fp_start "${FP_OPTS[@]}" --sandbox-umem-frames 512
	umem_is 512 "after SIGTERM"
	[ "${FP_PIN[1]}" = none ] ||
		check "it loaded its programs onto the pinned maps" \
			bash -c "grep -q 'steering maps reused from .*/nic0 (7 maps)' $TB_DIR/fp.log &&
				 grep -q 'sandbox maps reused from .*/nic0 (9 maps)' $TB_DIR/fp.log"
	# Printed, not judged: from the stop to the next 'ready:' (polled every 100 ms).
	log "SIGTERM restart: stop to ready in $((($(date +%s%N) - t0) / 1000000)) ms"
	check "it adopted the sessions" test "$(region_stat adopted)" -ge 50
	check "it took the steering program over" \
		bash -c "grep -q 'taking over the steering program' $TB_DIR/fp.log"
	check "the pinned maps are the attached program's" bash -c "! grep -q 'differs' $TB_DIR/fp.log"
	flows_mark 1
	flows_fresh "after SIGTERM"
	sleep 1
	t0=$(date +%s%N)
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	pins_there "after kill -9"
	check "after kill -9 a new instance starts, with larger sandbox UMEMs" \
		fp_start "${FP_OPTS[@]}" --sandbox-umem-frames 4096
	umem_is 4096 "after kill -9"
	log "kill -9 restart: kill to ready in $((($(date +%s%N) - t0) / 1000000)) ms"
	check "it adopted the sessions again" test "$(region_stat adopted)" -ge 50
	check "the region's generation went up twice" test "$(region_stat generation)" -eq 3
	log "frames held back over both gaps: gap_drop $(stat_of xdp gap_drop)"
	flows_mark 2
	flows_fresh "after kill -9"
	flows_check "SIGTERM then kill -9"
}

# The grace: with no process, a host port's segments are dropped and counted, never reset by
# the kernel; after the grace the kernel has the port again. The node's own ports never wait.
case_grace() {
	bed --restart-grace 5
	tb_server "$NS_N" 8000 --name kernel
	# The guest knows its gateway's MAC: its datagrams in the gap leave at once.
	check "a sandbox's UDP works before the stop" \
		contains "$(nss 1 python3 "$SRC_DIR/client.py" udp "$WORLD_IP" 5353)" "hello $NODE_IP"
	check "SIGTERM → exit 0" fp_stop
	# A kernel listener on a host port: during the grace it must not see the SYNs.
	tb_server "$NS_N" "$HP1" --name kernelhp
	check "the node's own port answers during the grace" \
		eq "$(nsc curl -s -m 2 "http://$NODE_IP:8000/name")" "kernel $CLIENT_IP"
	check "ping of the node works during the grace" quiet nsc ping -c 1 -W 1 -q "$NODE_IP"
	check "a host port gets no answer during the grace" \
		bash -c "! ip netns exec $NS_C curl -s -m 1 http://$NODE_IP:$HP1/name"
	# A sandbox's frames while no process serves it: dropped by its program, counted.
	check "the sandbox interface keeps its program during the gap" \
		xdp_on sb1
	nss 1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20):
    s.sendto(b"gap %d" % i, (sys.argv[1], 5353))' "$WORLD_IP"
	sleep 4
	check "after grace + 1 s the kernel listener on the host port answers" \
		eq "$(nsc curl -s -m 2 "http://$NODE_IP:$HP1/name")" "kernelhp $CLIENT_IP"
	kill "${TB_PIDS[-1]}"
	fp_start "${FP_OPTS[@]}"
	# The 20 datagrams at least, on top of the host-port SYNs; without pins the sandbox
	# program's counters went with its maps.
	if [ "${FP_PIN[1]}" = none ]; then
		check "the next process reports the gap drops" test "$(stat_of xdp gap_drop)" -ge 1
	else
		check "the next process reports the gap drops, the sandbox's among them" \
			test "$(stat_of xdp gap_drop)" -ge 21
	fi
}

# A region of another layout (an upgrade that changed the session structures), a corrupt one,
# a truncated one and one of another owner: refused with the reason, moved aside, and the node
# serves from an empty table.
case_refused() {
	bed
	local reg="$TB_DIR/run/sessions-nic0.region"
	nsc curl -s -m 5 "http://$NODE_IP:$(hostport_of s1 8080)/name" >/dev/null
	fp_stop
	check "the region file is 0600, its directory 0700" \
		eq "$(stat -c %a "$reg") $(stat -c %a "$TB_DIR/run")" "600 700"
	# An upgrade to a build whose session structures changed: the same sources built with
	# another layout salt (control/cubevs-fp-layout-test).
	[ -x "${CUBEVS_FP_LAYOUT:-}" ] || die "CUBEVS_FP_LAYOUT is not set (meson test sets it)"
	CUBEVS_FP=$CUBEVS_FP_LAYOUT fp_start "${FP_OPTS[@]}"
	check "another layout: refused, with the one line naming the reason" \
		eq "$(grep -c 'session region .* refused: session layout [0-9a-f]*, this build has [0-9a-f]* (an upgrade that changed the session structures); moved to .*refused-' "$TB_DIR/fp.log")" 1
	check "the old region was kept aside" bash -c "ls $reg.refused-* >/dev/null"
	check "the node starts with an empty table" eq "$(region_stat adopted)" 0
	check "and with a new region" eq "$(region_stat generation)" 1
	flows_fresh "after a refused upgrade"
	fp_stop
	head -c 65536 /dev/urandom >"$reg"
	fp_start "${FP_OPTS[@]}"
	check "random bytes: refused" bash -c "grep -q 'refused: not a cubevs-fp' $TB_DIR/fp.log"
	fp_stop
	truncate -s 100000 "$reg"
	fp_start "${FP_OPTS[@]}"
	check "truncated: refused" bash -c "grep -q 'refused: truncated' $TB_DIR/fp.log"
	fp_stop
	chown 65534 "$reg"
	fp_start "${FP_OPTS[@]}"
	check "another owner: refused" \
		bash -c "grep -q 'refused: owned by uid 65534' $TB_DIR/fp.log"
	flows_fresh "after the refusals"
	check "every refused region is kept aside" test "$(ls "$reg".refused-* | wc -l)" -eq 4
	# Another sandbox count: sandbox maps of another size, and a region of another shape.
	fp_stop
	fp_start "${FP_OPTS[@]}" --max-sandboxes 64
	[ "${FP_PIN[1]}" = none ] ||
		check "pinned maps of another size: replaced, with the reason in the log" \
			bash -c "grep -q 'pinned map .*/sbx_cvs_sbx_out differs (type 2 key 4 value 12 entries [0-9]*, this build 2/4/12/64): replaced' $TB_DIR/fp.log"
	flows_fresh "after the maps were replaced"
}

# A sandbox that is not in the state file any more when the node comes back: its adopted
# sessions are dropped, the others kept.
case_gone() {
	bed
	local i
	for i in 1 2 3; do
		nsc curl -s -m 5 "http://$NODE_IP:$(hostport_of s1 8080)/name" >/dev/null
		nsc curl -s -m 5 "http://$NODE_IP:$(hostport_of s2 8080)/name" >/dev/null
	done
	fp_stop
	python3 - "$TB_DIR/state.json" <<'PY'
import json, sys
p = sys.argv[1]
st = json.load(open(p))
st["sandboxes"] = [s for s in st["sandboxes"] if s["sandboxID"] != "s2"]
json.dump(st, open(p, "w"))
PY
	fp_start "${FP_OPTS[@]}"
	check "sessions were adopted" test "$(region_stat adopted)" -ge 6
	check "the 3 sessions of the sandbox that did not come back were dropped" \
		eq "$(region_stat discarded_gone)" 3
	check "and said so in the log" \
		bash -c "grep -q '3 adopted sessions dropped, their sandbox did not come back' \
			$TB_DIR/fp.log"
	# Found through the pinned slot map; without pins the program stays until the
	# interface is registered again.
	[ "${FP_PIN[1]}" = none ] ||
		check "its interface lost the program the process before left there" \
			bash -c "! ip netns exec $NS_N ip link show sb2 | grep -q prog/xdp &&
				 grep -q '1 sandbox interfaces no sandbox came back for' $TB_DIR/fp.log"
	check "the other sandbox's interface runs the new one" \
		xdp_on sb1
	local left
	left=$(api_body GET /stats | python3 -c '
import json, sys
print(json.load(sys.stdin)["sessions"])')
	check "the other sandbox's 3 sessions are still there ($left)" test "$left" -ge 3
}

# --detach-on-exit: the stop an operator uses when no restart follows.
case_detach() {
	bed --detach-on-exit
	check "SIGTERM → exit 0" fp_stop
	check "the steering program left the world interface" \
		xdp_off nic0
	check "and the region was removed" test ! -e "$TB_DIR/run/sessions-nic0.region"
	check "and the pinned maps" test ! -e "$TB_DIR/bpf/cubevs-fp/nic0"
	check "the sandbox interfaces lost their program too" \
		xdp_off sb1
	tb_server "$NS_N" "$HP1" --name kernelhp
	check "the kernel has the host port at once" \
		eq "$(nsc curl -s -m 2 "http://$NODE_IP:$HP1/name")" "kernelhp $CLIENT_IP"
}

"case_$1"
tb_done
