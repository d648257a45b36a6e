#!/bin/bash
# Per-sandbox limits (issue 15): a hostile sandbox hogs SNAT ports towards one resolver,
# floods new UDP flows and bursts SYNs, and the world floods its exposed port, while a victim
# sandbox resolves, opens 20 TCP connections and serves its exposed port. Usage:
#   test_limits.sh hostile   the victim succeeds every time; the refusals are the hog's
#   test_limits.sh nolimits  the same hog without the SNAT share: the victim cannot resolve
#   test_limits.sh closed    a sandbox serving 3,000 short connections with an inbound share
#                            of 256 never meets it (closed sessions do not count); a flood
#                            of live connections still does
#   test_limits.sh takeover  600 short connections from a sandbox to one server through 512
#                            SNAT ports with a share of 64: every one succeeds, the closed
#                            sessions' ports taken over; another sandbox takes them too; 64
#                            live connections still fill the share
#   test_limits.sh takeover-tw  the same with the server closing first: the ports taken over
#                            may still be in the server's TIME_WAIT, every connection succeeds
#   test_limits.sh flood     the hog sends frames as fast as XDP live frames go (fpgen) into
#                            the funnel both sandboxes share: the victim still resolves,
#                            serves and connects; the hog's excess is counted under its name
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HOG=$SRC_DIR/hog.py
RESOLVER_PORT=5353

bed() { # hog-limits-json, extra cubevs-fp options
	local hog_limits=$1
	shift
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	tb_server "$NS_W" 8000 --name world --udp-echo $RESOLVER_PORT
	# 512 SNAT ports on one worker: the default share towards one endpoint is 512 / 8 = 64.
	fp_start --snat-port-range 30000-30511 "$@"
	eq "$(api PUT /sandboxes/hog "{\"iface\":\"sb1\",\"exposedPorts\":[8080],
		\"limits\":$hog_limits}" | tail -n1)" 201 ||
		die "register hog"
	eq "$(register victim sb2 '[8080]' | tail -n1)" 201 || die "register victim"
	HP_HOG=$(hostport_of hog 8080)
	HP_VIC=$(hostport_of victim 8080)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	# The node's neighbour entry for the world router, as a running node has it: the first
	# datagrams would otherwise be dropped (no_neighbour) and never meet a limit.
	nss 1 ping -c 1 -W 2 -q $WORLD_IP >/dev/null
}

# Wait until the worker has taken every frame sent so far (the counters stop moving).
settle() {
	local a b=x n
	for n in $(seq 50); do
		a=$(stat_of worker pipeline_packets)
		[ "$a" = "$b" ] && return 0
		b=$a
		sleep 0.2
	done
}

sbx_counter() { # sandbox counter
	api_body GET /stats | python3 -c \
		"import json,sys; print(json.load(sys.stdin)['sandboxPorts']['$1']['$2'])"
}

sessions_of() { # sandbox proto: its sessions, every page of /sessions?sandbox=&proto=
	nsn python3 -c '
import json, sys, urllib.request
n, cur = 0, ""
for _ in range(100):
    u = "http://%s/sessions?sandbox=%s&proto=%s&limit=1000%s" % (sys.argv[1], sys.argv[2],
                                                                  sys.argv[3], cur)
    j = json.load(urllib.request.urlopen(u, timeout=10))
    n += j["count"]
    if j["nextCursor"] is None:
        break
    cur = "&cursor=%s" % j["nextCursor"]
print(n)' "$API" "$1" "$2"
}

limit_of() { # sandbox name
	api_body GET "/sandboxes/$1" | python3 -c \
		"import json,sys; print(json.load(sys.stdin)['limits']['$2'])"
}

