#!/bin/bash
# Operations tests: restart without loss, corrupt state, metrics and telemetry against the
# traffic sent, session dumps, the ctl tool, the API contract, concurrent registrations and
# the systemd readiness notification.
# Usage: test_ops.sh CASE   (each case builds and removes its own test bed)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${CUBEVS_FPCTL:=$SRC_DIR/../../build/tools/cubevs-fpctl}"
: "${OPENAPI:=$SRC_DIR/../../docs/openapi.yaml}"
: "${METRICS_DOC:=$SRC_DIR/../../docs/metrics.md}"

FAILS=0
check() { # description, then a command that must succeed
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		FAILS=$((FAILS + 1))
	fi
}
eq() { [ "$1" = "$2" ] || { echo "#   expected '$2', got '$1'"; return 1; }; }
contains() { case "$1" in *"$2"*) return 0 ;; esac; echo "#   '$1' lacks '$2'"; return 1; }
ctl() { nsn "$CUBEVS_FPCTL" "$@"; }
now() { date +%s.%N; }
elapsed() { python3 -c "print('%.2f' % ($(now) - $1))"; }
json_get() { # json, python expression on j
	python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"
}
# The guests and the client keep permanent neighbours, so no ARP runs during measurements.
static_neigh() { # sandbox index...
	local i
	for i in "$@"; do
		nss "$i" ip neigh replace $GW_IP lladdr 20:90:6f:cf:cf:cf dev eth0 nud permanent
	done
}
# A sandbox registration that ignores host-port numbers (they differ between instances).
same_registration() { # before after
	python3 - "$1" "$2" <<'EOF'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a == b, (a, b)
EOF
}

case_restart() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_add_sandbox 3
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 9090
	tb_sandbox_server 3 8080
	fp_start
	register s1 sb1 '[8080]' >/dev/null
	register s2 sb2 '[8080,9090]' >/dev/null
	register s3 sb3 '[8080]' >/dev/null
	# A change after the first registration must be on disk too: drop port 8080 of s2.
	eq "$(register s2 sb2 '[9090]' | tail -n1)" 200 || die "change s2"
	# And an egress policy: s1 may not reach the client.
	tb_bg ip netns exec "$NS_C" python3 "$SRC_DIR/sbxserver.py" --name client --port 8001
	eq "$(api_status PUT /sandboxes/s1/policy "{\"denyOut\":[\"$CLIENT_IP/32\"]}")" 200 ||
		die "policy s1"
	local n
	for n in $(seq 50); do # the node itself reaches the client's server: it is up
		nsn curl -s -m 1 -o /dev/null "http://$CLIENT_IP:8001/name" && break
		sleep 0.1
	done
	check "before the restart the policy holds: s1 cannot reach the client" \
		bash -c "! ip netns exec cvs-s1-$TB_ID curl -s -m 3 http://$CLIENT_IP:8001/name"
	check "s2 can" nss 2 curl -s -m 5 -o /dev/null "http://$CLIENT_IP:8001/name"
	local hp1 hp2 hp3 before1 before2 before3 ep_before t0 rc
	hp1=$(hostport_of s1 8080)
	hp2=$(hostport_of s2 9090)
	hp3=$(hostport_of s3 8080)
	check "before the restart s1 serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp1/name")" "sandbox1 $CLIENT_IP"
	before1=$(api_body GET /sandboxes/s1)
	before2=$(api_body GET /sandboxes/s2)
	before3=$(api_body GET /sandboxes/s3)
	ep_before=$(api_body GET /sandboxes/s2/exposed-ports/9090)
	check "the state file holds the three registrations with their host ports" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
got = {r["sandboxID"]: [(p["containerPort"], p["hostPort"]) for p in r["exposedPorts"]]
       for r in s["sandboxes"]}
want = {"s1": [(8080, int(sys.argv[2]))], "s2": [(9090, int(sys.argv[3]))],
        "s3": [(8080, int(sys.argv[4]))]}
