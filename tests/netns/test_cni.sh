#!/bin/bash
# A sandbox attached the way a CNI plugin leaves it, at the kernel's default offloads: the
# ptp plugin (Debian's containernetworking-plugins) run by hand per the CNI spec, its veth
# registered with cubevs-fp. Usage: test_cni.sh CASE
#
#   client ns ... node ns <hostveth 198.18.64.1/32>  <-veth(ptp)->  pod ns (eth0 198.18.64.x)
#
# Nothing here turns an offload off: the pod's eth0 and the host-side veth send with TX
# checksum offload on (partial checksums), as every CNI plugin leaves them.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CNI_PATH=/usr/lib/cni
NS_P=cvs-pod1-$TB_ID
PODS=()		# the pod namespaces ADD ran for, each to DEL and remove

nsp() { ip netns exec "$NS_P" "$@"; }

# The offloads that matter here, one line.
offloads() { # ns iface
	ip netns exec "$1" ethtool -k "$2" |
		grep -E '^(tx-checksumming|tcp-segmentation-offload|	tx-tcp-segmentation):' |
		tr -s ' \t' ' ' | sed 's/^ //' | paste -sd ' '
}

# The kernel's TCP and UDP InCsumErrors in a namespace, summed.
csum_errors() { # ns
	ip netns exec "$1" awk '$1 == "Tcp:" || $1 == "Udp:" {
		if (!seen[$1]++) { for (i = 2; i <= NF; i++) name[$1, i] = $i; next }
		for (i = 2; i <= NF; i++) if (name[$1, i] == "InCsumErrors") n += $i
	} END { print n + 0 }' /proc/net/snmp
}

