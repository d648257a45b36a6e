#!/bin/bash
# Namespace test bed for cubevs-fp, in the style of xdp-tools' test runner.
#
#   client ns (cl0 198.18.0.2/24) <-veth-> node ns (nic0 198.18.0.1/24, the "NIC")
#   node ns sbN <-veth-> sandbox ns N (eth0 169.254.68.6/30 via 169.254.68.5)
#
# Every name carries a per-run suffix so beds never collide; teardown removes exactly what
# setup made and kills only the processes it started (by PID). V=1 shows commands.

set -u
[ "${V:-0}" = 1 ] && set -x

TB_ID=${TB_ID:-$$}
NS_C=cvs-c-$TB_ID
NS_N=cvs-n-$TB_ID
NS_W=cvs-w-$TB_ID
WORLD_IP=198.19.0.2
ROUTER_IP=198.19.0.1
NODE_IP=198.18.0.1
CLIENT_IP=198.18.0.2
GUEST_IP=169.254.68.6
GW_IP=169.254.68.5
GUEST_MAC=20:90:6f:fc:fc:fc
API=127.0.0.1:9180
TB_DIR=$(mktemp -d /tmp/cvs-tb.XXXXXX)
# Removed even by a script that never builds a bed (tb_setup replaces this with tb_teardown).
trap 'rm -rf "$TB_DIR"' EXIT
TB_PIDS=()
TB_SANDBOXES=0
FP_PID=
# TB_EAL_PREFIX gives every instance of this bed an EAL --file-prefix of its own (a case may
# set FP_EAL_ARGS itself).
FP_EAL_ARGS=(${TB_EAL_PREFIX:+--file-prefix "$TB_EAL_PREFIX$TB_ID"})
FP_PIN=(--bpf-pin-dir none)
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${CUBEVS_FP:=$SRC_DIR/../../build/control/cubevs-fp}"

log() { printf '# %s\n' "$*"; }

# Test assertions: check DESCRIPTION COMMAND... prints ok/not ok and counts failures.
FAILS=0
check() {
	local what=$1
	shift
	if "$@"; then
		echo "ok - $what"
	else
		echo "not ok - $what"
		FAILS=$((FAILS + 1))
	fi
}
eq() { [ "$1" = "$2" ] || { echo "#   expected '$2', got '$1'"; return 1; }; }
quiet() { "$@" >/dev/null 2>&1; }
contains() { case "$1" in *"$2"*) return 0 ;; esac; echo "#   '$1' lacks '$2'"; return 1; }
tb_done() {
	[ "$FAILS" -eq 0 ] && return 0
	# Say what the fast path saw, for whoever reads a failed run.
	if [ -n "$FP_PID" ] && kill -0 "$FP_PID" 2>/dev/null; then
		echo "# counters at the failure:"
		api_body GET /stats | python3 -c '
import json, sys
s = json.load(sys.stdin)
for g in ("worker", "drops", "xdp"):
    print("#  " + " ".join("%s=%d" % (k, v) for k, v in s[g].items() if v))
print("#  sessions=%d" % s["sessions"])' 2>/dev/null
	fi
	return 1
}
die() { printf 'FAIL: %s\n' "$*"; exit 1; }

nsn() { ip netns exec "$NS_N" "$@"; }
nsc() { ip netns exec "$NS_C" "$@"; }
nsw() { ip netns exec "$NS_W" "$@"; }
nss() { local i=$1; shift; ip netns exec "cvs-s$i-$TB_ID" "$@"; }
# Every named interface of the node namespace has an XDP program (xdp_on), or none has (xdp_off).
xdp_on() { local i; for i; do nsn ip link show "$i" | grep -q prog/xdp || return 1; done; }
# A deletion's link ends on its own thread after the answer (xdp/xdpend.c): xdp_off waits for
# that, 3 s at most, where a program that stays is the failure.
xdp_off() {
	local i k
	for i; do
		for k in $(seq 60); do
			nsn ip link show "$i" | grep -q prog/xdp || continue 2
			sleep 0.05
		done
		return 1
	done
}