assert got == want, (got, want)' "$(state_view)" "$hp1" "$hp2" "$hp3"

	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	# sb3 vanishes while cubevs-fp is down.
	nsn ip link del sb3
	t0=$(now)
	fp_start
	local ok=0
	for n in $(seq 50); do
		if [ "$(nsc curl -s -m 1 "http://$NODE_IP:$hp1/name")" = "sandbox1 $CLIENT_IP" ]; then
			ok=1
			break
		fi
		sleep 0.1
	done
	local took
	took=$(elapsed "$t0")
	echo "# restart after kill -9 to the first answer through a restored host port: ${took} s"
	check "after kill -9 and a new start, s1 serves on the same host port within 5 s" \
		test $ok = 1 -a "$(python3 -c "print(int($took < 5))")" = 1
	check "s2 serves on its host port" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp2/name")" "sandbox2 $CLIENT_IP"
	check "GET /sandboxes/s1 answers the same" same_registration "$before1" \
		"$(api_body GET /sandboxes/s1)"
	check "GET /sandboxes/s2 answers the same" same_registration "$before2" \
		"$(api_body GET /sandboxes/s2)"
	check "the exposed-ports answer is the same" \
		eq "$(api_body GET /sandboxes/s2/exposed-ports/9090)" "$ep_before"
	check "the policy came back" contains "$(api_body GET /sandboxes/s1/policy)" \
		"\"denyOut\":[\"$CLIENT_IP/32\"]"
	check "and is enforced: s1 still cannot reach the client" \
		bash -c "! ip netns exec cvs-s1-$TB_ID curl -s -m 3 http://$CLIENT_IP:8001/name"
	check "s2 still can" nss 2 curl -s -m 5 -o /dev/null "http://$CLIENT_IP:8001/name"
	local s3
	s3=$(api_body GET /sandboxes/s3)
	check "s3, whose interface vanished, is kept and reported unattached" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert b["attached"] is False and "sb3" in b["attachError"] and b["detachedAt"], b
b.pop("attachError"); b.pop("detachedAt"); b["attached"] = True
a.pop("mtu")  # the MTU it is served at: only while attached
assert a == b, (a, b)' "$before3" "$s3"
	check "the log names the unattached sandbox" \
		grep -q "sandbox s3 is registered but not attached" "$TB_DIR/fp.log"
	check "readyz counts it" eq "$(json_get "$(api_body GET /readyz)" \
		'j["ready"], j["unattachedSandboxes"]')" "True 1"
	check "the state file still holds s3" contains "$(state_view)" '"s3"'
	# The interface comes back: the registration attaches by itself.
	ip link add sb3 netns "$NS_N" type veth peer name eth0 netns "cvs-s3-$TB_ID"
	nss 3 ip link set eth0 address $GUEST_MAC
	nss 3 ip addr add $GUEST_IP/30 dev eth0
	nss 3 ip link set eth0 up
	nss 3 ip route add default via $GW_IP
	offloads_default "cvs-s3-$TB_ID" eth0
	nsn ip link set sb3 up
	offloads_default "$NS_N" sb3
	for n in $(seq 50); do
		[ "$(json_get "$(api_body GET /sandboxes/s3)" 'j["attached"]')" = True ] && break
		sleep 0.1
	done
	check "when its interface is back, s3 is attached again" \
		eq "$(json_get "$(api_body GET /sandboxes/s3)" 'j["attached"]')" True
	check "and serves on its old host port" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp3/name")" "sandbox3 $CLIENT_IP"

	# A deletion is durable too, and a graceful restart keeps everything else.
	check "DELETE s2 → 204" eq "$(api_status DELETE /sandboxes/s2)" 204
	fp_stop
	rc=$?
	check "SIGTERM → exit 0" test $rc = 0
	fp_start
	check "after a graceful restart s2 stays deleted" \
		eq "$(api_status GET /sandboxes/s2)" 404
	check "s1 and s3 are back" eq "$(json_get "$(api_body GET /sandboxes)" \
		'sorted(s["sandboxID"] for s in j["sandboxes"])')" "['s1', 's3']"
	check "s1 serves" eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp1/name")" \
		"sandbox1 $CLIENT_IP"
	check "a new registration does not take a restored host port" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["exposedPorts"][0]["hostPort"] not in (int(sys.argv[2]), int(sys.argv[3])), r' \
		"$(register s4 sb2 '[8080]' | sed '$d')" "$hp1" "$hp3"
}

case_corrupt() {
	tb_setup
	tb_add_sandbox 1
	local out rc sum st=$TB_DIR/state.json
	start_fails() { # description, pattern, extra options
		local what=$1 pat=$2
		shift 2
		out=$(timeout 60 ip netns exec "$NS_N" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 \
			--no-shconf --no-pci -- --world-iface nic0 --state-file "$st" --runtime-dir "$TB_DIR/run" "$@" 2>&1)
		rc=$?
		check "$what: start refused (rc $rc)" test $rc -ne 0 -a $rc -ne 124
		check "$what: the message says why" contains "$out" "$pat"
	}
	printf '{"format":"cubevs-fp-state","version":1,"sandboxes":[{"sandboxID":' >"$st"
	sum=$(sha256sum "$st")
	start_fails "truncated JSON" "is corrupt"
	check "the corrupt file was not touched" eq "$(sha256sum "$st")" "$sum"
	check "no XDP program was left on the world interface" \
		xdp_off nic0
	: >"$st"
	start_fails "empty file" "is corrupt"
	echo '{"format":"cubevs-fp-state","version":99,"sandboxes":[]}' >"$st"
	start_fails "unknown version" "version 99"
	echo '{"sandboxes":[]}' >"$st"
	start_fails "not a state file" "not a cubevs-fp state file"
	cat >"$st" <<'EOF'
{"format":"cubevs-fp-state","version":1,"sandboxes":[
 {"sandboxID":"a","iface":"sb1","sandboxIP":"192.168.0.2","exposedPorts":[{"containerPort":80,"hostPort":20000}]},
 {"sandboxID":"b","iface":"sb9","sandboxIP":"192.168.0.3","exposedPorts":[{"containerPort":80,"hostPort":20000}]}]}
EOF
	sum=$(sha256sum "$st")
	start_fails "a host port used twice" "host port 20000 is used twice"
	check "that file was not touched either" eq "$(sha256sum "$st")" "$sum"
	check "and the first record's interface was released" \
		xdp_off sb1
	sed -i 's/20000}]}]}/20001}]}]}/' "$st"
	start_fails "host port outside the range" "outside --host-port-range" \
		--host-port-range 20000-20000
	start_fails "a state directory that does not exist" "create the directory" \
		--state-file "$TB_DIR/missing/state.json"
	# A good file, then a second instance on the same file.
	rm -f "$st"
	fp_start
	check "a missing state file is a first start, and it is created" test -s "$st"
	start_fails "a second instance on the same state file" "in use by another cubevs-fp"
	check "the first instance still answers" eq "$(api_status GET /healthz)" 200
	# Bad input through the API never loses state.
	eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
	sum=$(sha256sum "$st")
	api PUT /sandboxes/s2 '{"iface":' >/dev/null
	api PUT /sandboxes/s2 '{"iface":"nosuch0"}' >/dev/null
	api DELETE /sandboxes/nope >/dev/null
	check "rejected requests leave the state file as it was" eq "$(sha256sum "$st")" "$sum"
}