in_snat() { # "ip port" line
	local ip=${1%% *} port=${1##* }
	[ "$ip" = "$NODE_IP" ] && [ "$port" -ge 30000 ] && [ "$port" -le 65535 ] ||
		{ echo "#   '$1' is not $NODE_IP:<30000-65535>"; return 1; }
}

# The network configuration (spec 1.0.0), the same for ADD and DEL: a default route via the
# gateway, as a cluster's configuration gives it (without one ptp routes the subnet only).
# host-local keeps its leases in the bed's directory, never in /var/lib/cni.
# CNI_TYPE=bridge: the bridge plugin instead, its bridge the pods' gateway.
cni_conf() {
	local extra='"ipMasq": false, "mtu": 1500'
	[ "${CNI_TYPE:-ptp}" = bridge ] &&
		extra+=", \"bridge\": \"cvb${TB_ID: -8}\", \"isGateway\": true"
	cat <<-EOF
	{"cniVersion": "1.0.0", "name": "cvs-cni-$TB_ID", "type": "${CNI_TYPE:-ptp}", $extra,
	 "ipam": {"type": "host-local", "subnet": "198.18.64.0/24",
	          "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$TB_DIR/cni-ipam"}}
	EOF
}

# Run the ptp plugin as a runtime does, from the node namespace: its host-side veth lands
# there. COMMAND is ADD or DEL for the pod namespace (NS_P by default); the result (or error)
# goes to stdout.
cni() { # COMMAND [pod namespace]
	local ns=${2:-$NS_P}
	cni_conf | ip netns exec "$NS_N" env CNI_COMMAND="$1" CNI_CONTAINERID="$ns" \
		CNI_NETNS="/var/run/netns/$ns" CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni \
		"/usr/lib/cni/${CNI_TYPE:-ptp}"
}

# The pods go before the bed: DEL while both namespaces still exist (the spec asks for it
# even after a failed ADD), then the pod namespace.
pod_teardown() {
	local ns
	set +e
	for ns in "${PODS[@]}"; do
		cni DEL "$ns" >"$TB_DIR/cni-del.out" 2>&1 ||
			printf '# CNI DEL failed: %s\n' "$(cat "$TB_DIR/cni-del.out")"
		ip netns del "$ns" 2>/dev/null
	done
}

# lib.sh's tb_on_signal, with the pod's teardown in the same session of its own.
pod_on_signal() { # exit status
	trap - EXIT TERM INT HUP
	setsid bash -c "$(declare -f tb_teardown pod_teardown cni cni_conf)
		$(declare -p TB_PIDS TB_SANDBOXES TB_ID NS_C NS_N NS_W NS_P TB_DIR PODS)
		$(declare -p CNI_TYPE 2>/dev/null)
		$(declare -p TB_WORLD 2>/dev/null)
		pod_teardown; tb_teardown" </dev/null >/dev/null 2>&1 &
	exit "$1"
}

pod_traps() {
	trap 'pod_teardown; tb_teardown' EXIT
	trap 'pod_on_signal 143' TERM
	trap 'pod_on_signal 130' INT
	trap 'pod_on_signal 129' HUP
}

# A pod by the ptp plugin: its namespace, ADD, and what the result says in $TB_DIR/NS.pod:
# "pod-ip gateway host-veth pod-mac host-veth-mac".
pod_add() { # namespace
	local r=$TB_DIR/$1-add.json line
	ip netns add "$1"
	ip netns exec "$1" ip link set lo up # the runtime's loopback plugin
	PODS+=("$1")
	cni ADD "$1" >"$r" 2>&1 || die "CNI ADD: $(cat "$r")"
	log "CNI ADD result for $1: $(tr -d '\n\t' <"$r")"
	line=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
ifs = r["interfaces"]
host = [i for i in ifs if not i.get("sandbox")]
pod = [i for i in ifs if i.get("sandbox") and i["name"] == "eth0"]
ip = [a for a in r["ips"] if ifs[a["interface"]].get("sandbox")][0]
print(ip["address"].split("/")[0], ip["gateway"], host[0]["name"], pod[0]["mac"])' "$r") ||
		die "cannot read the CNI result"
	set -- "$1" $line
	echo "$line $(nsn cat "/sys/class/net/$4/address")" >"$TB_DIR/$1.pod"
}

# The bed of every case: the node, the world with its echo, the pods' teardown. Skipped where
# Debian's CNI plugins are not installed.
cni_bed() { # interface plugin
	[ -x "$CNI_PATH/$1" ] && [ -x $CNI_PATH/host-local ] ||
		{ echo "SKIP: no $CNI_PATH/$1 or host-local (containernetworking-plugins)"; exit 77; }
	tb_setup
	tb_add_world
	pod_traps
	tb_server "$NS_W" 8000 --name world --udp-echo 5353
}

case_ptp() {
	cni_bed ptp

	local pod_ip pod_gw host_veth pod_mac gw_mac
	pod_add "$NS_P"
	read -r pod_ip pod_gw host_veth pod_mac gw_mac <"$TB_DIR/$NS_P.pod"
	log "pod $pod_ip mac $pod_mac, gateway $pod_gw; host side $host_veth mac $gw_mac"
	log "pod routes: $(nsp ip -4 route | paste -sd ';')"
	log "host side: $(nsn ip -4 -br addr show dev "$host_veth" | tr -s ' '); $(nsn ip -4 route |
		grep "dev $host_veth" | paste -sd ';')"
	log "pod eth0 offloads: $(offloads "$NS_P" eth0)"
	log "$host_veth offloads: $(offloads "$NS_N" "$host_veth")"

	# The node-wide guest address: the pod's, with the gateway ptp gave it (the way a node
	# of one pod can run without per-sandbox addresses; case ptp2 gives each its own). The
	# pod's kernel routes via the gateway on the host-side veth; the ARP proxy answers with
	# that veth's MAC, as the kernel would without us.
	fp_start --guest-ip "$pod_ip" --gateway-ip "$pod_gw" --gateway-mac "$gw_mac"
	local body="{\"iface\":\"$host_veth\",\"guestMAC\":\"$pod_mac\",\"exposedPorts\":[8080]}"
	eq "$(api PUT /sandboxes/pod1 "$body" | tail -n1)" 201 || die "register pod1"
	tb_server "$NS_P" 8080 --name pod1
	local hp
	hp=$(hostport_of pod1 8080)
	# Warm the node's neighbour entry for the router, as a running node has it.
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null

	check "client → nodeIP:hostPort reaches the pod's server, client address kept" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "pod1 $CLIENT_IP"
	local n=$((20 * 1024 * 1024)) want got
	want=$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $n)
	local c0 c1
	c0=$(stat_of worker csum_completed)
	got=$(nsc curl -s -m 30 "http://$NODE_IP:$hp/blob?n=$n" | sha256sum | cut -d' ' -f1)
	c1=$(stat_of worker csum_completed)
	check "20 MB download from the pod through the host port has the right sha256" \
		eq "$got" "$want"
	log "csum_completed during the download: $((c1 - c0))"
	head -c $n /dev/urandom >"$TB_DIR/up.bin"
	want=$(sha256sum "$TB_DIR/up.bin" | cut -d' ' -f1)
	got=$(nsc curl -s -m 30 -T "$TB_DIR/up.bin" "http://$NODE_IP:$hp/sha")
	check "20 MB upload into the pod through the host port has the right sha256" \
		eq "$got" "$want"
	rm -f "$TB_DIR/up.bin"
	check "pod → world HTTP: the server sees node IP and a SNAT port" \
		in_snat "$(nsp curl -s -m 5 "http://$WORLD_IP:8000/peer")"
	local out
	out=$(nsp python3 "$SRC_DIR/client.py" udp $WORLD_IP 5353)
	check "UDP from the pod to a world echo server comes back, sent from node IP ($out)" \
		contains "$out" "hello $NODE_IP"
	check "the pod resolved its gateway to the host-side veth's MAC" \
		contains "$(nsp ip neigh show "$pod_gw" dev eth0)" "lladdr $gw_mac"
	local stats
	stats=$(api_body GET /stats)
	# While an XDP program is on its peer the kernel takes the pod's TSO away ("off [fixed]":
	# veth drops its peer's GSO); TX checksum offload stays on.
	log "pod eth0 offloads after the run: $(offloads "$NS_P" eth0)"
	python3 -c '
