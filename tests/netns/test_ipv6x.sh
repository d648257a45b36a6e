#!/bin/bash
# Exposed ports on the node's IPv6 address (issue 34): one host port answers on
# [node6]:hostPort and nodeIP:hostPort at once, hairpin over IPv6 between sandboxes, the API's
# IPv6 endpoint (?family=ipv6) beside the unchanged default answer, guests whose address is
# not the EUI-64 of their MAC. Usage: test_ipv6x.sh CASE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib6.sh"
: "${CUBEVS_FPCTL:=$SRC_DIR/../../build/tools/cubevs-fpctl}"

MB4=$((4 * 1024 * 1024))

field() { # id key: one field of GET /sandboxes/ID
	api_body GET "/sandboxes/$1" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$2'))"
}
learnt_wait() { # id address: GET /sandboxes/ID shows guestIP6 address (5 s)
	local n
	for n in $(seq 50); do
		[ "$(field "$1" guestIP6)" = "$2" ] && return 0
		sleep 0.1
	done
	echo "#   guestIP6 of $1 is $(field "$1" guestIP6), not $2"
	return 1
}
raw() { # path: the answer's exact bytes (base64) and its status
	nsn curl -s -m 10 -o "$TB_DIR/raw" -w '%{http_code}' "http://$API$1" >"$TB_DIR/raw.st"
	echo "$(base64 -w0 <"$TB_DIR/raw") $(cat "$TB_DIR/raw.st")"
}
bytes() { # json status: what raw prints for that answer (the API ends a body with a newline)
	echo "$(printf '%s\n' "$1" | base64 -w0) $2"
}
peer_is() { # "ip port" line, the ip it must be
	[ "${1%% *}" = "$2" ] || { echo "#   '$1' is not from $2"; return 1; }
}

# Two dual-stack sandboxes serving 8080 (and s2 a raw echo on 7000), the IPv6 world, guests
# with SLAAC from our advertisement unless GUEST6_SETUP set them up otherwise.
bed() { # extra cubevs-fp options
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	ipv6_bed
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --ipv6
	tb_server "cvs-s2-$TB_ID" 8080 --name sandbox2 --ipv6
	fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6 "$@"
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[8080]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 8080)
	HP2=$(hostport_of s2 8080)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
	# IPv6 on in the guests now that we listen: their solicitations are answered and their
	# duplicate address checks seen.
	${GUEST6_SETUP:-guest6} 1
	${GUEST6_SETUP:-guest6} 2
	A1=$(guest6_addr 1) || die "guest 1 has no global IPv6 address"
	A2=$(guest6_addr 2) || die "guest 2 has no global IPv6 address"
}

# (a) A world client on [node6]:hostPort and nodeIP:hostPort of the same sandbox port at the
# same time: the sandbox sees the client's real address in each family; two downloads and an
# upload of 4 MB run together, each checked by sha256.
case_dual() {
	bed
	local sha out v6 v4 up
	check "guest 1 took $A1 by SLAAC, and the node knows it (GET /sandboxes/s1)" \
		eq "$(field s1 guestIP6)" "$A1"
	check "the sandbox sees the client's IPv6 address through [node6]:$HP1" \
		peer_is "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$HP1/peer")" $ROUTER6_N
	check "and its IPv4 address through nodeIP:$HP1" \
		peer_is "$(nsc curl -s -m 5 "http://$NODE_IP:$HP1/peer")" $CLIENT_IP
	sha=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $MB4)
	head -c $MB4 /dev/urandom >"$TB_DIR/up.bin"
	nsc curl -s -m 30 "http://[$NODE_IP6]:$HP1/blob?n=$MB4" -o "$TB_DIR/v6.bin" &
	v6=$!
	nsc curl -s -m 30 "http://$NODE_IP:$HP1/blob?n=$MB4" -o "$TB_DIR/v4.bin" &
	v4=$!
	nsc curl -s -m 30 -T "$TB_DIR/up.bin" "http://[$NODE_IP6]:$HP1/sha" -o "$TB_DIR/up.sha" &
	up=$!
	wait $v6 $v4 $up
	check "4 MB from [node6]:$HP1, sha256 matches" \
		eq "$(sha256sum <"$TB_DIR/v6.bin" | cut -d' ' -f1)" "$sha"
	check "4 MB from nodeIP:$HP1 at the same time, sha256 matches" \
		eq "$(sha256sum <"$TB_DIR/v4.bin" | cut -d' ' -f1)" "$sha"
	check "4 MB to [node6]:$HP1 at the same time, sha256 matches" \
		eq "$(cat "$TB_DIR/up.sha")" "$(sha256sum <"$TB_DIR/up.bin" | cut -d' ' -f1)"
	check "steered as redirect_hostport6 ($(stat_of xdp redirect_hostport6))" \
		test "$(stat_of xdp redirect_hostport6)" -ge 3
	check "counted as hostport6_flows ($(stat_of worker hostport6_flows))" \
		test "$(stat_of worker hostport6_flows)" -ge 3
	out=$(nsc curl -s -m 3 "http://[$NODE_IP6]:$((HP2 + 100))/"; echo "rc=$?")
	check "a port no sandbox exposes is the node kernel's: refused at once ($out)" \
		eq "$out" "rc=7"
	check "the other sandbox answers on its own host port over IPv6" \
		contains "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$HP2/name")" "sandbox2 $ROUTER6_N"
	# The node's own IPv6 stays the kernel's: ping -6 to the node is answered by it.
	check "ping -6 to the node is still the kernel's" quiet nsc ping -6 -c 1 -W 2 $NODE_IP6
}

