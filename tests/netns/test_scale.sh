#!/bin/bash
# Density (issue 20): SCALE_N idle sandboxes (default: the case, 2048) beside two busy ones.
# Each idle sandbox is a veth pair in the node namespace (the far end stays there: nothing
# sends on it), registered through the API with one exposed port; SCALE_SAMPLE of them (4)
# have a namespace of their own with an echo server, the sample that shows that idle
# sandboxes forward after a restart. Asserted:
#   - the busy sandboxes keep serving (HTTP, and a 20 MB sha256 transfer each way each) while
#     the idle ones are registered and deleted;
#   - every registration 201, every deletion 204, the registry has them all attached with
#     distinct host ports;
#   - memory returns after deleting them, with a margin: RSS of the process, memlock of its
#     BPF maps and programs, the kernel's unreclaimable memory (SCALE_RSS_SLACK_MIB [16],
#     1 MiB, SCALE_KERNEL_SLACK_MIB [64], each plus SCALE_LEFT_KIB [16] per sandbox);
#   - with them registered, restart-flows' 50 long-lived flows survive a SIGTERM and a kill -9
#     restart, and after each every sandbox is attached and the sample and the busy ones
#     answer.
# Times (registration, restart to API ready, to every sandbox forwarding) are printed, never
# judged. SCALE_FP_OPTS adds cubevs-fp options (--sandbox-umem-frames 512 where every sandbox
# pins its own UMEM). Usage: test_scale.sh [N]
# An EAL --file-prefix of the bed's own, which its teardown removes from /var/run/dpdk.
export TB_EAL_PREFIX=${TB_EAL_PREFIX:-cvs-scale-}
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$SRC_DIR/flows.sh"

SCALE_N=${SCALE_N:-${1:-2048}}
SCALE_SAMPLE=${SCALE_SAMPLE:-4}
[ "$SCALE_SAMPLE" -le "$SCALE_N" ] || SCALE_SAMPLE=$SCALE_N
# A start restores every registration before 'ready:'.
export FP_READY_S=${FP_READY_S:-180}
# Sandbox addresses from the benchmarking range too (the default is 192.168.0.0/18).
SBX_CIDR=198.19.192.0/18
FP_OPTS=(--sandbox-cidr $SBX_CIDR ${SCALE_FP_OPTS:-})
[ $((SCALE_N + 2)) -le 4096 ] || FP_OPTS+=(--max-sandboxes $((SCALE_N + 2)))
SCALE_PY=$SRC_DIR/scale.py

now() { date +%s%N; }
ms_since() { echo $((($(now) - $1) / 1000000)); }
jget() { # json expression-on-j
	python3 -c 'import json,sys; j=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"
}

bed() {
	local i t0
	tb_setup
	flows_net
	# The sample: idle sandboxes 1..SCALE_SAMPLE on namespaces 3.. with an echo server.
	for i in $(seq "$SCALE_SAMPLE"); do
		tb_add_sandbox $((i + 2))
		tb_server "cvs-s$((i + 2))-$TB_ID" 8080 --name "idle$i" --tcp-echo 7000
	done
	t0=$(now)
	{
		for i in $(seq $((SCALE_SAMPLE + 1)) "$SCALE_N"); do
			echo "link add iv$i type veth peer name iv${i}p"
			echo "link set iv$i up"
			echo "link set iv${i}p up"
		done
	} | nsn ip -batch - || die "creating $SCALE_N veth pairs"
	log "$((SCALE_N - SCALE_SAMPLE)) veth pairs in $(ms_since "$t0") ms"
	: >"$TB_DIR/idle.txt"
	for i in $(seq "$SCALE_N"); do
		if [ "$i" -le "$SCALE_SAMPLE" ]; then
			echo "idle$i sb$((i + 2)) 7000"
		else
			echo "idle$i iv$i 8080"
		fi
	done >"$TB_DIR/idle.txt"
	fp_start "${FP_OPTS[@]}"
	eq "$(register s1 sb1 '[8080,7000]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[8080,7000]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 7000)
	HP2=$(hostport_of s2 7000)
	WEB1=$(hostport_of s1 8080)
	WEB2=$(hostport_of s2 8080)
	SBX1=$(sandbox_ip s1)
	SBX2=$(sandbox_ip s2)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	BLOB=$((20 * 1024 * 1024))
	BLOB_SHA=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $BLOB)
	head -c $BLOB /dev/urandom >"$TB_DIR/up.bin"
	UP_SHA=$(sha256sum "$TB_DIR/up.bin" | cut -d' ' -f1)
	# One round of the busy sandboxes' transfers before the memory baseline: their servers
	# (python) keep what the first 20 MB took.
	echo warmup >"$TB_DIR/phase"
	touch "$TB_DIR/busy-stop"
	busy_transfer down 1
	busy_transfer up 1
	busy_transfer down 2
	busy_transfer up 2
	check "before: 20 MB each way to each busy sandbox, sha256 right" \
		bash -c "! cat $TB_DIR/busy-transfer-*.log | grep -q BAD"
}

