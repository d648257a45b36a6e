#!/bin/bash
# The 50 long-lived flows of issue 12 (restart-flows), for scripts that source lib.sh first:
# 20 world → exposed ports, 15 sandbox → world TCP and 5 UDP (SNAT), 5 hairpin (sandbox 1 →
# sandbox 2's host port), 5 node → sandbox through cube-dev. The same mix and checks as
# test_restart.sh's flows. Needs tb_add_world, sandboxes 1 and 2 with a TCP echo on 7000, a
# world server with --udp-echo 5353 --tcp-echo 7001, and HP1/HP2 (the host ports of 7000) and
# SBX1/SBX2 (the sandbox addresses) set. One longconn.py per namespace, in $TB_DIR/f-*.

FLOW_DIRS="in eg1 eg2 host"

# The namespaces the flows need, after tb_setup: the world with its echoes, sandboxes 1 and 2
# with theirs.
flows_net() {
	tb_add_world
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_server "cvs-s1-$TB_ID" 8080 --name sandbox1 --tcp-echo 7000
	tb_server "cvs-s2-$TB_ID" 8080 --name sandbox2 --tcp-echo 7000
	tb_server "$NS_W" 8000 --name world --udp-echo 5353 --tcp-echo 7001
}

# With cubevs-fp running: sandboxes s1 and s2 registered, HP1/HP2 and SBX1/SBX2 set.
flows_register() {
	eq "$(register s1 sb1 '[8080,7000]' | tail -n1)" 201 || die "register s1"
	eq "$(register s2 sb2 '[8080,7000]' | tail -n1)" 201 || die "register s2"
	HP1=$(hostport_of s1 7000)
	HP2=$(hostport_of s2 7000)
	SBX1=$(sandbox_ip s1)
	SBX2=$(sandbox_ip s2)
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
}
FLOW_MIX="ingress:20 egress-tcp:15 egress-udp:5 hairpin:5 host:5"

# New connections of every kind work (after flows_register).
flows_fresh() { # what
	check "$1: a new ingress connection" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$(hostport_of s1 8080)/name")" \
		"sandbox1 $CLIENT_IP"
	check "$1: a new egress connection" \
		eq "$(nss 1 curl -s -m 5 "http://$WORLD_IP:8000/name")" "world $NODE_IP"
	check "$1: a new host → sandbox connection" \
		eq "$(nsn curl -s -m 5 "http://$SBX1:8080/name" | cut -d' ' -f1)" "sandbox1"
	check "$1: a new hairpin connection" \
		eq "$(nss 1 curl -s -m 5 "http://$NODE_IP:$(hostport_of s2 8080)/name" |
			cut -d' ' -f1)" "sandbox2"
	check "$1: a new egress UDP flow" \
		contains "$(nss 2 python3 "$SRC_DIR/client.py" udp "$WORLD_IP" 5353)" "hello $NODE_IP"
}

flows_start() {
	local d n
	for d in $FLOW_DIRS; do
		mkdir -p "$TB_DIR/f-$d"
		rm -f "$TB_DIR/f-$d"/{mark,ready,stop,out,caught}
	done
	tb_bg nsc python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-in" --tcp "ingress@$NODE_IP:$HP1:10" \
		--tcp "ingress@$NODE_IP:$HP2:10" >"$TB_DIR/f-in/out"
	tb_bg nss 1 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-eg1" \
		--tcp "egress-tcp@$WORLD_IP:7001:8" --udp "egress-udp@$WORLD_IP:5353:3" \
		--tcp "hairpin@$NODE_IP:$HP2:5" >"$TB_DIR/f-eg1/out"
	tb_bg nss 2 python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-eg2" \
		--tcp "egress-tcp@$WORLD_IP:7001:7" --udp "egress-udp@$WORLD_IP:5353:2" \
		>"$TB_DIR/f-eg2/out"
	tb_bg nsn python3 "$SRC_DIR/longconn.py" "$TB_DIR/f-host" --tcp "host@$SBX1:7000:3" \
		--tcp "host@$SBX2:7000:2" >"$TB_DIR/f-host/out"
	for n in $(seq 300); do
		flows_all ready && return 0
		sleep 0.1
	done
	die "the flows did not start"
}

flows_all() { # file: true when every flow directory has a non-empty one (or any, for ready)
	local d
	for d in $FLOW_DIRS; do
		if [ "$1" = ready ]; then
			[ -f "$TB_DIR/f-$d/ready" ] || return 1
		else
			[ -s "$TB_DIR/f-$d/$1" ] || return 1
		fi
	done
}

flows_mark() { # number
	local d
	for d in $FLOW_DIRS; do echo "$1" >"$TB_DIR/f-$d/mark"; done
}

flows_caught() { # true when every flow has exchanged a message after the last mark
	local d m
	for d in $FLOW_DIRS; do
		m=$(cat "$TB_DIR/f-$d/mark" 2>/dev/null || echo 0)
		[ "$(cat "$TB_DIR/f-$d/caught" 2>/dev/null || echo 0)" -ge "$m" ] || return 1
	done
}

# Stop the flows and write $TB_DIR/flows.txt: MIX label got want, FLOW ok name: why, STALL
# median max, OK intact total.
flows_stop() {
	local d n
	# Let each flow exchange a message after the last mark: up to 10 s, as a TCP flow's next
	# retransmission can come about as long after a restart as the restart lasted (backoff).
	for n in $(seq 100); do
		flows_caught && break
		sleep 0.1
	done
	for d in $FLOW_DIRS; do touch "$TB_DIR/f-$d/stop"; done
	for n in $(seq 150); do
		flows_all out && break
		sleep 0.2
	done
	python3 - "$FLOW_MIX" $(for d in $FLOW_DIRS; do echo "$TB_DIR/f-$d/out"; done) \
		>"$TB_DIR/flows.txt" <<'PY'
import json, sys
mix = dict((k, int(v)) for k, v in (x.split(':') for x in sys.argv[1].split()))
flows = []
for p in sys.argv[2:]:
    try:
        r = json.load(open(p))
    except (OSError, ValueError) as e:
        print('MISSING %s: %s' % (p, e))
        continue
    flows += r['flows']
for k, want in mix.items():
    got = sum(f['label'] == k for f in flows)
    print('MIX %s %d %d' % (k, got, want))
for f in flows:
    print('FLOW %d %s: %s' % (f['ok'], f['name'], f['why'] if not f['ok'] else
                             '%d msgs, longest stall %d ms' % (f['msgs'], f['stall_ms'])))
s = sorted(f['stall_ms'] for f in flows) or [0]
print('STALL %d %d' % (s[len(s) // 2], s[-1]))
print('OK %d %d' % (sum(f['ok'] for f in flows), sum(mix.values())))
PY
}

# Stop the flows; judge every one of the 50 on its own, and the mix.
flows_check() { # what
	local n line k got want ok
	flows_stop
	check "$1: every flow reported" bash -c "! grep -q '^MISSING' $TB_DIR/flows.txt"
	while read -r _ k got want; do
		check "$1: $want $k flows" eq "$got" "$want"
	done < <(grep '^MIX' "$TB_DIR/flows.txt")
	while read -r _ ok line; do
		check "$1: intact: $line" eq "$ok" 1
	done < <(grep '^FLOW' "$TB_DIR/flows.txt")
	read -r _ n line < <(grep '^STALL' "$TB_DIR/flows.txt")
	log "$1: the stall the flows saw: median $n ms, longest $line ms (printed, not judged)"
}