# (b) Hairpin over IPv6: A → [node6]:hostPort of B (and of A itself); B sees the node's
# IPv6 address and a SNAT port, which it answers through us; nothing leaves the node.
case_hairpin() {
	bed
	local w0 sha
	w0=$(stat_of worker world_tx_packets)
	check "A → [node6]:$HP2: B answers, seeing [node6] and a SNAT port" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")"
	check "A gets B's body" \
		eq "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP2/name" | cut -d' ' -f1)" sandbox2
	check "4 MB from B through the hairpin, sha256 matches" \
		eq "$(nss 1 curl -s -m 30 "http://[$NODE_IP6]:$HP2/blob?n=$MB4" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $MB4)"
	head -c $MB4 /dev/urandom >"$TB_DIR/up.bin"
	check "4 MB to B through the hairpin, sha256 matches" \
		eq "$(nss 1 curl -s -m 30 -T "$TB_DIR/up.bin" "http://[$NODE_IP6]:$HP2/sha")" \
		"$(sha256sum <"$TB_DIR/up.bin" | cut -d' ' -f1)"
	check "B → [node6]:$HP1 the other way" \
		in_snat6 "$(nss 2 curl -s -m 5 "http://[$NODE_IP6]:$HP1/peer")"
	check "a sandbox reaches its own host port over IPv6" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP1/peer")"
	check "the IPv4 hairpin works beside it" \
		contains "$(nss 1 curl -s -m 5 "http://$NODE_IP:$HP2/name")" "sandbox2 $NODE_IP"
	check "nothing of it left through the world port" \
		eq "$(stat_of worker world_tx_packets)" "$w0"
	check "hairpin6_flows counted ($(stat_of worker hairpin6_flows))" \
		test "$(stat_of worker hairpin6_flows)" -ge 6
	eq "$(api PUT /sandboxes/s1/policy '{"allowInternetAccess":false}' | tail -n1)" 200 ||
		die "policy s1"
	local out
	out=$(nss 1 curl -s -m 3 "http://[$NODE_IP6]:$HP2/peer"; echo "rc=$?")
	check "without internet access the IPv6 hairpin is refused (RST) at once ($out)" \
		eq "$out" "rc=7"
	eq "$(api PUT /sandboxes/s1/policy "{\"allowInternetAccess\":false,\"allowOut\":[\"$NODE_IP6/128\"]}" |
		tail -n1)" 200 || die "policy s1 with the node's IPv6 address"
	check "unless the node's IPv6 address is allowed, as the node IP for IPv4" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")"
}

