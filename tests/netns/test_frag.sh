#!/bin/bash
# IPv4 fragments (issue 33): sandbox egress and the replies, in order and out of order, large
# echoes, a fragmented reply to a small request, and the fragment table's shares. Usage:
# test_frag.sh CASE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
UM=$SRC_DIR/udpmtu.py

bed() {
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_udp_server "$NS_W" echo-server 7001
	tb_udp_server "$NS_W" echo-server 7002 4000
	fp_start "$@"
	eq "$(register s1 sb1 '[]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[]' | tail -n1)" 201 || die "register s2"
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	sleep 0.3
}

# The world host receives one datagram on PORT while the sandbox sends it as raw fragments.
frags_arrive() { # sandbox port size order
	nsw timeout 10 python3 "$UM" recv "$2" 1 5 >"$TB_DIR/recv.$2" &
	local rcv=$!
	sleep 0.3
	nss "$1" python3 "$UM" frags $WORLD_IP "$2" "$3" "$4" >/dev/null
	wait $rcv
	cat "$TB_DIR/recv.$2"
}

case_egress() {
	bed "$@"
	check "ping -s 3000 from a sandbox to the world (fragments both ways)" \
		quiet nss 1 ping -c 2 -s 3000 -W 3 -q $WORLD_IP
	check "a UDP echo of 4,000 bytes comes back whole" \
		eq "$(nss 1 python3 "$UM" ask $WORLD_IP 7001 4000)" "4000 same"
	check "a UDP echo of 60,000 bytes (41 fragments each way) comes back whole" \
		eq "$(nss 1 python3 "$UM" ask $WORLD_IP 7001 60000)" "60000 same"
	check "a small request's fragmented 4,000-byte reply arrives" \
		eq "$(nss 2 python3 "$UM" ask $WORLD_IP 7002 20)" "4000 other"
	check "fragments sent in reverse order arrive as one datagram" \
		eq "$(frags_arrive 1 7003 5000 reverse)" 5000
	check "fragments sent shuffled arrive as one datagram" \
		eq "$(frags_arrive 2 7004 7000 shuffle)" 7000
	check "the datagrams were tracked, the early fragments held and released" \
		test "$(stat_of worker frag_datagrams)" -ge 8 -a "$(stat_of worker frag_held)" -ge 4 \
		-a "$(stat_of worker frag_released)" -ge 4
	check "no fragment was dropped" eq "$(stat_of drops fragment)" 0
	# Every link is 1500: nothing is split again, and nothing is too big for its exit.
	check "no frame was fragmented again or dropped as too big" \
		eq "$(stat_of worker fragmented) $(stat_of drops too_big)" "0 0"
	check "the steering program sent the replies' fragments to us" \
		test "$(stat_of xdp redirect_fragment)" -ge 40
}

# The world's fragments out of order, the last first: a reply to a sandbox's request (ours:
# held by the worker until the first fragment comes) and a datagram to a socket of the node's
# own (the kernel's: its first fragment goes to the kernel, the early ones follow it through
# cube-dev once they time out in the fragment table).
case_early() {
	bed "$@"
	tb_udp_server "$NS_W" frag-server 7007 4000 reverse
	check "a small request's 4,000-byte reply, its fragments in reverse order, arrives whole" \
		eq "$(nss 1 python3 "$UM" ask $WORLD_IP 7007 20)" "4000 other"
	check "the steering program sent the early fragments to the worker, which held them" \
		test "$(stat_of xdp redirect_fragment_early)" -ge 3 -a \
		"$(stat_of worker frag_released)" -ge 3
	check "and passed none to the kernel" eq "$(stat_of xdp pass_fragment)" 0
	nsn timeout 10 python3 "$UM" recv 7100 1 8 >"$TB_DIR/recv.node" &
	local rcv=$!
	sleep 0.3
	nsw python3 "$UM" frags $NODE_IP 7100 5000 reverse >/dev/null
	wait $rcv
	check "a datagram to the node's own socket in reverse order arrives whole" \
		eq "$(cat "$TB_DIR/recv.node")" 5000
	check "its first fragment went to the kernel, the early ones after it through cube-dev" \
		test "$(stat_of xdp pass_fragment)" -ge 1 -a "$(stat_of worker frag_to_kernel)" -ge 4
}

# The same on two workers, a world queue each: a datagram's later fragments reach the worker
# that took its first one (worker_owner), whichever sandbox or flow it is. Replies whose
# fragments come last first: both sandboxes' replies reach the node from the same address, so
# one worker receives them and one of the two belongs to the other worker; its early
# fragments, held where they came, follow their first there.
case_workers() {
	export TB_QUEUES=2 FP_EAL="--lcores 0@0,1@1,2@0"
	case_egress --workers 2 --world-queues 2 --idle-sleep-us 20
	check "frames were handed between the workers" test "$(stat_of worker handoffs)" -gt 0
	tb_udp_server "$NS_W" frag-server 7007 4000 reverse
	local s
	for s in 1 2; do
		check "sandbox $s: a 4,000-byte reply, its fragments in reverse order, arrives whole" \
			eq "$(nss $s python3 "$UM" ask $WORLD_IP 7007 20)" "4000 other"
	done
	check "the early fragments of one followed its first to the other worker" \
		test "$(stat_of worker frag_handed_over)" -ge 4
	check "none expired" eq "$(stat_of drops frag_expired)" 0
}

# Fragments towards an exposed port: a TCP SYN carrying data, split in two fragments, in order
# and last first, through the host port; the sandbox's kernel reassembles it and answers.
case_exposed() {
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_sandbox_server 1 8080
	fp_start
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	local hp=$(hostport_of s1 8080) o
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	for o in inorder reverse; do
		check "a fragmented SYN ($o) through the host port gets the sandbox's SYN+ACK" \
			eq "$(nsc python3 "$UM" syn-frags $NODE_IP "$hp" $o)" synack
	done
	check "the sandbox reassembled both" test "$(nss 1 awk '/^Ip:/ { if (n++) print $16 }' \
		/proc/net/snmp)" -ge 2
	check "the early fragment was held and released" test "$(stat_of worker frag_released)" -ge 1
}

# A sandbox that sends endless fragment sets without a first fragment holds its share of the
# table and no more: another sandbox's fragmented datagrams keep going through.
case_limits() {
	bed --frag-contexts 256 --frag-held 128
	nss 1 python3 "$UM" noise $WORLD_IP 7005 4 >"$TB_DIR/noise" &
	local hog=$!
	sleep 1
	check "while s1 floods first-less fragments, s2's 4,000-byte echo comes back" \
		eq "$(nss 2 python3 "$UM" ask $WORLD_IP 7001 4000)" "4000 same"
	check "and its out-of-order fragments arrive" \
		eq "$(frags_arrive 2 7006 5000 reverse)" 5000
	wait $hog
	log "s1 sent $(cat "$TB_DIR/noise") fragments"
	check "s1 hit its share (frag_zone_share or frag_hold_share counted)" \
		test $(( $(stat_of drops frag_zone_share) + $(stat_of drops frag_hold_share) )) -gt 0
	sleep 3
	check "its held fragments expired and were counted" test "$(stat_of drops frag_expired)" -gt 0
	check "s2 still gets a fragmented echo after the flood" \
		eq "$(nss 2 python3 "$UM" ask $WORLD_IP 7001 4000)" "4000 same"
}

"case_$1"
tb_done