case_hostile() {
	bed '{"maxSessions":400,"maxInboundSessions":50}' --sandbox-new-sessions-per-sec 0
	check "the hog's overrides are in force" eq "$(limit_of hog maxSessions)" 400
	check "the victim has the node defaults (SNAT share 512 / 8)" \
		eq "$(limit_of victim snatPortsPerEndpoint)" 64
	check "the victim's rate is the flag's (none)" eq "$(limit_of victim newSessionsPerSec)" 0
	check "the overrides are kept in the state file" python3 -c '
import json, sys
recs = json.loads(sys.argv[1])["sandboxes"]
hog = [r for r in recs if r["sandboxID"] == "hog"][0]
assert hog["limits"] == {"maxSessions": 400, "maxInboundSessions": 50}, hog
assert "limits" not in [r for r in recs if r["sandboxID"] == "victim"][0]' "$(state_view)"

	# The hostile loads, one after another, each bounded, each meeting its own limit first.
	log "hog: $(nss 1 python3 "$HOG" udp-ports $WORLD_IP $RESOLVER_PORT 1000)"
	settle
	# Not every datagram of a burst reaches the worker (the socket's ring overflows on veth):
	# what holds exactly is what the hog ends up with.
	check "SNAT-port hog: flows to the resolver beyond its share refused" \
		test "$(sbx_counter hog limit_snat_ports)" -ge 500
	check "it holds 64 ports towards the resolver (512 / 8)" eq "$(sessions_of hog udp)" 64
	log "hog: $(nss 1 python3 "$HOG" udp-flood $WORLD_IP 40000 2000)"
	settle
	check "flood of new UDP flows: refused beyond its 400 sessions" \
		test "$(sbx_counter hog limit_sessions)" -ge 1000
	check "it holds 400 sessions, no more (UDP, and the ICMP of the first ping)" \
		eq "$(($(sessions_of hog udp) + $(sessions_of hog icmp)))" 400
	# New limits for the hog, through a registration update: no session cap, 100 new ones
	# a second (the bucket starts full for the new limits).
	eq "$(api PUT /sandboxes/hog '{"iface":"sb1","exposedPorts":[8080],
		"limits":{"maxSessions":0,"maxInboundSessions":50,"newSessionsPerSec":100,
		"newSessionsBurst":100}}' | tail -n1)" 200 || die "update hog"
	check "the update is in force" eq "$(limit_of hog newSessionsPerSec)" 100
	log "hog: $(nss 1 python3 "$HOG" syn-spread $WORLD_IP 41000 400 1)"
	settle
	check "burst of SYNs: refused by its token bucket" \
		test "$(sbx_counter hog limit_rate)" -ge 200
	log "world → hog's port: $(nsc python3 "$HOG" syn-burst $NODE_IP $HP_HOG 200 3)"
	settle
	check "world flood at the hog's exposed port: refused at its inbound limit" \
		test "$(sbx_counter hog limit_inbound)" -ge 150
	check "/sessions?sandbox=hog&proto=tcp: inbound held at 50" \
		test "$(sessions_of hog tcp)" -ge 50

	# The victim, while the hog's sessions are all still there.
	local out
	out=$(nss 2 python3 "$HOG" resolve $WORLD_IP $RESOLVER_PORT 10)
	check "the victim resolves every time ($out)" eq "$out" "ok=10 failed=0"
	out=$(nss 2 python3 "$SRC_DIR/client.py" serial $WORLD_IP 8000 20)
	check "the victim opens 20 TCP connections" python3 -c '
import sys
p = sys.argv[1].split()
assert len(p) == 20 and all(x.isdigit() for x in p), sys.argv[1]' "$out"
	out=$(nsc python3 "$SRC_DIR/client.py" parallel $NODE_IP $HP_VIC 20)
	check "the victim serves its exposed port to 20 clients ($out)" eq "$out" "ok=20 failed=0"
	check "nothing was refused for the victim" python3 -c '
import json, sys
p = json.loads(sys.argv[1])["sandboxPorts"]["victim"]
bad = {k: v for k, v in p.items() if k.startswith("limit_") and v}
assert not bad, bad' "$(api_body GET /stats)"
	check "the node counts the refusals by reason too" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
d, p = s["drops"], s["sandboxPorts"]["hog"]
for k in ("limit_snat_ports", "limit_rate", "limit_sessions", "limit_inbound"):
    assert d[k] == p[k] > 0, (k, d[k], p[k])
assert d["snat_exhausted"] == 0, d["snat_exhausted"]' "$(api_body GET /stats)"
	check "/metrics has them under the hog's name" contains "$(api_body GET /metrics)" \
		"cubevs_sandbox_port_limit_snat_ports_total{sandbox=\"hog\"}"
}

case_nolimits() {
	bed '{}' --sandbox-snat-ports-per-endpoint 0 --sandbox-new-sessions-per-sec 0
	log "hog: $(nss 1 python3 "$HOG" udp-ports $WORLD_IP $RESOLVER_PORT 1000)"
	settle
	check "the hog holds every SNAT port towards the resolver" \
		eq "$(sessions_of hog udp)" 512
	local out
	out=$(nss 2 python3 "$HOG" resolve $WORLD_IP $RESOLVER_PORT 3)
	check "without a SNAT share the hog takes every port: the victim cannot resolve ($out)" \
		eq "$out" "ok=0 failed=3"
	check "counted as SNAT exhaustion, not as a limit" \
		test "$(stat_of drops snat_exhausted)" -ge 3
}

