#!/bin/bash
# IPv6 ICMPv6 errors and fragments through the namespace test bed (issue 34): path MTU
# discovery through a smaller link behind the node, our own Packet Too Big, 4,000-byte UDP
# datagrams in fragments each way, a port unreachable translated back. Usage: test_ipv6i.sh CASE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib6.sh"

# One dual-stack guest (sandbox 1) with its SLAAC address in A1, and the world host's HTTP
# server; fp_start's extra options are the arguments. BED_WORLD_MTU, if set, is the MTU of
# the world's links (tb_world_mtu).
bed6() {
	tb_setup
	tb_add_world
	[ -z "${BED_WORLD_MTU:-}" ] || tb_world_mtu "$BED_WORLD_MTU"
	tb_add_sandbox 1
	ipv6_bed
	tb_server "$NS_W" 8000 --name world --ipv6
	fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6 "$@"
	eq "$(register s1 sb1 '[]' | tail -n1)" 201 || die "register s1"
	nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
	guest6 1
	A1=$(guest6_addr 1) || die "guest 1 formed no address"
}

# The guest's path MTU towards the world host, as its route cache has it (empty: none).
path_mtu6() {
	nss 1 ip -6 route get $WORLD_IP6 | sed -n 's/.* mtu \([0-9]*\).*/\1/p'
}

# A UDP echo server on the world host (port 7000): each datagram back as it came, SIZE bytes
# of it (0: all), to the address and port it came from; the sizes it got, one a line, in FILE.
udp6_echo_world() { # size file
	nsw python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 7000))
s.settimeout(20)
n = int(sys.argv[1])
with open(sys.argv[2], "w") as f:
    try:
        while True:
            b, a = s.recvfrom(65535)
            f.write("%d %s\n" % (len(b), a[0])); f.flush()
            s.sendto(b if not n else bytes(n), a)
    except socket.timeout:
        pass' "$1" "$2" &
	TB_PIDS+=($!)
	sleep 0.3
}

# From the guest: COUNT datagrams of SIZE bytes to the world echo, each answer's size printed
# (or "timeout"); SIZE itself when the first datagram meets a Packet Too Big (EMSGSIZE):
# the kernel fragments it on the next try.
udp6_ask() { # size count
	nss 1 python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(2)
s.connect((sys.argv[1], 7000))
for i in range(int(sys.argv[3])):
    try:
        s.send(bytes(int(sys.argv[2])))
        print(len(s.recv(65535)))
    except socket.timeout:
        print("timeout")
    except OSError as e:
        print("error %d" % e.errno)
    time.sleep(0.1)' $WORLD_IP6 "$1" "$2" | tr '\n' ' '
}

# (a) PMTU through a smaller link: the router's link to the world host carries 1360 while the
# node's link and the guest carry 1500. The router's Packet Too Big to the node's
# address is steered to the worker, translated for the guest, and its TCP and UDP go through.
case_pmtu() {
	bed6
	nsc ip link set r1 mtu 1360
	# The world host sends within 1360 but announces the MSS of its own 1500 link, as a host
	# behind a smaller link further on does: the guest's segments need the router's PTB.
	nsw ip -6 route replace default via 2001:2:0:2::1 dev w0 mtu 1360 advmss 1440
	udp6_echo_world 0 "$TB_DIR/echo"
	local e0 t0 out n=$((4 * 1024 * 1024))
	e0=$(stat_of xdp redirect_icmp_error6)
	t0=$(stat_of worker icmp_errors)
	check "the guest's path MTU to the world host starts at its link's (none cached: '$(path_mtu6)')" \
		eq "$(path_mtu6)" ""
	head -c $n /dev/urandom >"$TB_DIR/up.bin"
	check "4 MB uploaded over TCP from the guest through the 1360 link, sha256 matches" eq \
		"$(nss 1 curl -s -m 30 -T "$TB_DIR/up.bin" "http://[$WORLD_IP6]:8000/sha")" \
		"$(sha256sum <"$TB_DIR/up.bin" | cut -d' ' -f1)"
	check "the router's Packet Too Big reached the guest: its route cache says mtu 1360" \
		eq "$(path_mtu6)" 1360
	check "steered to the worker as an ICMPv6 error of ours (redirect_icmp_error6)" \
		grows "$e0" "$(stat_of xdp redirect_icmp_error6)"
	check "and translated (icmp_errors)" grows "$t0" "$(stat_of worker icmp_errors)"
	check "and 4 MB downloaded, sha256 matches" eq \
		"$(nss 1 curl -s -m 30 "http://[$WORLD_IP6]:8000/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)"
	# UDP learns it the same way: a fresh route cache, a datagram larger than the path.
	nss 1 ip -6 route flush cache
	nss 1 ip -6 route flush table cache 2>/dev/null
	t0=$(stat_of worker icmp_errors)
	out=$(udp6_ask 1400 3)
	check "UDP datagrams of 1,400 bytes get answered once the path is learnt ($out)" \
		contains "$out" "1400 1400"
	check "the later datagrams left the guest in fragments, carried (frag_forwarded $(stat_of worker frag_forwarded))" \
		test "$(stat_of worker frag_forwarded)" -ge 1
}

