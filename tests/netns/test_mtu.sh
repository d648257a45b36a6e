#!/bin/bash
# Path MTU (issue 33): a world network of MTU 1400 in front of sandboxes at 1500, through the
# namespace test bed at the kernel's default offloads. Usage: test_mtu.sh CASE
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bed() {
	tb_setup
	tb_add_world
	# The world's links are 1400 (a cloud or overlay network); the sandboxes keep 1500.
	nsc ip link set cl0 mtu 1400
	nsn ip link set nic0 mtu 1400
	nsc ip link set r1 mtu 1400
	nsw ip link set w0 mtu 1400
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_server "cvs-s2-$TB_ID" 8080 --name sandbox2
	tb_server "$NS_W" 8000 --name world
	fp_start
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[8080]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 8080)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
}

# Sandbox 1's datagrams larger than the world's MTU: COUNT without DF leave in fragments and
# arrive whole; one with DF gets its frag-needed, which teaches the guest the world's MTU.
udp_oversize() { # size count world-mtu
	local rcv got out
	nsw python3 "$SRC_DIR/udpmtu.py" recv 9998 "$2" 5 >"$TB_DIR/recv" &
	rcv=$!
	sleep 0.3
	nss 1 python3 "$SRC_DIR/udpmtu.py" send $WORLD_IP 9998 "$1" nodf "$2" >/dev/null
	wait $rcv
	got=$(tr '\n' ' ' <"$TB_DIR/recv")
	check "non-DF datagrams of $1 bytes arrive whole at the world host ($got)" \
		eq "$got" "$(printf "$1 %.0s" $(seq "$2"))"
	check "they left in fragments" test "$(stat_of worker fragmented)" -ge "$2"
	out=$(nss 1 python3 "$SRC_DIR/udpmtu.py" send $WORLD_IP 9999 "$1" df)
	check "a DF datagram of $1 bytes gets its frag-needed: the guest's path MTU is $3 ($out)" \
		eq "$out" "$3"
}

# 20 MB each way between a client (a command prefix) and a server's URL, sha256 checked.
both_ways() { # what url client-command...
	local what=$1 url=$2 n=$((20 * 1024 * 1024)) got
	shift 2
	[ -f "$TB_DIR/up.bin" ] || head -c $n /dev/urandom >"$TB_DIR/up.bin"
	got=$("$@" curl -s -m 60 "$url/blob?n=$n" | sha256sum | cut -d' ' -f1)
	check "20 MB $what, download, sha256 matches" eq "$got" \
		"$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)"
	got=$("$@" curl -s -m 60 -T "$TB_DIR/up.bin" "$url/sha")
	check "20 MB $what, upload, sha256 matches" eq "$got" \
		"$(sha256sum "$TB_DIR/up.bin" | cut -d' ' -f1)"
}

mtu_of() { api_body GET "/sandboxes/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("mtu"))'; }

case_world1400() {
	bed
	local n=$((20 * 1024 * 1024)) want got out
	check "GET shows the MTU each sandbox is served at" eq "$(mtu_of s1) $(mtu_of s2)" "1500 1500"
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	both_ways "through the sandbox's host port" "http://$NODE_IP:$HP1" nsc
	both_ways "between the sandbox and the world (egress)" "http://$WORLD_IP:8000" nss 1
	check "the SYNs had their MSS clamped to the world's 1400" \
		test "$(stat_of worker mss_clamped)" -ge 4

	udp_oversize 1450 3 1400
	check "frag-needed answers counted" test "$(stat_of worker frag_needed_sent)" -ge 1
	check "and counted for the sandbox that sent them" test "$(api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sandboxPorts"]["s1"]["mtu_exceeded"])')" -ge 4

	# The first sandbox floods oversize frames (DF and not): the second one's egress goes on.
	nss 1 python3 "$SRC_DIR/udpmtu.py" send $WORLD_IP 9997 1472 nodf 3000 >/dev/null &
	local flood=$!
	nss 1 python3 "$SRC_DIR/udpmtu.py" send $WORLD_IP 9996 1472 df 3000 >/dev/null &
	local flood2=$!
	local t0=$(date +%s%N)
	out=$(nss 2 curl -s -m 5 "http://$WORLD_IP:8000/peer")
	check "the second sandbox's egress works while the first floods ($(( ($(date +%s%N) - t0) / 1000000 )) ms)" \
		contains "$out" "$NODE_IP"
	wait $flood $flood2
	got=$(nss 2 curl -s -m 60 "http://$WORLD_IP:8000/blob?n=$n" | sha256sum | cut -d' ' -f1)
	check "and its 20 MB download after the flood is whole" eq "$got" "$want"
}

