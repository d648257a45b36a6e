#!/bin/bash
# The IPv6 test bed (issue 34), sourced by the test_ipv6*.sh scripts after lib.sh: the
# addresses, the routed world, guests with SLAAC from our router advertisement.

# IPv6 on the bed, from the benchmarking range 2001:2::/48 only: the node's world link
# 2001:2:0:1::/64 (node ::1, the client namespace as router ::2), the world host behind it on
# 2001:2:0:2::/64, guests forming addresses in 2001:2:0:6::/64 from our router advertisement.
NODE_IP6=2001:2:0:1::1
ROUTER6_N=2001:2:0:1::2
WORLD_IP6=2001:2:0:2::2
GUEST_PFX6=2001:2:0:6::/64
ipv6_bed() {
	local ns
	for ns in "$NS_C" "$NS_N" "$NS_W"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
			net.ipv6.conf.default.disable_ipv6=0
	done
	nsc sysctl -qw net.ipv6.conf.all.forwarding=1
	nsn sysctl -qw net.ipv6.conf.nic0.disable_ipv6=0
	nsc sysctl -qw net.ipv6.conf.cl0.disable_ipv6=0 net.ipv6.conf.r1.disable_ipv6=0
	nsw sysctl -qw net.ipv6.conf.w0.disable_ipv6=0
	nsn ip -6 addr add $NODE_IP6/64 dev nic0 nodad
	nsc ip -6 addr add $ROUTER6_N/64 dev cl0 nodad
	nsc ip -6 addr add 2001:2:0:2::1/64 dev r1 nodad
	nsw ip -6 addr add $WORLD_IP6/64 dev w0 nodad
	nsn ip -6 route add default via $ROUTER6_N dev nic0
	nsw ip -6 route add default via 2001:2:0:2::1 dev w0
}

# A guest with IPv6 on, as a real one: it takes its address and default route from the RA.
guest6() { # index
	nss "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
		net.ipv6.conf.eth0.disable_ipv6=0 net.ipv6.conf.eth0.accept_ra=2
}
guest6_addr() { # index: its global address once SLAAC made it and DAD passed (5 s at most)
	local a
	for _ in $(seq 50); do
		a=$(nss "$1" ip -6 -o addr show dev eth0 scope global -tentative |
		    awk '{print $4}' | cut -d/ -f1)
		[ -n "$a" ] && { echo "$a"; return 0; }
		sleep 0.1
	done
	return 1
}
in_snat6() { # "ip port" line
	local ip=${1%% *} port=${1##* }
	[ "$ip" = "$NODE_IP6" ] && [ "$port" -ge 30000 ] && [ "$port" -le 65535 ] ||
		{ echo "#   '$1' is not $NODE_IP6:<30000-65535>"; return 1; }
}

# The control side of IPv6 (issue 34): --node-ip6 on a world link with an IPv6 router, its
# default router learnt and followed, and the steering program's choice of IPv6 frames.
# Addresses from 2001:2::/48 (benchmarking) and link-local only.
v6_bed() {
	tb_setup
	tb_add_world
	nsc sysctl -qw net.ipv6.conf.all.forwarding=1
	nsn ip addr add $NODE_IP6/64 dev nic0 nodad
	nsc ip addr add $ROUTER6_N/64 dev cl0 nodad
	# The node's default route through the router's link-local address, as an RA leaves it.
	nsc ip addr add fe80::2/64 dev cl0 nodad
	nsc ip addr add 2001:2:0:2::1/64 dev r1 nodad
	nsw ip addr add $WORLD_IP6/64 dev w0 nodad
	nsw ip -6 route add default via 2001:2:0:2::1
	nsn ip -6 route add default via fe80::2 dev nic0
	# The link-local addresses' DAD over first: a tentative one answers nothing.
	local n
	for n in $(seq 50); do
		[ -z "$(nsn ip -6 addr show tentative; nsc ip -6 addr show tentative;
		       nsw ip -6 addr show tentative)" ] && break
		sleep 0.1
	done
	fp_start --node-ip6 $NODE_IP6
}

# A UDP datagram from the world host to [node6]:PORT.
udp6_to_node() { # port
	nsw python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
s.sendto(b"hello", (sys.argv[1], int(sys.argv[2])))' $NODE_IP6 "$1"
}

# An ICMPv6 echo reply from the world host to node6 with identifier ID (the kernel sums it).
echoreply6_to_node() { # id
	nsw python3 -c '
import socket, struct, sys
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.sendto(struct.pack("!BBHHH", 129, 0, 0, int(sys.argv[2]), 1) + b"x" * 8, (sys.argv[1], 0))' \
		$NODE_IP6 "$1"
}

grows() { # before after: after > before
	[ "$2" -gt "$1" ] || { echo "#   $2 is not above $1"; return 1; }
}

log_wait() { # text [count]: the log has text count times (5 s)
	local n
	for n in $(seq 50); do
		[ "$(grep -c "$1" "$TB_DIR/fp.log")" -ge "${2:-1}" ] && return 0
		sleep 0.1
	done
	echo "#   '$1' not ${2:-1} times in the log"
	return 1
}