# (b) The node's world link carries 1400, the guest 1500: a guest datagram above 1400 is
# answered by the fast path with a Packet Too Big from fe80::1, and the guest's next ones
# go through in fragments.
case_ptb() {
	bed6_small() {
		tb_setup
		tb_add_world
		nsn ip link set nic0 mtu 1400
		nsc ip link set cl0 mtu 1400
		tb_add_sandbox 1
		ipv6_bed
		tb_server "$NS_W" 8000 --name world --ipv6
		fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6
		eq "$(register s1 sb1 '[]' | tail -n1)" 201 || die "register s1"
		nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
		guest6 1
		A1=$(guest6_addr 1) || die "guest 1 formed no address"
	}
	bed6_small
	udp6_echo_world 0 "$TB_DIR/echo"
	# The first Packet Too Big the guest receives: its source and MTU.
	nss 1 python3 -c '
import socket, struct, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x86dd))
s.bind(("eth0", 0))
s.settimeout(0.2)
end = time.time() + 8
while time.time() < end:
    try:
        f, a = s.recvfrom(65535)
    except socket.timeout:
        continue
    if a[2] == socket.PACKET_OUTGOING or len(f) < 62 or f[20] != 58 or f[54] != 2:
        continue
    print(socket.inet_ntop(socket.AF_INET6, f[22:38]), struct.unpack("!I", f[58:62])[0])
    break' >"$TB_DIR/ptb" &
	local dump=$! out
	sleep 0.5
	out=$(udp6_ask 1450 4)
	check "UDP datagrams of 1,450 bytes get answered once the path is learnt ($out)" \
		contains "$out" "1450 1450"
	check "our Packet Too Big was counted (packet_too_big_sent $(stat_of worker packet_too_big_sent))" \
		test "$(stat_of worker packet_too_big_sent)" -ge 1
	check "the guest's route cache took the world link's MTU: 1400" eq "$(path_mtu6)" 1400
	wait $dump
	check "it came from the guest's router, fe80::1, with MTU 1400" eq "$(cat "$TB_DIR/ptb")" "fe80::1 1400"
	check "the sandbox's mtu_exceeded counted it" test "$(api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sandboxPorts"]["s1"]["mtu_exceeded"])')" -ge 1
	check "TCP through the 1400 link: 2 MB, sha256 matches" eq \
		"$(nss 1 curl -s -m 30 "http://[$WORLD_IP6]:8000/blob?n=2097152" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha 2097152)"
}

# (c) 4,000-byte UDP datagrams each way at MTU 1500: the guest's leave in fragments, the
# world host's answers come back in fragments, both translated fragment by fragment.
case_frag() {
	bed6 "$@"
	udp6_echo_world 0 "$TB_DIR/echo"
	local f0 d0 out
	f0=$(stat_of worker frag_forwarded)
	d0=$(stat_of worker frag_datagrams)
	out=$(udp6_ask 4000 3)
	check "three 4,000-byte datagrams answered with 4,000 bytes each ($out)" \
		eq "$out" "4000 4000 4000 "
	check "the world host got them whole, from the node's IPv6 address" \
		eq "$(sort -u "$TB_DIR/echo")" "4000 $NODE_IP6"
	check "their datagrams were tracked both ways (frag_datagrams $(stat_of worker frag_datagrams))" \
		test "$(stat_of worker frag_datagrams)" -ge $((d0 + 6))
	check "their later fragments translated (frag_forwarded $(stat_of worker frag_forwarded))" \
		test "$(stat_of worker frag_forwarded)" -ge $((f0 + 6))
	check "the world's were steered to the worker (redirect_fragment6 $(stat_of xdp redirect_fragment6))" \
		test "$(stat_of xdp redirect_fragment6)" -ge 6
	check "ping -6 -s 3000 (an echo in fragments) is answered" \
		quiet nss 1 ping -6 -c 2 -s 3000 -W 2 -q $WORLD_IP6
	check "nothing dropped as a fragment" eq "$(stat_of drops fragment)" 0
}