# Parses Prometheus text strictly: HELP and TYPE before samples, names, _total on counters.
prom_check() {
	python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
assert text.endswith("\n"), "no final newline"
typ, helped, seen = {}, set(), set()
name_rx = re.compile(r'^cubevs_[a-z0-9_]+$')
for ln in text.splitlines():
    if ln.startswith("# HELP "):
        n = ln.split()[2]
        assert n not in helped, "HELP twice: " + n
        helped.add(n)
        continue
    if ln.startswith("# TYPE "):
        _, _, n, t = ln.split()
        assert t in ("counter", "gauge"), ln
        assert n not in typ, "TYPE twice: " + n
        typ[n] = t
        continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-z_]+="(?:[^"\\]|\\.)*"\})? (\S+)$', ln)
    assert m, "bad sample line: " + ln
    n = m.group(1)
    assert name_rx.match(n), "name without the cubevs_ prefix: " + n
    assert n in typ and n in helped, "sample before its HELP/TYPE: " + n
    assert (typ[n] == "counter") == n.endswith("_total"), "counter/_total mismatch: " + n
    float(m.group(3))
    key = n + (m.group(2) or "")
    assert key not in seen, "duplicate series: " + key
    seen.add(key)
for want in ("cubevs_build_info", "cubevs_drops_total", "cubevs_sessions",
             "cubevs_xdp_verdicts_total", "cubevs_session_table_capacity",
             "cubevs_sessions_created_total", "cubevs_polls_busy_total",
             "cubevs_worker_cycles_per_packet", "cubevs_sandbox_port_rx_packets_total",
             "cubevs_funnel_xsk_rx_ring_full_total", "cubevs_funnel_xsk_fill_ring_empty_total",
             "cubevs_sandbox_port_funnel_policed_total",
             "cubevs_port_rx_packets_total", "cubevs_ready"):
    assert want in typ, "missing family " + want
print("prometheus text ok: %d families, %d series" % (len(typ), len(seen)))
EOF
}

scrape() { nsn curl -s -m 10 "http://$API/metrics" >"$1"; }