case_closed() {
	bed '{"maxInboundSessions":256}' --max-sessions 8192 --sandbox-new-sessions-per-sec 0
	local out
	out=$(nsc python3 "$HOG" short-conns $NODE_IP $HP_HOG 3000 60)
	check "3,000 short connections to the exposed port, none refused ($out)" \
		eq "$out" "ok=3000 failed=0 slow=0"
	# A client port the client's kernel picks again revives its TIME_WAIT session (port_reuse):
	# one closed session fewer each time (232 of 3,000 in one CI run).
	local tw reuse
	tw=$(stat_of sessionsByClass tcp_time_wait)
	reuse=$(stat_of worker port_reuse)
	check "their closed sessions are still in the table (TIME_WAIT $tw, ports reused $reuse)" \
		test $((tw + reuse)) -ge 2900
	check "none met the inbound share of 256" eq "$(sbx_counter hog limit_inbound)" 0
	log "world → hog's port: $(nsc python3 "$HOG" syn-burst $NODE_IP $HP_HOG 400 3)"
	settle
	check "400 live connections at once: refused beyond 256" \
		test "$(sbx_counter hog limit_inbound)" -ge 100
	check "counted for the node too" test "$(stat_of drops limit_inbound)" -ge 100
	# The host (cube-dev) opening connections to the sandbox meets the same share.
	local sbx before
	sbx=$(api_body GET /sandboxes/hog | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sandboxIP"])')
	sleep 1
	before=$(sbx_counter hog limit_inbound)
	out=$(nsn python3 "$HOG" syn-burst "$sbx" 8080 400 3)
	settle
	check "400 live connections from the host: at most 256 ($out)" \
		test "${out#connected=}" -le 256 -a "${out#connected=}" -ge 200
	check "the host's beyond the share refused under the hog" \
		test "$(($(sbx_counter hog limit_inbound) - before))" -ge 100
}

case_takeover() {
	bed '{}' --sandbox-snat-ports-per-endpoint 64
	check "the hog's share towards one endpoint is 64" \
		eq "$(limit_of hog snatPortsPerEndpoint)" 64
	local out
	# Each connection closed (the client first): its session stays, in TIME_WAIT, for 120 s.
	out=$(nss 1 python3 "$HOG" short-conns-cf $WORLD_IP 8000 600 30)
	check "600 short connections to one server through 512 ports, all succeed ($out)" \
		eq "$out" "ok=600 failed=0 slow=0"
	check "beyond 512, each took over the port of a closed one" \
		test "$(sbx_counter hog snat_takeovers)" -ge 88
	check "counted for the node too" \
		eq "$(stat_of worker snat_takeovers)" "$(sbx_counter hog snat_takeovers)"
	check "the closed sessions never met the share of 64" \
		eq "$(sbx_counter hog limit_snat_ports)" 0
	check "and no port search failed" eq "$(stat_of drops snat_exhausted)" 0
	check "every port is held by a closed session" \
		test "$(stat_of sessionsByClass tcp_time_wait)" -ge 500
	# Another sandbox, every port towards the server held by the hog's closed sessions.
	# Ports not held in TIME_WAIT (a closed session of 10 s, if any) may be free by now.
	local tw
	tw=$(stat_of sessionsByClass tcp_time_wait)
	log "sessions by class before the victim: $(api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sessionsByClass"])')"
	out=$(nss 2 python3 "$SRC_DIR/client.py" serial $WORLD_IP 8000 20)
	check "the victim opens 20 connections to the server ($out)" python3 -c '
import sys
p = sys.argv[1].split()
assert len(p) == 20 and all(x.isdigit() for x in p), sys.argv[1]' "$out"
	check "on ports taken over from the hog's closed sessions (and then its own):\
 $(sbx_counter victim snat_takeovers) of 20, $((512 - tw)) not in TIME_WAIT" \
		test "$(sbx_counter victim snat_takeovers)" -ge $((20 - (512 - tw)))
	# Live connections still count: 80 at once, 64 get a port, the rest are refused.
	out=$(nss 1 python3 "$HOG" syn-burst $WORLD_IP 8000 80 3)
	settle
	check "80 live connections at once: 64 connect ($out)" eq "$out" "connected=64"
	check "the 65th on refused under the hog" test "$(sbx_counter hog limit_snat_ports)" -ge 16
	check "none of it is SNAT exhaustion" eq "$(stat_of drops snat_exhausted)" 0
}