tb_skip_unless_capable() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: needs root (network namespaces, XDP, AF_XDP)"
		exit 77
	fi
	if ! ip netns add "cvs-probe-$TB_ID" 2>/dev/null; then
		echo "SKIP: cannot create network namespaces here"
		exit 77
	fi
	ip netns del "cvs-probe-$TB_ID"
}

# Interfaces keep the kernel's default offloads, as CNI plugins and VMMs leave them (TX
# checksum offload on: the frames carry partial checksums). TB_OFFLOADS=off turns them off for
# a comparison by hand; a test about offloads calls offloads_off itself and says why.
offloads_default() { # ns iface
	[ "${TB_OFFLOADS:-on}" = off ] && offloads_off "$@"
	return 0
}
offloads_off() { # ns iface
	ip netns exec "$1" ethtool -K "$2" tx off tso off gso off >/dev/null 2>&1 || true
}

tb_setup() {
	tb_skip_unless_capable
	trap tb_teardown EXIT
	trap 'tb_on_signal 143' TERM
	trap 'tb_on_signal 130' INT
	trap 'tb_on_signal 129' HUP
	ip netns add "$NS_C"
	ip netns add "$NS_N"
	# TB_QUEUES > 1 gives the "NIC" several queues (one per cubevs-fp worker).
	local q=${TB_QUEUES:-1}
	ip link add cl0 netns "$NS_C" numtxqueues "$q" numrxqueues "$q" type veth peer name nic0 \
		netns "$NS_N" numtxqueues "$q" numrxqueues "$q"
	if [ "$q" -gt 1 ]; then
		nsc ethtool -L cl0 rx "$q" tx "$q" >/dev/null
		nsn ethtool -L nic0 rx "$q" tx "$q" >/dev/null
	fi
	nsc ip addr add $CLIENT_IP/24 dev cl0
	nsc ip link set cl0 up
	nsc ip link set lo up
	nsn ip addr add $NODE_IP/24 dev nic0
	nsn ip link set nic0 up
	nsn ip link set lo up
	offloads_default "$NS_C" cl0
	offloads_default "$NS_N" nic0
	# The node's own connections must use ports outside the host-port and SNAT ranges.
	nsn sysctl -qw net.ipv4.ip_local_port_range="10000 19999"
	# A BPF file system of this bed's own for the pinned XDP maps (--bpf-pin-dir);
	# TB_PIN=0 runs without pins (the hand-over copies from the attached program then).
	mkdir -p "$TB_DIR/bpf"
	if [ "${TB_PIN:-1}" = 1 ] && mount -t bpf "cvs-bpf-$TB_ID" "$TB_DIR/bpf" 2>/dev/null; then
		FP_PIN=(--bpf-pin-dir "$TB_DIR/bpf/cubevs-fp")
	else
		log "no BPF file system: the XDP maps are not pinned"
	fi
}

# A "world" host behind the client namespace, which routes: node → 198.18.0.2 → 198.19.0.2.
tb_add_world() {
	ip netns add "$NS_W"
	TB_WORLD=1
	ip link add r1 netns "$NS_C" type veth peer name w0 netns "$NS_W"
	nsc ip addr add $ROUTER_IP/24 dev r1
	nsc ip link set r1 up
	nsc sysctl -qw net.ipv4.ip_forward=1
	nsw ip addr add $WORLD_IP/24 dev w0
	nsw ip link set w0 up
	nsw ip link set lo up
	nsw ip route add default via $ROUTER_IP
	nsn ip route add 198.19.0.0/24 via $CLIENT_IP
	offloads_default "$NS_C" r1
	offloads_default "$NS_W" w0
}