# Value of one series in a metrics file: name with labels as written.
metric() { # file series
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

# Sends N frames of an unknown ethertype out of a sandbox: the worker drops each one.
odd_frames() { # sandbox-index count
	nss "$1" python3 - "$2" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
frame = b"\x20\x90\x6f\xcf\xcf\xcf" + b"\x20\x90\x6f\xfc\xfc\xfc" + b"\x88\xb5" + b"\0" * 46
for _ in range(int(sys.argv[1])):
    s.send(frame)
EOF
}

case_metrics() {
	local prefix=${TB_EAL_PREFIX:-cvs-t}$TB_ID
	FP_EAL_ARGS=(--file-prefix "$prefix")
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	static_neigh 1 2
	# Without cube-dev: the host's own IPv6 chatter on it would add drops we did not send.
	fp_start --host-iface none
	register s1 sb1 '[8080]' >/dev/null
	register s2 sb2 '[8080]' >/dev/null
	local hp1 n=40 drops=25 i
	hp1=$(hostport_of s1 8080)
	scrape "$TB_DIR/m0"
	check "/metrics is well-formed Prometheus text" prom_check "$TB_DIR/m0"
	check "every family served is documented in docs/metrics.md" python3 - "$TB_DIR/m0" \
		"$METRICS_DOC" <<'EOF'
import sys
doc = open(sys.argv[2]).read()
fams = {l.split()[2] for l in open(sys.argv[1]) if l.startswith("# TYPE ")}
missing = sorted(f for f in fams if "`%s`" % f not in doc)
assert not missing, missing
EOF
	check "/metrics says its content type" bash -c "ip netns exec $NS_N curl -s -o /dev/null \
		-w '%{content_type}' http://$API/metrics | grep -q '^text/plain; version=0.0.4'"
	# Each of the two PUTs waited for a flush of the journal (no other client shared it).
	check "the journal's flushes are counted" \
		test "$(metric "$TB_DIR/m0" cubevs_state_syncs_total)" -ge 2
	check "and the slow ones are a part of them" test \
		"$(metric "$TB_DIR/m0" cubevs_state_slow_syncs_total)" -le \
		"$(metric "$TB_DIR/m0" cubevs_state_syncs_total)"
	# Traffic: N HTTP requests, each on its own connection, to s1; odd frames from s2.
	for i in $(seq $n); do
		nsc curl -s -m 5 -o /dev/null "http://$NODE_IP:$hp1/name" || echo "# request $i failed"
	done
	odd_frames 2 $drops
	sleep 0.5
	scrape "$TB_DIR/m1"
	check "/metrics is still well-formed under traffic" prom_check "$TB_DIR/m1"
	delta() {
		local a b
		a=$(metric "$TB_DIR/m0" "$1")
		b=$(metric "$TB_DIR/m1" "$1")
		python3 -c "print(int(float('${b:-0}') - float('${a:-0}')))"
	}
	check "one session per connection: sessions_created grew by $n" \
		eq "$(delta cubevs_sessions_created_total)" $n
	check "the sessions sit in TIME_WAIT" \
		eq "$(metric "$TB_DIR/m1" 'cubevs_sessions{class="tcp_time_wait"}')" $n
	check "table fill matches" eq "$(metric "$TB_DIR/m1" cubevs_session_table_used)" $n
	check "$drops odd frames counted as drops by reason" \
		eq "$(delta 'cubevs_drops_total{reason="ethertype"}')" $drops
	local rx tx xdp_hp sbx_rx sbx_tx s1tx s1rx
	rx=$(delta cubevs_world_rx_packets_total)
	tx=$(delta cubevs_world_tx_packets_total)
	xdp_hp=$(delta 'cubevs_xdp_verdicts_total{verdict="redirect_hostport"}')
	s1tx=$(delta 'cubevs_sandbox_port_tx_packets_total{sandbox="s1"}')
	s1rx=$(delta 'cubevs_sandbox_port_rx_packets_total{sandbox="s1"}')
	echo "# deltas: world rx $rx tx $tx, xdp redirect_hostport $xdp_hp, s1 tx $s1tx rx $s1rx"
	check "at least 4 segments per connection came in ($rx)" test "$rx" -ge $((4 * n))
	check "XDP verdicts (per-CPU map) equal the frames the worker received" eq "$xdp_hp" "$rx"
	check "every world frame went to sandbox s1" eq "$s1tx" "$rx"
	check "every frame of s1 went to the world" eq "$s1rx" "$tx"
	check "the world port's PMD counters agree" \
		eq "$(delta 'cubevs_port_rx_packets_total{port="world"}')" "$rx"
	check "s2 sent the odd frames" \
		eq "$(delta 'cubevs_sandbox_port_rx_packets_total{sandbox="s2"}')" $drops
	check "busy polls and cycles were counted" python3 -c "
assert $(delta cubevs_polls_busy_total) > 0 and $(delta cubevs_busy_cycles_total) > 0
assert float('$(metric "$TB_DIR/m1" cubevs_worker_cycles_per_packet)') > 0"
	# The pipeline is timed inside the busy iterations: its cycles are a part of theirs, and
	# every frame the worker received went through it (nothing was handed to another worker).
	check "pipeline cycles and packets were counted, within the busy ones" python3 -c "
pc, bc = $(delta cubevs_pipeline_cycles_total), $(delta cubevs_busy_cycles_total)
assert 0 < pc < bc, (pc, bc)
assert $(delta cubevs_pipeline_packets_total) == $rx + $s1rx + $drops, 'pipeline packets'
assert 0 < float('$(metric "$TB_DIR/m1" cubevs_worker_pipeline_cycles_per_packet)') < \
	float('$(metric "$TB_DIR/m1" cubevs_worker_cycles_per_packet)')"
	check "/stats agrees with /metrics" python3 -c '
import json, sys
s = json.loads(sys.argv[1])
assert s["worker"]["sessions_created"] >= int(sys.argv[2]), s["worker"]
assert s["drops"]["ethertype"] >= int(sys.argv[3]), s["drops"]
assert s["sandboxPorts"]["s2"]["rx_packets"] >= int(sys.argv[3]), s["sandboxPorts"]' \
		"$(api_body GET /stats)" $n $drops

	# Telemetry: dpdk-telemetry.py against the same instance.
	if ! command -v dpdk-telemetry.py >/dev/null; then
		echo "# dpdk-telemetry.py missing (Debian package dpdk): telemetry not checked"
		FAILS=$((FAILS + 1))
	else
		local tel stats
		tel=$(printf '/cubevs/stats\n' | dpdk-telemetry.py -f "$prefix" 2>&1)
		stats=$(api_body GET /stats)
		check "dpdk-telemetry.py /cubevs/stats reports the same counters" python3 -c '
import json, sys
t = json.loads(sys.argv[1])["/cubevs/stats"]
s = json.loads(sys.argv[2])
assert t["sessions_created"] == s["worker"]["sessions_created"], (t, s["worker"])
assert t["drops/ethertype"] == s["drops"]["ethertype"], t
assert t["xdp_verdicts/redirect_hostport"] == s["xdp"]["redirect_hostport"], t
assert t["sessions/tcp_time_wait"] == s["sessionsByClass"]["tcp_time_wait"], t
assert t["session_table_capacity"] == s["sessionCapacity"], t
assert t["version"] == s["version"], t' "$tel" "$stats"
		tel=$(printf '/cubevs/sandboxes\n/cubevs/sandboxes,s1\n' |
		      dpdk-telemetry.py -f "$prefix" 2>&1)
		check "/cubevs/sandboxes lists and shows sandboxes" python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.argv[1].splitlines() if l.startswith("{")]
lst, one = lines[0]["/cubevs/sandboxes"], lines[1]["/cubevs/sandboxes"]
assert lst["count"] == 2 and sorted(lst["ids"]) == ["s1", "s2"], lst
assert one["sandboxID"] == "s1" and one["iface"] == "sb1", one
assert one["tx_packets"] >= int(sys.argv[2]), one' "$tel" $n
		tel=$(printf '/cubevs/sessions,sandbox=s1,limit=5\n' | dpdk-telemetry.py -f "$prefix" 2>&1)
		check "/cubevs/sessions pages sessions" python3 -c '
import json, sys
t = json.loads(sys.argv[1])["/cubevs/sessions"]
assert t["count"] == 5 and len(t["sessions"]) == 5 and t["total"] >= int(sys.argv[2]), t
assert all(x.startswith("tcp TIME_WAIT 198.18.0.2:") and " s1 " in x for x in t["sessions"]), t
' "$tel" $n
	fi
	# The drop summary is logged from the control thread, once per 10 s period.
	summed() { # ethertype drops reported by the summary lines so far
		grep -o 'packets dropped in the last 10 s:.*' "$TB_DIR/fp.log" |
			grep -o 'ethertype=[0-9]*' | awk -F= '{ n += $2 } END { print n + 0 }'
	}
	for i in $(seq 130); do
		[ "$(summed)" = $drops ] && break
		sleep 0.1
	done
	check "rate-limited drop summaries account for the $drops drops by reason" \
		eq "$(summed)" $drops
	check "a summary line per period, not one per packet" \
		test "$(grep -c 'packets dropped' "$TB_DIR/fp.log")" -le 2
	# EAL leaves its runtime directory (the telemetry socket's) behind: remove ours.
	fp_stop
	rm -rf "/var/run/dpdk/$prefix"
}