# The same on two workers, a world queue each: a flow's frames reach the worker of its
# sandbox or of its SNAT port (dp_owner()) wherever they come in.
case_workers() {
	export TB_QUEUES=2 FP_EAL="--lcores 0@0,1@1,2@0"
	bed --workers 2 --world-queues 2 --idle-sleep-us 20
	local sha
	sha=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $MB4)
	check "4 MB from [node6]:$HP1 and [node6]:$HP2 (one sandbox per worker)" eq \
		"$(nsc curl -s -m 30 "http://[$NODE_IP6]:$HP1/blob?n=$MB4" | sha256sum | cut -d' ' -f1) $(nsc curl -s -m 30 "http://[$NODE_IP6]:$HP2/blob?n=$MB4" | sha256sum | cut -d' ' -f1)" \
		"$sha $sha"
	check "hairpin A → B over IPv6 across the workers" \
		in_snat6 "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")"
	check "and B → A" in_snat6 "$(nss 2 curl -s -m 5 "http://[$NODE_IP6]:$HP1/peer")"
	check "frames were handed between the workers" test "$(stat_of worker handoffs)" -gt 0
}

# (c) The API: the default exposed-ports answer byte for byte as before, ?family=ipv4 the
# same, ?family=ipv6 the IPv6 endpoint, the errors; the ctl tool; a node without --node-ip6.
case_api() {
	bed
	local want got ctl
	want="{\"sandboxID\":\"s1\",\"containerPort\":8080,\"mode\":\"host_port\",\"endpoint\":\"$NODE_IP:$HP1\",\"hostIP\":\"$NODE_IP\",\"hostPort\":$HP1}"
	check "the default answer is as it always was, byte for byte" \
		eq "$(raw /sandboxes/s1/exposed-ports/8080)" "$(bytes "$want" 200)"
	check "?family=ipv4 is the same answer" \
		eq "$(raw '/sandboxes/s1/exposed-ports/8080?family=ipv4')" "$(bytes "$want" 200)"
	check "?family=ipv6: the same host port on [node6], the same six fields" \
		eq "$(raw '/sandboxes/s1/exposed-ports/8080?family=ipv6')" \
		"$(bytes "{\"sandboxID\":\"s1\",\"containerPort\":8080,\"mode\":\"host_port\",\"endpoint\":\"[$NODE_IP6]:$HP1\",\"hostIP\":\"$NODE_IP6\",\"hostPort\":$HP1}" 200)"
	check "?family=ipv7 → 400 with its reason" \
		eq "$(raw '/sandboxes/s1/exposed-ports/8080?family=ipv7')" \
		"$(bytes '{"error":"family must be \"ipv4\" or \"ipv6\", got \"ipv7\""}' 400)"
	check "a port not exposed stays 404 with ?family=ipv6" \
		eq "$(api_status GET '/sandboxes/s1/exposed-ports/9999?family=ipv6')" 404
	check "the endpoint the API gives answers" \
		peer_is "$(nsc curl -s -m 5 "http://$(api_body GET '/sandboxes/s2/exposed-ports/8080?family=ipv6' |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["endpoint"])')/peer")" $ROUTER6_N
	ctl=$(nsn "$CUBEVS_FPCTL" ports s1 8080 --family ipv6)
	check "cubevs-fpctl ports s1 8080 --family ipv6 ($ctl)" \
		eq "$ctl" "s1 8080 -> [$NODE_IP6]:$HP1 (host_port)"
	check "cubevs-fpctl ports s1 8080 unchanged" \
		eq "$(nsn "$CUBEVS_FPCTL" ports s1 8080)" "s1 8080 -> $NODE_IP:$HP1 (host_port)"
	ctl=$(nsn "$CUBEVS_FPCTL" ports s1 8080 --family ipv7 2>&1; echo "rc=$?")
	check "cubevs-fpctl --family ipv7: the API's 400 reason, exit status 1" \
		contains "$ctl" "family must be"
	check "(exit status 1)" contains "$ctl" "rc=1"
	check "GET /sandboxes/s1 shows guestIP6 learnt from the guest" \
		eq "$(field s1 guestIP6) $(field s1 guestIP6Learnt)" "$A1 True"
	check "cubevs-fpctl sandbox show s1 too" \
		contains "$(nsn "$CUBEVS_FPCTL" sandbox show s1)" "guest IPv6: $A1 (learnt from its frames)"
	fp_stop || die "stop"
	fp_start
	check "without --node-ip6: ?family=ipv6 → 409 with its reason" \
		contains "$(api GET '/sandboxes/s1/exposed-ports/8080?family=ipv6')" "no IPv6 address (--node-ip6)"
	check "(status 409)" eq "$(api_status GET '/sandboxes/s1/exposed-ports/8080?family=ipv6')" 409
	check "and no guestIP6" eq "$(field s1 guestIP6)" None
	check "the default answer the same as with it" \
		eq "$(raw /sandboxes/s1/exposed-ports/8080)" "$(bytes "$want" 200)"
}

