#!/bin/bash
# The README's demo command: installs what is missing, builds, creates a namespace test bed,
# starts cubevs-fp, registers two sandboxes, sends HTTP from the client namespace to each
# sandbox through nodeIP:hostPort, prints the exposed-ports API answer, then tears it all down.
#   tools/demo.sh          run and tear down
#   tools/demo.sh --keep   leave the bed and cubevs-fp running (then: tools/demo.sh --down)
#   tools/demo.sh --down   tear down a kept demo
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
STATE=/run/cubevs-fp-demo.pid
export TB_ID=demo

if [ "${1:-}" = "--down" ]; then
	if [ -f "$STATE" ]; then
		while read -r pid; do kill -TERM "$pid" 2>/dev/null || true; done <"$STATE"
		sleep 1
		rm -f "$STATE"
	fi
	for ns in cvs-s1-demo cvs-s2-demo cvs-c-demo cvs-n-demo; do
		ip netns del "$ns" 2>/dev/null || true
	done
	echo "demo torn down"
	exit 0
fi
KEEP=0
[ "${1:-}" = "--keep" ] && KEEP=1

bash tools/deps.sh
[ -d build ] || meson setup build >/dev/null
ninja -C build >/dev/null
export CUBEVS_FP=$ROOT/build/control/cubevs-fp

set +e
source tests/netns/lib.sh
if ip netns list | grep -q -- '-demo'; then
	echo "a demo bed exists already; remove it with: tools/demo.sh --down"
	exit 1
fi
tb_setup
[ $KEEP = 1 ] && trap - EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "test bed: client $CLIENT_IP  <->  node $NODE_IP (nic0, AF_XDP)  <->  sandboxes sb1, sb2"
tb_add_sandbox 1
tb_add_sandbox 2
tb_sandbox_server 1 8080
tb_sandbox_server 2 8080
echo "each sandbox: guest $GUEST_IP/30, gateway $GW_IP, HTTP server on :8080"

step "start: cubevs-fp -l 0-1 --no-huge -m 512 --no-shconf --no-pci -- --world-iface nic0"
fp_start
grep 'ready' "$TB_DIR/fp.log"

step "register two sandboxes (PUT /sandboxes/{id})"
register sandbox-a sb1 '[8080]' | sed '$d'
register sandbox-b sb2 '[8080]' | sed '$d'

for id in sandbox-a sandbox-b; do
	step "GET /sandboxes/$id/exposed-ports/8080"
	answer=$(api_body GET "/sandboxes/$id/exposed-ports/8080")
	echo "$answer"
	ep=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["endpoint"])' "$answer")
	step "client: curl http://$ep/name"
	nsc curl -s -m 5 "http://$ep/name"
done

step "counters (GET /stats, non-zero)"
api_body GET /stats | python3 -c '
import json, sys
s = json.load(sys.stdin)
for group in ("worker", "drops", "xdp"):
    for k, v in s[group].items():
        if v:
            print("  %-8s %-22s %d" % (group, k, v))
print("  sessions %d of %d" % (s["sessions"], s["sessionCapacity"]))'

if [ $KEEP = 1 ]; then
	printf '%s\n' "${TB_PIDS[@]}" >"$STATE"
	step "left running"
	echo "API:      ip netns exec $NS_N curl -s http://$API/sandboxes"
	echo "client:   ip netns exec $NS_C curl http://$NODE_IP:<hostPort>/name"
	echo "log:      $TB_DIR/fp.log"
	echo "teardown: tools/demo.sh --down"
	exit 0
fi
step "teardown"
fp_stop && echo "cubevs-fp stopped (exit 0), XDP programs detached"
