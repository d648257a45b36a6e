#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# gwbench (issue 37): mcp-gateway against supergateway and mcp-proxy, each with the same Node
# stdio MCP server behind it (tests/gateway/fake-server.mjs, its `echo` tool), all in one run on
# 127.0.0.1, driven by gwload (C, beside this script). Per trial and per gateway, started
# fresh: idle RSS; RSS and threads with OPEN sessions held (initialize + a GET SSE stream
# each); for ours also 1,000 sessions (without and with their GET streams); tools/call
# latency from one session (CALLS1 calls); calls/s from 32 sessions (CALLS32 each) with the
# gateway process's own CPU time over that phase (/proc/<pid>/stat utime+stime, its servers
# not included). "The server alone" is gwload speaking to the same Node server over its pipes
# (gwload stdio), so "added" is what a gateway's HTTP and relaying cost on top of it.
# Prints a Markdown table: the median of the trials and their range. Not a test: nothing is
# asserted, and no meson suite runs it.
#
# Usage: tools/bench/gwbench/run.sh [BUILD_DIR] [--only ours|supergateway|mcp-proxy[,...]]
#            [--trials N] [--quick]
#   BUILD_DIR defaults to build; GW_BIN=<mcp-gateway> and GWLOAD=<gwload> override the
#   binaries taken from it (e.g. another branch's build). CALLS1 (1000), CALLS32 (100 per
#   session), WARMUP (100), OPEN (200), OPEN_OURS (1000), GW_ARGS (more serve flags).
# Bounded: every gwload run has --timeout, every wait a limit; the processes it started are
# ended by PID at the end (also on Ctrl-C), their temp directory removed.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
BUILD=build
ONLY=ours,supergateway,mcp-proxy
TRIALS=3
while [ $# -gt 0 ]; do
	case $1 in
	--only) ONLY=${2:?}; shift ;;
	--trials) TRIALS=${2:?}; shift ;;
	--quick) TRIALS=1; : "${CALLS1:=300}" "${CALLS32:=30}" "${OPEN:=50}" "${OPEN_OURS:=200}" ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "gwbench: unknown option $1" >&2; exit 2 ;;
	*) BUILD=$1 ;;
	esac
	shift
done
ONLY=${ONLY//all/ours,supergateway,mcp-proxy}
CALLS1=${CALLS1:-1000}
CALLS32=${CALLS32:-100}
WARMUP=${WARMUP:-100}
OPEN=${OPEN:-200}
OPEN_OURS=${OPEN_OURS:-1000}
GW_BIN=${GW_BIN:-$ROOT/$BUILD/gateway/mcp-gateway}
GWLOAD=${GWLOAD:-$ROOT/$BUILD/tools/bench/gwbench/gwload}
NODE=$(command -v node) || { echo "gwbench: node (>= 18) is needed" >&2; exit 1; }
SERVER=$ROOT/tests/gateway/fake-server.mjs
TOKEN=gwbench-token
for f in "$GWLOAD" "$SERVER"; do
	[ -e "$f" ] || { echo "gwbench: no $f (meson setup $BUILD && ninja -C $BUILD)" >&2; exit 1; }
done
case ,$ONLY, in *,ours,*) [ -x "$GW_BIN" ] || { echo "gwbench: no $GW_BIN" >&2; exit 1; } ;; esac

# The peers come from the registry at the versions of package-lock.json, once.
# (npm's own node_modules/.package-lock.json is not a copy of it, so a stamp of ours says so.)
if [ "$ONLY" != ours ] && ! cmp -s "$HERE/package-lock.json" \
	"$HERE/node_modules/.gwbench-lock" 2>/dev/null; then
	npm ci --prefix "$HERE" --no-audit --no-fund >&2 || { echo "gwbench: npm ci failed" >&2; exit 1; }
	cp "$HERE/package-lock.json" "$HERE/node_modules/.gwbench-lock"
fi