# The busy sandboxes' clients, while the idle ones come and go: an HTTP request to each
# every 100 ms, and 20 MB downloads from and uploads to each, sha256 checked. Each
# result is a line in $TB_DIR/busy-*.log: "PHASE KIND ok|BAD" for HTTP, PHASE the one it
# started in ($TB_DIR/phase), "START END KIND ok|BAD" for a transfer, the phases it started
# and ended in. Bounded: they stop at $TB_DIR/busy-stop or after 15 minutes.
busy_http() {
	local end=$(($(date +%s) + 900)) p i=0 got
	while [ ! -e "$TB_DIR/busy-stop" ] && [ "$(date +%s)" -lt "$end" ]; do
		p=$(cat "$TB_DIR/phase")
		i=$((i % 2 + 1))
		got=$(nsc curl -s -m 10 "http://$NODE_IP:$([ $i = 1 ] && echo "$WEB1" || echo "$WEB2")/name")
		if [ "$got" = "sandbox$i $CLIENT_IP" ]; then
			echo "$p http$i ok"
		else
			echo "$p http$i BAD got '$got'"
		fi
		sleep 0.1
	done >"$TB_DIR/busy-http.log"
}

busy_transfer() { # down|up 1|2: one transfer at least, then until told to stop
	local end=$(($(date +%s) + 900)) p got hp
	hp=$([ "$2" = 1 ] && echo "$WEB1" || echo "$WEB2")
	while :; do
		p=$(cat "$TB_DIR/phase")
		if [ "$1" = down ]; then
			got=$(nsc curl -s -m 120 "http://$NODE_IP:$hp/blob?n=$BLOB" | sha256sum |
				cut -d' ' -f1)
			[ "$got" = "$BLOB_SHA" ] && got=ok || got=BAD
		else
			got=$(nsc curl -s -m 120 -T "$TB_DIR/up.bin" "http://$NODE_IP:$hp/sha")
			[ "$got" = "$UP_SHA" ] && got=ok || got="BAD got '$got'"
		fi
		echo "$p $(cat "$TB_DIR/phase") $1$2 $got"
		[ ! -e "$TB_DIR/busy-stop" ] && [ "$(date +%s)" -lt "$end" ] || break
	done >"$TB_DIR/busy-transfer-$1$2.log"
}

busy_start() {
	local k
	rm -f "$TB_DIR/busy-stop"
	echo start >"$TB_DIR/phase"
	busy_http &
	BUSY_PIDS=($!)
	# The four transfers at once, each in a loop: one of each kind is always under way.
	for k in "down 1" "up 1" "down 2" "up 2"; do
		# shellcheck disable=SC2086
		busy_transfer $k &
		BUSY_PIDS+=($!)
	done
	TB_PIDS+=("${BUSY_PIDS[@]}")
}

busy_stop() { # waits for the round in progress (bounded by curl's -m)
	touch "$TB_DIR/busy-stop"
	wait "${BUSY_PIDS[@]}" 2>/dev/null
}

busy_check() { # phase...: each kind served in every phase, nothing failed
	local p k
	cat "$TB_DIR"/busy-transfer-*.log >"$TB_DIR/busy-transfer.log"
	check "busy sandboxes: no request failed" \
		bash -c "! grep -h BAD $TB_DIR/busy-http.log $TB_DIR/busy-transfer.log"
	grep -h BAD "$TB_DIR/busy-http.log" "$TB_DIR/busy-transfer.log" | head -5 | sed 's/^/#   /'
	for p; do
		for k in http1 http2; do
			check "busy sandboxes: $k answered while the idle ones were $p" \
				grep -q "^$p $k ok" "$TB_DIR/busy-http.log"
		done
	done
	# A 20 MB transfer can outlast a phase: each kind must have run, whole and right, while
	# the idle ones came and went (neither all of it before the first registration nor all
	# after the last deletion).
	for k in down1 up1 down2 up2; do
		check "busy sandboxes: a 20 MB $k with the right sha256 while the idle ones came and went" \
			bash -c "grep -v -E '^(start start|deleted deleted) ' $TB_DIR/busy-transfer.log |
				grep -q ' $k ok'"
	done
	log "busy: $(grep -c ok "$TB_DIR/busy-http.log") HTTP requests and" \
		"$(grep -c ok "$TB_DIR/busy-transfer.log") 20 MB transfers served"
}

