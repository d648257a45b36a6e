#!/bin/bash
# Only our own programs (issue 36): a bystander namespace holds XDP links of someone else's
# program (xdplink, a BPF link as Cilium or another cubevs-fp makes) on interfaces whose
# ifindexes equal those of the bed's world interface and both sandbox interfaces; an ifindex
# is unique only inside one namespace. Through a start, PUTs, a SIGTERM restart, a restart
# onto maps of another size (our program of "another build" replaced), a kill -9 restart,
# DELETE, link events and a stop, every bystander link keeps its program (checked by id) and
# ours comes and goes where the API says.
#
# 'ours': another cubevs-fp in the bystander namespace, its world and sandbox interfaces at
# the ifindexes of ours; each instance restarts (SIGTERM, kill -9), deletes, registers and
# sees link events while the other's programs are checked by id and its API by attachment.
#
#   test_bystander.sh pins|nopins|ours|ours-nopins   (nopins: no bpffs, attachments through
#   rtnetlink)
. "$(dirname "$0")/lib.sh"

NS_D=cvs-d-$TB_ID
: "${XDPLINK:?XDPLINK (tests/netns/xdplink) is needed}"

# A veth in the bystander namespace at the ifindex of $1 in the node namespace (no link).
twin() { # node-iface name
	local idx
	idx=$(nsn cat "/sys/class/net/$1/ifindex")
	# The peer first at an index of its own: veth registers it before the named end.
	ip -n "$NS_D" link add "$2" index "$idx" type veth peer name "$2p" index $((idx + 1000)) ||
		die "cannot make $2 at ifindex $idx"
	ip -n "$NS_D" link set "$2" up
	ip -n "$NS_D" link set "$2p" up
}

# A veth in the bystander namespace at the ifindex of $1 in the node namespace, with a link.
decoy() { # node-iface name
	twin "$1" "$2"
	tb_bg ip netns exec "$NS_D" "$XDPLINK" "$XDP_PASS_OBJ" "$2" "$TB_DIR/$2.ids"
	local n
	for n in $(seq 50); do
		[ -s "$TB_DIR/$2.ids" ] && break
		sleep 0.1
	done
	[ -s "$TB_DIR/$2.ids" ] || die "xdplink on $2 did not attach"
	log "bystander $2 at ifindex $(nsn cat "/sys/class/net/$1/ifindex") (as $1): prog/link" \
		"$(cat "$TB_DIR/$2.ids")"
}

# The XDP program id an interface of namespace ns runs (0 for none).
prog_of() { # ns iface
	ip -n "$1" -d -j link show dev "$2" | python3 -c '
import json, sys
l = json.load(sys.stdin)[0]
print(l.get("xdp", {}).get("prog", {}).get("id", 0))'
}

bystanders_intact() { # what
	local d want
	for d in dnic dsb1 dsb2; do
		want=$(cut -d' ' -f1 "$TB_DIR/$d.ids")
		check "$1: the bystander's $d still runs its program (id $want)" \
			eq "$(prog_of "$NS_D" $d)" "$want"
	done
}

serves() { # hostport name
	eq "$(nsc curl -s -m 3 "http://$NODE_IP:$1/name" | cut -d' ' -f1)" "$2"
}
field() { # id key
	api_body GET "/sandboxes/$1" | python3 -c '
import json, sys
print(json.load(sys.stdin).get(sys.argv[1], ""))' "$2"
}
ours_on() { # what: both sandboxes attached and serving, our program on their interfaces
	check "$1: A attached" eq "$(field a attached)" True
	check "$1: B attached" eq "$(field b attached)" True
	check "$1: A serves" serves "$(hostport_of a 8080)" sandbox1
	check "$1: B serves" serves "$(hostport_of b 8080)" sandbox2
	check "$1: our program on sb1 and sb2" xdp_on sb1 sb2
}

