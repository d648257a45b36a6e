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
	# The kept bed's directory (its log and state file); only a test-bed directory.
	if [ -f "$STATE.dir" ]; then
		dir=$(cat "$STATE.dir")
		[[ $dir == /tmp/cvs-tb.* ]] && rm -rf "$dir"
		rm -f "$STATE.dir"
	fi
	for ns in cvs-s1-demo cvs-s2-demo cvs-w-demo cvs-c-demo cvs-n-demo; do
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

step "test bed: world $WORLD_IP -- client/router $CLIENT_IP -- node $NODE_IP (nic0, AF_XDP) -- sandboxes sb1, sb2"
tb_add_world
tb_world_server 8000 world
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

hp_b=$(hostport_of sandbox-b 8080)
step "egress: sandbox-a: curl http://$WORLD_IP:8000/peer   (the world sees node IP : SNAT port)"
nss 1 curl -s -m 8 "http://$WORLD_IP:8000/peer"
step "hairpin: sandbox-a: curl http://$NODE_IP:$hp_b/name   (sandbox-b's endpoint, same node)"
nss 1 curl -s -m 5 "http://$NODE_IP:$hp_b/name"
sbx_b=$(api_body GET /sandboxes/sandbox-b | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxIP"])')
step "host path: node: curl http://$sbx_b:8080/name   (through cube-dev)"
nsn curl -s -m 5 "http://$sbx_b:8080/name"
step "policy: PUT /sandboxes/sandbox-a/policy {\"denyOut\":[\"198.19.0.0/24\"]}, then egress again"
api PUT /sandboxes/sandbox-a/policy '{"denyOut":["198.19.0.0/24"]}' | sed '$d'
nss 1 curl -s -m 5 "http://$WORLD_IP:8000/peer" || echo "refused at once (RST from the fast path), as the policy says"

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
	echo "$TB_DIR" >"$STATE.dir"
	step "left running"
	echo "API:      ip netns exec $NS_N curl -s http://$API/sandboxes"
	echo "client:   ip netns exec $NS_C curl http://$NODE_IP:<hostPort>/name"
	echo "log:      $TB_DIR/fp.log"
	echo "teardown: tools/demo.sh --down"
	exit 0
fi
step "teardown"
fp_stop && echo "cubevs-fp stopped (exit 0), XDP programs detached"