import json, sys
s = json.loads(sys.argv[1])
w, p = s["worker"], s["sandboxPorts"]["pod1"]
print("# csum_completed=%d frames_copied=%d; drops: %s" % (w["csum_completed"],
      w.get("frames_copied", 0), " ".join("%s=%d" % kv for kv in s["drops"].items() if kv[1])))
print("# sandboxPorts.pod1: " + " ".join("%s=%s" % kv for kv in p.items() if kv[1]))' "$stats"
	check "partial checksums were completed (worker csum_completed > 0)" \
		test "$(stat_of worker csum_completed)" -gt 0
	# veths verify what arrives without a checksum state (the worker's frames): a partial
	# checksum passed on as it was would have been counted here.
	check "no TCP/UDP checksum errors in the pod, client and world namespaces" \
		eq "$(csum_errors "$NS_P") $(csum_errors "$NS_C") $(csum_errors "$NS_W")" "0 0 0"
	check "no frame from the pod carried another source MAC than its guestMAC" \
		eq "$(python3 -c 'import json, sys
print(json.loads(sys.argv[1])["sandboxPorts"]["pod1"]["guest_mac_mismatch"])' "$stats")" 0
}

# Two pods of one CNI network, each registered with the address, gateway and gateway MAC
# its ADD result gives (no node-wide --guest-ip): each answers on its host port with the
# client's address, reaches the world from the node IP, and reaches the other through the
# other's host port (hairpin); a third registration claiming a pod's address is refused;
# all of it again after a restart.
case_ptp2() {
	cni_bed ptp
	local i ns ip gw veth mac gwmac body hp
	for i in 1 2; do
		ns=cvs-pod$i-$TB_ID
		pod_add "$ns"
		tb_server "$ns" 8080 --name "pod$i"
	done
	fp_start
	for i in 1 2; do
		read -r ip gw veth mac gwmac <"$TB_DIR/cvs-pod$i-$TB_ID.pod"
		# pod2's gateway gets a MAC no interface has: what its ARP learns is ours alone.
		if [ $i = 2 ]; then
			gwmac=02:00:00:00:64:02
			echo "$ip $gw $veth $mac $gwmac" >"$TB_DIR/cvs-pod2-$TB_ID.pod"
			ip netns exec "cvs-pod2-$TB_ID" ip neigh flush dev eth0
		fi
		log "pod$i: $ip via $gw ($gwmac) on $veth, its MAC $mac"
		if [ $i = 1 ]; then
			body="{\"iface\":\"$veth\",\"guestMAC\":\"$mac\",\"guestIP\":\"$ip\","
			body+="\"gatewayIP\":\"$gw\",\"gatewayMAC\":\"$gwmac\",\"exposedPorts\":[8080]}"
			eq "$(api PUT "/sandboxes/pod$i" "$body" | tail -n1)" 201 || die "register pod1"
		else
			# The other through the ctl tool, over the API socket.
			nsn "$CUBEVS_FPCTL" --api "unix:$TB_DIR/run/api.sock" sandbox add pod2 \
				--iface "$veth" --guest-mac "$mac" --guest-ip "$ip" --gateway-ip "$gw" \
				--gateway-mac "$gwmac" --port 8080 >/dev/null || die "register pod2"
			check "cubevs-fpctl sandbox show prints pod2's addressing" contains \
				"$(nsn "$CUBEVS_FPCTL" --api "unix:$TB_DIR/run/api.sock" sandbox show pod2)" \
				"guest IP:   $ip"
		fi
		check "GET shows pod$i's own addressing" python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert (j["guestIP"], j["gatewayIP"], j["gatewayMAC"]) == tuple(sys.argv[2:5]), j' \
			"$(api_body GET "/sandboxes/pod$i")" "$ip" "$gw" "$gwmac"
	done
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	pods_work "registered"
	for i in 1 2; do
		read -r ip gw veth mac gwmac <"$TB_DIR/cvs-pod$i-$TB_ID.pod"
		check "pod$i resolved its gateway to its own gatewayMAC ($gwmac)" contains \
			"$(ip netns exec "cvs-pod$i-$TB_ID" ip neigh show "$gw" dev eth0)" "lladdr $gwmac"
	done
	read -r ip gw veth mac gwmac <"$TB_DIR/cvs-pod1-$TB_ID.pod"
	local out
	out=$(api PUT /sandboxes/pod3 "{\"iface\":\"lo\",\"guestIP\":\"$ip\"}")
	check "another registration with pod1's guestIP → 409" eq "$(echo "$out" | tail -n1)" 409
	check "naming pod1" contains "$out" "guestIP $ip is sandbox pod1's"
	out=$(api PUT /sandboxes/pod1 "{\"iface\":\"$veth\",\"guestIP\":\"198.18.64.250\"}")
	check "pod1 with another guestIP → 409, nothing changed" eq "$(echo "$out" | tail -n1)" 409
	check "pod1 kept its exposed port" test -n "$(hostport_of pod1 8080)"
	check "guestIP equal to gatewayIP → 400" eq "$(api PUT /sandboxes/pod4 \
		"{\"iface\":\"lo\",\"guestIP\":\"$gw\",\"gatewayIP\":\"$gw\"}" | tail -n1)" 400
	check "SIGTERM → exit 0" fp_stop
	check "a restart" fp_start
	check "the state file kept pod2's addressing" \
		grep -q "\"guestIP\": \"$(cut -d' ' -f1 "$TB_DIR/cvs-pod2-$TB_ID.pod")\"" \
		"$TB_DIR/state.json"
	pods_work "after a restart"
	check "no TCP/UDP checksum errors in the pods" \
		eq "$(csum_errors cvs-pod1-$TB_ID) $(csum_errors cvs-pod2-$TB_ID)" "0 0"
}

