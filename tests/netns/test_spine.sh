#!/bin/bash
# Spine integration tests: world → XDP steering → AF_XDP → worker → sandbox, and back.
# Usage: test_spine.sh CASE   (each case builds and removes its own test bed)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"


two_sandboxes() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	fp_start
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[8080,9090]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 8080)
	HP2=$(hostport_of s2 8080)
}

case_http() {
	two_sandboxes
	check "host ports are distinct and in range" \
		test "$HP1" != "$HP2" -a "$HP1" -ge 20000 -a "$HP2" -le 29999
	check "GET through nodeIP:hostPort reaches sandbox 1, client address kept" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" "sandbox1 $CLIENT_IP"
	check "GET through nodeIP:hostPort reaches sandbox 2" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP2/name")" "sandbox2 $CLIENT_IP"
	check "a second request on a new connection works" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" "sandbox1 $CLIENT_IP"
	local stats
	stats=$(api_body GET /stats)
	check "sessions were created and ARP was answered" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
assert s["worker"]["sessions_created"] >= 3, s["worker"]
assert s["worker"]["arp_replies"] >= 1, s["worker"]
assert s["xdp"]["redirect_hostport"] > 0, s["xdp"]
' "$stats"
}

case_parallel() {
	two_sandboxes
	local out
	out=$(nsc python3 "$SRC_DIR/client.py" parallel "$NODE_IP" "$HP1" 200)
	check "200 parallel connections all answered ($out)" contains "$out" "ok=200 failed=0"
}

case_transfer() {
	two_sandboxes
	local n=$((50 * 1024 * 1024)) want got
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	got=$(nsc curl -s -m 120 "http://$NODE_IP:$HP1/blob?n=$n" | sha256sum | cut -d' ' -f1)
	check "50 MB download from the sandbox has the right sha256" eq "$got" "$want"
	head -c $n /dev/urandom >"$TB_DIR/up.bin"
	want=$(sha256sum "$TB_DIR/up.bin" | cut -d' ' -f1)
	got=$(nsc curl -s -m 120 -T "$TB_DIR/up.bin" "http://$NODE_IP:$HP2/sha")
	check "50 MB upload into the sandbox has the right sha256" eq "$got" "$want"
}

# --sandbox-umem-frames: the smallest and a large UMEM are really the funnel socket's (the
# gauges count its own frames, one socket for both sandboxes), and a 20 MB download is whole
# through both (bad sizes: unit-cli, unit-config).
umem_run() { # frames
	local n=$((20 * 1024 * 1024)) want got
	fp_start --sandbox-umem-frames "$1"
	# The second start finds both in the state file: 200 then, 201 the first time.
	contains "$(register s1 sb1 '[8080]' | tail -n1)" 20 || die "register s1"
	contains "$(register s2 sb2 '[8080]' | tail -n1)" 20 || die "register s2"
	check "$1 frames: /stats buffers.umemFrames is $1, one funnel for both sandboxes" \
		eq "$(stat_wait buffers umemFrames "$1")" "$1"
	check "$1 frames: the transmit half is free at rest" \
		eq "$(stat_wait buffers umemFramesFree $(($1 / 2)))" $(($1 / 2))
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	got=$(nsc curl -s -m 60 "http://$NODE_IP:$(hostport_of s1 8080)/blob?n=$n" |
		sha256sum | cut -d' ' -f1)
	check "$1 frames: 20 MB download from the sandbox has the right sha256" eq "$got" "$want"
	log "$1 frames: fill ring empty $(api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["funnelXsk"]["0"]["xsk_fill_ring_empty"])')"
	check "$1 frames: SIGTERM → exit 0" fp_stop
}

case_umem() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	umem_run 512
	umem_run 16384
}

