#!/bin/bash
# The world queues' AF_XDP sockets (ours, control/ports/worldq.h): their kernel statistics on
# every surface (/metrics, /stats, telemetry) moving with real traffic, and a rejected
# descriptor (a test-only option makes the worker submit one past the UMEM every 256th frame)
# logged, counted and reported by /readyz until it stops.
# Usage: test_worldxsk.sh CASE   (counters | invalid)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

XSK_KEYS="xsk_rx_dropped xsk_rx_invalid xsk_tx_invalid xsk_rx_ring_full xsk_fill_ring_empty
	xsk_tx_ring_empty"
N=$((20 * 1024 * 1024))

scrape() { nsn curl -s -m 10 "http://$API/metrics" >"$1"; }
metric() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }
wq() { echo "cubevs_world_$1_total{queue=\"0\"}"; }
json_get() { python3 -c "import json,sys; j=json.loads(sys.argv[1]); print($2)" "$1"; }

# One 20 MB download from the sandbox behind host port $1, intact (a healthy one takes well
# under 1 s).
fetch() { # hostport want-sha [timeout]
	local got
	got=$(nsc curl -s -m "${3:-30}" -o "$TB_DIR/blob" -w '%{size_download} bytes in %{time_total} s' \
		"http://$NODE_IP:$1/blob?n=$N"; echo " curl=$?")
	echo "# 20 MB: $got"
	[ "$(sha256sum <"$TB_DIR/blob" | cut -d' ' -f1)" = "$2" ]
}

bed() { # sandboxes, then cubevs-fp options...
	local i nsbx=$1
	shift
	FP_EAL_ARGS=(--file-prefix "$PREFIX")
	tb_setup
	for i in $(seq "$nsbx"); do
		tb_add_sandbox "$i"
		tb_sandbox_server "$i" 8080
	done
	fp_start --host-iface none "$@"
	HPS=()
	for i in $(seq "$nsbx"); do
		eq "$(register "s$i" "sb$i" '[8080]' | tail -n1)" 201 || die "register s$i"
		HPS+=("$(hostport_of "s$i" 8080)")
	done
	HP=${HPS[0]}
	WANT=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $N)
}

case_counters() {
	bed 1
	local k stats tel
	scrape "$TB_DIR/m0"
	check "one world socket found" eq "$(metric "$TB_DIR/m0" cubevs_world_xsk_sockets)" 1
	for k in $XSK_KEYS; do
		check "$(wq "$k") served" test -n "$(metric "$TB_DIR/m0" "$(wq "$k")")"
	done
	check "every family served is documented in docs/metrics.md" bash -c "
		for f in \$(awk '/^# TYPE cubevs_world_xsk/ { print \$3 }' $TB_DIR/m0); do
			grep -q \"\\\`\$f\\\`\" '$METRICS_DOC' || { echo \"#   \$f\"; exit 1; }
		done"
	check "20 MB from the sandbox intact" fetch "$HP" "$WANT"
	scrape "$TB_DIR/m1"
	python3 - "$TB_DIR/m0" "$TB_DIR/m1" <<'PY'
import sys
def load(p):
    return {l.split()[0]: float(l.split()[1]) for l in open(p)
            if l.startswith("cubevs_world_xsk")}
a, b = load(sys.argv[1]), load(sys.argv[2])
print("# world socket deltas: " + " ".join("%s=%d" % (k[len("cubevs_world_"):], b[k] - a.get(k, 0))
                                           for k in sorted(b)))
PY
	check "the kernel found the world TX ring empty more often under traffic" python3 -c "
assert float('$(metric "$TB_DIR/m1" "$(wq xsk_tx_ring_empty)")') > \
	float('$(metric "$TB_DIR/m0" "$(wq xsk_tx_ring_empty)")')"
	check "no descriptor was rejected" eq "$(metric "$TB_DIR/m1" "$(wq xsk_tx_invalid)")" 0
	check "no alarm" eq "$(metric "$TB_DIR/m1" cubevs_world_xsk_invalid_alarms_total)" 0
	stats=$(api_body GET /stats)
	check "/stats worldXsk agrees with /metrics" python3 -c '
import json, sys
w = json.loads(sys.argv[1])["worldXsk"]
assert w["sockets"] == 1 and w["invalidAlarms"] == 0, w
assert set(w["0"]) == set(sys.argv[3].split()), w
assert w["0"]["xsk_tx_ring_empty"] >= int(float(sys.argv[2])), w' \
		"$stats" "$(metric "$TB_DIR/m1" "$(wq xsk_tx_ring_empty)")" "$XSK_KEYS"
	check "/readyz: the world sockets are healthy" \
		eq "$(json_get "$(api_body GET /readyz)" 'j["checks"]["worldSocketsHealthy"]')" True
	if ! command -v dpdk-telemetry.py >/dev/null; then
		echo "# dpdk-telemetry.py missing (Debian package dpdk): telemetry not checked"
		FAILS=$((FAILS + 1))
	else
		tel=$(printf '/cubevs/stats\n' | dpdk-telemetry.py -f "$PREFIX" 2>&1)
		check "telemetry has the world socket counters" python3 -c '
import json, sys
t = json.loads(sys.argv[1])["/cubevs/stats"]
assert t["world_xsk_sockets"] == 1, t
assert t["world_xsk_tx_ring_empty/0"] >= json.loads(sys.argv[2])["worldXsk"]["0"]["xsk_tx_ring_empty"]
' "$tel" "$stats"
	fi
	fp_stop
	rm -rf "/var/run/dpdk/$PREFIX"
}

