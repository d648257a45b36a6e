#!/bin/bash
# IPv6 through the namespace test bed (issue 34): NAT66 egress on one and two workers, the
# control side (steering, next hop). Usage: test_ipv6.sh CASE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib6.sh"

in_snat() { # "ip port" line
	local ip=${1%% *} port=${1##* }
	[ "$ip" = "$NODE_IP" ] && [ "$port" -ge 30000 ] && [ "$port" -le 65535 ] ||
		{ echo "#   '$1' is not $NODE_IP:<30000-65535>"; return 1; }
}
policy() { api PUT "/sandboxes/$1/policy" "$2" | tail -n1; }

# NAT66 egress (issue 34): guests get their address and default route from our router
# advertisement and reach an IPv6 world host through the node's IPv6 address and a SNAT port:
# TCP (20 MB with sha256), UDP, ICMPv6 echo; their IPv4 keeps working beside it; a policy
# without internet access denies IPv6 too.
# Two sandboxes, the IPv6 world with a UDP echo; s1 registered with the JSON body S1 (no
# limits by default), the guests' IPv6 turned on once we listen, so their first router
# solicitation is answered.
bed6() { # cubevs-fp options
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	ipv6_bed
	tb_server "$NS_W" 8000 --name world --udp-echo 5353 --ipv6
	fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6 "$@"
	local s1='{"iface":"sb1","exposedPorts":[]}'
	eq "$(api PUT /sandboxes/s1 "${S1:-$s1}" | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[]' | tail -n1)" 201 || die "register s2"
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
	guest6 1
	guest6 2
}

case_egress() {
	bed6 --test-clock "$@"
	local a1 a2 n=$((20 * 1024 * 1024))
	a1=$(guest6_addr 1)
	a2=$(guest6_addr 2)
	check "guests formed addresses in $GUEST_PFX6 from our router advertisement ($a1, $a2)" \
		test "${a1#2001:2:0:6:}" != "$a1" -a "${a2#2001:2:0:6:}" != "$a2"
	check "and took a default route through fe80::1" \
		contains "$(nss 1 ip -6 route show default)" "via fe80::1"
	check "ping -6 to the world host" quiet nss 1 ping -6 -c 2 -W 2 -q $WORLD_IP6
	check "TCP: the world host sees the node's IPv6 address and a SNAT port" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$WORLD_IP6]:8000/peer")"
	check "UDP: the echo comes back from the world host, sent from the node's address" \
		contains "$(nss 2 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(b"hello", (sys.argv[1], 5353))
print(s.recv(200).decode())' $WORLD_IP6)" "hello $NODE_IP6 "
	check "20 MB over IPv6 from the world host, sha256 matches" eq \
		"$(nss 2 curl -s -m 60 "http://[$WORLD_IP6]:8000/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)"
	head -c $n /dev/urandom >"$TB_DIR/up6.bin"
	check "20 MB over IPv6 to the world host, sha256 matches" eq \
		"$(nss 1 curl -s -m 60 -T "$TB_DIR/up6.bin" "http://[$WORLD_IP6]:8000/sha")" \
		"$(sha256sum <"$TB_DIR/up6.bin" | cut -d' ' -f1)"
	check "IPv4 egress works beside it" in_snat "$(nss 1 curl -s -m 5 "http://$WORLD_IP:8000/peer")"
	check "the flows were counted as NAT66 (egress6_flows $(stat_of worker egress6_flows))" \
		test "$(stat_of worker egress6_flows)" -ge 3
	check "and the solicitations answered (ndp_answered $(stat_of worker ndp_answered))" \
		test "$(stat_of worker ndp_answered)" -ge 2
	check "the IPv6 sessions are counted on their own (/stats and /metrics)" python3 -c '
import json, sys, urllib.request
s, m = json.loads(sys.argv[1]), sys.argv[2]
assert s["ipv6Sessions"] >= 3 and s["ipv6SessionCapacity"] >= 1024, s
assert sum(s["ipv6SessionsByClass"].values()) == s["ipv6Sessions"], s["ipv6SessionsByClass"]
assert s["worker"]["ipv6_packets"] > 20000, s["worker"]["ipv6_packets"]
assert "\ncubevs_ipv6_session_table_used " in m and "cubevs_ipv6_packets_total " in m' "$(api_body GET /stats)" "$(api_body GET /metrics)"
	eq "$(policy s1 '{"allowInternetAccess":false}')" 200 || die "policy s1"
	check "without internet access, IPv6 egress is denied too: the connect is refused (curl 7)" \
		eq "$(nss 1 curl -s -m 3 -o /dev/null -w '%{http_code}' "http://[$WORLD_IP6]:8000/peer"; echo " $?")" "000 7"
	nss 1 python3 -c '
import socket, sys
socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).sendto(b"x", (sys.argv[1], 5353))' $WORLD_IP6
	check "and a UDP datagram is dropped as policy_denied" \
		test "$(stat_wait drops policy_denied 1)" -ge 1
	ipv6_policy
	ipv6_ra
}