put_all() { # what: PUT every idle sandbox, sequentially; the result in $TB_DIR/put.json
	local t0 r
	t0=$(now)
	r=$(nsn python3 "$SCALE_PY" put "$TB_DIR/idle.txt")
	echo "$r" >"$TB_DIR/put.json"
	check "$1: $SCALE_N registrations → 201" eq "$(jget "$r" 'j["status"]')" "{'201': $SCALE_N}"
	log "$1: $SCALE_N registrations in $(ms_since "$t0") ms; PUT p50 $(jget "$r" \
		'"%.1f / p99 %.1f / max %.1f ms" % (j["p50_ms"], j["p99_ms"], j["max_ms"])')"
}

delete_all() { # what
	local t0 r
	t0=$(now)
	r=$(nsn python3 "$SCALE_PY" delete "$TB_DIR/idle.txt")
	check "$1: $SCALE_N deletions → 204" eq "$(jget "$r" 'j["status"]')" "{'204': $SCALE_N}"
	log "$1: $SCALE_N deletions in $(ms_since "$t0") ms; DELETE p50 $(jget "$r" \
		'"%.1f / p99 %.1f / max %.1f ms" % (j["p50_ms"], j["p99_ms"], j["max_ms"])')"
}

registered_check() { # what count
	local r
	r=$(nsn python3 "$SCALE_PY" count)
	check "$1: $2 sandboxes registered" eq "$(jget "$r" 'j["sandboxes"]')" "$2"
	check "$1: all $2 attached" eq "$(jget "$r" 'j["attached"]')" "$2"
	check "$1: every exposed port has a host port of its own" \
		eq "$(jget "$r" 'j["host_ports"] == j["ports"]')" True
}

mem_now() { nsn python3 "$SCALE_PY" mem --pid "$FP_PID"; }

# What the sample and the busy sandboxes answer on: node IP : host port of their echo.
sample_addrs() {
	local i
	echo "$NODE_IP:$HP1 $NODE_IP:$HP2"
	for i in $(seq "$SCALE_SAMPLE"); do
		echo "$NODE_IP:$(hostport_of "idle$i" 7000)"
	done
}

# A restart with every sandbox registered: the stop (term) or kill -9 (kill), the next
# start; the times to /readyz and to every sandbox forwarding are printed.
restart() { # term|kill
	local t0 w r
	t0=$(now)
	if [ "$1" = term ]; then
		check "SIGTERM with $SCALE_N idle sandboxes → exit 0" fp_stop
	else
		kill -KILL "$FP_PID"
		wait "$FP_PID" 2>/dev/null
		FP_PID=
	fi
	# The waiter polls from t0 while the new instance starts.
	nsn python3 "$SCALE_PY" waitfwd --t0 "$t0" --client-ns "$NS_C" \
		--timeout $((FP_READY_S + 60)) --sample $SAMPLE >"$TB_DIR/wait-$1.json" &
	w=$!
	TB_PIDS+=($w)
	check "$1: a new instance starts" fp_start "${FP_OPTS[@]}"
	log "$1: stop to 'ready:' in $(ms_since "$t0") ms"
	wait "$w"
	r=$(cat "$TB_DIR/wait-$1.json")
	check "$1: every sandbox attached and the sample and the busy ones answer ($r)" \
		test "$(jget "$r" 'j["forwarding_ms"] is not None')" = True
	log "$1: /readyz 200 after $(jget "$r" 'j["api_ready_ms"]') ms, every sandbox forwarding" \
		"after $(jget "$r" 'j["forwarding_ms"]') ms (printed, not judged)"
	registered_check "after $1" $((SCALE_N + 2))
}

