#!/bin/bash
# Sandbox UMEM size (--sandbox-umem-frames), on the netns test bed of tests/netns (root):
# 20 MB downloads from one sandbox through one worker, each size in turn and the order
# reversed every other round (a shared machine drifts). Per download: the time curl takes, the
# fill ring misses of the sandbox's socket (sandboxPorts.s1.xsk_fill_ring_empty) and the
# segments the sandbox retransmitted; the sha256 is checked. Printed, never judged.
#   umembench.sh [BUILD_DIR]   (SIZES="1024 2048" [that], ROUNDS [3], PER downloads a round [4])
set -u
BUILD=$(cd "${1:-build}" && pwd) || exit 1
export CUBEVS_FP=${CUBEVS_FP:-$BUILD/control/cubevs-fp}
SIZES=${SIZES:-1024 2048}
ROUNDS=${ROUNDS:-3}
PER=${PER:-4}
# An EAL --file-prefix of the bed's own, which its teardown removes from /var/run/dpdk.
export TB_EAL_PREFIX=${TB_EAL_PREFIX:-cvs-umembench-}
source "$(dirname "${BASH_SOURCE[0]}")/../../tests/netns/lib.sh"

retrans() { # the sandbox namespace's TcpRetransSegs
	nss 1 nstat -az TcpRetransSegs 2>/dev/null |
		awk '$1 == "TcpRetransSegs" { n = $2 } END { print n + 0 }'
}

misses() {
	api_body GET /stats | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["sandboxPorts"]["s1"]["xsk_fill_ring_empty"])'
}

one_size() { # frames: PER downloads, one line each
	local i hp t f0 r0 got
	fp_start --sandbox-umem-frames "$1"
	register s1 sb1 '[8080]' >/dev/null
	hp=$(hostport_of s1 8080)
	for i in $(seq "$PER"); do
		f0=$(misses)
		r0=$(retrans)
		t=$(nsc curl -s -m 60 -o "$TB_DIR/dl" -w '%{time_total}' \
			"http://$NODE_IP:$hp/blob?n=$N")
		got=$(sha256sum "$TB_DIR/dl" | cut -d' ' -f1)
		printf '%s %s %s %s %s\n' "$1" "$t" $(($(misses) - f0)) $(($(retrans) - r0)) \
			"$([ "$got" = "$WANT" ] && echo ok || echo BAD)" >>"$TB_DIR/umem.txt"
	done
	fp_stop
}

tb_setup
tb_add_sandbox 1
tb_sandbox_server 1 8080
N=$((20 * 1024 * 1024))
WANT=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $N)
for r in $(seq "$ROUNDS"); do
	order=$SIZES
	[ $((r % 2)) = 0 ] && order=$(printf '%s\n' $SIZES | tac)
	for s in $order; do one_size "$s"; done
done
python3 - "$TB_DIR/umem.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("frames  downloads  median s  min s  fill-ring misses mean (max)  retransmitted  sha256")
for size in sorted({r[0] for r in rows}, key=int):
    rs = [r for r in rows if r[0] == size]
    t = [float(r[1]) for r in rs]
    f = [int(r[2]) for r in rs]
    print("%6s  %9d  %8.3f  %5.3f  %12.0f (%d)  %18d  %s" % (
        size, len(rs), statistics.median(t), min(t), statistics.mean(f), max(f),
        sum(int(r[3]) for r in rs), "ok" if all(r[4] == "ok" for r in rs) else "BAD"))
PY