# A guest asks for a router advertisement only when its link comes up, and the default route
# it took expires after the advertised 1,800 s: the worker advertises unasked to every guest
# each 600 s (worker_ra()). The session clock moved by 600 s makes every guest due at once.
route_expires() { # index: seconds left of the guest's default route
	nss "$1" ip -6 route show default | sed -n 's/.*expires \([0-9]*\)sec.*/\1/p'
}
ipv6_ra() {
	local e0 e1 r0
	sleep 2
	e0=$(route_expires 2)
	check "the guest's default route expires (${e0}s left), as advertised" \
		test -n "$e0" -a "${e0:-9999}" -le 1798
	r0=$(stat_of worker ra_sent)
	api POST /debug/clock '{"advance":600}' >/dev/null
	check "600 s later by the session clock, both guests were advertised to unasked" \
		test "$(stat_wait worker ra_sent $((r0 + 2)))" -ge $((r0 + 2))
	for _ in $(seq 30); do
		e1=$(route_expires 2)
		[ "${e1:-0}" -gt "$e0" ] && break
		sleep 0.1
	done
	check "and the guest's default route is good for 1,800 s again (${e1}s left)" \
		test "${e1:-0}" -gt "$e0" -a "${e1:-0}" -ge 1798
}

# IPv6 CIDRs in a policy's lists (issue 34): they decide for IPv6 destinations as IPv4 CIDRs
# do for IPv4 ones; a denied SYN gets a RST, so the guest's connect fails at once.
ipv6_policy() {
	local rst0 code
	eq "$(policy s1 '{"allowInternetAccess":false,"allowOut":["2001:2:0:2::/64","10.0.0.0/8"]}')" \
		200 || die "policy s1 allowOut"
	check "the policy reads back with both families" eq "$(api_body GET /sandboxes/s1/policy |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["allowOut"])')" \
		"['10.0.0.0/8', '2001:2:0:2::/64']"
	check "allowOut with the world host's /64 lets IPv6 through without internet access" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$WORLD_IP6]:8000/peer")"
	check "and the IPv4 world stays denied (not in the IPv4 list)" \
		eq "$(nss 1 curl -s -m 2 -o /dev/null -w '%{http_code}' "http://$WORLD_IP:8000/peer")" 000
	rst0=$(stat_of worker rst_sent)
	eq "$(policy s2 '{"denyOut":["2001:2:0:2::2/128"]}')" 200 || die "policy s2 denyOut"
	code=$(nss 2 curl -s -m 3 -o /dev/null -w '%{http_code}' "http://[$WORLD_IP6]:8000/peer"; echo " $?")
	check "denyOut of the world host's address: the connect is refused at once (curl 7)" \
		eq "$code" "000 7"
	check "by our RST (rst_sent grew)" grows "$rst0" "$(stat_of worker rst_sent)"
	check "the other sandbox is not affected" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$WORLD_IP6]:8000/peer")"
	check "a bad IPv6 CIDR is refused with 400" \
		eq "$(api PUT /sandboxes/s2/policy '{"denyOut":["2001:2::/129"]}' | tail -n1)" 400
}

# The same on two workers, a world queue each: the guests are on different workers, and a
# reply reaches the worker whose share its SNAT port is in (dp_owner()), wherever it came in.
case_workers() {
	export TB_QUEUES=2 FP_EAL="--lcores 0@0,1@1,2@0"
	case_egress --workers 2 --world-queues 2 --idle-sleep-us 20
	check "frames were handed between the workers" test "$(stat_of worker handoffs)" -gt 0
}