case_api() {
	two_sandboxes
	local r
	r=$(api_body GET /sandboxes/s2/exposed-ports/8080)
	check "exposed-ports answer has exactly the contract's fields" python3 -c '
import json, sys
r = json.loads(sys.argv[1]); hp = int(sys.argv[2]); ip = sys.argv[3]
want = {"sandboxID": "s2", "containerPort": 8080, "mode": "host_port",
        "endpoint": "%s:%d" % (ip, hp), "hostIP": ip, "hostPort": hp}
assert r == want, (r, want)
' "$r" "$HP2" "$NODE_IP"
	check "unknown sandbox → 404 with error" eq "$(api_status GET /sandboxes/nope/exposed-ports/8080)" 404
	check "unexposed port → 404" eq "$(api_status GET /sandboxes/s1/exposed-ports/9090)" 404
	check "port 0 → 400" eq "$(api_status GET /sandboxes/s1/exposed-ports/0)" 400
	check "port 65536 → 400" eq "$(api_status GET /sandboxes/s1/exposed-ports/65536)" 400
	check "port abc → 400" eq "$(api_status GET /sandboxes/s1/exposed-ports/abc)" 400
	check "error bodies are JSON with an error field" python3 -c '
import json, sys; assert json.loads(sys.argv[1])["error"]' \
		"$(api_body GET /sandboxes/nope/exposed-ports/8080)"
	local before after
	before=$(api_body GET /sandboxes)
	check "same PUT again → 200 (idempotent)" eq "$(register s1 sb1 '[8080]' | tail -n1)" 200
	check "same id on another interface → 409" eq "$(register s1 sb2 '[8080]' | tail -n1)" 409
	check "another id on a used interface → 409" eq "$(register s3 sb1 '[8080]' | tail -n1)" 409
	check "invalid JSON → 400" eq "$(api_status PUT /sandboxes/s3 '{"iface":')" 400
	check "unknown interface → 400" eq "$(register s3 nosuch0 '[8080]' | tail -n1)" 400
	check "bad port in body → 400" eq "$(register s3 sb1 '[70000]' | tail -n1)" 400
	check "bad id → 400" eq "$(register 'a%20b' sb1 '[8080]' | tail -n1)" 400
	check "wrong method → 405" eq "$(api_status POST /sandboxes/s1)" 405
	check "unknown route → 404" eq "$(api_status GET /nothing)" 404
	after=$(api_body GET /sandboxes)
	check "rejected requests changed nothing" eq "$after" "$before"
	check "GET /sandboxes lists both" python3 -c '
import json, sys
ids = sorted(s["sandboxID"] for s in json.loads(sys.argv[1])["sandboxes"])
assert ids == ["s1", "s2"], ids' "$after"
	check "GET /sandboxes/s2 has the PUT shape" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
assert s["sandboxID"] == "s2" and s["iface"] == "sb2", s
assert sorted(p["containerPort"] for p in s["exposedPorts"]) == [8080, 9090], s
assert s["sandboxIP"].startswith("192.168."), s' "$(api_body GET /sandboxes/s2)"
	check "still serving after the bad requests" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" "sandbox1 $CLIENT_IP"
}

case_kernel() {
	two_sandboxes
	tb_server "$NS_N" 8000 --name kernel
	check "TCP to a non-exposed port of the node IP reaches the kernel listener" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:8000/name")" "kernel $CLIENT_IP"
	check "ping of the node IP works"  quiet nsc ping -c 2 -W 2 -q "$NODE_IP"
	# Replies to the node's own connections land on its ephemeral ports: kernel, not us.
	tb_server "$NS_C" 8001 --name client
	check "the node's own outgoing connection gets its replies" \
		eq "$(nsn curl -s -m 5 "http://$CLIENT_IP:8001/name")" "client $NODE_IP"
}

case_delete() {
	two_sandboxes
	check "before DELETE the host port serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" "sandbox1 $CLIENT_IP"
	check "DELETE → 204" eq "$(api_status DELETE /sandboxes/s1)" 204
	check "DELETE again → 404" eq "$(api_status DELETE /sandboxes/s1)" 404
	check "after DELETE the exposed-ports answer is 404" \
		eq "$(api_status GET /sandboxes/s1/exposed-ports/8080)" 404
	check "after DELETE the host port no longer reaches the sandbox" \
		bash -c "! ip netns exec $NS_C curl -s -m 3 http://$NODE_IP:$HP1/name"
	check "the XDP program left the deleted sandbox's interface" \
		xdp_off sb1
	check "the other sandbox still serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP2/name")" "sandbox2 $CLIENT_IP"
	check "re-registering the interface works" eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
	HP1=$(hostport_of s1 8080)
	check "and serves again" eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" \
		"sandbox1 $CLIENT_IP"
}

case_kill9() {
	two_sandboxes
	tb_server "$NS_N" 8000 --name kernel
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	check "after kill -9 the node still answers ping"  quiet nsc ping -c 2 -W 2 -q "$NODE_IP"
	check "after kill -9 kernel ports still answer" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:8000/name")" "kernel $CLIENT_IP"
	check "a new instance starts over the stale program" fp_start
	check "the registration survived the crash (state file): PUT again → 200" \
		eq "$(register s1 sb1 '[8080]' | tail -n1)" 200
	HP1=$(hostport_of s1 8080)
	check "through its host port" eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" \
		"sandbox1 $CLIENT_IP"
}

# A stop is a restart to come (issue 12): the steering program stays, holding the host ports'
# frames back for the grace; the node's own traffic is never held. --detach-on-exit removes it.
case_sigterm() {
	two_sandboxes
	tb_server "$NS_N" 8000 --name kernel
	check "SIGTERM → exit 0" fp_stop
	check "our steering program stays on the world interface for the next process" \
		xdp_on nic0
	check "our programs stay on the sandbox interfaces (guest frames dropped until the next start)" \
		xdp_on sb1 sb2
	check "the node still answers ping" quiet nsc ping -c 2 -W 2 -q "$NODE_IP"
	check "and its own kernel ports" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:8000/name")" "kernel $CLIENT_IP"
	check "a start with --detach-on-exit takes the program over" fp_start --detach-on-exit
	check "SIGTERM → exit 0" fp_stop
	check "with --detach-on-exit our program left the world interface" \
		xdp_off nic0
	check "and ours left the sandbox interfaces" \
		xdp_off sb1 sb2
	nsn ip link set dev nic0 xdpgeneric obj /dev/null 2>/dev/null
}

