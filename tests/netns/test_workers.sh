#!/bin/bash
# Two workers: every flow works whichever workers see its two directions; sandboxes, SNAT
# ports and cube-dev queues are split between them. Usage: test_workers.sh 2 | 2q
#   2:  one world queue (a veth as the test bed makes it): worker 0 reads it and hands each
#       frame to the worker that owns its flow, and both transmit on it under its lock.
#   2q: a world queue per worker (TB_QUEUES=2): each queue's socket shares its worker's funnel
#       UMEM (copy mode on veth), so a frame crosses between the world and a sandbox of its
#       worker by descriptor; only frames between workers, cube-dev and parked ones are copied.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-2}" in
2) WQ=1 ;;
2q) WQ=2; export TB_QUEUES=2 ;;
*) die "usage: $0 2|2q" ;;
esac

# Lcores may share CPUs here: main on CPU 0, workers on CPUs 1 and 0, sleeping when idle.
export FP_EAL="--lcores 0@0,1@1,2@0"
tb_setup
tb_add_world
tb_add_sandbox 1
tb_add_sandbox 2
tb_sandbox_server 1 8080
tb_sandbox_server 2 8080
tb_world_server 8000
fp_start --workers 2 --world-queues $WQ --idle-sleep-us 20
eq "$(register s1 sb1 '[8080]' | tail -n1)" 201 || die "register s1"
eq "$(register s2 sb2 '[8080]' | tail -n1)" 201 || die "register s2"
HP1=$(hostport_of s1 8080)
HP2=$(hostport_of s2 8080)
SBX2=$(api_body GET /sandboxes/s2 | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxIP"])')
nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
check "two workers run" bash -c "grep -q '2 worker(s)' $TB_DIR/fp.log"

out=$(nsc python3 "$SRC_DIR/client.py" parallel "$NODE_IP" "$HP1" 200)
check "200 parallel connections to sandbox 1 (slot of worker 0): $out" contains "$out" "ok=200 failed=0"
out=$(nsc python3 "$SRC_DIR/client.py" parallel "$NODE_IP" "$HP2" 200)
check "200 parallel connections to sandbox 2 (slot of worker 1): $out" contains "$out" "ok=200 failed=0"
n=$((20 * 1024 * 1024))
want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
# Three rounds each: the frames cycle through the whole mbuf pool (both workers' caches and
# the common ring), so an mbuf the world port's UMEM does not cover is met (control/ports/mbufpool.h:
# such a frame stopped the world port's transmit for good, mostly in the first round).
for round in 1 2 3; do
	for hp in $HP1 $HP2; do
		# Size, time and curl's exit code in the message: wrong bytes or a cut transfer (30 s each;
		# a healthy one takes well under 1 s).
		got=$(nsc curl -s -m 30 -o "$TB_DIR/blob.$hp" \
			-w '%{size_download} bytes in %{time_total} s' \
			"http://$NODE_IP:$hp/blob?n=$n"; echo " curl=$?")
		check "20 MB from host port $hp intact, round $round ($got)" \
			eq "$(sha256sum <"$TB_DIR/blob.$hp" | cut -d' ' -f1)" "$want"
		rm -f "$TB_DIR/blob.$hp"
	done
done
out=$(nss 1 python3 "$SRC_DIR/client.py" serial $WORLD_IP 8000 200)
check "200 egress connections from sandbox 1, distinct SNAT ports" python3 -c '
import sys
p = [int(x) for x in sys.argv[1].split()]
print("#   %d ports: %s" % (len(p), sys.argv[1][:120])) if len(p) != 200 else None
assert len(p) == 200 and len(set(p)) == 200, len(set(p))' "$out"
out=$(nss 2 python3 "$SRC_DIR/client.py" serial $WORLD_IP 8000 200)
check "200 egress connections from sandbox 2" python3 -c '
import sys
p = [int(x) for x in sys.argv[1].split()]
assert len(p) == 200 and len(set(p)) == 200, len(set(p))' "$out"
out=$(nss 1 python3 "$SRC_DIR/client.py" parallel "$NODE_IP" "$HP2" 100)
check "100 hairpin connections from sandbox 1 to sandbox 2 (across workers): $out" \
	contains "$out" "ok=100 failed=0"
out=$(nss 2 python3 "$SRC_DIR/client.py" parallel "$NODE_IP" "$HP1" 100)
check "and back the other way: $out" contains "$out" "ok=100 failed=0"
check "host → sandbox 2 through cube-dev" \
	eq "$(nsn curl -s -m 5 "http://$SBX2:8080/peer" | cut -d' ' -f1)" "$GW_IP"
check "frames were handed between workers" test "$(stat_of worker handoffs)" -gt 0
check "no handoff was lost" eq "$(stat_of drops handoff_full)" 0
if [ "$WQ" = 2 ]; then
	check "two world sockets" eq "$(stat_of worldXsk sockets)" 2
	# A frame handed over is copied twice (into an mbuf, out of it), a frame to or from
	# cube-dev or parked once; every other one crossed by descriptor.
	check "only frames between workers, cube-dev and parked ones were copied" python3 -c "
c, h = $(stat_of worker frames_copied), $(stat_of worker handoffs)
hr, ht, p = $(stat_of worker host_rx_packets), $(stat_of worker host_tx_packets), $(stat_of worker nh_parked)
moved = $(stat_of worker world_tx_packets) + $(stat_of worker sandbox_tx_packets)
print('#   copied %d of %d frames sent (handoffs %d, cube-dev %d/%d, parked %d)' % (c, moved, h, hr, ht, p))
assert c <= 2 * h + hr + ht + p and c < moved / 2, (c, h, hr, ht, p, moved)"
fi
tb_done
