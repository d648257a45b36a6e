#!/bin/bash
# The state journal against the real binary and its HTTP API (issue 20): registration churn
# from 20 clients leaves the API, the XDP maps and the files on disk saying the same thing,
# before and after a restart; a kill -9 in the middle of a burst of registrations loses
# nothing that was acknowledged; a full state directory answers 500 and loses nothing once
# there is room again.
# Usage: test_journal.sh CASE   (each case builds and removes its own test bed)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

now() { date +%s.%N; }
elapsed() { python3 -c "print('%.2f' % ($(now) - $1))"; }

# N veth pairs c1..cN inside the node namespace, each standing for a sandbox TAP.
veths() { # n
	local i
	{
		for i in $(seq "$1"); do
			echo "link add c$i type veth peer name c${i}p"
			echo "link set c$i up"
			echo "link set c${i}p up"
		done
	} | nsn ip -batch -
}

# cubevs-fp dies at once: no compaction at exit, the files stay as the crash left them.
fp_kill9() {
	kill -KILL "$FP_PID" 2>/dev/null || true  # the burst client may have sent it
	wait "$FP_PID" 2>/dev/null
	FP_PID=
}

# The sandboxes as GET /sandboxes, the state view and the XDP maps have them, checked
# against the acknowledged registrations in $1 (JSON id → registration) and each other.
consistent() { # acked-json what
	local pins=$TB_DIR/bpf/cubevs-fp/nic0
	api_body GET /sandboxes >"$TB_DIR/list.json"
	state_view >"$TB_DIR/view.json"
	if [ -e "$pins/cvs_steer" ]; then
		nsn python3 "$SRC_DIR/bpfmap.py" "$pins/cvs_steer" 4 1 >"$TB_DIR/steer.json"
		nsn python3 "$SRC_DIR/bpfmap.py" "$pins/sbx_cvs_sbx_if" 4 16 >"$TB_DIR/slots.json"
	else
		echo null >"$TB_DIR/steer.json"
		echo null >"$TB_DIR/slots.json"
	fi
	nsn ip -j link show >"$TB_DIR/links.json"
	check "$2: the API, the state on disk and the maps agree with what was acknowledged" \
		python3 - "$1" "$TB_DIR" <<'EOF'
import json, struct, sys
acked = json.load(open(sys.argv[1]))
d = sys.argv[2]
api = {s["sandboxID"]: s for s in json.load(open(d + "/list.json"))["sandboxes"]}
view = {s["sandboxID"]: s for s in json.load(open(d + "/view.json"))["sandboxes"]}
ports = lambda s: sorted((p["containerPort"], p["hostPort"]) for p in s["exposedPorts"])
assert set(api) == set(acked), ("api", sorted(set(api) ^ set(acked))[:5])
assert set(view) == set(acked), ("view", sorted(set(view) ^ set(acked))[:5])
for k, a in acked.items():
    for name, got in (("api", api[k]), ("view", view[k])):
        assert ports(got) == ports(a) and got["iface"] == a["iface"] and \
            got["sandboxIP"] == a["sandboxIP"], (name, k, got, a)
    assert api[k]["attached"], k
steer, slots = json.load(open(d + "/steer.json")), json.load(open(d + "/slots.json"))
if steer is not None:
    tcp = {struct.unpack(">H", bytes.fromhex(k)[:2])[0] for k, _ in steer
           if bytes.fromhex(k)[2] == 6}
    want = {hp for s in acked.values() for _, hp in ports(s)}
    assert tcp == want, ("steer", sorted(tcp ^ want)[:5])
    index = {l["ifname"]: l["ifindex"] for l in json.load(open(d + "/links.json"))}
    # cvs_sbx_if: ifindex -> {slot, worker, guest MAC, generation} (xdp/cvs_xdp.h)
    got = {struct.unpack("<I", bytes.fromhex(k))[0]: struct.unpack("<I", bytes.fromhex(v)[:4])[0]
           for k, v in slots}
    want = {index[s["iface"]]: s["slot"] for s in view.values()}
    assert got == want, ("slots", sorted(set(got.items()) ^ set(want.items()))[:5])
print("# %d sandboxes, %d steered host ports" % (len(acked), sum(len(s["exposedPorts"])
                                                               for s in acked.values())))
EOF
}

