#!/bin/bash
# Registrations as an operator meets them on a real node.
#   hostports: host ports against the node's own services and across pause → resume (DELETE
#     then PUT): a kernel listener on the node IP is never shadowed, reserved ports are never
#     handed out, a listener that appears later on a handed-out port is reported, and a
#     sandbox id registered again within the hold gets its host port back, across a restart.
#   guestmac: a guest with its own MAC is unreachable until its registration names it; the
#     mismatch is counted under its name.
# Usage: test_register.sh CASE   (each case builds and removes its own test bed)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

json_get() { # json, python expression on j
	python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"
}
wait_for() { # seconds, then a command that must succeed
	local n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
node_listening() { nsn ss -Hltn "sport = :$1" | grep -q LISTEN; }
stat_is() { [ "$(stat_of "$1" "$2")" = "$3" ]; }
conflicts_are() { # expected JSON list of ports
	[ "$(json_get "$(api_body GET /readyz)" 'j["hostPortsShadowingListeners"]')" = "$1" ]
}

case_hostports() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	# A service of the node on its own address, inside the host-port range.
	mkdir "$TB_DIR/www"
	echo node-service >"$TB_DIR/www/name"
	tb_bg ip netns exec "$NS_N" python3 -m http.server --bind "$NODE_IP" \
		--directory "$TB_DIR/www" 20000 >"$TB_DIR/www.log" 2>&1
	wait_for 10 node_listening 20000 || die "the node service did not start"
	local opts=(--host-port-range 20000-20009 --reserved-host-ports 20001,20002)
	fp_start "${opts[@]}"
	# The fd table was grown at start for a link per sandbox (8,192 by default) and a socket
	# per API connection (2,048) and more: no growth (an RCU grace period) in a request.
	local fdwant=11264 fdhard
	fdhard=$(ulimit -Hn)
	[ "$fdhard" != unlimited ] && [ "$fdhard" -lt $fdwant ] && fdwant=$fdhard
	check "the fd table has room for every sandbox and API connection from the start" \
		test "$(awk '/^FDSize:/ { print $2 }' "/proc/$FP_PID/status")" -ge $fdwant
	check "s1 registered" eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
	local hp1 hp2
	hp1=$(hostport_of s1 8080)
	check "the first host port skips the node's listener and the reserved ports" eq "$hp1" 20003
	check "the node service still answers on its port" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:20000/name")" node-service
	check "s1 serves on its host port" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp1/name")" "sandbox1 $CLIENT_IP"
	check "/stats counts the port kept back for the kernel" \
		eq "$(stat_of hostPorts kernelListening)" 1
	check "and what is left: 10 - 2 reserved - 1 listener - 1 used" \
		eq "$(stat_of hostPorts free)" 6

	# Pause → resume: DELETE, another sandbox registers, a restart, then the same id again.
	check "DELETE s1 → 204" eq "$(api_status DELETE /sandboxes/s1)" 204
	check "s2 registered" eq "$(register s2 sb2 '[8080]' | tail -n1)" 201
	hp2=$(hostport_of s2 8080)
	check "another sandbox does not get s1's held port" test "$hp2" != "$hp1"
	check "the state file keeps the hold" python3 -c '
import json, sys
h = json.loads(sys.argv[1])["hostPortHolds"]
got = [(x["id"], x["containerPort"], x["hostPort"]) for x in h]
assert got == [("s1", 8080, int(sys.argv[2]))], h
' "$(state_view)" "$hp1"
	fp_stop
	fp_start "${opts[@]}"
	check "s1 registered again after the restart" \
		eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
	check "s1 got its old host port back" eq "$(hostport_of s1 8080)" "$hp1"
	check "and serves there" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp1/name")" "sandbox1 $CLIENT_IP"
	check "the reuse is counted" eq "$(stat_of hostPorts holdsReused)" 1
	check "no listener shadowed yet" conflicts_are "[]"

	# A node service that starts on a handed-out port later is reported.
	tb_bg ip netns exec "$NS_N" python3 "$SRC_DIR/sbxserver.py" --name late --port "$hp2"
	wait_for 10 node_listening "$hp2" || die "the late service did not start"
	check "/readyz names the shadowed port within the 2 s check" \
		wait_for 5 conflicts_are "[$hp2]"
	check "/readyz stays ready" eq "$(json_get "$(api_body GET /readyz)" \
		'j["ready"], j["hostPortConflicts"]')" "True 1"
	check "/metrics has the conflict" bash -c "ip netns exec $NS_N curl -s -m 5 \
		http://$API/metrics | grep -qx 'cubevs_host_port_conflicts 1'"
	check "the log says so once" test "$(grep -c "now also have a kernel listener" \
		"$TB_DIR/fp.log")" = 1

	# Holds run out.
	fp_stop
	fp_start "${opts[@]}" --host-port-hold 1
	check "DELETE s1 → 204" eq "$(api_status DELETE /sandboxes/s1)" 204
	check "the hold runs out" wait_for 5 stat_is hostPorts holdsExpired 1
	check "and is gone from /stats" eq "$(stat_of hostPorts holds)" 0
}