TMP=$(mktemp -d /tmp/gwbench-XXXXXX)
chmod 711 "$TMP"	# our gateway's servers run as their own users and make their HOMEs inside
RES=$TMP/results
PIDS=()
# Every process below pid, from /proc (children of each thread), deepest last.
descendants() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		echo "$c"
		descendants "$c"
	done
}
# SIGTERM, some seconds (5) to stop, then SIGKILL to it and to whatever it had started.
stop_pid() { # pid [seconds]
	local p=$1 kids i
	kill -0 "$p" 2>/dev/null || return 0
	kids=$(descendants "$p")
	kill -TERM "$p" 2>/dev/null
	for i in $(seq $((${2:-5} * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	# shellcheck disable=SC2086
	kill -KILL "$p" $kids 2>/dev/null
	wait "$p" 2>/dev/null
}
cleanup() {
	local p
	for p in "${PIDS[@]}"; do stop_pid "$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	"$NODE" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{
		console.log(s.address().port); s.close(); })'
}
rss_kb() { awk '/^VmRSS/ { print $2 }' /proc/"$1"/status 2>/dev/null || echo 0; }
threads() { awk '/^Threads/ { print $2 }' /proc/"$1"/status 2>/dev/null || echo 0; }
# The process and everything below it (a peer's per-session servers); shared pages counted
# once per process, so an upper bound.
rss_all_kb() {
	local s=0 p
	for p in "$1" $(descendants "$1"); do s=$((s + $(rss_kb "$p"))); done
	echo $s
}
res() { echo "$trial $1 $2 ${3:-NA}" >> "$RES"; }	# trial target metric value
# The value of key=value in gwload's line.
field() { awk -v k="$1" '{ for (i = 1; i <= NF; i++) if (index($i, k "=") == 1)
	print substr($i, length(k) + 2) }'; }

# Starts a target in its own session, its pid in TPID; the URL is http://127.0.0.1:$PORT/mcp.
start_target() { # target port
	local t=$1 port=$2 cfg
	cfg=$(printf '{"bench":{"runCmd":"CUBE_MCP_FAKE_NAME=bench exec %s %s"}}' "$NODE" "$SERVER")
	case $t in
	ours)
		mkdir -p "$TMP/ours" && echo '{}' > "$TMP/ours/catalog.json"
		# The shipped defaults (audit log, Landlock, cgroup limits where cgroup v2 allows);
		# only the paths are moved into the temp directory.
		# shellcheck disable=SC2086
		GATEWAY_ACCESS_TOKEN=$TOKEN setsid "$GW_BIN" serve --config "$cfg" --port "$port" \
			--pid-file '' --catalog-file "$TMP/ours/catalog.json" \
			--servers-dir "$TMP/ours/servers" --servers-home "$TMP/ours/home" \
			--server-read-paths "$ROOT/tests/gateway" --audit-log "$TMP/ours/audit.log" \
			${GW_ARGS:-} > "$TMP/$t.log" 2>&1 & ;;
	supergateway)
		# --stateful: without it every request starts a new server.
		CUBE_MCP_FAKE_NAME=bench setsid "$NODE" "$HERE/node_modules/supergateway/dist/index.js" \
			--stdio "$NODE $SERVER" --outputTransport streamableHttp --stateful \
			--port "$port" --logLevel none > "$TMP/$t.log" 2>&1 & ;;
	mcp-proxy)
		CUBE_MCP_FAKE_NAME=bench setsid "$NODE" "$HERE/node_modules/mcp-proxy/dist/bin/mcp-proxy.mjs" \
			--host 127.0.0.1 --port "$port" --server stream -- "$NODE" "$SERVER" \
			> "$TMP/$t.log" 2>&1 & ;;
	esac
	TPID=$!
	PIDS+=("$TPID")
}

