#!/bin/bash
# Restart benchmark (issue 12), on the netns test bed of tests/netns (root):
#   - the forwarding gap: a sandbox → world UDP flow exchanging a datagram every 1 ms; the
#     longest time between two answers is the last packet before the restart to the first
#     after it (±2 ms);
#   - the stall a TCP client sees: world → exposed port and sandbox → world TCP flows with a
#     message every 2 ms; the longest wait for an echo, and the segments retransmitted in the
#     client's namespace and in the sandbox's (its egress client and its ingress echo server;
#     nstat TcpRetransSegs);
#   - stop (SIGTERM) or kill (-9) to the next 'ready:';
#   - adoption of 1M sessions (adoptbench: every check, and the rebuild after a crash).
# Printed, never judged.
#   restartbench.sh [BUILD_DIR]     (default: build; ROUNDS=N restarts of each kind [3])
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
export CUBEVS_FP=${CUBEVS_FP:-$BUILD/control/cubevs-fp}
ROUNDS=${ROUNDS:-3}
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/netns/lib.sh"
FP_EAL_ARGS=(--file-prefix "${RB_FILE_PREFIX:-cvs-restartbench}-$$")

bed() {
	tb_setup
	tb_add_world
	tb_add_sandbox 1
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --tcp-echo 7000
	tb_server "$NS_W" 8000 --name world --udp-echo 5353 --tcp-echo 7001
	fp_start
	[ "$(register s1 sb1 '[7000]' | tail -n1)" = 201 ] || die "register s1"
	HP=$(hostport_of s1 7000)
}

retrans() { # namespace: its TcpRetransSegs (absolute: nstat's history is not per namespace)
	ip netns exec "$1" nstat -az TcpRetransSegs 2>/dev/null |
		awk '$1 == "TcpRetransSegs" { n = $2 } END { print n + 0 }'
}

one_restart() { # term|kill
	local d=$TB_DIR/rb t0 ready rin reg
	rm -rf "$d"
	mkdir -p "$d/in" "$d/eg"
	rin=$(retrans "$NS_C")
	reg=$(retrans "cvs-s1-$TB_ID")
	tb_bg nsc python3 "$SRC_DIR/longconn.py" "$d/in" --period 2 \
		--tcp "ingress@$NODE_IP:$HP:1" >"$d/in/out"
	tb_bg nss 1 python3 "$SRC_DIR/longconn.py" "$d/eg" --period 1 \
		--udp "udp@$WORLD_IP:5353:1" --period 2 --tcp "egress@$WORLD_IP:7001:1" \
		>"$d/eg/out"
	for t0 in $(seq 100); do
		[ -f "$d/in/ready" ] && [ -f "$d/eg/ready" ] && break
		sleep 0.1
	done
	sleep 1
	t0=$(date +%s%N)
	if [ "$1" = term ]; then
		fp_stop
	else
		kill -KILL "$FP_PID"
		wait "$FP_PID" 2>/dev/null
		FP_PID=
	fi
	fp_start
	ready=$((($(date +%s%N) - t0) / 1000000))
	echo 1 >"$d/in/mark"
	echo 1 >"$d/eg/mark"
	sleep 4
	touch "$d/in/stop" "$d/eg/stop"
	for t0 in $(seq 100); do
		[ -s "$d/in/out" ] && [ -s "$d/eg/out" ] && break
		sleep 0.1
	done
	python3 - "$1" "$ready" $(($(retrans "$NS_C") - rin)) $(($(retrans "cvs-s1-$TB_ID") - reg)) \
		"$d/in/out" "$d/eg/out" <<'PY'
import json, sys
mode, ready, rin, reg = sys.argv[1:5]
flows = {}
for p in sys.argv[5:]:
    for f in json.load(open(p))['flows']:
        flows[f['label']] = f
bad = [f['name'] + ': ' + f['why'] for f in flows.values() if not f['ok']]
print('restartbench: %-8s ready %5s ms | forwarding gap (UDP, 1 ms) %5d ms | TCP stall: '
      'ingress %5d ms, egress %5d ms | retransmitted segments: client %s, sandbox %s%s' % (
          'SIGTERM' if mode == 'term' else 'kill -9', ready, flows['udp']['stall_ms'],
          flows['ingress']['stall_ms'], flows['egress']['stall_ms'], rin, reg,
          ' | BROKEN: ' + '; '.join(bad) if bad else ''))
PY
}

bed
log "restartbench: $ROUNDS restarts of each kind, one worker, 4 KiB pages (shared machine?)"
for r in $(seq "$ROUNDS"); do
	one_restart term
	one_restart kill
done
fp_stop
ADOPT=$BUILD/tools/bench/adoptbench
if [ -x "$ADOPT" ]; then
	"$ADOPT" --sessions 1048576 --dir "/dev/shm/${RB_FILE_PREFIX:-cvs-restartbench}-$$"
else
	log "no $ADOPT: adoption of 1M sessions not measured"
fi
