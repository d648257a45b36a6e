#!/bin/bash
# Sandbox interfaces that come and go (issue 21): cubevs-fp follows the kernel's link events.
# Two sandboxes serve HTTP; A's interface is deleted, renamed, moved, downed, resized, taken
# over by another interface or given someone else's XDP program (refused while our pinned
# link holds the interface; without pins, replaced), and after each event the
# test asserts what GET, /readyz, /metrics and the log say, real traffic from the world to A
# (and A's long-lived flows where the guest keeps its TCP state), and that B never noticed.
#
#   test_lifecycle.sh gone|rename|netns|updown|mtu|takeover|foreign
. "$(dirname "$0")/lib.sh"

NS_X=cvs-x-$TB_ID

bed() {
	tb_setup
	tb_add_world
	tb_server "$NS_W" 9000 --name world --tcp-echo 7001
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --tcp-echo 7000
	tb_sandbox_server 2 8080
	fp_start || die "cubevs-fp did not start"
	contains "$(register a sb1 '[8080, 7000]' | tail -n1)" 201 || die "register a"
	contains "$(register b sb2 '[8080]' | tail -n1)" 201 || die "register b"
	HPA=$(hostport_of a 8080)
	HPE=$(hostport_of a 7000)
	HPB=$(hostport_of b 8080)
	check "before: A serves" serves "$HPA" sandbox1
	check "before: B serves" serves "$HPB" sandbox2
}

serves() { # hostport name: HTTP from the client through nodeIP:hostport
	eq "$(nsc curl -s -m 3 "http://$NODE_IP:$1/name" | cut -d' ' -f1)" "$2"
}
dead() { ! nsc curl -s -m 2 -o /dev/null "http://$NODE_IP:$1/name"; }
field() { # id key: one field of GET /sandboxes/id
	api_body GET "/sandboxes/$1" | python3 -c '
import json, sys
print(json.load(sys.stdin).get(sys.argv[1], ""))' "$2"
}
readyz_unattached() {
	api_body GET /readyz | python3 -c 'import json, sys; print(json.load(sys.stdin)["unattachedSandboxes"])'
}
metric() { # family: its value in /metrics
	api_body GET /metrics | awk -v f="$1" '$1 == f { print $2 }'
}
# Wait (up to 3 s) for GET's "attached" to become want; prints the milliseconds it took.
wait_attached() { # id True|False
	local t0 n
	t0=$(date +%s%N)
	for n in $(seq 60); do
		[ "$(field "$1" attached)" = "$2" ] && { echo $((($(date +%s%N) - t0) / 1000000)); return 0; }
		sleep 0.05
	done
	return 1
}
b_unharmed() { # what
	check "$1: B serves" serves "$HPB" sandbox2
	check "$1: B attached" eq "$(field b attached)" True
}
# A's interface as tb_add_sandbox made it, again, into namespace ns (the guest's own).
replug() { # ns
	local ns=$1
	ip link add sb1 netns "$NS_N" type veth peer name eth0 netns "$ns"
	ip netns exec "$ns" ip link set eth0 address $GUEST_MAC
	ip netns exec "$ns" ip addr add $GUEST_IP/30 dev eth0
	ip netns exec "$ns" ip link set eth0 up
	ip netns exec "$ns" ip route add default via $GW_IP 2>/dev/null
	offloads_default "$ns" eth0
	nsn ip link set sb1 up
	offloads_default "$NS_N" sb1
}
detached_as() { # what reason-part
	local ms
	ms=$(wait_attached a False)
	check "$1: A shows attached false" test -n "$ms"
	check "$1: with the reason" contains "$(field a attachError)" "$2"
	check "$1: and the time" test -n "$(field a detachedAt)"
	check "$1: /readyz counts it" eq "$(readyz_unattached)" 1
	check "$1: the ctl tool says so, with the reason and the time" \
		bash -c "ip netns exec $NS_N $CUBEVS_FPCTL sandbox show a | grep -q '^attached: *no (.*$2.*) since 20'"
}
back_again() { # what
	local ms
	ms=$(wait_attached a True)
	check "$1: A attached again by itself" test -n "$ms"
	log "$1: attached again ${ms:-?} ms after the interface came back (printed, not judged)"
	check "$1: A serves again" serves "$HPA" sandbox1
	check "$1: /readyz counts none" eq "$(readyz_unattached)" 0
}