# A service of the node listening on the node's IPv6 address only, inside the host-port range:
# with --node-ip6 host ports answer there too, so that port is not handed out (as for the
# node IP), and both the service and the sandbox answer on their ports.
case_listener() {
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	ipv6_bed
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --ipv6
	mkdir "$TB_DIR/www"
	echo node6-service >"$TB_DIR/www/name"
	tb_bg ip netns exec "$NS_N" python3 -m http.server --bind "$NODE_IP6" \
		--directory "$TB_DIR/www" 20000 >"$TB_DIR/www.log" 2>&1
	local n hp
	for n in $(seq 50); do
		nsn ss -Hltn "sport = :20000" | grep -q LISTEN && break
		sleep 0.1
	done
	fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6 --host-port-range 20000-20009
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	hp=$(hostport_of s1 8080)
	guest6 1
	guest6_addr 1 >/dev/null || die "guest 1 has no global IPv6 address"
	check "the first host port skips the service on [node6]:20000 ($hp)" eq "$hp" 20001
	check "the node's service still answers on [node6]:20000" \
		eq "$(nsc curl -s -m 5 "http://[$NODE_IP6]:20000/name")" node6-service
	check "the sandbox answers on [node6]:$hp" \
		contains "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$hp/name")" "sandbox1 $ROUTER6_N"
	check "asking for 20000 by number is refused (409)" \
		eq "$(api_status PUT /sandboxes/s1 '{"iface":"sb1","exposedPorts":[{"containerPort":8080,"hostPort":20000}]}')" 409
}

# The host path over IPv6 (cube-dev): the node reaches each sandbox at --sandbox-prefix6 and
# its IPv4 sandbox address; the guest sees the host's own address and answers it through us.
# A guest reaches the node's own services at [node6]:port, seen from that address.
SBX_PFX6=2001:2:0:7::
norm6() { python3 -c "import ipaddress,sys; print(ipaddress.ip_address(sys.argv[1]))" "$1"; }
case_host() {
	bed --sandbox-prefix6 ${SBX_PFX6}/96
	tb_server "cvs-s1-$TB_ID" 8090 --name s1udp --udp-echo 5354 --ipv6
	local s1 s2 host6 f0 n=$((5 * 1024 * 1024))
	s1=$SBX_PFX6$(sandbox_ip s1)
	s2=$SBX_PFX6$(sandbox_ip s2)
	host6=$(norm6 "${SBX_PFX6}192.168.0.1")
	check "GET /sandboxes/s1 shows it as sandboxIP6" eq "$(api_body GET /sandboxes/s1 |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxIP6"])')" \
		"$(norm6 "$s1")"
	check "cube-dev holds the prefix and its IPv4 address ($host6/96)" \
		contains "$(nsn ip -6 -o addr show dev cube-dev)" "$host6/96"
	f0=$(stat_of worker host_flows)
	check "host → [$s1]:8080 through cube-dev; the guest sees the host's address" \
		contains "$(nsn curl -s -m 5 "http://[$s1]:8080/name")" "sandbox1 $host6"
	check "and [$s2]:8080 is the other sandbox" \
		contains "$(nsn curl -s -m 5 "http://[$s2]:8080/name")" "sandbox2 $host6"
	check "a 5 MB download from the sandbox to the host over IPv6" eq \
		"$(nsn curl -s -m 20 "http://[$s1]:8080/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)"
	check "UDP from the host: the guest's echo comes back" contains "$(nsn python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(b"hello", (sys.argv[1], 5354))
print(s.recv(200).decode())' "$s1")" "hello $host6"
	check "ping -6 from the host to the sandbox" quiet nsn ping -6 -c 2 -W 2 -q "$s1"
	check "UDP to a closed port: the guest's port unreachable reaches the host's socket" \
		eq "$(nsn python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], 5999))