case_run() {
	tb_setup
	trap 'tb_teardown; ip netns del "$NS_D" 2>/dev/null' EXIT
	ip netns add "$NS_D"
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	decoy nic0 dnic
	decoy sb1 dsb1
	decoy sb2 dsb2
	fp_start || die "cubevs-fp did not start"
	contains "$(register a sb1 '[8080]' | tail -n1)" 201 || die "register a"
	contains "$(register b sb2 '[8080]' | tail -n1)" 201 || die "register b"
	ours_on "start and PUT"
	bystanders_intact "start and PUT"

	check "SIGTERM → exit 0" fp_stop
	check "a restart with the same flags" fp_start
	ours_on "SIGTERM restart"
	bystanders_intact "SIGTERM restart"

	# Maps of another size: the attached program is ours of another build and is replaced.
	fp_stop
	check "a restart with --max-sandboxes 1024" fp_start --max-sandboxes 1024
	ours_on "a restart onto other maps"
	bystanders_intact "a restart onto other maps"

	fp_kill9
	check "a start after kill -9" fp_start
	ours_on "kill -9 restart"
	bystanders_intact "kill -9 restart"

	check "DELETE a → 204" eq "$(api_status DELETE /sandboxes/a)" 204
	local n
	for n in $(seq 30); do
		xdp_on sb1 || break
		sleep 0.1
	done
	check "DELETE: our program is off sb1" eq "$(prog_of "$NS_N" sb1)" 0
	bystanders_intact "DELETE"
	contains "$(register a sb1 '[8080]' | tail -n1)" 201 || die "register a again"
	nsn ip link set sb1 down
	nsn ip link set sb1 up
	sleep 0.5
	ours_on "sb1 down and up"
	bystanders_intact "sb1 down and up"
	nsn ip link del sb1
	sleep 0.5
	check "sb1 deleted: A shows attached false" eq "$(field a attached)" False
	bystanders_intact "sb1 deleted"
	check "DELETE a (its interface gone) → 204" eq "$(api_status DELETE /sandboxes/a)" 204
	check "DELETE b → 204" eq "$(api_status DELETE /sandboxes/b)" 204
	check "stop → exit 0" fp_stop
	bystanders_intact "stop"
	check "nothing was refused as someone else's on our interfaces" \
		bash -c "! grep -q 'not ours' $TB_DIR/fp.log"
	tb_done
}

# ---- another cubevs-fp (B) beside ours (A), each in its namespace, ifindexes colliding ----

b_api() { # METHOD PATH [BODY]: B's API on its namespace's loopback; the status code
	ip netns exec "$NS_D" curl -s -m 10 -o /dev/null -w '%{http_code}' -X "$1" \
		-H 'Content-Type: application/json' ${3:+-d "$3"} "http://127.0.0.1:9180$2"
}
b_attached() { # id
	ip netns exec "$NS_D" curl -s -m 10 "http://127.0.0.1:9180/sandboxes/$1" | python3 -c '
import json, sys
print(json.load(sys.stdin).get("attached"))'
}

b_start() {
	local pin=(--bpf-pin-dir none)
	[ "${FP_PIN[1]}" = none ] || pin=(--bpf-pin-dir "$TB_DIR/bpf/b")
	: >"$TB_DIR/b.log"
	ip netns exec "$NS_D" "$CUBEVS_FP" -l 0-1 --no-huge -m 512 --no-shconf --no-pci \
		--file-prefix "cvs-b-$TB_ID" --log-level=pmd.net.af_xdp:warning -- \
		--world-iface bnic --state-file "$TB_DIR/b-state.json" --runtime-dir "$TB_DIR/b-run" \
		"${pin[@]}" --idle-sleep-us 50 >"$TB_DIR/b.log" 2>&1 &
	B_PID=$!
	TB_PIDS+=($B_PID)
	local n
	for n in $(seq 100); do
		grep -q 'ready:' "$TB_DIR/b.log" && return 0
		kill -0 "$B_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# b: /' "$TB_DIR/b.log"
	return 1
}
b_stop() { # TERM|KILL
	kill -"$1" "$B_PID" 2>/dev/null
	wait "$B_PID" 2>/dev/null
	return 0
}

ids_of() { # ns iface...: the program ids, space-separated
	local i
	for i in "${@:2}"; do printf '%s ' "$(prog_of "$1" "$i")"; done
}

