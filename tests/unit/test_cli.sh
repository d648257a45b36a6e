#!/bin/bash
# The command line without root, hugepages or EAL: --help, --version, bad values → exit 2.
FP=${CUBEVS_FP:?}
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
read -r lo hi </proc/sys/net/ipv4/ip_local_port_range
expect "ephemeral overlap names the sysctl" 2 "net.ipv4.ip_local_port_range" \
	"$FP" -- --node-ip 198.18.0.1 --host-port-range "$lo-$lo" --snat-port-range 1-1
[ $fails = 0 ]