# Tenancy limits over both families (issue 34): a sandbox's session limit counts its IPv4 and
# IPv6 sessions together, so with maxSessions 6 and three IPv4 UDP flows open, the fourth
# IPv6 flow is refused (limit_sessions) while another sandbox is not affected.
case_limits() {
	S1='{"iface":"sb1","exposedPorts":[],"limits":{"maxSessions":6}}' \
		bed6 --sandbox-new-sessions-per-sec 0
	guest6_addr 1 >/dev/null || die "guest 1 has no global IPv6 address"
	guest6_addr 2 >/dev/null || die "guest 2 has no global IPv6 address"
	local flows='
import socket, sys
def flow(fam, dst):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(1.5)
    s.sendto(b"x", (dst, 5353))
    try:
        s.recv(200)
        return "1"
    except socket.timeout:
        return "0"
print("".join(flow(socket.AF_INET, sys.argv[1]) for _ in range(int(sys.argv[3]))) + " " +
      "".join(flow(socket.AF_INET6, sys.argv[2]) for _ in range(int(sys.argv[4]))))'
	check "three IPv4 flows and three IPv6 ones fit maxSessions 6; a fourth IPv6 one does not" \
		eq "$(nss 1 python3 -c "$flows" $WORLD_IP $WORLD_IP6 3 4)" "111 1110"
	check "refused as limit_sessions" test "$(stat_of drops limit_sessions)" -ge 1
	check "the sandbox's own counter says so" test "$(api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sandboxPorts"]["s1"]["limit_sessions"])')" -ge 1
	check "the other sandbox opens IPv6 flows as before" \
		eq "$(nss 2 python3 -c "$flows" $WORLD_IP $WORLD_IP6 0 4)" " 1111"
}

case_ctl() {
	v6_bed
	local mac s0 o0 d0 p0 w0
	mac=$(nsc cat /sys/class/net/cl0/address)
	check "the IPv6 next hop was learnt: the router's link-local and MAC ($mac) in the log" \
		log_wait "IPv6 next hop fe80::2 at $mac"
	check "no warning about the world interface lacking --node-ip6" \
		bash -c "! grep -q 'does not carry' $TB_DIR/fp.log"
	o0=$(stat_of xdp pass_other6)
	check "ping6 from the world host to the node's IPv6 address is answered by its kernel" \
		quiet nsw ping -6 -c 2 -i 0.3 -W 2 $NODE_IP6
	check "those echo requests went to the kernel (pass_other6)" \
		grows "$o0" "$(stat_of xdp pass_other6)"
	check "so did neighbour discovery (pass_not_node6 for the solicited-node multicast)" \
		test "$(stat_of xdp pass_not_node6)" -ge 1
	s0=$(stat_of xdp redirect_snat6)
	d0=$(stat_of drops no_session)
	w0=$(stat_of worker world_rx_packets)
	udp6_to_node 40000
	check "UDP to [node6]:40000 (SNAT range) is steered to the worker (redirect_snat6)" \
		eq "$(stat_wait xdp redirect_snat6 $((s0 + 1)))" $((s0 + 1))
	check "the worker received it and dropped it: no NAT66 session has that port" \
		bash -c "[ $(stat_wait worker world_rx_packets $((w0 + 1))) = $((w0 + 1)) ] &&
			 [ $(stat_of drops no_session) -gt $d0 ]"
	echoreply6_to_node 40001
	check "an ICMPv6 echo reply with a SNAT-range identifier is steered too" \
		eq "$(stat_wait xdp redirect_snat6 $((s0 + 2)))" $((s0 + 2))
	# Outside the range: the node's own port, which a kernel socket receives.
	nsn python3 -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 9999))
s.settimeout(5)
print(s.recvfrom(100)[0].decode())' >"$TB_DIR/udp9999" &
	local rx=$!
	sleep 0.3
	p0=$(stat_of xdp pass_other6)
	udp6_to_node 9999
	echoreply6_to_node 1000
	wait $rx
	check "UDP to [node6]:9999 (outside the range) reached the node's kernel socket" \
		eq "$(cat "$TB_DIR/udp9999")" hello
	check "it and an echo reply with an identifier outside the range passed (pass_other6)" \
		test "$(stat_of xdp pass_other6)" -ge $((p0 + 2))
	check "nothing more was steered" eq "$(stat_of xdp redirect_snat6)" $((s0 + 2))
	check "IPv4 to the node still reaches its kernel" quiet nsc ping -c 1 -W 2 $NODE_IP
	# The route notifications keep it current: another router address, then none.
	nsn ip -6 route replace default via $ROUTER6_N dev nic0
	check "a new default route: the next hop follows it ($ROUTER6_N)" log_wait \
		"IPv6 next hop $ROUTER6_N at $mac"
	nsn ip -6 route del default
	check "no default route: the next hop is forgotten" log_wait "IPv6 next hop lost"
	nsn ip -6 route add default via fe80::2 dev nic0
	check "and learnt again" log_wait "IPv6 next hop fe80::2 at $mac" 2
}

"case_$1"
tb_done