flows_begin() {
	mkdir -p "$TB_DIR/f-in" "$TB_DIR/f-eg"
	tb_bg nsc python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-in" --tcp "ingress@$NODE_IP:$HPE:3" \
		>"$TB_DIR/f-in/out"
	tb_bg nss 1 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-eg" --tcp "egress@$WORLD_IP:7001:2" \
		>"$TB_DIR/f-eg/out"
	for n in $(seq 100); do
		[ -f "$TB_DIR/f-in/ready" ] && [ -f "$TB_DIR/f-eg/ready" ] && return 0
		sleep 0.1
	done
	die "the flows did not start"
}
flows_intact() { # what
	local d n
	for d in f-in f-eg; do echo 1 >"$TB_DIR/$d/mark"; done
	# A stalled flow waits for TCP's next retransmission (backed off over the outage).
	sleep "${FLOW_SETTLE_S:-12}"
	for d in f-in f-eg; do touch "$TB_DIR/$d/stop"; done
	for n in $(seq 100); do
		[ -s "$TB_DIR/f-in/out" ] && [ -s "$TB_DIR/f-eg/out" ] && break
		sleep 0.2
	done
	for d in f-in f-eg; do
		check "$1: A's ${d#f-} flows kept their sessions" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
bad = [f for f in r["flows"] if not f["ok"]]
print("# %s: %d flows, longest stall %d ms" % (sys.argv[2], len(r["flows"]), r["stall_ms_max"]))
assert r["flows"] and not bad, [(f["name"], f["why"]) for f in bad]' "$TB_DIR/$d/out" "${d#f-}"
	done
}

case_gone() {
	bed
	flows_begin
	nsn ip link del sb1
	detached_as "deleted" "disappeared"
	check "deleted: A does not serve" dead "$HPA"
	check "deleted: counted" eq "$(metric cubevs_sandbox_links_lost_total)" 1
	check "deleted: logged once" eq "$(grep -c 'sandbox a detached' "$TB_DIR/fp.log")" 1
	check "deleted: the host ports stay A's" eq "$(hostport_of a 8080)" "$HPA"
	b_unharmed "deleted"
	replug "cvs-s1-$TB_ID"
	back_again "made again"
	check "made again: counted" eq "$(metric cubevs_sandbox_links_back_total)" 1
	flows_intact "made again"
	# The agent registering it again changes nothing: same host ports, still attached.
	check "PUT again: 200" eq "$(register a sb1 '[8080, 7000]' | tail -n1)" 200
	check "PUT again: same host port" eq "$(hostport_of a 8080)" "$HPA"
	check "PUT again: A serves" serves "$HPA" sandbox1
	b_unharmed "made again"
}

case_rename() {
	bed
	nsn ip link set sb1 down
	nsn ip link set sb1 name sbaway
	nsn ip link set sbaway up
	detached_as "renamed away" "renamed to sbaway"
	check "renamed away: our program left it" xdp_off sbaway
	check "renamed away: A does not serve" dead "$HPA"
	b_unharmed "renamed away"
	nsn ip link set sbaway down
	nsn ip link set sbaway name sb1
	nsn ip link set sb1 up
	back_again "renamed back"
	b_unharmed "renamed back"
}