case_sessions() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	fp_start
	register s1 sb1 '[8080]' >/dev/null
	register s2 sb2 '[8080]' >/dev/null
	local hp1 i n=30
	hp1=$(hostport_of s1 8080)
	for i in $(seq $n); do
		nsc curl -s -m 5 -o /dev/null "http://$NODE_IP:$hp1/name"
	done
	check "pages of 7 cover every session once, in order" nsn python3 - "$API" "$n" <<'EOF'
import json, sys, urllib.request
api, n = sys.argv[1], int(sys.argv[2])
seen, cursor, pages = [], None, 0
while True:
    url = "http://%s/sessions?limit=7&sandbox=s1" % api + ("&cursor=" + cursor if cursor else "")
    page = json.load(urllib.request.urlopen(url))
    assert len(page["sessions"]) <= 7 and page["count"] == len(page["sessions"]), page
    seen += [s["original"]["src"] for s in page["sessions"]]
    pages += 1
    cursor = page["nextCursor"]
    if cursor is None:
        break
    assert pages < 20
assert len(seen) == n == len(set(seen)), (len(seen), len(set(seen)))
assert pages >= 5, pages
print("# %d sessions in %d pages" % (len(seen), pages))
EOF
	check "another sandbox has none" eq "$(json_get "$(api_body GET '/sessions?sandbox=s2')" \
		'j["count"], j["nextCursor"]')" "0 None"
	check "UDP has none" eq "$(json_get "$(api_body GET '/sessions?proto=udp')" 'j["count"]')" 0
	check "each session shows both tuples" python3 -c '
import json, sys
s = json.loads(sys.argv[1])["sessions"][0]
assert s["proto"] == "tcp" and s["sandboxID"] == "s1", s
assert s["original"]["src"].startswith("198.18.0.2:") and s["original"]["port"] == "world", s
assert s["original"]["dst"] == "198.18.0.1:" + sys.argv[2], s
assert s["reply"]["src"] == "169.254.68.6:8080" and s["reply"]["port"] == "s1", s
assert 0 < s["expiresInSeconds"] <= 120, s' "$(api_body GET '/sessions?limit=1')" "$hp1"
	check "a bad limit → 400" eq "$(api_status GET '/sessions?limit=5000')" 400
	check "after DELETE the sandbox's sessions are gone" bash -c "
		[ \$(ip netns exec $NS_N curl -s -o /dev/null -w '%{http_code}' -X DELETE \
			http://$API/sandboxes/s1) = 204 ] &&
		ip netns exec $NS_N curl -s http://$API/sessions | grep -q '\"total\":0'"
}

case_ctl() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	fp_start
	local out rc hp
	out=$(ctl sandbox add s1 --iface sb1 --port 8080 --port 9090)
	rc=$?
	check "sandbox add → 0 ($rc)" test $rc = 0
	check "and prints the endpoints" contains "$out" "8080 -> $NODE_IP:"
	hp=$(hostport_of s1 8080)
	check "the registration is real: it serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "sandbox1 $CLIENT_IP"
	out=$(ctl status)
	rc=$?
	check "status → 0 and ready ($rc)" test $rc = 0
	check "status shows readiness and counts" contains "$out" "sandboxes: 1 (0 not attached)"
	out=$(ctl sandbox list)
	check "sandbox list shows it" contains "$out" "s1"
	check "with its ports" contains "$out" "8080->$hp"
	out=$(ctl sandbox show s1)
	check "sandbox show" contains "$out" "  8080 -> $NODE_IP:$hp"
	out=$(ctl sandbox add v1 --vhost-user "$TB_DIR/v1.sock" --port 8081)
	check "sandbox add --vhost-user shows the port, no VMM yet" contains "$out" \
		"vhost-user: $TB_DIR/v1.sock (server, no VMM connected)"
	check "sandbox list shows the vhost-user port" contains "$(ctl sandbox list)" "vhost:$TB_DIR/v1.sock"
	ctl sandbox add v2 --iface sb2 --vhost-user "$TB_DIR/v2.sock" >/dev/null 2>&1
	check "sandbox add with both kinds of port → 2" test $? = 2
	out=$(ctl sandbox add l1 --iface sb2 --max-sessions 400 --snat-ports-per-endpoint 7 \
		--new-sessions-per-sec 0)
	check "sandbox add with limits → 0 ($?)" test $? = 0
	check "it prints the limits set" contains "$out" "max-sessions             400 (set)"
	check "and the defaults in force" contains "$out" "max-inbound              65536"
	check "the registration has exactly the limits given" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["limitsSet"] == {"maxSessions": 400, "snatPortsPerEndpoint": 7,
                          "newSessionsPerSec": 0}, j["limitsSet"]
assert j["limits"]["snatPortsPerEndpoint"] == 7, j["limits"]' "$(api_body GET /sandboxes/l1)"
	check "sandbox show prints them" contains "$(ctl sandbox show l1)" \
		"snat-ports-per-endpoint  7 (set)"
	ctl sandbox add l1 --iface sb2 --max-sessions 12x >/dev/null 2>&1
	check "a bad limit → 2" test $? = 2
	check "and the registration is unchanged" contains "$(ctl sandbox show l1)" \
		"max-sessions             400 (set)"
	check "sandbox add without limits keeps them" contains \
		"$(ctl sandbox add l1 --iface sb2 --port 8080)" "max-sessions             400 (set)"
	out=$(ctl sandbox add l1 --iface sb2 --max-inbound 99)
	check "with one, it replaces the ones set" python3 -c '
import json, sys
assert json.loads(sys.argv[1])["limitsSet"] == {"maxInboundSessions": 99}' \
		"$(api_body GET /sandboxes/l1)"
	check "sandbox del l1 → 0" quiet ctl sandbox del l1
	ctl sandbox add v2 --vhost-user relative.sock >/dev/null 2>&1
	check "sandbox add with a relative socket → 1 (the API's 400)" test $? = 1
	check "sandbox del v1 → 0" quiet ctl sandbox del v1
	out=$(ctl ports s1 8080)
	check "ports ID PORT prints the exposed-ports answer" \
		eq "$out" "s1 8080 -> $NODE_IP:$hp (host_port)"
	check "ports --json is the API's answer" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert a == b, (a, b)' "$(ctl --json ports s1 8080)" "$(api_body GET /sandboxes/s1/exposed-ports/8080)"
	out=$(ctl ports s1)
	check "ports ID lists every port" eq "$(echo "$out" | wc -l)" 2
	out=$(ctl stats)
	check "stats shows the counters" contains "$out" "sessions_created"
	check "stats --json is /stats" python3 -c '
import json, sys
j = json.loads(sys.argv[1]); assert j["worker"]["sessions_created"] >= 1, j' "$(ctl stats --json)"
	out=$(ctl sessions --sandbox s1 --limit 5)
	check "sessions lists the connection" contains "$out" "$CLIENT_IP:"
	out=$(ctl sessions --all --json)
	check "sessions --all --json" eq "$(json_get "$out" 'j["count"] >= 1')" True
	out=$(ctl sandbox show nope 2>&1)
	rc=$?
	check "an API error → exit 1 ($rc)" test $rc = 1
	check "with the API's message" contains "$out" "sandbox nope not found (HTTP 404)"
	out=$(ctl sandbox add s2 --iface nosuch0 2>&1)
	rc=$?
	check "a rejected registration → exit 1 ($rc)" test $rc = 1
	check "with the reason" contains "$out" "unknown interface nosuch0"
	out=$(ctl ports s1 70000 2>&1)
	check "bad port → the API's 400 message" contains "$out" "(HTTP 400)"
	out=$(ctl --api 127.0.0.1:1 status 2>&1)
	rc=$?
	check "no API → exit 3 ($rc)" test $rc = 3
	check "and says so" contains "$out" "cannot connect to 127.0.0.1:1"
	ctl frobnicate >/dev/null 2>&1
	check "unknown command → exit 2" test $? = 2
	ctl sandbox add s9 >/dev/null 2>&1
	check "missing --iface or --vhost-user → exit 2" test $? = 2
	local c
	for c in status stats "sandbox" ports policy sessions; do
		# shellcheck disable=SC2086
		out=$(ctl $c --help)
		rc=$?
		check "$c --help → 0" test $rc = 0
		check "$c --help prints a usage" contains "${out:0:6}" "Usage:"
	done
	out=$(ctl sandbox del s1)
	rc=$?
	check "sandbox del → 0" test $rc = 0
	check "and it is gone" eq "$(api_status GET /sandboxes/s1)" 404
	ctl sandbox del s1 >/dev/null 2>&1
	check "del of a missing sandbox → exit 1" test $? = 1
	# Policy: the route is the egress-policy work; the ctl speaks it.
	register s1 sb1 '[8080]' >/dev/null
	if [ "$(api_status GET /sandboxes/s1/policy)" = 404 ]; then
		echo "# GET /sandboxes/ID/policy is not served by this build: policy not checked"
	else
		out=$(ctl policy set s1 --internet no --deny 198.18.0.0/15)
		rc=$?
		check "policy set → 0 ($rc)" test $rc = 0
		check "policy get shows it" python3 -c '
import json, sys
p = json.loads(sys.argv[1])
assert p["allowInternetAccess"] is False and p["denyOut"] == ["198.18.0.0/15"], p' \
			"$(ctl --json policy get s1)"
		out=$(ctl policy set s1 --allow not-a-cidr 2>&1)
		check "a bad CIDR → the API's error" contains "$out" "(HTTP 400)"
	fi
	ctl --version | grep -q '^cubevs-fpctl [0-9]'
	check "--version" test $? = 0
}