# Both instances register two sandboxes each on colliding ifindexes, then each goes through
# restarts (SIGTERM, kill -9), DELETE, PUT and link events while the other's programs are
# checked by id and its API still says attached.
case_ours() {
	tb_setup
	trap 'tb_teardown; ip netns del "$NS_D" 2>/dev/null; rm -rf /var/run/dpdk/cvs-b-$TB_ID' EXIT
	ip netns add "$NS_D"
	ip -n "$NS_D" link set lo up
	ip netns exec "$NS_D" sysctl -qw net.ipv4.ip_local_port_range="10000 19999"
	tb_add_sandbox 1
	tb_add_sandbox 2
	tb_sandbox_server 1 8080
	tb_sandbox_server 2 8080
	twin nic0 bnic
	twin sb1 bsb1
	twin sb2 bsb2
	ip -n "$NS_D" addr add 198.18.50.1/24 dev bnic
	[ "${FP_PIN[1]}" = none ] || mkdir -p "$TB_DIR/bpf/b"
	fp_start --idle-sleep-us 50 || die "A did not start"
	b_start || die "B did not start"
	contains "$(register a sb1 '[8080]' | tail -n1)" 201 || die "register a"
	contains "$(register b sb2 '[8080]' | tail -n1)" 201 || die "register b"
	eq "$(b_api PUT /sandboxes/b1 '{"iface":"bsb1","exposedPorts":[8080]}')" 201 || die "B b1"
	eq "$(b_api PUT /sandboxes/b2 '{"iface":"bsb2","exposedPorts":[8080]}')" 201 || die "B b2"
	ours_on "both started"
	local bids aids
	bids=$(ids_of "$NS_D" bnic bsb1 bsb2)
	log "B's programs on bnic bsb1 bsb2: $bids; A's on nic0 sb1 sb2: $(ids_of "$NS_N" nic0 sb1 sb2)"
	check "B runs its programs on the colliding interfaces" \
		bash -c "! echo '$bids' | grep -qw 0"

	b_intact() { # what
		check "$1: B's programs kept (ids $bids)" eq "$(ids_of "$NS_D" bnic bsb1 bsb2)" "$bids"
		check "$1: B's API says b1 and b2 attached" \
			eq "$(b_attached b1) $(b_attached b2)" "True True"
	}
	check "A: SIGTERM → exit 0" fp_stop
	check "A: a restart" fp_start --idle-sleep-us 50
	ours_on "A's SIGTERM restart"
	b_intact "A's SIGTERM restart"
	fp_kill9
	check "A: a start after kill -9" fp_start --idle-sleep-us 50
	ours_on "A's kill -9 restart"
	b_intact "A's kill -9 restart"
	check "A: DELETE a → 204" eq "$(api_status DELETE /sandboxes/a)" 204
	check "A: PUT a again → 201" contains "$(register a sb1 '[8080]' | tail -n1)" 201
	nsn ip link set sb2 down
	nsn ip link set sb2 up
	sleep 0.5
	ours_on "A's DELETE, PUT and a link down and up"
	b_intact "A's DELETE, PUT and a link down and up"

	# Now B moves while A's programs are watched.
	aids=$(ids_of "$NS_N" nic0 sb1 sb2)
	a_intact() { # what
		check "$1: A's programs kept (ids $aids)" eq "$(ids_of "$NS_N" nic0 sb1 sb2)" "$aids"
		ours_on "$1"
	}
	b_stop TERM
	check "B: a restart after SIGTERM" b_start
	a_intact "B's SIGTERM restart"
	b_stop KILL
	check "B: a start after kill -9" b_start
	a_intact "B's kill -9 restart"
	check "B: DELETE b1 → 204" eq "$(b_api DELETE /sandboxes/b1)" 204
	ip -n "$NS_D" link set bsb2 down
	ip -n "$NS_D" link set bsb2 up
	sleep 0.5
	a_intact "B's DELETE and a link down and up"
	b_stop TERM
	check "A: stop → exit 0" fp_stop
	check "neither refused the other's programs as someone else's" \
		bash -c "! grep -q 'not ours' $TB_DIR/fp.log $TB_DIR/b.log"
	tb_done
}

case "${1:-}" in
pins) case_run ;;
nopins) TB_PIN=0 case_run ;;
ours) case_ours ;;
ours-nopins) TB_PIN=0 case_ours ;;
*) die "usage: $0 pins|nopins|ours|ours-nopins" ;;
esac