case_netns() {
	bed
	# Its namespace goes with the bed, whatever happens in between.
	trap 'ip netns del "$NS_X" 2>/dev/null; tb_teardown' EXIT
	ip netns add "$NS_X"
	nsn ip link set sb1 netns "$NS_X"
	detached_as "moved away" "disappeared"
	check "moved away: A does not serve" dead "$HPA"
	b_unharmed "moved away"
	ip -n "$NS_X" link set sb1 netns "$NS_N"
	nsn ip link set sb1 up
	back_again "moved back"
	b_unharmed "moved back"
}

case_updown() {
	bed
	nsn ip link set sb1 down
	sleep 0.5
	check "down: A stays attached" eq "$(field a attached)" True
	check "down: A does not serve" dead "$HPA"
	b_unharmed "down"
	nsn ip link set sb1 up
	check "up: A serves" serves "$HPA" sandbox1
	b_unharmed "up"
}

case_mtu() {
	bed
	local n=$((1024 * 1024)) want
	nsn ip link set sb1 mtu 1400
	nss 1 ip link set eth0 mtu 1400
	sleep 0.3
	check "mtu 1400: A stays attached" eq "$(field a attached)" True
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	check "mtu 1400: 1 MB from A with the right sha256" \
		eq "$(nsc curl -s -m 20 "http://$NODE_IP:$HPA/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$want"
	b_unharmed "mtu 1400"
}

case_takeover() {
	bed
	local ns3=cvs-s3-$TB_ID
	TB_SANDBOXES=3
	nsn ip link del sb1
	detached_as "deleted" "disappeared"
	# Another guest's interface takes the name the agent registered for A.
	ip netns add "$ns3"
	ip netns exec "$ns3" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip netns exec "$ns3" ip link set lo up
	tb_server "$ns3" 8080 --name sandbox3
	replug "$ns3"
	local ms
	ms=$(wait_attached a True)
	check "another interface named sb1: attached" test -n "$ms"
	check "A's host port reaches the guest behind the new sb1" serves "$HPA" sandbox3
	b_unharmed "taken over"
}

case_foreign() {
	# With a pin directory our program is on A's interface through a pinned BPF link, which
	# the kernel lets nobody replace by rtnetlink: tried first. Without one (TB_PIN=0) it is
	# attached by rtnetlink, which can be replaced: what happens then is the rest of the case.
	bed
	local out
	out=$(nsn ip -force link set dev sb1 xdpdrv obj "$XDP_PASS_OBJ" sec xdp 2>&1)
	check "a pinned link: the kernel refuses someone else's program on sb1 ($out)" \
		contains "$out" "active BPF XDP link"
	check "a pinned link: A still serves" serves "$HPA" sandbox1
	check "a pinned link: A attached" eq "$(field a attached)" True
	b_unharmed "a pinned link"
	fp_stop
	tb_teardown
	TB_PIDS=()
	TB_PIN=0
	bed
	nsn ip -force link set dev sb1 xdpdrv obj "$XDP_PASS_OBJ" sec xdp
	detached_as "someone else's program" "not ours"
	check "someone else's program: left in place" xdp_on sb1
	check "someone else's program: logged" grep -q "sandbox a detached: sb1 runs XDP program" \
		"$TB_DIR/fp.log"
	b_unharmed "someone else's program"
	nsn ip link set dev sb1 xdp off
	back_again "their program removed"
	b_unharmed "their program removed"
}

# Missing when cubevs-fp started: attached as soon as it appears, as after a deletion.
case_late() {
	bed
	fp_stop
	nsn ip link del sb1
	fp_start || die "restart"
	check "missing at start: A shows attached false" eq "$(field a attached)" False
	check "missing at start: with the reason" contains "$(field a attachError)" "sb1"
	b_unharmed "missing at start"
	replug "cvs-s1-$TB_ID"
	back_again "made after the start"
	b_unharmed "made after the start"
}