case_toobig() {
	tb_setup
	tb_add_sandbox 1
	nsn ip link set sb1 mtu 9500
	nss 1 ip link set eth0 mtu 9500
	fp_start
	local out
	out=$(register s1 sb1 '[8080]')
	check "a sandbox interface at MTU 9500 is refused with 400" eq "$(tail -n1 <<<"$out")" 400
	check "the answer names the MTU and the largest one that works ($(head -n1 <<<"$out"))" \
		contains "$out" "has MTU 9500; sandbox interfaces carry at most 9208"
	nsn ip link set sb1 mtu 9000
	nss 1 ip link set eth0 mtu 9000
	out=$(register s1 sb1 '[8080]')
	check "at 9000 it registers ($(head -n1 <<<"$out"))" eq "$(tail -n1 <<<"$out")" 201
	check "and GET shows it served at 9000" eq "$(mtu_of s1)" 9000
}

# Average frame size a sandbox's eth0 received since the bed came up.
rx_avg() { nss "$1" cat /sys/class/net/eth0/statistics/rx_bytes \
	/sys/class/net/eth0/statistics/rx_packets | paste -sd' ' | awk '{print int($1 / $2)}'; }
tx_avg() { nss "$1" cat /sys/class/net/eth0/statistics/tx_bytes \
	/sys/class/net/eth0/statistics/tx_packets | paste -sd' ' | awk '{print int($1 / $2)}'; }

# Jumbo frames: the world links and the sandboxes at MTU 9000, frames in several AF_XDP
# buffers (multi-buffer) on the world queue and the funnel, 20 MB each way, hairpin included.
case_jumbo() {
	tb_setup
	tb_add_world
	tb_world_mtu 9000
	local l
	tb_add_sandbox 1
	tb_add_sandbox 2
	for l in 1 2; do
		nsn ip link set sb$l mtu 9000
		nss $l ip link set eth0 mtu 9000
	done
	tb_sandbox_server 1 8080
	tb_server "$NS_W" 8000 --name world
	fp_start "$@"
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 8080)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	check "GET shows the sandboxes served at 9000" eq "$(mtu_of s1) $(mtu_of s2)" "9000 9000"
	both_ways "through sandbox 1's host port" "http://$NODE_IP:$HP1" nsc
	check "the sandbox received jumbo frames (average $(rx_avg 1) bytes)" test "$(rx_avg 1)" -gt 4000
	check "and sent them (average $(tx_avg 1) bytes)" test "$(tx_avg 1)" -gt 4000
	both_ways "between sandbox 2 and the world (egress)" "http://$WORLD_IP:8000" nss 2
	both_ways "hairpin, sandbox 2 to sandbox 1's host port" "http://$NODE_IP:$HP1" nss 2
	check "no MSS was clamped: the whole path is 9000" eq "$(stat_of worker mss_clamped)" 0
	check "no frame dropped as too big" eq "$(stat_of drops too_big)" 0
	# A jumbo network's fragments out of order: the later ones, 8,000 bytes each, are held in
	# jumbo copies until their first comes.
	tb_udp_server "$NS_W" frag-server 7009 20000 reverse 8000
	local held=$(stat_of worker frag_held)
	check "a 20,000-byte reply in 8,000-byte fragments, last first, arrives whole" \
		eq "$(nss 2 python3 "$SRC_DIR/udpmtu.py" ask $WORLD_IP 7009 20)" "20000 other"
	check "its two later fragments were held" test $(( $(stat_of worker frag_held) - held )) -ge 2
	check "no fragment was refused a copy" eq "$(stat_of drops frag_no_hold)" 0
}

# Jumbo sandboxes behind a world of 1500, the usual cloud node: TCP has its MSS clamped both
# ways, a non-DF datagram of 8,000 bytes leaves in fragments and arrives whole, a DF one gets
# its frag-needed with the world's MTU, and a jumbo download through the host port is whole.
case_jumbo1500() {
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	nsn ip link set sb1 mtu 9000
	nss 1 ip link set eth0 mtu 9000
	tb_sandbox_server 1 8080
	tb_server "$NS_W" 8000 --name world
	fp_start
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	HP1=$(hostport_of s1 8080)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	both_ways "through the 9000 sandbox's host port at 1500" "http://$NODE_IP:$HP1" nsc
	both_ways "between the 9000 sandbox and the world at 1500" "http://$WORLD_IP:8000" nss 1
	check "the sandbox's SYN and SYN+ACK had their MSS of 8960 clamped to the world's" \
		test "$(stat_of worker mss_clamped)" -ge 2
	udp_oversize 8000 2 1500
	check "no frame dropped as too big" eq "$(stat_of drops too_big)" 0
}

# The same with two workers: the two sandboxes on different workers, so hairpin frames and
# egress replies cross between workers in chained mbufs.
case_jumbo2() {
	export FP_EAL="--lcores 0@0,1@1,2@0"
	case_jumbo --workers 2 --world-queues 1 --idle-sleep-us 20
	check "frames were handed between workers" test "$(stat_of worker handoffs)" -gt 1000
}