case_churn() {
	local secs=${CHURN_SECONDS:-30} ifaces=80 t0
	tb_setup
	veths $ifaces
	fp_start
	t0=$(now)
	nsn python3 "$SRC_DIR/churn.py" churn "$API" "$secs" 20 $ifaces "$TB_DIR/churn.json"
	log "20 clients for $(elapsed "$t0") s: $(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["ops"], "requests", json.dumps(r["lat_ms"]))' "$TB_DIR/churn.json")"
	python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["acked"],
		open(sys.argv[2], "w"))' "$TB_DIR/churn.json" "$TB_DIR/acked.json"
	# No socket per sandbox (the funnel): an interface registered again right after its
	# DELETE has nothing of the old registration left in the kernel to wait for.
	check "every request was answered as expected (201, 200, 204)" \
		python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ops"] > 200 and not r["bad"], (r["ops"], r["bad"][:3])' "$TB_DIR/churn.json"
	check "the journal took the changes (the state file was not rewritten per change)" \
		test -s "$TB_DIR/state.json.journal"
	consistent "$TB_DIR/acked.json" "while running"
	fp_kill9
	fp_start
	consistent "$TB_DIR/acked.json" "after kill -9 and a start"
	check "the start applied the journal" grep -q "journal records applied" "$TB_DIR/fp.log"
	fp_stop
	check "SIGTERM compacted: the journal is empty" \
		eq "$(wc -l <"$TB_DIR/state.json.journal")" 1
	fp_start
	consistent "$TB_DIR/acked.json" "after SIGTERM and a start"
}

# Nothing acknowledged is lost: every id whose last answer before the kill was 201 is
# registered as that answer said, every 204 is gone, every id the round did not touch is as it
# was. Answers that never came may have taken effect either way; what the node has now is the
# model of the next round.
# A request the kill cut off before its answer may or may not have taken effect: the ids a
# burst asked about (bFIRST..bLAST and its deletions) are judged by their answers alone.
no_ack_lost() { # model acklog live-json [first last dels]
	python3 - "$@" <<'EOF'
import json, sys
model, live = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))["sandboxes"]
asked = set()
if len(sys.argv) > 5:
    asked = {"b%d" % i for i in range(int(sys.argv[4]), int(sys.argv[5]) + 1)}
    asked |= {d for d in (sys.argv[6] if len(sys.argv) > 6 else "").split(",") if d}
live = {s["sandboxID"]: s for s in live}
ports = lambda s: sorted((p["containerPort"], p["hostPort"]) for p in s["exposedPorts"])
last = {}
for line in open(sys.argv[2]):
    a = json.loads(line)
    last[a["id"]] = a
for sid, a in last.items():
    if a["op"] == "PUT":
        assert sid in live and ports(live[sid]) == ports(a["body"]), ("lost PUT", sid)
    else:
        assert sid not in live, ("lost DELETE", sid)
for sid, s in model.items():
    if sid not in last and sid not in asked:
        assert sid in live and ports(live[sid]) == ports(s), ("lost", sid)
json.dump(live, open(sys.argv[1], "w"))
print("# %d acknowledged answers checked, %d registered" % (len(last), len(live)))
EOF
}

