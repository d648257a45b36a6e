#!/bin/bash
# IPv6 sessions across restarts and IPv6 TCP window tracking (issue 34): 50 long-lived IPv6
# flows from guests to a world host, IPv4 flows beside them, kept over a SIGTERM restart and
# a kill -9 restart (the IPv6 tables are in the session region); blind injection against an
# IPv6 flow dropped and counted as for IPv4, and passed with --tcp-liberal.
# Usage: test_ipv6r.sh CASE  (IPV6R_WORKERS=2 for two workers)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib6.sh"
source "$SRC_DIR/flows.sh"

FP6=(--node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6)
# IPV6R_WORKERS=2: two workers sharing the CPUs (not in CI: restart2-flows covers the rest).
if [ "${IPV6R_WORKERS:-1}" = 2 ]; then
	export FP_EAL="--lcores 0@0,1@1,2@0"
	FP6+=(--workers 2 --world-queues 1 --idle-sleep-us 20)
fi

region_stat() { # field of /stats "region"
	api_body GET /stats | python3 -c '
import json, sys
print(json.load(sys.stdin)["region"][sys.argv[1]])' "$1"
}

# Two dual-stack guests, a world host echoing TCP on both families and UDP on IPv4, sandbox
# 1's TCP echo exposed on a host port; cubevs-fp started with OPTIONS and the sandboxes
# registered.
bed_net() { # cubevs-fp options
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	ipv6_bed
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --tcp-echo 7000
	tb_server "$NS_W" 8000 --name world --udp-echo 5353 --tcp-echo 7001 --ipv6
	fp_start "$@"
	eq "$(register s1 sb1 '[8080,7000]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[]' | tail -n1)" 201 || die "register s2"
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
}

# The guests' IPv6 on: addresses and routes from our RA (with --node-ip6).
guests6() {
	nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
	guest6 1
	guest6 2
	A1=$(guest6_addr 1) || die "guest 1 formed no IPv6 address"
	A2=$(guest6_addr 2) || die "guest 2 formed no IPv6 address"
}

bed6() { # extra cubevs-fp options
	bed_net "${FP6[@]}" "$@"
	guests6
}

# flows.sh's checks over these flows: 25 IPv6 TCP flows from each guest, and IPv4 beside
# them: 5 world → exposed port, 5 TCP and 2 UDP egress.
FLOW_DIRS="g1 g2 in"
FLOW_MIX="ipv6:50 ingress:5 egress-tcp:5 egress-udp:2"
flows6_start() {
	local d n hp
	hp=$(hostport_of s1 7000)
	for d in $FLOW_DIRS; do
		mkdir -p "$TB_DIR/f-$d"
		rm -f "$TB_DIR/f-$d"/{mark,ready,stop,out,caught}
	done
	tb_bg nss 1 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-g1" --tcp "ipv6@$WORLD_IP6:7001:25" \
		--tcp "egress-tcp@$WORLD_IP:7001:3" --udp "egress-udp@$WORLD_IP:5353:2" \
		>"$TB_DIR/f-g1/out"
	tb_bg nss 2 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-g2" --tcp "ipv6@$WORLD_IP6:7001:25" \
		--tcp "egress-tcp@$WORLD_IP:7001:2" >"$TB_DIR/f-g2/out"
	tb_bg nsc python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-in" --tcp "ingress@$NODE_IP:$hp:5" \
		>"$TB_DIR/f-in/out"
	for n in $(seq 300); do
		flows_all ready && return 0
		sleep 0.1
	done
	die "the flows did not start"
}

v6_fresh() { # what: a new IPv6 connection works
	check "$1: a new IPv6 connection" \
		in_snat6 "$(nss 2 curl -s -m 5 "http://[$WORLD_IP6]:8000/peer")"
}

case_restart() {
	bed6
	flows6_start
	check "the IPv6 flows are NAT66 sessions (egress6_flows $(stat_of worker egress6_flows))" \
		test "$(stat_of worker egress6_flows)" -ge 50
	check "SIGTERM → exit 0" fp_stop
	check "a new instance starts" fp_start "${FP6[@]}"
	check "it adopted the IPv6 sessions ($(region_stat adopted6) of $(region_stat adopted))" \
		test "$(region_stat adopted6)" -ge 50 -a "$(region_stat adopted)" -ge 62
	check "the log says so" grep -q 'adopted [0-9]* sessions of [12] worker(s), [0-9]* of them IPv6' \
		"$TB_DIR/fp.log"
	check "no IPv6 table refused" eq "$(region_stat refused6) $(region_stat refused)" "0 0"
	flows_mark 1
	v6_fresh "after SIGTERM"
	sleep 1
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	check "after kill -9 a new instance starts" fp_start "${FP6[@]}"
	check "it adopted the IPv6 sessions again ($(region_stat adopted6))" \
		test "$(region_stat adopted6)" -ge 50
	check "the region's generation went up twice" test "$(region_stat generation)" -eq 3
	flows_mark 2
	v6_fresh "after kill -9"
	flows_check "SIGTERM then kill -9"
	check "no segment of the flows was out of window" \
		eq "$(stat_of drops tcp_window) $(stat_of drops tcp_rst_window)" "0 0"
}

# The region file's IPv6 record (region6.c: at 1024 in the header's page), as its magic.
rec6() {
	python3 -c '
import sys
with open(sys.argv[1], "rb") as f:
    f.seek(1024)
    print("CVR6" if f.read(4) == b"CVR6" else "none")' "$TB_DIR/run/sessions-nic0.region"
}