# Each pod: its host port, its egress, the other pod's host port from it.
pods_work() { # what
	local i j hp
	for i in 1 2; do
		j=$((3 - i))
		hp=$(hostport_of "pod$i" 8080)
		check "$1: client → nodeIP:hostPort reaches pod$i, client address kept" \
			eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "pod$i $CLIENT_IP"
		check "$1: pod$i → world leaves from the node IP and a SNAT port" \
			in_snat "$(ip netns exec "cvs-pod$i-$TB_ID" curl -s -m 5 "http://$WORLD_IP:8000/peer")"
		check "$1: pod$i → nodeIP:hostPort of pod$j (hairpin)" \
			eq "$(ip netns exec "cvs-pod$i-$TB_ID" curl -s -m 5 \
				"http://$NODE_IP:$(hostport_of "pod$j" 8080)/name" | cut -d' ' -f1)" "pod$j"
	done
}

# cubevs-fp-cni as a runtime runs a chained plugin: its configuration with the network's name
# and version, our keys, the runtime's portMappings and the previous plugin's result.
plug() { # COMMAND pod-ns|- conf-json-extra [prevResult file]
	local conf prev=${4:-}
	conf=$(python3 - "$2" "$3" "$prev" "$TB_DIR/run/api.sock" "cvs-cni-$TB_ID" <<'PY'
import json, sys
ns, extra, prev, sock, name = sys.argv[1:6]
c = {"cniVersion": "1.0.0", "name": name, "type": "cubevs-fp-cni", "apiSocket": sock}
c.update(json.loads(extra) if extra else {})
if prev:
    c["prevResult"] = json.load(open(prev))
print(json.dumps(c))
PY
)
	echo "$conf" | ip netns exec "$NS_N" env CNI_COMMAND="$1" CNI_CONTAINERID="$2" \
		CNI_NETNS="/var/run/netns/$2" CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni "$CUBEVS_FP_CNI"
}