# A jumbo network: every link of the world's path (client, node NIC, router, world host) at MTU.
tb_world_mtu() { # mtu
	local l
	for l in "$NS_C cl0" "$NS_N nic0" "$NS_C r1" "$NS_W w0"; do
		ip netns exec ${l% *} ip link set ${l#* } mtu "$1"
	done
}

# Start a test server (sbxserver.py ARGS...) in namespace NS and wait until PORT listens.
tb_server() { # ns port args...
	local ns=$1 port=$2 n
	shift 2
	tb_bg ip netns exec "$ns" python3 "$SRC_DIR/sbxserver.py" --port "$port" "$@"
	for n in $(seq 100); do
		ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && return 0
		sleep 0.1
	done
	die "server on port $port in $ns did not start"
}

# Start a UDP test server (udpmtu.py echo-server|frag-server PORT ...) in namespace NS and wait
# until PORT is bound: a request sent before would meet a port unreachable.
tb_udp_server() { # ns kind port args...
	local ns=$1 port=$3 n
	shift
	tb_bg ip netns exec "$ns" python3 "$SRC_DIR/udpmtu.py" "$@"
	for n in $(seq 100); do
		[ -n "$(ip netns exec "$ns" ss -Hlun "sport = :$port")" ] && return 0
		sleep 0.1
	done
	die "UDP server on port $port in $ns did not start"
}

tb_world_server() { # port [name]
	tb_server "$NS_W" "$1" --name "${2:-world}"
}

tb_add_sandbox() { # index
	local i=$1 ns=cvs-s$1-$TB_ID
	ip netns add "$ns"
	# Guests here speak IPv4 only: no router solicitations or MLD reports to count as drops.
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1
	ip link add "sb$i" netns "$NS_N" type veth peer name eth0 netns "$ns"
	ip netns exec "$ns" ip link set eth0 address $GUEST_MAC
	ip netns exec "$ns" ip addr add $GUEST_IP/30 dev eth0
	ip netns exec "$ns" ip link set eth0 up
	ip netns exec "$ns" ip link set lo up
	ip netns exec "$ns" ip route add default via $GW_IP
	offloads_default "$ns" eth0
	nsn ip link set "sb$i" up
	offloads_default "$NS_N" "sb$i"
	TB_SANDBOXES=$((TB_SANDBOXES > i ? TB_SANDBOXES : i))
}

tb_bg() { # run a command in the background and remember its PID
	"$@" &
	TB_PIDS+=($!)
}

tb_sandbox_server() { # index port
	tb_server "cvs-s$1-$TB_ID" "${2:-8080}" --name "sandbox$1"
}

fp_start() { # extra options
	# Not through a shell function: $! must be the PID that becomes cubevs-fp.
	# Each bed keeps its own state file; FP_EAL_ARGS adds EAL options (--file-prefix...).
	# Empty the log first: a restart must not find the previous instance's "ready:".
	: >"$TB_DIR/fp.log"
	# FP_EAL_WORLD=1: the world port is an EAL port FP_EAL_ARGS gives (--vdev net_af_xdp0...).
	local world=(--world-iface nic0)
	[ -z "${FP_EAL_WORLD:-}" ] || world=()
	ip netns exec "$NS_N" "$CUBEVS_FP" ${FP_EAL:--l 0-1} --no-huge -m 512 --no-shconf --no-pci \
		--log-level=pmd.net.af_xdp:warning "${FP_EAL_ARGS[@]}" -- "${world[@]}" \
		--state-file "$TB_DIR/state.json" --runtime-dir "$TB_DIR/run" "${FP_PIN[@]}" "$@" \
		>"$TB_DIR/fp.log" 2>&1 &
	FP_PID=$!
	TB_PIDS+=($FP_PID)
	# FP_READY_S: how long a start may take (a node with thousands of sandboxes to restore).
	local n
	for n in $(seq $((${FP_READY_S:-10} * 10))); do
		if grep -q 'ready:' "$TB_DIR/fp.log"; then
			return 0
		fi
		if ! kill -0 "$FP_PID" 2>/dev/null; then
			cat "$TB_DIR/fp.log"
			die "cubevs-fp exited during start"
		fi
		sleep 0.1
	done
	cat "$TB_DIR/fp.log"
	die "cubevs-fp not ready after ${FP_READY_S:-10} s"
}

fp_kill9() { # a crash: kill -9, reaped
	[ -n "$FP_PID" ] || return 0
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
}

# The end of a run as a restart or a crash: fp_stop (its status) or fp_kill9.
fp_end() { # term|kill
	if [ "$1" = term ]; then fp_stop; else fp_kill9; fi
}

fp_stop() {
	[ -n "$FP_PID" ] || return 0
	kill -TERM "$FP_PID" 2>/dev/null
	local n
	for n in $(seq 100); do
		kill -0 "$FP_PID" 2>/dev/null || break
		sleep 0.1
	done
	wait "$FP_PID" 2>/dev/null
	local rc=$?
	FP_PID=
	return $rc
}

api() { # METHOD PATH [BODY] -> prints body, then status on the last line
	local m=$1 p=$2 b=${3:-}
	if [ -n "$b" ]; then
		nsn curl -s -m 10 -X "$m" -H 'Content-Type: application/json' -d "$b" \
			-w '\n%{http_code}' "http://$API$p"
	else
		nsn curl -s -m 10 -X "$m" -w '\n%{http_code}' "http://$API$p"
	fi
}

api_status() { api "$@" | tail -n1; }
api_body() { api "$@" | sed '$d'; }

register() { # id iface ports-json
	api PUT "/sandboxes/$1" "{\"iface\":\"$2\",\"exposedPorts\":$3}"
}

stat_of() { # group name: one counter of GET /stats
	api_body GET /stats | python3 -c "import json,sys; print(json.load(sys.stdin)['$1']['$2'])"
}

stat_wait() { # group name want: GET /stats until group.name is want (5 s); prints the last
	local n got
	for n in $(seq 50); do
		got=$(stat_of "$1" "$2")
		[ "$got" = "$3" ] && break
		sleep 0.1
	done
	echo "$got"
}

# What the next start reads: the state file with its journal applied (stateview.py).
state_view() { # [state file]
	python3 "$SRC_DIR/stateview.py" "${1:-$TB_DIR/state.json}"
}

sandbox_ip() { # id: the sandbox address of a registration
	api_body GET "/sandboxes/$1" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["sandboxIP"])'
}
hostport_of() { # id containerPort
	api_body GET "/sandboxes/$1/exposed-ports/$2" | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["hostPort"])'
}