case_foreign() {
	tb_setup
	tb_add_sandbox 1
	# A foreign XDP program on a sandbox interface is never replaced.
	ip netns exec "$NS_N" ip link set dev sb1 xdp obj "$XDP_PASS_OBJ" sec xdp 2>/dev/null ||
		{ echo "SKIP: cannot load the foreign test program"; exit 77; }
	# Detached at the stop, so the world interface is free for the foreign program below.
	fp_start --detach-on-exit
	check "registration on an interface with a foreign program → 409" \
		eq "$(register s1 sb1 '[8080]' | tail -n1)" 409
	check "the foreign program is still there" \
		xdp_on sb1
	fp_stop
	ip netns exec "$NS_N" ip link set dev nic0 xdp obj "$XDP_PASS_OBJ" sec xdp
	local out rc
	out=$(timeout 60 ip netns exec "$NS_N" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf \
		--no-pci -- --world-iface nic0 --state-file none --runtime-dir none 2>&1)
	rc=$?
	check "start refused on a world interface with a foreign program (rc $rc)" test $rc -ne 0
	check "the message names the program" contains "$out" "which is not ours"
}

case_exhaust() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	fp_start --host-port-range 20000-20002
	check "3 ports fit" eq "$(register s1 sb1 '[1,2,3]' | tail -n1)" 201
	check "a 4th port → 503" eq "$(register s2 sb2 '[4]' | tail -n1)" 503
	check "and nothing was registered" eq "$(api_status GET /sandboxes/s2)" 404
	check "freed ports are reusable" eq "$(api_status DELETE /sandboxes/s1)" 204
	check "then the registration fits" eq "$(register s2 sb2 '[4]' | tail -n1)" 201
}

case_explicit() {
	# The world port given to EAL by the operator, with the installed steering object.
	tb_setup
	tb_add_sandbox 1
	tb_sandbox_server 1 8080
	ip netns exec "$NS_N" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf --no-pci \
		--vdev "net_af_xdp0,iface=nic0,xdp_prog=$STEER_OBJ" -- \
		--state-file "$TB_DIR/state.json" --runtime-dir "$TB_DIR/run" >"$TB_DIR/fp.log" 2>&1 &
	FP_PID=$!
	TB_PIDS+=($FP_PID)
	local n
	for n in $(seq 100); do grep -q 'ready:' "$TB_DIR/fp.log" && break; sleep 0.1; done
	check "starts with an explicit net_af_xdp port and takes the node IP from its interface" \
		grep -q "node IP $NODE_IP" "$TB_DIR/fp.log"
	check "register" eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
	HP1=$(hostport_of s1 8080)
	check "the steering program is ours and programmed: the host port serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/name")" "sandbox1 $CLIENT_IP"
	check "SIGTERM → exit 0" fp_stop
}

# A test script stopped as meson's timeout stops it (SIGTERM to its process group, SIGKILL
# 0.5 s later) still has its namespaces removed and the fast path it started stopped.
case_signal() {
	tb_skip_unless_capable
	local id="sig$$" out="$TB_DIR/child.out" pid n fppid left
	# A helper that ignores SIGTERM makes the teardown wait (up to 5 s) past the SIGKILL.
	setsid bash -c "TB_ID=$id; source '$SRC_DIR/lib.sh'; tb_setup; tb_add_sandbox 1; fp_start
		tb_bg bash -c \"trap '' TERM; sleep 120\"
		echo \"ready \$FP_PID\"; sleep 120" >"$out" 2>&1 &
	pid=$!
	for n in $(seq 200); do grep -q '^ready' "$out" && break; sleep 0.1; done
	fppid=$(awk '/^ready/ {print $2}' "$out")
	check "the child bed came up with a fast path" test -n "$fppid"
	check "its namespaces exist" bash -c "ip netns list | grep -q -- '-$id'"
	kill -TERM -- "-$pid"
	sleep 0.5
	kill -KILL -- "-$pid" 2>/dev/null
	for n in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	check "the child script ended" bash -c "! kill -0 $pid 2>/dev/null"
	for n in $(seq 150); do
		ip netns list | grep -q -- "-$id" || break
		sleep 0.1
	done
	left=$(ip netns list | grep -c -- "-$id" || true)
	check "no namespace of the child bed is left" eq "$left" 0
	check "its fast path is gone" bash -c "! kill -0 ${fppid:-0} 2>/dev/null"
	# Clean up whatever a failure left, by name and by PID only.
	kill -KILL -- "-$pid" 2>/dev/null
	for n in $(ip netns list | awk -v id="-$id" 'index($1, id) {print $1}'); do
		ip netns del "$n"
	done
}

"case_$1"
tb_done
