#!/bin/bash
# The command line without root, hugepages or EAL: --help, --version, bad values → exit 2;
# cubevs-fpctl's numbers parsed strictly, before it connects anywhere.
FP=${CUBEVS_FP:?}
FPCTL=${CUBEVS_FPCTL:?}
fails=0
expect() { # description, expected rc, pattern, command...
	local what=$1 rc=$2 pat=$3 out got
	shift 3
	out=$("$@" 2>&1)
	got=$?
	if [ "$got" = "$rc" ] && printf '%s' "$out" | grep -q -- "$pat"; then
		echo "ok - $what"
	else
		echo "not ok - $what (rc $got): $out"
		fails=$((fails + 1))
	fi
}
one_line() { # description, command... : exactly one line on stderr, exit 2
	local what=$1 n
	shift
	n=$("$@" 2>&1 >/dev/null | wc -l)
	"$@" >/dev/null 2>&1
	local rc=$?
	if [ "$rc" = 2 ] && [ "$n" = 1 ]; then echo "ok - $what"; else
		echo "not ok - $what (rc $rc, $n lines)"; fails=$((fails + 1)); fi
}
expect "--help without --" 0 "Usage:" "$FP" --help
expect "--help after --" 0 "--world-iface" "$FP" -l 0 -- --help
expect "--version" 0 "cubevs-fp [0-9]" "$FP" --version
expect "bad range" 2 "host-port-range" "$FP" -- --host-port-range 9-1
expect "unknown flag" 2 "unknown option '--frobnicate'" "$FP" -- --frobnicate
expect "bad MAC" 2 "guest-mac" "$FP" -- --guest-mac zz
expect "bad IP" 2 "node-ip" "$FP" -- --node-ip 1.2.3
expect "missing interface" 2 "no such interface" "$FP" -- --world-iface cvsnope0
one_line "one line per error (bad max-sessions)" "$FP" -- --max-sessions lots
for v in 1000 256 32768 4k; do
	expect "bad UMEM size $v" 2 "for --sandbox-umem-frames: expected a power of two 512..16384" \
		"$FP" -- --sandbox-umem-frames "$v"
done
read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
expect "ephemeral overlap names the sysctl" 2 "net.ipv4.ip_local_port_range" \
	"$FP" -- --node-ip 198.18.0.1 --host-port-range "$lo-$lo" --snat-port-range 1-1

# Port 1 on loopback refuses: a valid command line gets as far as connecting (exit 3), so an
# exit 2 below is the parser's, not the network's.
CTL=("$FPCTL" --api 127.0.0.1:1)
expect "ctl: valid numbers reach the API" 3 "cannot connect to 127.0.0.1:1" \
	"${CTL[@]}" --timeout 5 sessions --limit 5
expect "ctl: valid ports reach the API" 3 "cannot connect" \
	"${CTL[@]}" --timeout 3600 sandbox add s1 --iface x --port 1 --port 65535
for t in 12x '' 0 3601 -1 +5 ' 5' 5.0 0x10 99999999999999999999; do
	expect "ctl: --timeout '$t' refused" 2 \
		"--timeout wants a whole number of seconds 1..3600, got '$t'" \
		"${CTL[@]}" --timeout "$t" status
done
one_line "ctl: one line for a bad --timeout" "${CTL[@]}" --timeout 12x status
for p in 12x '' 0 65536 -80 8080.5; do
	expect "ctl: --port '$p' refused" 2 "--port wants a whole number 1..65535, got '$p'" \
		"${CTL[@]}" sandbox add s1 --iface x --port 80 --port "$p"
done
one_line "ctl: one line for a bad --port" "${CTL[@]}" sandbox add s1 --iface x --port 8x
for l in 5x '' 0 4294967296; do
	expect "ctl: --limit '$l' refused" 2 "--limit wants a whole number 1..4294967295, got '$l'" \
		"${CTL[@]}" sessions --limit "$l"
done
expect "ctl: valid limits reach the API" 3 "cannot connect" \
	"${CTL[@]}" sandbox add s1 --iface x --max-sessions 0 --max-inbound 1073741824 \
	--new-sessions-per-sec 5 --new-sessions-burst 10 --snat-ports-per-endpoint 16
for o in max-sessions max-inbound new-sessions-per-sec new-sessions-burst \
	snat-ports-per-endpoint; do
	for v in 5x '' -1 +5 0x10 1.5 1073741825 99999999999999999999; do
		expect "ctl: --$o '$v' refused" 2 "--$o wants a whole number 0..1073741824, got '$v'" \
			"${CTL[@]}" sandbox add s1 --iface x --"$o" "$v"
	done
done
one_line "ctl: one line for a bad limit" "${CTL[@]}" sandbox add s1 --iface x --max-inbound x
for a in 127.0.0.1:80x 127.0.0.1:70000 127.0.0.1:0 127.0.0.1: ':80' 'a/b:80' 'x@y:80' \
	'unix:' 'unix:relative.sock'; do
	expect "ctl: --api '$a' refused" 2 "--api wants ADDR:PORT or unix:/PATH, got '$a'" \
		"$FPCTL" --api "$a" status
done
# --rollback-to 0.1.0 refuses a state file whose policies hold IPv6 CIDRs (0.1.0 could not
# read them back), and leaves it as it is.
rb=$(mktemp -d)
printf '%s' '{"format":"cubevs-fp-state","version":1,"sandboxes":[{"sandboxID":"s1",
"iface":"sb1","sandboxIP":"192.168.0.2","exposedPorts":[],"policy":{"allowInternetAccess":true,
"allowOut":["10.0.0.0/8"],"denyOut":["2001:2::/48"]}}]}' >"$rb/state.json"
cp "$rb/state.json" "$rb/before.json"
expect "--rollback-to 0.1.0 with IPv6 CIDRs in a policy: refused, naming the sandbox" 1 \
	"sandbox s1 has IPv6 CIDRs in its policy" "$FP" -- --world-iface lo \
	--state-file "$rb/state.json" --runtime-dir "$rb/run" --bpf-pin-dir none --rollback-to 0.1.0
expect "and the state file is left as it was" 0 "same" \
	sh -c "cmp \"$rb/state.json\" \"$rb/before.json\" && echo same"
rm -rf "$rb"
[ $fails = 0 ]