case_contract() {
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	fp_start
	check "every answer matches docs/openapi.yaml" \
		nsn python3 "$SRC_DIR/contract.py" "http://$API" "$OPENAPI" sb1 sb2
}

case_concurrency() {
	local n=${CONC_N:-200} i t0
	tb_setup
	t0=$(now)
	# 200 veth pairs inside the node namespace stand for 200 sandbox TAPs.
	{
		for i in $(seq $n); do
			echo "link add c$i type veth peer name c${i}p"
			echo "link set c$i up"
			echo "link set c${i}p up"
		done
	} | nsn ip -batch -
	echo "# $n veth pairs in $(elapsed "$t0") s"
	fp_start --host-port-range 20000-20999
	t0=$(now)
	nsn python3 - "$API" "$n" "$TB_DIR/res.json" <<'EOF'
import http.client, json, sys, threading
api, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
host, port = api.split(":")
res = {}
start = threading.Barrier(n)

def one(i):
    body = json.dumps({"iface": "c%d" % i, "exposedPorts": [8080, 9090]})
    start.wait()
    try:
        c = http.client.HTTPConnection(host, int(port), timeout=120)
        c.request("PUT", "/sandboxes/k%d" % i, body, {"Content-Type": "application/json"})
        r = c.getresponse()
        res[i] = (r.status, json.loads(r.read() or b"null"))
    except Exception as e:
        res[i] = (0, str(e))

ts = [threading.Thread(target=one, args=(i,)) for i in range(1, n + 1)]
for t in ts:
    t.start()
for t in ts:
    t.join()
json.dump(res, open(out, "w"))
EOF
	echo "# $n concurrent registrations answered in $(elapsed "$t0") s"
	check "all $n concurrent registrations → 201, no duplicate host port" python3 - \
		"$TB_DIR/res.json" "$n" <<'EOF'
import json, sys
res, n = json.load(open(sys.argv[1])), int(sys.argv[2])
bad = {k: v for k, v in res.items() if v[0] != 201}
assert not bad, list(bad.items())[:3]
ports = [p["hostPort"] for _, v in res.items() for p in v[1]["exposedPorts"]]
assert len(ports) == 2 * n == len(set(ports)), (len(ports), len(set(ports)))
ips = [v[1]["sandboxIP"] for v in res.values()]
assert len(set(ips)) == n
EOF
	local list
	list=$(api_body GET /sandboxes)
	check "GET /sandboxes has $n attached sandboxes with distinct host ports" python3 -c '
import json, sys
s = json.loads(sys.argv[1])["sandboxes"]
ports = [p["hostPort"] for x in s for p in x["exposedPorts"]]
assert len(s) == int(sys.argv[2]) and all(x["attached"] for x in s), len(s)
assert len(ports) == len(set(ports)) == 2 * len(s)' "$list" "$n"
	check "the state file has all $n" eq "$(json_get "$(state_view)" \
		'len(j["sandboxes"])')" "$n"
	# Racing on one id and on one interface: one wins, the others fail cleanly.
	nsn ip link add race0 type veth peer name race0p
	nsn python3 - "$API" "$TB_DIR/race.json" <<'EOF'
import http.client, json, sys, threading
api, out = sys.argv[1], sys.argv[2]
host, port = api.split(":")
res = []
lock = threading.Lock()
start = threading.Barrier(40)

def one(i):
    # 20 clients register the same id, 20 others other ids on the same interface.
    sid = "same" if i < 20 else "other%d" % i
    start.wait()
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    c.request("PUT", "/sandboxes/" + sid, json.dumps({"iface": "race0", "exposedPorts": [80]}),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    with lock:
        res.append((sid, r.status, json.loads(r.read())))

ts = [threading.Thread(target=one, args=(i,)) for i in range(40)]
[t.start() for t in ts]
[t.join() for t in ts]
json.dump(res, open(out, "w"))
EOF
	check "racing on one interface: exactly one 201, the rest 200 or 409 with an error" \
		python3 - "$TB_DIR/race.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))
created = [r for r in res if r[1] == 201]
assert len(created) == 1, created
winner = created[0][0]
for sid, st, body in res:
    if sid == winner:
        assert st in (200, 201), (sid, st, body)
    else:
        assert st == 409 and body["error"], (sid, st, body)
EOF
	local t1
	fp_stop
	t1=$(now)
	fp_start --host-port-range 20000-20999
	echo "# restart with $((n + 1)) registrations to ready: $(elapsed "$t1") s"
	check "after a restart the same $n registrations come back with the same ports" \
		python3 -c '
import json, sys
a = {x["sandboxID"]: x for x in json.loads(sys.argv[1])["sandboxes"]}
b = {x["sandboxID"]: x for x in json.loads(sys.argv[2])["sandboxes"]}
assert all(b[k] == v for k, v in a.items()), "differs"' "$list" "$(api_body GET /sandboxes)"
}

# The API on a unix socket (issue 35): by default RUNTIME-DIR/api.sock, 0600; the same routes
# as the TCP listener; a client without the rights is refused by the kernel; cubevs-fpctl
# speaks it; a socket file a killed process left is replaced, a live one or another kind of
# file at the path stops the start naming it; a stop removes it.
case_socket() {
	tb_setup
	tb_add_sandbox 1
	tb_sandbox_server 1 8080
	fp_start
	local sock=$TB_DIR/run/api.sock out hp
	check "the socket is at RUNTIME-DIR/api.sock, a socket of root's, mode 0600" \
		eq "$(stat -c '%F %U %a' "$sock")" "socket root 600"
	check "the log says where" grep -q "API also on unix:$sock (mode 0600)" "$TB_DIR/fp.log"
	check "PUT over the socket → 201" eq "$(nsn curl -s -m 5 --unix-socket "$sock" -o /dev/null \
		-w '%{http_code}' -X PUT -H 'Content-Type: application/json' \
		-d '{"iface":"sb1","exposedPorts":[8080]}' http://localhost/sandboxes/s1)" 201
	hp=$(hostport_of s1 8080)
	check "the registration made over the socket serves" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "sandbox1 $CLIENT_IP"
	check "both listeners give the same answer" eq \
		"$(nsn curl -s -m 5 --unix-socket "$sock" http://localhost/sandboxes/s1/exposed-ports/8080)" \
		"$(api_body GET /sandboxes/s1/exposed-ports/8080)"
	check "a user without the rights cannot connect" bash -c "! ip netns exec $NS_N \
		setpriv --reuid=65534 --regid=65534 --clear-groups curl -s -m 5 \
		--unix-socket $sock http://localhost/healthz"
	out=$(nsn "$CUBEVS_FPCTL" --api "unix:$sock" sandbox show s1)
	check "cubevs-fpctl --api unix:PATH" contains "$out" "8080 -> $NODE_IP:$hp"
	check "cubevs-fpctl status names the socket" \
		contains "$(nsn "$CUBEVS_FPCTL" --api "unix:$sock" status)" "at unix:$sock"
	fp_kill9
	check "kill -9 leaves the socket file" test -S "$sock"
	check "cubevs-fpctl on it: cannot connect, exit 1" bash -c "ip netns exec $NS_N \
		$CUBEVS_FPCTL --api unix:$sock status 2>&1 | grep -q 'cannot connect to unix:$sock'"
	check "the next start replaces the stale socket" fp_start --api-socket-mode 0660
	check "with the mode asked for" eq "$(stat -c '%a' "$sock")" 660
	check "and serves on it" eq "$(nsn curl -s -m 5 --unix-socket "$sock" -o /dev/null \
		-w '%{http_code}' http://localhost/sandboxes/s1)" 200
	check "SIGTERM → exit 0" fp_stop
	check "the stop removed the socket" test ! -e "$sock"
	check "--api-socket none: TCP only" fp_start --api-socket none
	check "no socket then" test ! -e "$sock"
	fp_stop
	# Someone else's live socket at the path: the start stops, naming it, and leaves it.
	tb_bg python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
time.sleep(60)' "$TB_DIR/live.sock"
	for _ in $(seq 50); do [ -S "$TB_DIR/live.sock" ] && break; sleep 0.1; done
	fp_try --api-socket "$TB_DIR/live.sock" >"$TB_DIR/live.log" 2>&1
	check "a live socket at the path stops the start, naming it" \
		grep -q "cannot listen on $TB_DIR/live.sock for the API: another process serves it" \
		"$TB_DIR/live.log"
	check "and leaves it" test -S "$TB_DIR/live.sock"
	: >"$sock"
	fp_try >"$TB_DIR/plainfile.log" 2>&1
	local rc=$?
	check "a plain file at the default path stops the start (exit $rc, not the timeout)" \
		test "$rc" -ne 0 -a "$rc" -ne 124
	check "naming it" \
		grep -q "cannot listen on $sock for the API: a file that is not a socket is there" \
		"$TB_DIR/plainfile.log"
	check "and leaves the file alone" test -f "$sock"
}

# A start in the foreground (one expected to fail), with the bed's flags and these.
fp_try() {
	ip netns exec "$NS_N" timeout 60 "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf --no-pci \
		"${FP_EAL_ARGS[@]}" -- --world-iface nic0 --state-file "$TB_DIR/state.json" \
		--runtime-dir "$TB_DIR/run" "${FP_PIN[@]}" "$@"
}

case_notify() {
	tb_setup
	tb_add_sandbox 1
	fp_start
	register s1 sb1 '[8080]' >/dev/null
	fp_stop
	# A datagram socket in the role of systemd; it records what arrives and when.
	local sock=$TB_DIR/notify.sock
	python3 - "$sock" "$TB_DIR/notify.log" "http://$API/sandboxes" "$NS_N" <<'EOF' &
import socket, subprocess, sys
path, log, url, ns = sys.argv[1:5]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(60)
with open(log, "w") as f:
    while True:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            break
        # At READY=1 the restored registration must already be served.
        seen = ""
        if "READY=1" in msg:
            seen = subprocess.run(["ip", "netns", "exec", ns, "curl", "-s", "-m", "5", url],
                                  capture_output=True, text=True).stdout.strip()
        f.write(repr(msg) + " " + seen + "\n")
        f.flush()
        if "STOPPING=1" in msg:
            break
EOF
	TB_PIDS+=($!)
	local n
	for n in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
	NOTIFY_SOCKET=$sock fp_start
	for n in $(seq 50); do grep -q READY "$TB_DIR/notify.log" 2>/dev/null && break; sleep 0.1; done
	check "READY=1 arrived on \$NOTIFY_SOCKET" grep -q "READY=1" "$TB_DIR/notify.log"
	check "when READY=1 was sent the restored sandbox was served" \
		grep -q "READY=1.*\"sandboxID\":\"s1\"" "$TB_DIR/notify.log"
	fp_stop
	for n in $(seq 50); do grep -q STOPPING "$TB_DIR/notify.log" && break; sleep 0.1; done
	check "STOPPING=1 on SIGTERM" grep -q "STOPPING=1" "$TB_DIR/notify.log"
}

case_workers() {
	# Two workers, each with its own session table: the surfaces sum them and the session
	# dump pages across both. Lcores share CPUs as in test_workers.sh.
	export FP_EAL="--lcores 0@0,1@1,2@0"
	tb_setup
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	fp_start --workers 2 --world-queues 1 --idle-sleep-us 20 --host-iface none
	register s1 sb1 '[8080]' >/dev/null
	register s2 sb2 '[8080]' >/dev/null
	local hp1 hp2 i n=15
	hp1=$(hostport_of s1 8080)
	hp2=$(hostport_of s2 8080)
	for i in $(seq $n); do
		nsc curl -s -m 5 -o /dev/null "http://$NODE_IP:$hp1/name"
		nsc curl -s -m 5 -o /dev/null "http://$NODE_IP:$hp2/name"
	done
	check "readyz: both workers polling" eq "$(api_status GET /readyz)" 200
	scrape "$TB_DIR/m"
	check "sessions_created sums both workers" \
		eq "$(metric "$TB_DIR/m" cubevs_sessions_created_total)" $((2 * n))
	check "the table use sums both workers" \
		eq "$(metric "$TB_DIR/m" cubevs_session_table_used)" $((2 * n))
	check "per-sandbox counters of the second worker's sandbox" test \
		"$(metric "$TB_DIR/m" 'cubevs_sandbox_port_tx_packets_total{sandbox="s2"}')" -ge $((3 * n))
	check "pages of 7 cover the sessions of both workers once" nsn python3 - "$API" \
		$((2 * n)) <<'PY'
import json, sys, urllib.request
api, n = sys.argv[1], int(sys.argv[2])
seen, cursor, pages = [], None, 0
while pages < 50:
    url = "http://%s/sessions?limit=7" % api + ("&cursor=" + cursor if cursor else "")
    page = json.load(urllib.request.urlopen(url))
    seen += [(s["sandboxID"], s["original"]["src"]) for s in page["sessions"]]
    pages += 1
    cursor = page["nextCursor"]
    if cursor is None:
        break
assert len(seen) == n == len(set(seen)), (len(seen), len(set(seen)))
assert {s for s, _ in seen} == {"s1", "s2"}, seen
print("# %d sessions of 2 workers in %d pages" % (len(seen), pages))
PY
	check "a cursor naming a worker that does not exist → 400" \
		eq "$(api_status GET "/sessions?cursor=$((5 << 32))")" 400
}

"case_$1"
[ $FAILS -eq 0 ] || exit 1