s.send(b"x")
try:
    s.recv(10)
    print("answered")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")' "$s1")" refused
	check "counted as host flows (host_flows $(stat_of worker host_flows))" \
		test "$(stat_of worker host_flows)" -ge $((f0 + 6))
	check "an address of the prefix that is no sandbox's is dropped" \
		bash -c "! ip netns exec $NS_N curl -s -m 2 'http://[${SBX_PFX6}192.168.0.200]:8080/'"
	tb_server "$NS_N" 8002 --name hostsvc --ipv6 --udp-echo 8003
	check "a guest cannot open a flow to the host's address of the prefix" \
		bash -c "! ip netns exec cvs-s1-$TB_ID curl -s -m 2 'http://[$host6]:8002/name'"
	check "a guest reaches a node service on [node6]:8002 through cube-dev, seen from its address" \
		contains "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:8002/name")" "hostsvc $(norm6 "$s1")"
	check "and UDP to [node6]:8003" contains "$(nss 2 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(b"hi", (sys.argv[1], 8003))
print(s.recv(200).decode())' $NODE_IP6)" "hi $(norm6 "$s2")"
	eq "$(api PUT /sandboxes/s1/policy '{"allowInternetAccess":false}' | tail -n1)" 200 ||
		die "policy s1"
	check "a policy without internet access denies the node's address too (curl 7: our RST)" \
		eq "$(nss 1 curl -s -m 3 -o /dev/null -w '%{http_code}' "http://[$NODE_IP6]:8002/name"; echo " $?")" "000 7"
	check "IPv4's host path works beside it" \
		contains "$(nsn curl -s -m 5 "http://$(sandbox_ip s1):8080/name")" sandbox1
}

# (d) Guests whose address is not the EUI-64 of their MAC: one with random identifiers
# (addr_gen_mode 3), one with a static address in the prefix and no SLAAC.
guest6_other() { # index
	if [ "$1" = 1 ]; then
		nss 1 sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
		nss 1 sysctl -qw net.ipv6.conf.eth0.addr_gen_mode=3 net.ipv6.conf.eth0.accept_ra=2
		nss 1 sysctl -qw net.ipv6.conf.eth0.disable_ipv6=0
	else
		nss 2 sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
		nss 2 sysctl -qw net.ipv6.conf.eth0.accept_ra=0 net.ipv6.conf.eth0.disable_ipv6=0
		nss 2 ip -6 addr add 2001:2:0:6::beef/64 dev eth0
		nss 2 ip -6 route add default via fe80::1 dev eth0
	fi
}
case_static() {
	GUEST6_SETUP=guest6_other bed
	local eui
	eui=$(python3 -c 'import ipaddress,sys
m = bytes.fromhex(sys.argv[1].replace(":", ""))
i = bytes([m[0] ^ 2]) + m[1:3] + b"\xff\xfe" + m[3:]
print(ipaddress.IPv6Address(bytes.fromhex("20010002000000060000000000000000")[:8] + i))' $GUEST_MAC)
	check "guest 1 formed a random identifier ($A1), not the EUI-64 ($eui)" test "$A1" != "$eui"
	check "guest 2 has its static address ($A2)" eq "$A2" 2001:2:0:6::beef
	check "the node learnt both (GET /sandboxes: $(field s1 guestIP6), $(field s2 guestIP6))" \
		eq "$(field s1 guestIP6) $(field s1 guestIP6Learnt) $(field s2 guestIP6)" "$A1 True $A2"
	check "guest 1 is reached on [node6]:$HP1" \
		peer_is "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$HP1/peer")" $ROUTER6_N
	check "guest 2 is reached on [node6]:$HP2" \
		peer_is "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")" $ROUTER6_N
	check "hairpin 1 → 2 over IPv6" in_snat6 "$(nss 1 curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")"
	check "learnt from their frames (guest6_learnt $(stat_of worker guest6_learnt))" \
		test "$(stat_of worker guest6_learnt)" -ge 2
	# A new address of guest 2: flows to it go there once it has been seen.
	nss 2 ip -6 addr del 2001:2:0:6::beef/64 dev eth0
	nss 2 ip -6 addr add 2001:2:0:6::cafe/64 dev eth0
	nss 2 ip -6 route replace default via fe80::1 dev eth0
	check "guest 2's new address is learnt" learnt_wait s2 2001:2:0:6::cafe
	check "and reached on [node6]:$HP2" \
		peer_is "$(nsc curl -s -m 5 "http://[$NODE_IP6]:$HP2/peer")" $ROUTER6_N
}

"case_$1"
tb_done