# A VMM's TSO frame on a TAP with a vnet header (64 KiB at most) is dropped and counted: at the
# TAP (sbx_too_big) when longer than the funnel carries, in the worker (too_big) when it is a
# jumbo frame the funnel carries but longer than the TAP's MTU; never lost without a word. A
# frame of one MSS from the same TAP, its checksum partial, goes through. Segmenting the TSO
# frame instead is not built (docs/datapath.md, "Offloads").
# tapvmm.py as the VMM of TAP vt9 (coproc VMM), the TAP registered as sandbox t<size>.
tap_vmm() { # size mode
	local line
	coproc VMM { ip netns exec "$NS_N" python3 "$SRC_DIR/tapvmm.py" vt9 "$1" "$2"; }
	TB_PIDS+=($VMM_PID)
	read -r line <&"${VMM[0]}"
	nsn ip link set vt9 up
	contains "$(register "t$1" vt9 '[]' | tail -n1)" 20 >/dev/null || echo "register failed"
}

tap_frame() { # size [nogso]: the worker's sandbox_rx_packets and the verdict's count after one frame
	local p v line
	tap_vmm "$1" "${2:-frame}"
	p=$(stat_of worker sandbox_rx_packets)
	v=$(stat_of xdp sbx_too_big)
	echo go >&"${VMM[1]}"
	read -r line <&"${VMM[0]}"
	sleep 0.5
	echo "$(( $(stat_of worker sandbox_rx_packets) - p )) $(( $(stat_of xdp sbx_too_big) - v ))"
	echo go >&"${VMM[1]}"
	wait "$VMM_PID" 2>/dev/null
	api DELETE "/sandboxes/t$1" >/dev/null
}

# A VMM's TSO frame of SIZE bytes through a real TCP connection to the world host: what the
# server read (bytes, and whether they are the guest's), then what it acknowledged to the guest.
# With term or kill, cubevs-fp restarts (fp_end) between the registration and the connection:
# so not in a subshell, and the answer is in $TCP_OUT.
tap_tcp() { # size [term|kill]
	local line got
	nsw timeout 10 python3 -c '
import socket, sys
n = int(sys.argv[1])
s = socket.create_server(("'$WORLD_IP'", 8000))
s.settimeout(8)
c, _ = s.accept()
c.settimeout(3)
b = b""
try:
    while len(b) < n:
        d = c.recv(65536)
        if not d:
            break
        b += d
except OSError:
    pass
print(len(b), "same" if b == bytes(i % 251 for i in range(n)) else "differ", flush=True)' \
		"$1" >"$TB_DIR/srv" &
	local srv=$!
	sleep 0.3
	tap_vmm "$1" tcp
	if [ -n "${2:-}" ]; then
		fp_end "$2"
		fp_start >/dev/null
	fi
	echo go >&"${VMM[1]}"
	read -r line <&"${VMM[0]}"
	echo go >&"${VMM[1]}"
	wait "$VMM_PID" 2>/dev/null
	wait "$srv" 2>/dev/null
	TCP_OUT="$(cat "$TB_DIR/srv") ${line#acked }"
	api DELETE "/sandboxes/t$1" >/dev/null
}

case_taptso() {
	tb_setup
	tb_add_world
	fp_start
	local g=$(stat_of xdp sbx_gso) d=$(stat_of drops too_big)
	check "a 1,000-byte frame from a TAP with a vnet header reaches the worker as one" \
		eq "$(tap_frame 1000)" "1 0"
	tap_tcp 4000
	check "a TAP's 4,000-byte TSO frame: segmented, the server reads and acknowledges it all" \
		eq "$TCP_OUT" "4000 same 4000"
	tap_tcp 64000
	check "a 64,000-byte one (the largest a VMM hands over) as well" \
		eq "$TCP_OUT" "64000 same 64000"
	check "both went to the kernel's segmentation (sbx_gso)" \
		eq "$(( $(stat_of xdp sbx_gso) - g ))" 2
	check "and none was dropped as too big (too_big)" \
		eq "$(( $(stat_of drops too_big) - d ))" 0
	check "a frame longer than the MTU without a GSO type is dropped, counted (rx, sbx_too_big)" \
		eq "$(tap_frame 16000 nogso)" "0 1"
	tap_tcp 64000 term
	check "across a SIGTERM restart the TAP's TC filter stays and is taken over (64,000 bytes)" \
		eq "$TCP_OUT" "64000 same 64000"
	tap_tcp 64000 kill
	check "and across kill -9" eq "$TCP_OUT" "64000 same 64000"
	tap_filters
}