sbx_stat() { # sandbox counter
	api_body GET /stats | python3 -c \
		"import json,sys; print(json.load(sys.stdin)['sandboxPorts']['$1']['$2'])"
}

case_guestmac() {
	tb_setup
	tb_add_sandbox 1
	tb_sandbox_server 1 8080
	# A guest built elsewhere: its own MAC, not the CubeSandbox one.
	local own=02:00:00:00:00:aa hp before
	nss 1 ip link set eth0 address $own
	fp_start
	check "s1 registered without guestMAC" eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
	hp=$(hostport_of s1 8080)
	check "GET shows the MAC in use, the default" \
		eq "$(json_get "$(api_body GET /sandboxes/s1)" 'j["guestMAC"]')" 20:90:6f:fc:fc:fc
	check "the guest drops what carries another MAC: no answer" \
		bash -c "! ip netns exec $NS_C curl -s -m 2 http://$NODE_IP:$hp/name"
	# The guest says something of its own (an ARP request for its gateway, a ping).
	nss 1 ip neigh flush dev eth0
	nss 1 ping -c 1 -W 1 $GW_IP >/dev/null 2>&1
	check "the guest's own frames are counted as a MAC mismatch under its name" \
		test "$(sbx_stat s1 guest_mac_mismatch)" -ge 1
	check "a bad guestMAC → 400" eq "$(api_status PUT /sandboxes/s1 \
		'{"iface":"sb1","exposedPorts":[8080],"guestMAC":"ff:ff:ff:ff:ff:ff"}')" 400
	check "the same PUT with the guest's MAC → 200" eq "$(api_status PUT /sandboxes/s1 \
		"{\"iface\":\"sb1\",\"exposedPorts\":[8080],\"guestMAC\":\"$own\"}")" 200
	check "now the guest answers on the same host port" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "sandbox1 $CLIENT_IP"
	before=$(sbx_stat s1 guest_mac_mismatch)
	nsc curl -s -m 5 -o /dev/null "http://$NODE_IP:$hp/name"
	check "and no more mismatches are counted" eq "$(sbx_stat s1 guest_mac_mismatch)" "$before"
	check "the metric has it per sandbox" bash -c "ip netns exec $NS_N curl -s -m 5 \
		http://$API/metrics | grep -qx \
		'cubevs_sandbox_port_guest_mac_mismatch_total{sandbox=\"s1\"} $before'"
	fp_stop
	fp_start
	check "the MAC survives a restart (state file)" \
		eq "$(json_get "$(api_body GET /sandboxes/s1)" 'j["guestMAC"]')" $own
	check "and the guest answers after it" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "sandbox1 $CLIENT_IP"
}

"case_$1"
tb_done
