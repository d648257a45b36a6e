#!/bin/bash
# Only our own programs (issue 36): a bystander namespace holds XDP links of someone else's
# program (xdplink, a BPF link as Cilium or another cubevs-fp makes) on interfaces whose
# ifindexes equal those of the bed's world interface and both sandbox interfaces; an ifindex
# is unique only inside one namespace. Through a start, PUTs, a SIGTERM restart, a restart
# onto maps of another size (our program of "another build" replaced), a kill -9 restart,
# DELETE, link events and a stop, every bystander link keeps its program (checked by id) and
# ours comes and goes where the API says.
#
#   test_bystander.sh pins|nopins   (nopins: no bpffs, our attachments are rtnetlink's)
. "$(dirname "$0")/lib.sh"

NS_D=cvs-d-$TB_ID
: "${XDPLINK:?XDPLINK (tests/netns/xdplink) is needed}"

# A veth in the bystander namespace at the ifindex of $1 in the node namespace, with a link.
decoy() { # node-iface name
	local idx
	idx=$(nsn cat "/sys/class/net/$1/ifindex")
	# The peer first at an index of its own: veth registers it before the named end.
	ip -n "$NS_D" link add "$2" index "$idx" type veth peer name "$2p" index $((idx + 1000)) ||
		die "cannot make $2 at ifindex $idx"
	ip -n "$NS_D" link set "$2" up
	ip -n "$NS_D" link set "$2p" up
	tb_bg ip netns exec "$NS_D" "$XDPLINK" "$XDP_PASS_OBJ" "$2" "$TB_DIR/$2.ids"
	local n
	for n in $(seq 50); do
		[ -s "$TB_DIR/$2.ids" ] && break
		sleep 0.1
	done
	[ -s "$TB_DIR/$2.ids" ] || die "xdplink on $2 did not attach"
	log "bystander $2 at ifindex $idx (as $1): prog/link $(cat "$TB_DIR/$2.ids")"
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

	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
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

case "${1:-}" in
pins) case_run ;;
nopins) TB_PIN=0 case_run ;;
*) die "usage: $0 pins|nopins" ;;
esac