# Our TC filter is on a TAP only while it is a sandbox, and the clsact qdisc only if we made
# it; someone else's qdisc and filters stay, and one in our filter's place is never replaced.
tap_filters() {
	local ours='pref 53083 bpf.*cvs_sbx_gso'
	nsn ip tuntap add dev vt8 mode tap
	nsn ip link set vt8 up
	register t8 vt8 '[]' >/dev/null
	check "a registered TAP has our filter" bash -c \
		"ip netns exec $NS_N tc filter show dev vt8 ingress | grep -q '$ours'"
	api DELETE /sandboxes/t8 >/dev/null
	check "deleted: neither our filter nor the clsact qdisc we made is left" bash -c \
		"! ip netns exec $NS_N tc qdisc show dev vt8 | grep -q clsact"
	nsn tc qdisc add dev vt8 clsact
	nsn tc filter add dev vt8 ingress prio 7 bpf bytecode "1,6 0 0 4294967295,"
	register t8 vt8 '[]' >/dev/null
	api DELETE /sandboxes/t8 >/dev/null
	check "someone else's clsact and filter stay over our attach and detach" bash -c \
		"ip netns exec $NS_N tc filter show dev vt8 ingress | grep -q 'pref 7 bpf' &&
		 ! ip netns exec $NS_N tc filter show dev vt8 ingress | grep -q cvs_sbx_gso"
	nsn tc filter add dev vt8 ingress prio 53083 handle 0xcf5b bpf bytecode "1,6 0 0 0,"
	check "a filter in our place: the PUT still attaches the sandbox" \
		contains "$(register t8 vt8 '[]' | tail -n1)" 20
	check "and the filter is left as it was, said in the log" bash -c \
		"ip netns exec $NS_N tc filter show dev vt8 ingress | grep -q \"handle 0xcf5b.*bytecode '1,6 0 0 0'\" &&
		 grep -q 'another program holds ingress filter handle 0xcf5b' $TB_DIR/fp.log"
	api DELETE /sandboxes/t8 >/dev/null
	nsn ip link del vt8
}

# The world port given to EAL (net_af_xdp on nic0) on a world network of MTU 1400: the port
# takes the link's MTU, not DPDK's 1500, so oversize datagrams get their frag-needed or are
# fragmented and SYNs clamped, as with --world-iface. One larger than an mbuf fails the start.
case_eal1400() {
	FP_EAL_WORLD=1
	FP_EAL_ARGS+=(--vdev "net_af_xdp0,iface=nic0,xdp_prog=$STEER_OBJ")
	bed
	local n=$((20 * 1024 * 1024)) want rc=0
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	check "20 MB download through the sandbox's host port, sha256 matches" \
		eq "$(nsc curl -s -m 60 "http://$NODE_IP:$HP1/blob?n=$n" | sha256sum | cut -d' ' -f1)" \
		"$want"
	check "the sandbox's SYN-ACK had its MSS clamped to the world's 1400" \
		test "$(stat_of worker mss_clamped)" -ge 1
	udp_oversize 1450 3 1400
	fp_stop
	nsc ip link set cl0 mtu 9000
	nsn ip link set nic0 mtu 9000
	timeout 20 ip netns exec "$NS_N" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf \
		--no-pci "${FP_EAL_ARGS[@]}" -- --state-file "$TB_DIR/state.json" \
		--runtime-dir "$TB_DIR/run" "${FP_PIN[@]}" >"$TB_DIR/fp.log" 2>&1 || rc=$?
	check "at MTU 9000 the start fails (exit $rc) and says why: $(grep -m1 -o \
		'the world port nic0 has MTU 9000.*' "$TB_DIR/fp.log")" \
		grep -q "the world port nic0 has MTU 9000; an EAL world port carries at most" \
		"$TB_DIR/fp.log"
}

# A world link larger than the longest jumbo frame the world queues carry: the start fails and
# says why.
case_world9000() {
	tb_setup
	nsc ip link set cl0 mtu 9500
	nsn ip link set nic0 mtu 9500
	local rc=0
	timeout 20 ip netns exec "$NS_N" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf \
		--no-pci -- --world-iface nic0 --state-file "$TB_DIR/state.json" \
		--runtime-dir "$TB_DIR/run" "${FP_PIN[@]}" >"$TB_DIR/fp.log" 2>&1 || rc=$?
	check "the start fails (exit $rc)" test "$rc" -ne 0 -a "$rc" -ne 124
	check "and names the MTU and the largest one that works: $(grep -m1 -i mtu "$TB_DIR/fp.log")" \
		grep -q "nic0 has MTU 9500.*at most 9216" "$TB_DIR/fp.log"
	nsc ip link set cl0 mtu 9000
	nsn ip link set nic0 mtu 9000
	fp_start
	check "at 9000 it starts" kill -0 "$FP_PID"
}

"case_$1"
tb_done