case_takeover_tw() {
	bed '{}' --sandbox-snat-ports-per-endpoint 64
	local out
	# The server closes first: it holds each old connection in TIME_WAIT (60 s), so a SYN
	# on a port taken over may meet it; the guest's RST to the server's stray ACK ends it.
	out=$(nss 1 python3 "$HOG" short-conns $WORLD_IP 8000 560 60)
	log "560 short connections, the server closing first: $out; the server's stray ACKs" \
		"reset by the guest: $(stat_of worker tcp_rst_inexact)"
	check "560 short connections through 512 ports, every one succeeds ($out)" \
		test "${out%% *}" = ok=560 -a "$(echo "$out" | cut -d' ' -f2)" = failed=0
	# A client port the guest's kernel picks again revives its own closed session
	# (port_reuse) and needs no port: the other 48 beyond 512 each take one over.
	local took reuse
	took=$(sbx_counter hog snat_takeovers)
	reuse=$(stat_of worker port_reuse)
	check "beyond 512, each took over the port of a closed one (taken $took, reused $reuse)" \
		test $((took + reuse)) -ge 48 -a "$took" -ge 1
	check "no port search failed" eq "$(stat_of drops snat_exhausted)" 0
}

# One funnel socket carries both sandboxes: a hog at its top frame rate must not crowd the
# victim out of the ring (datapath.md, "One socket per worker", fairness).
case_flood() {
	local gen=${FPGEN:-$SRC_DIR/../../build/tools/bench/fpgen}	# meson sets FPGEN
	[ -x "$gen" ] || die "no fpgen at $gen (tools/bench, built with the tree)"
	bed '{}'
	nss 1 "$gen" --iface eth0 --dst-mac 20:90:6f:cf:cf:cf --src 198.18.77.1 \
		--dst "$WORLD_IP" --dport 9 --flows 64 --count 100000000 --seconds 10 --json \
		>"$TB_DIR/gen.json" 2>&1 &
	local gpid=$!
	TB_PIDS+=("$gpid")
	sleep 1
	local i ok_dns=0 ok_http=0 ok_tcp=0 n=${FLOOD_PROBES:-10}
	for i in $(seq $n); do
		# A query that gets no answer is asked again, as a resolver does (three tries).
		for t in 1 2 3; do
			contains "$(nss 2 timeout 3 python3 "$SRC_DIR/client.py" udp "$WORLD_IP" \
				$RESOLVER_PORT 2>/dev/null)" "hello $NODE_IP" >/dev/null &&
				{ ok_dns=$((ok_dns + 1)); break; }
		done
		nsc curl -s -m 2 -o /dev/null "http://$NODE_IP:$HP_VIC/name" && ok_http=$((ok_http + 1))
		nss 2 curl -s -m 2 -o /dev/null "http://$WORLD_IP:8000/name" && ok_tcp=$((ok_tcp + 1))
	done
	wait "$gpid"
	log "during the flood, of $n each: victim resolved $ok_dns, served $ok_http, connected $ok_tcp"
	log "fpgen: $(tr -d '\n' <"$TB_DIR/gen.json" | cut -c1-200)"
	check "the victim's DNS kept working (>= 90 %)" test $ok_dns -ge $((n * 9 / 10))
	check "the victim's exposed port kept serving (>= 90 %)" test $ok_http -ge $((n * 9 / 10))
	check "the victim's egress TCP kept working (>= 90 %)" test $ok_tcp -ge $((n * 9 / 10))
	check "the funnel came under pressure" test "$(stat_of worker funnel_pressed)" -ge 1
	check "the hog's excess is counted under its name" \
		test "$(sbx_counter hog funnel_policed)" -gt 0
	check "the victim has no excess" eq "$(sbx_counter victim funnel_policed)" 0
}

case "${1:-}" in
hostile) case_hostile ;;
flood) case_flood ;;
nolimits) case_nolimits ;;
closed) case_closed ;;
takeover) case_takeover ;;
takeover-tw) case_takeover_tw ;;
*) die "usage: $0 hostile|nolimits|closed|takeover|takeover-tw|flood" ;;
esac
tb_done