cni_code() { # output of a failed call: its error code
	python3 -c 'import json,sys; print(json.loads(sys.argv[1])["code"])' "$1" 2>/dev/null
}

pm() { # host-port container-port [protocol]
	echo "{\"runtimeConfig\": {\"portMappings\": [{\"hostPort\": $1, \"containerPort\": $2, \"protocol\": \"${3:-tcp}\"}]}}"
}

case_plugin() {
	cni_bed ptp
	local p1=cvs-pod1-$TB_ID p2=cvs-pod2-$TB_ID p3=cvs-pod3-$TB_ID out rc
	for ns in $p1 $p2 $p3; do
		pod_add "$ns"
		cp "$TB_DIR/$ns-add.json" "$TB_DIR/$ns-prev.json"
	done
	tb_server "$p1" 8080 --name pod1
	tb_server "$p2" 8080 --name pod2
	check "STATUS while cubevs-fp is not running → code 50" \
		eq "$(cni_code "$(plug STATUS - '')")" 50
	fp_start
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	out=$(plug VERSION - '')
	check "VERSION lists 1.1.0" contains "$out" '"1.1.0"'
	check "STATUS → exit 0, nothing printed" eq "$(plug STATUS - ''; echo "rc=$?")" "rc=0"
	out=$(plug ADD $p1 "$(pm 20080 8080)" "$TB_DIR/$p1-prev.json")
	rc=$?
	check "ADD pod1 with portMappings 20080→8080 → exit 0 ($out)" test $rc = 0
	check "and passes the previous result on" python3 -c '
import json, sys
a, b = json.loads(sys.argv[1]), json.load(open(sys.argv[2]))
assert a["ips"] == b["ips"] and a["interfaces"] == b["interfaces"], (a, b)' \
		"$out" "$TB_DIR/$p1-prev.json"
	check "client → nodeIP:20080 (the port the runtime asked) reaches pod1" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:20080/name")" "pod1 $CLIENT_IP"
	check "pod1 → world leaves from the node IP" \
		in_snat "$(ip netns exec $p1 curl -s -m 5 "http://$WORLD_IP:8000/peer")"
	check "CHECK pod1 → exit 0" eq "$(plug CHECK $p1 "$(pm 20080 8080)" \
		"$TB_DIR/$p1-prev.json"; echo "rc=$?")" "rc=0"
	out=$(plug ADD $p2 "$(pm 20080 8080)" "$TB_DIR/$p2-prev.json")
	check "ADD pod2 asking pod1's host port → code 101" eq "$(cni_code "$out")" 101
	check "naming it" contains "$out" "host port 20080 is taken"
	out=$(plug ADD $p2 "$(pm 8080 8080)" "$TB_DIR/$p2-prev.json")
	check "ADD asking a port outside --host-port-range → code 7" eq "$(cni_code "$out")" 7
	check "saying so" contains "$out" "outside --host-port-range"
	check "ADD with a UDP mapping → code 7" \
		eq "$(cni_code "$(plug ADD $p2 "$(pm 20081 53 udp)" "$TB_DIR/$p2-prev.json")")" 7
	check "ADD without prevResult → code 7" eq "$(cni_code "$(plug ADD $p2 "$(pm 20081 8080)")")" 7
	check "ADD with a cniVersion it does not know → code 1" \
		eq "$(cni_code "$(plug ADD $p2 '{"cniVersion": "9.9.9"}' "$TB_DIR/$p2-prev.json")")" 1
	check "a configuration that is not JSON → code 6" eq "$(cni_code "$(echo '{' |
		ip netns exec "$NS_N" env CNI_COMMAND=ADD CNI_CONTAINERID=x CNI_IFNAME=eth0 \
		"$CUBEVS_FP_CNI")")" 6
	out=$(plug ADD $p2 "$(pm 20081 8080)" "$TB_DIR/$p2-prev.json")
	check "ADD pod2 on 20081 → exit 0" test "$(cni_code "$out")" = ""
	check "client → nodeIP:20081 reaches pod2" \
		eq "$(nsc curl -s -m 5 "http://$NODE_IP:20081/name")" "pod2 $CLIENT_IP"
	check "pod2 → nodeIP:20080 reaches pod1 (hairpin)" \
		eq "$(ip netns exec $p2 curl -s -m 5 "http://$NODE_IP:20080/name" | cut -d' ' -f1)" pod1
	check "ADD pod3 without portMappings → exit 0" \
		test "$(cni_code "$(plug ADD $p3 '' "$TB_DIR/$p3-prev.json")")" = ""
	# GC: the runtime has pod1 and pod2 only; pod3's registration is stale.
	out=$(plug GC - "{\"cniVersion\": \"1.1.0\", \"cni.dev/valid-attachments\": [
		{\"containerID\": \"$p1\", \"ifname\": \"eth0\"},
		{\"containerID\": \"$p2\", \"ifname\": \"eth0\"}]}")
	check "GC → exit 0 ($out)" test "$(cni_code "$out")" = ""
	check "GC removed pod3's registration, kept pod1's and pod2's" \
		eq "$(api_body GET /sandboxes | python3 -c '
import json, sys
print(sorted(s["guestIP"] for s in json.load(sys.stdin)["sandboxes"]))')" \
		"$(python3 -c 'import sys; print(sorted(sys.argv[1:]))' \
			"$(cut -d' ' -f1 "$TB_DIR/$p1.pod")" "$(cut -d' ' -f1 "$TB_DIR/$p2.pod")")"
	check "DEL pod2 → exit 0" eq "$(plug DEL $p2 "$(pm 20081 8080)"; echo "rc=$?")" "rc=0"
	check "DEL pod2 again (idempotent) → exit 0" eq "$(plug DEL $p2 ''; echo "rc=$?")" "rc=0"
	check "CHECK pod2 after DEL → code 102" \
		eq "$(cni_code "$(plug CHECK $p2 '' "$TB_DIR/$p2-prev.json")")" 102
	check "pod1 still serves" eq "$(nsc curl -s -m 5 "http://$NODE_IP:20080/name")" \
		"pod1 $CLIENT_IP"
	# pod3 again, then its interface goes: CHECK says so.
	plug ADD $p3 '' "$TB_DIR/$p3-prev.json" >/dev/null
	nsn ip link del "$(cut -d' ' -f3 "$TB_DIR/$p3.pod")"
	sleep 0.5
	out=$(plug CHECK $p3 '' "$TB_DIR/$p3-prev.json")
	check "CHECK after the pod's interface was deleted → code 102" eq "$(cni_code "$out")" 102
	check "saying it is not attached" contains "$out" "is not attached"
	fp_stop
	check "DEL while cubevs-fp is stopped → code 11 (the runtime asks again)" \
		eq "$(cni_code "$(plug DEL $p1 '')")" 11
}

# Many pods through the plugin, chained after ptp or bridge (CNI_PODS, 50): each answers on
# the host port the runtime asked for and reaches the world from the node IP; two of them
# reach each other through their host ports; DEL of all leaves no registration.
case_many() { # ptp|bridge
	local n=${CNI_PODS:-50} i ns out ok_in=0 ok_out=0 failed=0
	export CNI_TYPE=$1
	cni_bed "$1"
	fp_start
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	for i in $(seq "$n"); do
		ns=cvs-p$i-$TB_ID
		pod_add "$ns" >/dev/null
		mkdir -p "$TB_DIR/www$i"
		echo "pod$i" >"$TB_DIR/www$i/name"
		tb_bg ip netns exec "$ns" busybox httpd -f -p 8080 -h "$TB_DIR/www$i"
		out=$(plug ADD "$ns" "$(pm $((20100 + i)) 8080)" "$TB_DIR/$ns-add.json")
		[ -z "$(cni_code "$out")" ] || { failed=$((failed + 1)); log "ADD $ns: $out"; }
	done
	check "$n pods chained after $1: every ADD → exit 0" eq "$failed" 0
	check "$n registrations, all attached" eq "$(api_body GET /sandboxes | python3 -c '
import json, sys
s = json.load(sys.stdin)["sandboxes"]
print(len(s), all(x["attached"] for x in s))')" "$n True"
	for i in $(seq "$n"); do
		[ "$(nsc curl -s -m 5 "http://$NODE_IP:$((20100 + i))/name")" = "pod$i" ] &&
			ok_in=$((ok_in + 1))
		in_snat "$(ip netns exec "cvs-p$i-$TB_ID" curl -s -m 5 "http://$WORLD_IP:8000/peer")" \
			>/dev/null && ok_out=$((ok_out + 1))
	done
	check "every pod answers on its host port ($ok_in of $n)" eq "$ok_in" "$n"
	check "every pod reaches the world from the node IP ($ok_out of $n)" eq "$ok_out" "$n"
	check "pod1 → nodeIP:hostPort of pod$n (hairpin)" eq "$(ip netns exec "cvs-p1-$TB_ID" \
		curl -s -m 5 "http://$NODE_IP:$((20100 + n))/name")" "pod$n"
	failed=0
	for i in $(seq "$n"); do
		out=$(plug DEL "cvs-p$i-$TB_ID" '')
		[ -z "$(cni_code "$out")" ] || failed=$((failed + 1))
	done
	check "DEL of every pod → exit 0, no registration left" \
		eq "$failed $(api_body GET /sandboxes | python3 -c '
import json, sys
print(len(json.load(sys.stdin)["sandboxes"]))')" "0 0"
}

# A real runtime: containerd (Debian's, an instance of the bed's own) runs a container from a
# root file system made here (busybox; no registry) with 'ctr run --cni'. ctr reads its CNI
# configuration from /etc/cni/net.d and the plugins from /opt/cni/bin only: it runs in a
# mount namespace of its own where an overlay puts the bed's conflist there and a tmpfs the
# plugins, so nothing of the node's changes. ctr has no flag for port mappings: the mapping
# reaches cubevs-fp-cni as runtimeConfig.portMappings written in the conflist, which libcni
# hands to a plugin as it is (no capability declared, so nothing replaces it).
case_containerd() {
	command -v containerd >/dev/null && command -v ctr >/dev/null && command -v runc >/dev/null ||
		{ echo "SKIP: no containerd, ctr or runc (Debian's containerd package)"; exit 77; }
	cni_bed ptp
	local d=$TB_DIR/ctd n out
	mkdir -p "$d/root" "$d/state" "$d/etc/cni/net.d" "$d/work" "$d/bin" "$d/fs/bin" \
		"$d/fs/proc" "$d/fs/sys" "$d/fs/dev" "$d/fs/tmp" "$d/fs/www"
	cp "$(command -v busybox)" "$d/fs/bin/busybox"
	echo ctr1 >"$d/fs/www/name"
	for n in ptp host-local loopback; do ln -s "$CNI_PATH/$n" "$d/bin/$n"; done
	ln -s "$CUBEVS_FP_CNI" "$d/bin/cubevs-fp-cni"
	cat >"$d/etc/cni/net.d/10-cubevs.conflist" <<-EOF
	{"cniVersion": "1.0.0", "name": "cvs-ctd-$TB_ID", "plugins": [
	 {"type": "ptp", "ipMasq": false, "ipam": {"type": "host-local",
	  "subnet": "198.18.64.0/24", "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$d/ipam"}},
	 {"type": "cubevs-fp-cni", "apiSocket": "$TB_DIR/run/api.sock",
	  "runtimeConfig": {"portMappings": [{"hostPort": 20090, "containerPort": 8080,
	                                      "protocol": "tcp"}]}}]}
	EOF
	cat >"$d/config.toml" <<-EOF
	version = 2
	root = "$d/root"
	state = "$d/state"
	disabled_plugins = ["io.containerd.grpc.v1.cri"]
	[grpc]
	  address = "$d/ctd.sock"
	EOF
	# In the node's own namespaces: 'ip netns exec' would hide the cgroup mounts runc needs.
	# It opens no port (the CRI plugin is off); the container's namespace is runc's.
	tb_bg containerd --config "$d/config.toml" >"$d/containerd.log" 2>&1
	for n in $(seq 50); do [ -S "$d/ctd.sock" ] && break; sleep 0.1; done
	trap 'ctd ctr -n default task kill -s KILL ctr1 >/dev/null 2>&1; sleep 0.5
		ctd ctr task rm -f ctr1 >/dev/null 2>&1; ctd ctr container rm ctr1 >/dev/null 2>&1
		pod_teardown; tb_teardown' EXIT
	fp_start
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	out=$(ctd ctr run -d --cni --rootfs "$d/fs" ctr1 /bin/busybox httpd -f -p 8080 -h /www 2>&1)
	check "ctr run --cni → exit 0 ($out)" test $? = 0
	check "the container is registered with an address of its own" python3 -c '
import json, sys
s = json.loads(sys.argv[1])["sandboxes"]
assert len(s) == 1 and s[0]["guestIP"].startswith("198.18.64.") and s[0]["attached"], s' \
		"$(api_body GET /sandboxes)"
	for n in $(seq 30); do
		out=$(nsc curl -s -m 2 "http://$NODE_IP:20090/name")
		[ "$out" = ctr1 ] && break
		sleep 0.2
	done
	check "client → nodeIP:20090 reaches the container's httpd on 8080" eq "$out" ctr1
}

# ctr of the bed's containerd, where ctr finds the bed's CNI configuration and plugins.
ctd() {
	local d=$TB_DIR/ctd
	ip netns exec "$NS_N" unshare -m --propagation private sh -c '
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/etc,workdir=$1/work" /etc &&
		mount -t tmpfs cvs-cni /opt && mkdir -p /opt/cni && ln -s "$1/bin" /opt/cni/bin &&
		shift && exec "$@"' ctd "$d" "$1" --address "$d/ctd.sock" "${@:2}"
}

case_plugin-ptp50() { case_many ptp; }
case_plugin-bridge50() { case_many bridge; }

"case_$1"
tb_done