# meson's timeout sends SIGTERM to the test's process group and SIGKILL 0.5 s later: too soon
# for a teardown that waits for the fast path to stop. The teardown goes to a process in a
# session of its own, which that SIGKILL does not reach; it removes this bed's namespaces and
# stops only this bed's processes, by PID.
tb_on_signal() { # exit status
	trap - EXIT TERM INT HUP
	setsid bash -c "$(declare -f tb_teardown)
		$(declare -p TB_PIDS TB_SANDBOXES TB_ID NS_C NS_N NS_W TB_DIR)
		$(declare -p TB_WORLD 2>/dev/null)
		tb_teardown" </dev/null >/dev/null 2>&1 &
	exit "$1"
}

tb_teardown() {
	local pid i
	set +e
	for pid in "${TB_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${TB_PIDS[@]}"; do
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	if [ "${KEEP_LOG:-0}" = 1 ] || [ "${V:-0}" = 1 ]; then
		[ -f "$TB_DIR/fp.log" ] && sed 's/^/# fp: /' "$TB_DIR/fp.log"
	fi
	for i in $(seq 1 "$TB_SANDBOXES"); do
		ip netns del "cvs-s$i-$TB_ID" 2>/dev/null
	done
	[ -n "${TB_WORLD:-}" ] && ip netns del "$NS_W" 2>/dev/null
	ip netns del "$NS_C" 2>/dev/null
	ip netns del "$NS_N" 2>/dev/null
	mountpoint -q "$TB_DIR/bpf" && umount "$TB_DIR/bpf"
	[ -n "${TB_EAL_PREFIX:-}" ] && rm -rf "/var/run/dpdk/$TB_EAL_PREFIX$TB_ID"
	rm -rf "$TB_DIR"
}