# Ready: one call goes through (up to 30 s).
wait_ready() { # pid url
	local i
	for i in $(seq 60); do
		kill -0 "$1" 2>/dev/null || return 1
		"$GWLOAD" load "$2" --token $TOKEN --calls 1 --warmup 0 --timeout 5 \
			>/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

# K sessions held by gwload open while RSS and threads are read; prefix names the metrics.
held() { # target pid url K sse(0/1) prefix
	local t=$1 pid=$2 url=$3 k=$4 sse=$5 pre=$6 out=$TMP/open.out lp i n
	: > "$out"
	"$GWLOAD" open "$url" --token $TOKEN --sessions "$k" $([ "$sse" = 1 ] && echo --sse) \
		--hold 300 --timeout 240 > "$out" 2>> "$TMP/gwload.err" &
	lp=$!
	PIDS+=("$lp")
	for i in $(seq 1200); do
		grep -q open= "$out" && break
		kill -0 $lp 2>/dev/null || break
		sleep 0.25
	done
	n=$(field open < "$out")
	sleep 1		# what the last sessions started settles
	res "$t" "${pre}_open" "${n:-0}"
	res "$t" "${pre}_rss" "$(rss_kb "$pid")"
	res "$t" "${pre}_rss_all" "$(rss_all_kb "$pid")"
	res "$t" "${pre}_threads" "$(threads "$pid")"
	res "$t" "${pre}_procs" "$(( $(descendants "$pid" | wc -l) + 1 ))"
	stop_pid $lp 60	# SIGTERM: gwload DELETEs its sessions and exits
	sleep 1
}

# Latency from one session, then calls/s and the gateway's CPU over 32 sessions (gwload
# reads the gateway's /proc/<pid>/stat at the start and end of the measured calls: its
# servers, the warm-up and the sessions' initialize are not counted). For ours also: the
# same with OPEN_OURS sessions opened after the 32 and idle while they call (each request
# finds its session among many), the same with a GET stream open on each idle session (what
# a client of the SDKs holds), and with each request's headers and body in two writes.
loads() { # target pid url
	local t=$1 pid=$2 url=$3 line
	line=$("$GWLOAD" load "$url" --token $TOKEN --sessions 1 --calls "$CALLS1" \
		--warmup "$WARMUP" --timeout 300 2>> "$TMP/gwload.err")
	res "$t" p50 "$(field p50_us <<< "$line")"
	res "$t" p99 "$(field p99_us <<< "$line")"
	line=$("$GWLOAD" load "$url" --token $TOKEN --sessions 32 --calls "$CALLS32" \
		--warmup 10 --cpu-pid "$pid" --timeout 300 2>> "$TMP/gwload.err")
	res "$t" rate "$(field rate <<< "$line")"
	res "$t" errors "$(field errors <<< "$line")"
	res "$t" cpu "$(field cpu_us_per_call <<< "$line")"
	[ "$t" = ours ] || return 0
	line=$("$GWLOAD" load "$url" --token $TOKEN --sessions 32 --calls "$CALLS32" \
		--warmup 10 --idle "$OPEN_OURS" --cpu-pid "$pid" --timeout 300 \
		2>> "$TMP/gwload.err")
	res "$t" cpu_idle "$(field cpu_us_per_call <<< "$line")"
	res "$t" rate_idle "$(field rate <<< "$line")"
	line=$("$GWLOAD" load "$url" --token $TOKEN --sessions 32 --calls "$CALLS32" \
		--warmup 10 --idle "$OPEN_OURS" --sse --cpu-pid "$pid" --timeout 300 \
		2>> "$TMP/gwload.err")
	res "$t" cpu_idlesse "$(field cpu_us_per_call <<< "$line")"
	res "$t" rate_idlesse "$(field rate <<< "$line")"
	line=$("$GWLOAD" load "$url" --token $TOKEN --sessions 32 --calls "$CALLS32" \
		--warmup 10 --split --cpu-pid "$pid" --timeout 300 2>> "$TMP/gwload.err")
	res "$t" cpu_split "$(field cpu_us_per_call <<< "$line")"
	res "$t" rate_split "$(field rate <<< "$line")"
}

one_target() { # target
	local t=$1 port url
	port=$(free_port)
	url=http://127.0.0.1:$port/mcp
	start_target "$t" "$port"
	if ! wait_ready "$TPID" "$url"; then
		echo "gwbench: $t did not come up; its log:" >&2
		tail -n 20 "$TMP/$t.log" >&2
		stop_pid "$TPID"
		return 1
	fi
	sleep 1
	res "$t" idle_rss "$(rss_kb "$TPID")"
	# supergateway starts a server (sh + node, ~50 MiB) per session: OPEN of them must fit
	# beside the other users of the machine, or the phase is left out ("-" in the table).
	if [ "$t" != supergateway ] || [ "$(awk '/^MemAvailable/ { print int($2 / 1024) }' \
		/proc/meminfo)" -gt $((OPEN * 80 + 4096)) ]; then
		held "$t" "$TPID" "$url" "$OPEN" 1 s200
	else
		echo "gwbench: too little memory for $OPEN servers of supergateway; skipped" >&2
	fi
	if [ "$t" = ours ]; then
		held "$t" "$TPID" "$url" "$OPEN_OURS" 0 s1000
		held "$t" "$TPID" "$url" "$OPEN_OURS" 1 s1000sse
	fi
	loads "$t" "$TPID" "$url"
	stop_pid "$TPID"
}

baseline() {
	local line
	line=$(CUBE_MCP_FAKE_NAME=bench "$GWLOAD" stdio --sessions 1 --calls "$CALLS1" \
		--warmup "$WARMUP" --timeout 300 -- "$NODE" "$SERVER" 2>> "$TMP/gwload.err")
	res server p50 "$(field p50_us <<< "$line")"
	res server p99 "$(field p99_us <<< "$line")"
	line=$(CUBE_MCP_FAKE_NAME=bench "$GWLOAD" stdio --sessions 32 --calls "$CALLS32" \
		--warmup "$WARMUP" --timeout 300 -- "$NODE" "$SERVER" 2>> "$TMP/gwload.err")
	res server rate "$(field rate <<< "$line")"
}

IFS=, read -r -a TARGETS <<< "$ONLY"
echo "gwbench: ${TARGETS[*]}, $TRIALS trial(s); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for trial in $(seq "$TRIALS"); do
	# The order turns each trial, so a slow minute of the shared machine falls on each alike.
	n=${#TARGETS[@]}
	for i in $(seq 0 $((n - 1))); do
		t=${TARGETS[$(( (i + trial - 1) % n ))]}
		echo "gwbench: trial $trial: $t" >&2
		one_target "$t"
	done
	echo "gwbench: trial $trial: the server alone" >&2
	baseline
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
[ -s "$TMP/gwload.err" ] && { echo "gwbench: gwload said:" >&2; sort "$TMP/gwload.err" | uniq -c | head >&2; }
OPEN=$OPEN OPEN_OURS=$OPEN_OURS "$HERE/report.sh" "$RES" "${TARGETS[@]}"
echo
echo "Trials: $TRIALS; calls: $CALLS1 from one session, 32 x $CALLS32 for calls/s; \
load average at the end: $LOAD_END; $(nproc) CPUs; GW_BIN=$GW_BIN"