# (c) on two workers, a world queue each: a world fragment goes to the worker of its
# datagram's first (the SNAT port's), those ahead of it follow it there.
case_fragworkers() {
	export TB_QUEUES=2 FP_EAL="--lcores 0@0,1@1,2@0"
	case_frag --workers 2 --world-queues 2 --idle-sleep-us 20
	# Which queue a fragment lands in is the kernel's choice: shown, not asserted.
	log "handoffs $(stat_of worker handoffs), frag_handed_over $(stat_of worker frag_handed_over)"
}

# (d) Port unreachable both ways: the world host's for a guest datagram to a closed port
# reaches the guest's socket (ECONNREFUSED), as does a router's Time Exceeded; the guest's
# for a late answer to a socket it closed reaches the world host's.
case_unreach() {
	bed6
	local t0 out
	t0=$(stat_of worker icmp_errors)
	out=$(nss 1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((sys.argv[1], 7999))
s.send(b"anyone?")
try:
    s.recv(100)
    print("answered")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")' $WORLD_IP6)
	check "UDP to a closed port of the world host: the guest's socket sees ECONNREFUSED ($out)" \
		eq "$out" refused
	check "the error was translated (icmp_errors)" grows "$t0" "$(stat_of worker icmp_errors)"
	# Hop limit 1: the router's Time Exceeded (we do not count a hop) reaches the guest.
	out=$(nss 1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IPV6, 25, 1)  # IPV6_RECVERR
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_UNICAST_HOPS, 1)
s.settimeout(3)
s.connect((sys.argv[1], 33434))
s.send(b"trace")
try:
    s.recv(100)
    print("answered")
except socket.timeout:
    print("timeout")
except OSError as e:
    print("errno %d" % e.errno)' $WORLD_IP6)
	check "hop limit 1: the router's Time Exceeded reaches the guest's socket (EHOSTUNREACH: $out)" \
		eq "$out" "errno 113"
	# The world host answers late, from a connected socket, after the guest closed its own.
	nsw python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.bind(("::", 7001))
s.settimeout(10)
b, a = s.recvfrom(100)
s.connect(a)
time.sleep(0.5)
s.send(b"late")
try:
    s.recv(100)
    print("answered")
except ConnectionRefusedError:
    print("refused")
except socket.timeout:
    print("timeout")' >"$TB_DIR/late" &
	local srv=$!
	sleep 0.3
	t0=$(stat_of worker icmp_errors)
	nss 1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.sendto(b"hi", (sys.argv[1], 7001))
s.close()' $WORLD_IP6
	wait $srv
	check "the guest's port unreachable for the late answer reached the world host ($(cat "$TB_DIR/late"))" \
		eq "$(cat "$TB_DIR/late")" refused
	check "translated on its way out (icmp_errors)" grows "$t0" "$(stat_of worker icmp_errors)"
}

# (f) A jumbo world in front of a guest at 1500: the world host's links carry 9000. TCP both
# ways keeps to the guest's MSS; a 4,000-byte UDP answer the world host sends whole (its
# link carries it) is too big for the guest: we answer it with a Packet Too Big of 1500 from
# the node's address, the world host fragments the next ones, and they arrive.
case_jumbo() {
	BED_WORLD_MTU=9000 bed6
	local n=$((8 * 1024 * 1024)) p0 out
	head -c $n /dev/urandom >"$TB_DIR/up.bin"
	check "8 MB uploaded over TCP from the guest at 1500 to the world at 9000, sha256 matches" \
		eq "$(nss 1 curl -s -m 30 -T "$TB_DIR/up.bin" "http://[$WORLD_IP6]:8000/sha")" \
		"$(sha256sum <"$TB_DIR/up.bin" | cut -d' ' -f1)"
	check "and 8 MB downloaded, sha256 matches" eq \
		"$(nss 1 curl -s -m 30 "http://[$WORLD_IP6]:8000/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)"
	check "no frame dropped as too big on the way (too_big $(stat_of drops too_big))" \
		eq "$(stat_of drops too_big)" 0
	udp6_echo_world 4000 "$TB_DIR/echo"
	p0=$(stat_of worker packet_too_big_sent)
	out=$(udp6_ask 100 4)
	check "4,000-byte answers to the guest's small datagrams arrive once the world host has the path ($out)" \
		contains "$out" "4000 4000"
	check "a Packet Too Big went to the world host (packet_too_big_sent)" \
		grows "$p0" "$(stat_of worker packet_too_big_sent)"
	check "the world host's route cache took 1500 for the node's address" \
		contains "$(nsw ip -6 route get $NODE_IP6)" "mtu 1500"
	check "the later answers came in fragments, carried (frag_forwarded $(stat_of worker frag_forwarded))" \
		test "$(stat_of worker frag_forwarded)" -ge 2
}

"case_$1"
tb_done