case_scale() {
	local m0 m1 m2 n t0 kern rss bpf left d_avail d_kern d_rss d_bpf
	bed
	log "$SCALE_N idle sandboxes (sample $SCALE_SAMPLE), cubevs-fp ${FP_OPTS[*]}"
	m0=$(mem_now)
	busy_start
	sleep 1
	echo register >"$TB_DIR/phase"
	put_all "registering"
	echo registered >"$TB_DIR/phase"
	registered_check "registered" $((SCALE_N + 2))
	m1=$(mem_now)
	log "memory per idle sandbox: MemAvailable $(python3 -c '
import json, sys
a, b, n = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
print("%.0f KiB, kernel %.0f KiB, RSS %.0f KiB, BPF memlock %.1f KiB (printed, not judged)" % (
    (a["mem_available_kib"] - b["mem_available_kib"]) / n,
    (b["kernel_kib"] - a["kernel_kib"]) / n, (b["rss_kib"] - a["rss_kib"]) / n,
    ((b["bpf_kib"] or 0) - (a["bpf_kib"] or 0)) / n))
' "$m0" "$m1" "$SCALE_N")"
	echo delete >"$TB_DIR/phase"
	delete_all "deleting"
	echo deleted >"$TB_DIR/phase"
	registered_check "deleted" 2
	busy_stop
	busy_check register delete
	# Memory returns, within a slack plus SCALE_LEFT_KIB per sandbox (the issue's 16 KiB): the
	# process's RSS (its heap, its UMEMs, the rings it maps) and the memlock of the BPF maps and
	# programs it holds, both its own; and the kernel's unreclaimable memory (slab, per-CPU,
	# vmalloc: a veth's XDP queues live there, 82 KiB each). The node's MemAvailable is printed,
	# not asserted: the test beside this one and any other job move it by hundreds of MiB (a
	# CI run saw 209 KiB per sandbox "left" while compilers ran). The kernel frees sockets and
	# programs asynchronously: the figures are read again for up to 20 s while one is outside
	# its margin; what is asserted is the amount.
	left=$((${SCALE_LEFT_KIB:-16} * SCALE_N))
	kern=$((${SCALE_KERNEL_SLACK_MIB:-64} * 1024 + left))
	rss=$((${SCALE_RSS_SLACK_MIB:-16} * 1024 + left))
	bpf=$((1024 + left))
	for n in $(seq 20); do
		m2=$(mem_now)
		d_avail=$(($(jget "$m0" 'j["mem_available_kib"]') - $(jget "$m2" 'j["mem_available_kib"]')))
		d_kern=$(($(jget "$m2" 'j["kernel_kib"]') - $(jget "$m0" 'j["kernel_kib"]')))
		d_rss=$(($(jget "$m2" 'j["rss_kib"]') - $(jget "$m0" 'j["rss_kib"]')))
		d_bpf=$(($(jget "$m2" 'j["bpf_kib"] or 0') - $(jget "$m0" 'j["bpf_kib"] or 0')))
		[ $d_kern -le $kern ] && [ $d_rss -le $rss ] && [ $d_bpf -le $bpf ] && break
		sleep 1
	done
	log "left after deleting: kernel $d_kern KiB, RSS $d_rss KiB, BPF memlock $d_bpf KiB" \
		"(at most $kern, $rss and $bpf); MemAvailable $d_avail KiB (printed, not judged)"
	check "memory returns: the process's RSS within $rss KiB of before" test $d_rss -le $rss
	check "memory returns: its BPF maps and programs within $bpf KiB of before" \
		test $d_bpf -le $bpf
	check "memory returns: the kernel's unreclaimable memory within $kern KiB of before" \
		test $d_kern -le $kern
	# Restarts with all of them registered.
	put_all "registering again"
	SAMPLE=$(sample_addrs)
	flows_start
	restart term
	flows_mark 1
	restart kill
	flows_mark 2
	flows_check "SIGTERM then kill -9 with $SCALE_N idle sandboxes"
	check "after both restarts: a new connection to each busy sandbox" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$WEB1/name") $(nsc curl -s -m 5 \
			"http://$NODE_IP:$WEB2/name")" "sandbox1 $CLIENT_IP sandbox2 $CLIENT_IP"
	delete_all "deleting after the restarts"
	registered_check "the end" 2
}

t0=$(now)
case_scale
log "test_scale: $SCALE_N idle sandboxes in $(ms_since "$t0") ms"
tb_done