case_invalid() {
	# Two workers, a sandbox each, sharing the one world queue's transmit (under its lock): the
	# faulty descriptors of the test option come from both.
	export FP_EAL="--lcores 0@0,1@1,2@0"
	bed 2 --workers 2 --world-queues 1 --idle-sleep-us 20 --test-unpacked-pool
	local round hp failed=0
	for round in 1 2 3 4 5; do
		for hp in "${HPS[@]}"; do
			fetch "$hp" "$WANT" 10 || failed=1
			[ $failed = 1 ] && break 2
		done
	done
	sleep 1.5	# one check of the control thread
	scrape "$TB_DIR/m1"
	grep '^cubevs_world_xsk' "$TB_DIR/m1" | sed 's/^/# /'
	check "the kernel rejected TX descriptors of the world socket" python3 -c "
assert float('$(metric "$TB_DIR/m1" "$(wq xsk_tx_invalid)")') > 0"
	check "counted as an alarm" test "$(metric "$TB_DIR/m1" \
		cubevs_world_xsk_invalid_alarms_total)" -gt 0
	grep 'world port queue' "$TB_DIR/fp.log" | sed 's/^/# log: /'
	check "one error line names the queue and the counter" \
		grep -q 'world port queue 0: [0-9]* TX descriptors were rejected (tx_invalid_descs)' \
		"$TB_DIR/fp.log"
	check "/readyz answers 503" eq "$(api_status GET /readyz)" 503
	check "and names the world sockets" \
		eq "$(json_get "$(api_body GET /readyz)" 'j["checks"]["worldSocketsHealthy"]')" False
	check "cubevs_ready says the same" eq "$(metric "$TB_DIR/m1" cubevs_ready)" 0
	# Ready again 30 s after the last rejected descriptor. The servers would retransmit the cut
	# download for a minute: without the sandboxes nothing is sent to the world any more.
	api DELETE /sandboxes/s1 >/dev/null
	api DELETE /sandboxes/s2 >/dev/null
	local t0=$SECONDS
	for round in $(seq 60); do
		[ "$(api_status GET /readyz)" = 200 ] && break
		sleep 1
	done
	check "/readyz recovers once no descriptor is rejected any more ($((SECONDS - t0)) s)" \
		eq "$(api_status GET /readyz)" 200
	fp_stop
	rm -rf "/var/run/dpdk/$PREFIX"
}

PREFIX=${TB_EAL_PREFIX:-cvs-x}$TB_ID
: "${METRICS_DOC:=$SRC_DIR/../../docs/metrics.md}"
case "${1:-}" in
counters) case_counters ;;
invalid) case_invalid ;;
*) die "usage: $0 counters|invalid" ;;
esac
tb_done