# Control-plane faults: the pin directory unmounted under the running process, and a
# runtime directory that does not exist at start. Each gets a clear word and loses nothing.
case_faults() {
	bed
	[ "${FP_PIN[1]}" = none ] && { log "no BPF file system in this bed: the unmount part skipped"; }
	if [ "${FP_PIN[1]}" != none ]; then
		umount "$TB_DIR/bpf"
		nsn ip link add sbc type veth peer name sbcp
		nsn ip link set sbc up
		check "pins unmounted: a new registration still works" \
			eq "$(register c sbc '[8080]' | tail -n1)" 201
		check "pins unmounted: A and B serve" serves "$HPA" sandbox1
		b_unharmed "pins unmounted"
		check "pins unmounted: SIGTERM" fp_stop
		check "pins unmounted: the next start starts" fp_start
		check "pins unmounted: every registration back" eq "$(readyz_unattached)" 0
		check "pins unmounted: A serves after the restart" serves "$HPA" sandbox1
		b_unharmed "pins unmounted, restarted"
	fi
	fp_stop
	check "runtime directory missing at start: starts anyway" \
		fp_start --runtime-dir "$TB_DIR/no/such/run"
	check "runtime directory missing: A serves" serves "$HPA" sandbox1
	b_unharmed "runtime directory missing"
}

# 20 clients PUT and DELETE the same id as fast as they can: whatever the last answer, the
# registry, the maps and the state on disk say the same, before and after a kill -9.
case_sameid() {
	bed
	nsn ip link add sbx1 type veth peer name sbx1p
	nsn ip link set sbx1 up
	nsn python3 - "$API" <<'PYEOF' >"$TB_DIR/same.json"
import http.client, json, random, sys, threading, time
host, port = sys.argv[1].split(":")
stop, bad, n = time.monotonic() + 10, [], [0]
lock = threading.Lock()
def client(k):
    rnd = random.Random(k)
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    while time.monotonic() < stop:
        if rnd.random() < 0.5:
            c.request("DELETE", "/sandboxes/x")
            ok = (204, 404)
        else:
            ports = sorted(rnd.sample([80, 443, 9090], rnd.randint(1, 2)))
            c.request("PUT", "/sandboxes/x", json.dumps({"iface": "sbx1", "exposedPorts": ports}),
                      {"Content-Type": "application/json"})
            ok = (200, 201)
        r = c.getresponse(); r.read()
        with lock:
            n[0] += 1
            if r.status not in ok:
                bad.append(r.status)
ts = [threading.Thread(target=client, args=(k,)) for k in range(20)]
[t.start() for t in ts]; [t.join() for t in ts]
print(json.dumps({"ops": n[0], "bad": bad[:5]}))
PYEOF
	check "20 clients on one id: every answer one of the expected ones" python3 -c '
import json, sys
r = json.load(open(sys.argv[1])); print("# %d requests" % r["ops"])
assert r["ops"] > 100 and not r["bad"], r' "$TB_DIR/same.json"
	local before after
	before=$(api "GET" /sandboxes/x | tail -n1)
	check "the last state is whole: 200 or 404" bash -c "[ $before = 200 ] || [ $before = 404 ]"
	if [ "$before" = 200 ]; then
		check "registered: its interface runs our program" xdp_on sbx1
	else
		check "not registered: its interface runs no program" xdp_off sbx1
	fi
	kill -KILL "$FP_PID"; wait "$FP_PID" 2>/dev/null; FP_PID=
	fp_start || die "restart"
	after=$(api "GET" /sandboxes/x | tail -n1)
	check "after kill -9: the same answer ($before)" eq "$after" "$before"
	[ "$before" = 200 ] && check "after kill -9: attached" eq "$(field x attached)" True
	b_unharmed "one id hammered"
}

case "${1:-}" in
gone | rename | netns | updown | mtu | takeover | foreign | late | faults | sameid) "case_$1" ;;
*) die "usage: $0 gone|rename|netns|updown|mtu|takeover|foreign|late|faults|sameid" ;;
esac
tb_done