# The IPv6 part of the region in the daemon, against upgrades and damage, IPv4 flows kept
# throughout: a region without IPv6 tables (a start without --node-ip6: the format 0.1.0
# writes and reads) is carried into one with them; a damaged IPv6 record costs the IPv6
# sessions alone; a start without --node-ip6 carries the region back to the old format.
case_region() {
	local hp
	bed_net
	check "without --node-ip6 the region has no IPv6 tables" eq "$(rec6)" none
	FLOW_DIRS="g1 in"
	FLOW_MIX="ingress:5 egress-tcp:5 egress-udp:2"
	for d in $FLOW_DIRS; do mkdir -p "$TB_DIR/f-$d"; done
	hp=$(hostport_of s1 7000)
	tb_bg nss 1 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-g1" --tcp "egress-tcp@$WORLD_IP:7001:5" \
		--udp "egress-udp@$WORLD_IP:5353:2" >"$TB_DIR/f-g1/out"
	tb_bg nsc python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-in" --tcp "ingress@$NODE_IP:$hp:5" \
		>"$TB_DIR/f-in/out"
	for _ in $(seq 300); do flows_all ready && break; sleep 0.1; done
	check "SIGTERM → exit 0" fp_stop
	check "a start with --node-ip6" fp_start "${FP6[@]}"
	check "carried the region into one with IPv6 tables, every session kept" \
		grep -q 'carried [0-9]* sessions from 1 worker(s) .*(0 the new shape could not take), 0 of them IPv6' \
		"$TB_DIR/fp.log"
	check "with its IPv6 record" eq "$(rec6)" CVR6
	check "/stats: carried $(region_stat carried), adopted $(region_stat adopted)" \
		test "$(region_stat carried)" = 1 -a "$(region_stat adopted)" -ge 12
	guests6
	flows_mark 1
	v6_fresh "after the upgrade"
	check "SIGTERM → exit 0" fp_stop
	printf 'X' | dd of="$TB_DIR/run/sessions-nic0.region" bs=1 seek=1032 conv=notrunc \
		status=none
	check "a start on a region whose IPv6 record is damaged" fp_start "${FP6[@]}"
	check "its IPv6 table refused, said once in the log" \
		grep -q "1 IPv6 table(s) refused (worker 0's IPv6 table: damaged IPv6 record)" \
		"$TB_DIR/fp.log"
	check "/stats: refused6 1, refused 0, IPv4 sessions adopted ($(region_stat adopted))" \
		test "$(region_stat refused6)" = 1 -a "$(region_stat refused)" = 0 -a \
		"$(region_stat adopted)" -ge 12
	flows_mark 2
	v6_fresh "after the damaged IPv6 record"
	check "SIGTERM → exit 0" fp_stop
	check "a start without --node-ip6 again" fp_start
	check "carried back, the IPv6 sessions counted as not taken" \
		test "$(region_stat carried)" = 1 -a "$(region_stat carry_dropped)" -ge 1
	check "to the format 0.1.0 reads" eq "$(rec6)" none
	flows_mark 3
	flows_check "upgrade, damaged IPv6 record, back"
}

# blind6.py in guest 1 against its own connection to the world host's echo.
blind_line() { # prefix: wait for blind6.py's line starting with it (20 s)
	local n
	for n in $(seq 200); do
		grep -m1 "^$1" "$TB_DIR/blind.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "none: $(cat "$TB_DIR/blind.err" 2>/dev/null)"
}

blind_start() {
	rm -f "$TB_DIR"/{go1,blind.out,blind.err}
	tb_bg nss 1 python3 "$SRC_DIR/blind6.py" "$WORLD_IP6" 7001 eth0 "$TB_DIR" \
		>"$TB_DIR/blind.out" 2>"$TB_DIR/blind.err"
}

# The session clock 30 s on (past tcp_close), and a second for the worker's expiry pass.
idle30() {
	check "the session clock moves 30 s on" \
		eq "$(api POST /debug/clock '{"advance":30}' | tail -n1)" 200
	sleep 1.5
}

case_blind() {
	bed6 --test-clock
	blind_start
	check "the IPv6 connection survives the blind segments" \
		eq "$(blind_line phase1)" "phase1 ok"
	check "three RSTs outside the window dropped (tcp_rst_window)" \
		eq "$(stat_of drops tcp_rst_window)" 3
	check "data and FIN outside the window dropped (tcp_window)" \
		eq "$(stat_of drops tcp_window)" 2
	check "the RST inside the window was passed on with the state kept (tcp_rst_inexact)" \
		eq "$(stat_of worker tcp_rst_inexact)" 1
	# Idle past the CLOSE timeout: a session the RSTs had closed would expire now.
	idle30
	check "the session did not expire: still established" \
		eq "$(stat_of worker sessions_expired)" 0
	touch "$TB_DIR/go1"
	check "after 30 s idle the connection still works" eq "$(blind_line phase2)" "phase2 ok"
	check "no segment of the real connection was dropped as out of window" \
		eq "$(stat_of drops tcp_window) $(stat_of drops tcp_rst_window)" "2 3"
}

case_liberal() {
	bed6 --tcp-liberal --test-clock
	blind_start
	check "liberal: the connection answers right after the blind segments" \
		eq "$(blind_line phase1)" "phase1 ok"
	check "liberal: nothing is dropped as out of window" \
		eq "$(stat_of drops tcp_window) $(stat_of drops tcp_rst_window)" "0 0"
	# The blind RST closed the session: idle past tcp_close, it is gone.
	idle30
	check "liberal: the blind RST had closed the session: it expired" \
		test "$(stat_of worker sessions_expired)" -ge 1
	touch "$TB_DIR/go1"
	local res
	res=$(blind_line phase2)
	check "liberal: the connection is dead although neither end reset it ($res)" \
		bash -c '[[ $1 =~ ^phase2\ (timeout|reset|eof) ]]' _ "$res"
}

"case_$1"
tb_done
