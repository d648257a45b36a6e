#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mtubench: TCP throughput through an exposed port, cubevs-fp against the kernel's own DNAT
# (nftables + conntrack) on the same namespace bed (tests/netns/lib.sh: client C -- node N --
# sandbox), at MTU 1500 and at jumbo frames (9000), with the veths' offloads at the
# kernel's defaults (checksum offload on: cubevs-fp completes partial checksums) and off.
# One iperf3 stream each way per cell (upload into the sandbox, download from it), TRIALS
# trials of SECONDS each, every cell measured in the same run; prints Gbit/s, the median of
# the trials, and cubevs-fp's ratio to nftables. Not a test: nothing is asserted.
#
# Usage (root): tools/bench/mtubench.sh [TRIALS [SECONDS]]
#   MTUS="1500 9000" OFFLOADS="on off" PATHS="cubevs nft" narrow the cells.
# Every load is bounded in time; only 198.18.0.0/15 and the guest link-local addresses are
# used; each cell's namespaces are removed after it and only processes it started are ended.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
: "${CUBEVS_FP:=$ROOT/build/control/cubevs-fp}"
export CUBEVS_FP

# One cell on a bed of its own: prints "UP DOWN" in Gbit/s.
one() { # path mtu offloads seconds
	local path=$1 mtu=$2 offl=$3 secs=$4 port up down
	export TB_OFFLOADS=$offl
	# shellcheck source=../../tests/netns/lib.sh
	source "$ROOT/tests/netns/lib.sh"
	tb_setup >&2
	tb_add_sandbox 1 >&2
	nsc ip link set cl0 mtu "$mtu"
	nsn ip link set nic0 mtu "$mtu"
	nsn ip link set sb1 mtu "$mtu"
	nss 1 ip link set eth0 mtu "$mtu"
	tb_bg ip netns exec "cvs-s1-$TB_ID" iperf3 -s -p 5201 -1 >/dev/null 2>&1
	if [ "$path" = cubevs ]; then
		fp_start >&2
		eq "$(register s1 sb1 '[5201]' | tail -n1)" 201 >&2 || die "register"
		port=$(hostport_of s1 5201)
	else
		# The kernel's DNAT: a host port to the guest, its replies un-DNATed by conntrack.
		port=30001
		nsn ip addr add $GW_IP/30 dev sb1
		nsn sysctl -qw net.ipv4.ip_forward=1
		nsn nft add table ip mtub
		nsn nft add chain ip mtub pre '{ type nat hook prerouting priority -100; }'
		nsn nft add rule ip mtub pre tcp dport $port dnat to $GUEST_IP:5201
	fi
	sleep 0.5
	up=$(nsc iperf3 -c $NODE_IP -p "$port" -t "$secs" -J 2>/dev/null | python3 -c \
		'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' \
		2>/dev/null || echo 0)
	tb_bg ip netns exec "cvs-s1-$TB_ID" iperf3 -s -p 5201 -1 >/dev/null 2>&1
	sleep 0.3
	down=$(nsc iperf3 -c $NODE_IP -p "$port" -t "$secs" -R -J 2>/dev/null | python3 -c \
		'import json,sys; print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))' \
		2>/dev/null || echo 0)
	echo "$up $down"
}

if [ "${1:-}" = --one ]; then
	shift
	one "$@"
	exit 0
fi

[ "$(id -u)" = 0 ] || { echo "mtubench: needs root (network namespaces)" >&2; exit 1; }
TRIALS=${1:-3}
SECS=${2:-5}
for c in iperf3 nft; do
	command -v $c >/dev/null && continue
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q iperf3 nftables >/dev/null ||
		{ echo "mtubench: cannot install iperf3/nftables" >&2; exit 1; }
done
[ -x "$CUBEVS_FP" ] || { echo "mtubench: no $CUBEVS_FP (meson setup build && ninja -C build)" >&2; exit 1; }

RES=$(mktemp)
trap 'rm -f "$RES"' EXIT
# Trials interleave the cells, so a slow minute of the machine touches every cell alike.
for t in $(seq "$TRIALS"); do
	for mtu in ${MTUS:-1500 9000}; do
		for offl in ${OFFLOADS:-on off}; do
			for path in ${PATHS:-cubevs nft}; do
				r=$(bash "$0" --one "$path" "$mtu" "$offl" "$SECS" 2>/dev/null | tail -n1)
				echo "trial $t: $path mtu $mtu offloads $offl: $r Gbit/s (up down)" >&2
				echo "$path $mtu $offl $r" >>"$RES"
			done
		done
	done
done
python3 - "$RES" <<'EOF'
import statistics, sys
cells = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5:
        cells.setdefault(tuple(f[:3]), []).append((float(f[3]), float(f[4])))
print("| MTU | offloads of the bed's veths | direction | cubevs-fp Gbit/s | nftables Gbit/s | ratio |")
print("|---|---|---|---|---|---|")
for mtu in sorted({k[1] for k in cells}, key=int):
    for offl in ("on", "off"):
        for d, name in ((0, "upload (into the sandbox)"), (1, "download")):
            med = {}
            for p in ("cubevs", "nft"):
                v = [x[d] for x in cells.get((p, mtu, offl), [])]
                med[p] = statistics.median(v) if v else None
            if med["cubevs"] is None and med["nft"] is None:
                continue
            ratio = "%.2fx" % (med["cubevs"] / med["nft"]) if med["cubevs"] and med["nft"] else "-"
            fmt = lambda v: "-" if v is None else "%.2f" % v
            print("| %s | %s | %s | %s | %s | %s |" % (mtu, offl, name, fmt(med["cubevs"]),
                                                     fmt(med["nft"]), ratio))
EOF