case_crashburst() {
	local round first last dels ack start_rc
	tb_setup
	veths 400
	fp_start
	# 30 registered before the bursts, deleted during them.
	: >"$TB_DIR/acks.log"
	nsn python3 "$SRC_DIR/churn.py" burst "$API" 4 301 330 "" "$TB_DIR/acks.log"
	api_body GET /sandboxes >"$TB_DIR/live.json"
	echo '{}' >"$TB_DIR/model.json"
	no_ack_lost "$TB_DIR/model.json" "$TB_DIR/acks.log" "$TB_DIR/live.json" >/dev/null
	for round in 1 2 3; do
		first=$(((round - 1) * 100 + 1))
		last=$((round * 100))
		dels=$(seq -s, -f "b%g" $((300 + round * 10 - 9)) $((300 + round * 10)))
		: >"$TB_DIR/acks.log"
		# Cut short once a third of the burst was answered: the client sends the
		# SIGKILL itself, so the cut does not wait on a poll of the log.
		nsn python3 "$SRC_DIR/churn.py" burst "$API" 20 $first $last "$dels" \
			"$TB_DIR/acks.log" 35 "$FP_PID"
		fp_kill9
		ack=$(wc -l <"$TB_DIR/acks.log")
		log "round $round: $ack answers acknowledged before the kill -9"
		check "round $round: the kill came in the middle of the burst" \
			test "$ack" -ge 35 -a "$ack" -lt 110
		start_rc=0
		fp_start || start_rc=1
		check "round $round: the next start reads the state" test $start_rc = 0
		api_body GET /sandboxes >"$TB_DIR/live.json"
		check "round $round: nothing acknowledged with 201 or 204 was lost" \
			no_ack_lost "$TB_DIR/model.json" "$TB_DIR/acks.log" "$TB_DIR/live.json" \
				"$first" "$last" "$dels"
		consistent "$TB_DIR/model.json" "round $round: after kill -9"
		grep "journal of" "$TB_DIR/fp.log" | sed 's/^/# /'
	done
}

# The state directory fills up: a change answers 500 and says why, is in effect, and the
# next change once there is room carries it; a start after a kill -9 has both.
case_full() {
	local st=$TB_DIR/st out i code=201
	tb_setup
	veths 4
	mkdir -p "$st"
	mount -t tmpfs -o size=256k,mode=0700 "cvs-st-$TB_ID" "$st" || die "cannot mount a tmpfs"
	# The files go before the mount does: the process first, then a lazy unmount.
	# $st is expanded now: at exit it is out of scope, and set -u would stop the trap there
	# before tb_teardown (the bed was left behind).
	trap "kill -KILL \$FP_PID 2>/dev/null; umount -l '$st' 2>/dev/null; tb_teardown" EXIT
	fp_state() { fp_start --state-file "$st/state.json"; }
	fp_state
	check "s1 registered" eq "$(register s1 c1 '[80]' | tail -n1)" 201
	check "s2 registered" eq "$(register s2 c2 '[80]' | tail -n1)" 201
	head -c 1M /dev/zero >"$st/filler" 2>/dev/null
	# The journal's room written ahead (16 KiB of zeroes) takes the records that fit first:
	# those changes are saved without a byte more of the disk.
	for i in $(seq 200); do
		out=$(register s2 c2 "[80,$((1000 + i))]")
		code=$(tail -n1 <<<"$out")
		[ "$code" = 200 ] || break
	done
	check "with the directory full a change answers 500" eq "$code" 500
	check "and says why" contains "$out" "No space left on device"
	check "the change is in effect" contains "$(api_body GET /sandboxes/s2)" \
		"\"containerPort\":$((1000 + i))"
	check "a DELETE answers 500 too" eq "$(api_status DELETE /sandboxes/s1)" 500
	check "write errors are counted" test "$(stat_of state write_errors)" -ge 2
	rm -f "$st/filler"
	check "room again: the next registration is answered" \
		eq "$(register s3 c3 '[8080]' | tail -n1)" 201
	fp_kill9
	fp_state
	check "after kill -9 the start has every change, those answered 500 too" \
		eq "$(api_body GET /sandboxes | python3 -c '
import json, sys
s = {x["sandboxID"]: [p["containerPort"] for p in x["exposedPorts"]]
     for x in json.load(sys.stdin)["sandboxes"]}
print(sorted(s), s["s2"])')" "['s2', 's3'] [80, $((1000 + i))]"
	fp_kill9
	umount -l "$st"
}

"case_$1"
tb_done
