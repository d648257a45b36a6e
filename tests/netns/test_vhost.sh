#!/bin/bash
# Real microVMs as sandboxes: one on a vhost-user port, one on a TAP (AF_XDP), through the
# namespace test bed. QEMU and the guest come from ../shared/tools/microvm (its README); the
# case is skipped, with the reason, where that tool or QEMU is missing.
# Usage: test_vhost.sh CASE (vms | tapback | workers | client | abuse | jumbo | ipv6)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib6.sh"

ROOT=$(cd "$SRC_DIR/../.." && pwd)
MVM_TOOL=${MVM_TOOL:-$ROOT/../shared/tools/microvm/microvm.sh}
MVM_DIR=${MVM_DIR:-/tmp/cvs-microvm}
BLOB=20971520

skip() { echo "SKIP: $*"; exit 77; }

mvm_ready() {
	[ -x "$MVM_TOOL" ] || skip "no microVM tool at $MVM_TOOL (../shared/tools/microvm)"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 missing (tools/deps.sh)"
	# The guest image is built once per machine (about 30 s) and kept in MVM_DIR.
	if [ ! -f "$MVM_DIR/initramfs.cpio.gz" ]; then
		"$MVM_TOOL" build "$MVM_DIR" >"$TB_DIR/mvm-build.log" 2>&1 ||
			skip "microVM image could not be built: $(tail -n 2 "$TB_DIR/mvm-build.log")"
	fi
}

# The guest runs what a test asks through a CGI program on its own httpd, so every command
# reaches it over the data path under test. It also makes the 20 MB blob and prints its hash.
GUEST_CMD='mkdir -p /www/cgi-bin; printf "#!/bin/sh\necho Content-Type: text/plain; echo; '\
'echo \$QUERY_STRING | base64 -d >/tmp/q; timeout 60 sh /tmp/q 2>&1\n" >/www/cgi-bin/x; '\
'chmod +x /www/cgi-bin/x; dd if=/dev/urandom of=/www/blob bs=1M count=20 2>/dev/null; '\
'echo BLOB $(sha256sum /www/blob)'

vm_boot() { # id net-options...
	local id=$1 pid
	shift
	# --offload: virtio-net as the VMM offers it (checksum and TSO offloads on, both ways), and
	# the guest keeps its own defaults; VM_OFFLOAD=0 negotiates them off for a comparison.
	local off=--offload
	[ "${VM_OFFLOAD:-1}" = 0 ] && off=
	nsn "$MVM_TOOL" run "$MVM_DIR" "$@" $off --id "$id" --mem 192 --cmd "$GUEST_CMD" --daemon \
		--wait 120 --log "$TB_DIR/$id.log" --pidfile "$TB_DIR/$id.pid" >/dev/null ||
		{ tail -n 20 "$TB_DIR/$id.log"; die "VM $id did not boot"; }
	pid=$(cat "$TB_DIR/$id.pid")
	TB_PIDS+=("$pid")
	# The blob exists once the command printed its hash.
	for _ in $(seq 300); do
		grep -q '^BLOB ' "$TB_DIR/$id.log" && return 0
		sleep 0.2
	done
	die "VM $id did not make its blob"
}

vm_stop() { # id
	[ -f "$TB_DIR/$1.pid" ] && "$MVM_TOOL" stop "$TB_DIR/$1.pid" >/dev/null 2>&1
	rm -f "$TB_DIR/$1.pid"
}

# Run a shell command in a guest through its exposed port from the client namespace.
gx() { # host-port command
	nsc curl -s -m 90 "http://$NODE_IP:$1/cgi-bin/x?$(printf '%s' "$2" | base64 -w0)"
}

# The feature word GET reports for a vhost-user sandbox.
vhost_features() { api_body GET "/sandboxes/$1" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["vhostUser"].get("features", "0"))'; }

# MRG_RXBUF (15) and VERSION_1 (32) negotiated; no CSUM (0), GUEST_CSUM (1), TSO/UFO/ECN
# (7-14) and no MQ (22).
features_ok() { # hex
	local f=$(($1))
	(( f >> 15 & 1 && f >> 32 & 1 && !(f & 0x3) && !(f >> 7 & 0xff) && !(f >> 22 & 1) )) ||
		{ echo "#   features $1"; return 1; }
}

sbx_ip() { api_body GET "/sandboxes/$1" | python3 -c \
	'import json,sys; print(json.load(sys.stdin)["sandboxIP"])'; }
buffers() { api_body GET /stats | python3 -c "import json,sys; print(json.load(sys.stdin)['buffers']['$1'])"; }
vhost_stat() { stat_of vhost "$1"; }
port_stat() { api_body GET /stats | python3 -c \
	"import json,sys; print(json.load(sys.stdin)['sandboxPorts']['$1']['$2'])"; }

in_snat() { # "ip port" line
	local ip=${1%% *} port=${1##* }
	[ "$ip" = "$NODE_IP" ] && [ "$port" -ge 30000 ] && [ "$port" -le 65535 ] ||
		{ echo "#   '$1' is not $NODE_IP:<30000-65535>"; return 1; }
}

# Until the guest answers through its host port again (after a restart of either side).
wait_http() { # host-port id
	for _ in $(seq 150); do
		[ "$(nsc curl -s -m 2 "http://$NODE_IP:$1/id")" = "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

# Buffers return to idle once traffic stops: the vhost pool holds nothing at rest.
wait_idle() {
	for _ in $(seq 50); do
		[ "$(buffers vhostMbufsInUse)" = 0 ] && return 0
		sleep 0.1
	done
	echo "#   vhostMbufsInUse=$(buffers vhostMbufsInUse)"
	return 1
}

wait_stat() { # vhost-counter value: until the counter is above value
	for _ in $(seq 150); do
		[ "$(vhost_stat "$1")" -gt "$2" ] && return 0
		sleep 0.2
	done
	echo "#   $1=$(vhost_stat "$1")"
	return 1
}

wait_refused() { # n
	for _ in $(seq 50); do
		[ "$(vhost_stat refused)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "#   refused=$(vhost_stat refused)"
	return 1
}

bed() { # cubevs-fp options
	tb_setup
	mvm_ready
	tb_add_world
	tb_server "$NS_W" 8000 --name world
	VSOCK=$TB_DIR/vhost/vmv.sock
	nsn ip tuntap add dev vt2 mode tap
	nsn ip link set vt2 up
	offloads_default "$NS_N" vt2
	fp_start "$@"
	eq "$(api_status PUT /sandboxes/vmv "{\"vhostUser\":{\"socket\":\"$VSOCK\",\"mode\":\"server\"},\"exposedPorts\":[8080]}")" 201 ||
		die "register vmv"
	eq "$(register vmt vt2 '[8080]' | tail -n1)" 201 || die "register vmt"
	HPV=$(hostport_of vmv 8080)
	HPT=$(hostport_of vmt 8080)
	vm_boot vmv --vhost-user "$VSOCK"
	vm_boot vmt --tap vt2
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
}

case_vms() {
	bed
	local id hp sha
	check "the vhost-user port runs a device" eq "$(vhost_stat running)" 1
	check "GET shows the vhost-user port and its connected VMM" contains \
		"$(api_body GET /sandboxes/vmv)" \
		"\"vhostUser\":{\"socket\":\"$VSOCK\",\"mode\":\"server\",\"connected\":true,\"features\":\"0x"
	check "the negotiated features carry mergeable buffers and no offload" \
		features_ok "$(vhost_features vmv)"
	for id in vmv vmt; do
		hp=$([ $id = vmv ] && echo "$HPV" || echo "$HPT")
		check "world → $id through its host port" eq \
			"$(nsc curl -s -m 10 "http://$NODE_IP:$hp/id")" "$id"
		check "$id → world: the server sees the node IP and a SNAT port" \
			in_snat "$(gx "$hp" "wget -q -O - http://$WORLD_IP:8000/peer")"
		check "host → $id through cube-dev" eq \
			"$(nsn curl -s -m 10 "http://$(sbx_ip $id):8080/id")" "$id"
		sha=$(sed -n 's/^BLOB \([0-9a-f]*\) .*/\1/p' "$TB_DIR/$id.log" | tail -n1)
		check "20 MB from $id to the world, sha256 matches" eq \
			"$(nsc curl -s -m 120 "http://$NODE_IP:$hp/blob" | sha256sum | cut -d' ' -f1)" \
			"$sha"
		check "20 MB from the world to $id, sha256 matches" eq \
			"$(gx "$hp" "wget -q -O - 'http://$WORLD_IP:8000/blob?n=$BLOB' | sha256sum" |
			   cut -d' ' -f1)" "$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $BLOB)"
	done
	check "hairpin vhost-user → AF_XDP (vmv fetches vmt's host port)" eq \
		"$(gx "$HPV" "wget -q -O - http://$NODE_IP:$HPT/id")" vmt
	check "hairpin AF_XDP → vhost-user (vmt fetches vmv's host port)" eq \
		"$(gx "$HPT" "wget -q -O - http://$NODE_IP:$HPV/id")" vmv
	grep -h '^VM NET' "$TB_DIR/vmv.log" "$TB_DIR/vmt.log" | sed 's/^/#   /'
	check "the TAP guest sent with checksum offload, and its partial checksums were completed" \
		test "$(grep -c 'VM NET.*tx-checksumming: on' "$TB_DIR/vmt.log")" -ge 1 -a \
		"$(stat_of worker csum_completed)" -gt 1000
	check "vmv's port counters saw the traffic" test "$(port_stat vmv tx_bytes)" -gt $BLOB
	check "vhost mbufs back to idle after the transfers" wait_idle

	# A guest driver reset (what a reboot does to the device): the device stops and starts.
	local started=$(vhost_stat started) conns=$(vhost_stat connections)
	gx "$HPV" "(sleep 1; d=\$(basename \$(readlink /sys/class/net/eth0/device)); \
		echo \$d >/sys/bus/virtio/drivers/virtio_net/unbind; sleep 1; \
		echo \$d >/sys/bus/virtio/drivers/virtio_net/bind; sleep 1; ip link set eth0 up; \
		ip addr add $GUEST_IP/30 dev eth0; ip route add default via $GW_IP) \
		>/tmp/reset.log 2>&1 </dev/null &" >/dev/null
	check "the reset stopped and started the device" wait_stat started "$started"
	check "after a guest driver reset vmv answers again" wait_http "$HPV" vmv
	gx "$HPV" "cat /tmp/reset.log" | sed 's/^/#   guest: /'
	check "after the reset one device runs, the old one stopped" eq \
		"$(vhost_stat running) $(( $(vhost_stat stopped) >= 1 ))" "1 1"
	check "the reset kept QEMU's connection (no new one)" eq "$(vhost_stat connections)" \
		"$conns"
	check "20 MB from vmv after the reset, sha256 matches" eq \
		"$(nsc curl -s -m 120 "http://$NODE_IP:$HPV/blob" | sha256sum | cut -d' ' -f1)" \
		"$(sed -n 's/^BLOB \([0-9a-f]*\) .*/\1/p' "$TB_DIR/vmv.log" | tail -n1)"
	check "vhost mbufs back to idle after the reset" wait_idle

	# The VMM goes and comes back on the same socket.
	vm_stop vmv
	check "with the VMM gone no device runs" eq "$(vhost_stat running)" 0
	check "GET says no VMM is connected" contains "$(api_body GET /sandboxes/vmv)" \
		"\"mode\":\"server\",\"connected\":false}"
	check "vhost mbufs at idle with the VMM gone" wait_idle
	check "frames for the gone guest are counted, not kept" \
		bash -c "! ip netns exec $NS_C curl -s -m 2 http://$NODE_IP:$HPV/id"
	vm_boot vmv --vhost-user "$VSOCK"
	check "after a VMM restart vmv answers" wait_http "$HPV" vmv
	check "after a VMM restart vmv reaches the world" \
		in_snat "$(gx "$HPV" "wget -q -O - http://$WORLD_IP:8000/peer")"

	# cubevs-fp restarts: QEMU (client of our socket) reconnects by itself.
	cp "$TB_DIR/fp.log" "$TB_DIR/fp-first.log"
	fp_stop
	fp_start
	check "after a cubevs-fp restart vmv answers again (QEMU reconnected)" wait_http "$HPV" vmv
	check "after a cubevs-fp restart vmt answers again" wait_http "$HPT" vmt
	check "vmv's registration came back from the state file" contains \
		"$(api_body GET /sandboxes/vmv)" "\"attached\":true"
	check "hairpin both ways after the restart" eq \
		"$(gx "$HPV" "wget -q -O - http://$NODE_IP:$HPT/id") $(gx "$HPT" \
		"wget -q -O - http://$NODE_IP:$HPV/id")" "vmt vmv"
	check "vhost mbufs at idle after the restart" wait_idle

	# kill -9 leaves our server socket behind: the next instance replaces it.
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	check "the stale socket is still there after kill -9" test -S "$VSOCK"
	fp_start
	check "after kill -9 and a start vmv answers again" wait_http "$HPV" vmv
	check "cubevs-fp still runs" kill -0 "$FP_PID"
	vm_stop vmv
	vm_stop vmt
	tb_done
}

# Two workers: vmv (slot 0) belongs to worker 0, vmt (slot 1) to worker 1, so every flow
# between them and many to the world cross workers through the handoff inboxes.
case_workers() {
	export FP_EAL="--lcores 0@0,1@1,2@0 ${FP_EAL_EXTRA:-}"
	bed --workers 2 --world-queues 1 --idle-sleep-us 20
	local id hp
	check "two workers run" bash -c "grep -q '2 worker(s)' $TB_DIR/fp.log"
	for id in vmv vmt; do
		hp=$([ $id = vmv ] && echo "$HPV" || echo "$HPT")
		check "world → $id" eq "$(nsc curl -s -m 10 "http://$NODE_IP:$hp/id")" "$id"
		check "$id → world" in_snat "$(gx "$hp" "wget -q -O - http://$WORLD_IP:8000/peer")"
		check "host → $id" eq "$(nsn curl -s -m 10 "http://$(sbx_ip $id):8080/id")" "$id"
	done
	check "hairpin vhost-user → AF_XDP across workers" eq \
		"$(gx "$HPV" "wget -q -O - http://$NODE_IP:$HPT/id")" vmt
	check "hairpin AF_XDP → vhost-user across workers" eq \
		"$(gx "$HPT" "wget -q -O - http://$NODE_IP:$HPV/id")" vmv
	check "frames were handed between workers" test "$(stat_of worker handoffs)" -gt 0
	check "vhost mbufs at idle" wait_idle
	vm_stop vmv
	vm_stop vmt
	tb_done
}

# Client mode: QEMU owns the socket, cubevs-fp connects and reconnects when QEMU restarts.
case_client() {
	tb_setup
	mvm_ready
	tb_add_world
	VSOCK=$TB_DIR/vmc.sock
	fp_start
	nsn "$MVM_TOOL" run "$MVM_DIR" --vhost-user "$VSOCK" --server --id vmc --mem 192 \
		--cmd "$GUEST_CMD" --daemon --log "$TB_DIR/vmc.log" --pidfile "$TB_DIR/vmc.pid" \
		>/dev/null 2>&1 &
	for _ in $(seq 100); do [ -S "$VSOCK" ] && break; sleep 0.1; done
	eq "$(api_status PUT /sandboxes/vmc "{\"vhostUser\":{\"socket\":\"$VSOCK\",\"mode\":\"client\"},\"exposedPorts\":[8080]}")" 201 ||
		die "register vmc"
	HPC=$(hostport_of vmc 8080)
	for _ in $(seq 100); do [ -f "$TB_DIR/vmc.pid" ] && break; sleep 0.2; done
	TB_PIDS+=("$(cat "$TB_DIR/vmc.pid")")
	check "client mode: world → vmc" wait_http "$HPC" vmc
	vm_stop vmc
	nsn "$MVM_TOOL" run "$MVM_DIR" --vhost-user "$VSOCK" --server --id vmc --mem 192 \
		--daemon --log "$TB_DIR/vmc.log" --pidfile "$TB_DIR/vmc.pid" >/dev/null 2>&1 &
	for _ in $(seq 100); do [ -f "$TB_DIR/vmc.pid" ] && break; sleep 0.2; done
	TB_PIDS+=("$(cat "$TB_DIR/vmc.pid")")
	check "client mode: cubevs-fp reconnected to the restarted VMM" wait_http "$HPC" vmc
	fp_stop
	fp_start
	check "client mode: after a cubevs-fp restart it connects to the VMM again" \
		wait_http "$HPC" vmc
	check "client mode: GET shows the connected VMM" contains \
		"$(api_body GET /sandboxes/vmc)" "\"mode\":\"client\",\"connected\":true"
	# kill -9: QEMU (the server) sees the socket close mid-flight; the next cubevs-fp
	# connects again and the rings start over from what the guest left in them.
	kill -KILL "$FP_PID"
	wait "$FP_PID" 2>/dev/null
	FP_PID=
	check "client mode: QEMU survives cubevs-fp's kill -9" kill -0 "$(cat "$TB_DIR/vmc.pid")"
	fp_start
	check "client mode: after kill -9 and a start it connects to the VMM again" \
		wait_http "$HPC" vmc
	check "client mode: GET shows the VMM connected again after kill -9" contains \
		"$(api_body GET /sandboxes/vmc)" "\"mode\":\"client\",\"connected\":true"
	check "vhost mbufs at idle" wait_idle
	vm_stop vmc
	tb_done
}

# Bad input on a vhost-user socket: garbage, a disconnect mid-negotiation, rings outside the
# memory table. Each connection is refused or reset and counted; nothing crashes.
case_abuse() {
	tb_setup
	VSOCK=$TB_DIR/vhost/bad.sock
	fp_start
	eq "$(api_status PUT /sandboxes/bad "{\"vhostUser\":{\"socket\":\"$VSOCK\"},\"exposedPorts\":[8080]}")" 201 ||
		die "register bad"
	local out
	out=$(python3 "$SRC_DIR/vhostabuse.py" "$VSOCK")
	check "garbage closes the connection ($out)" contains "$out" "garbage=closed"
	check "a table of 9999 regions closes it" contains "$out" "too_many_regions=closed"
	check "rings outside the memory table never make a device" \
		bash -c "[[ '$out' =~ rings_outside=(closed|kept) ]]"
	check "all four connections counted as refused" wait_refused 4
	check "no device ever ran" eq "$(vhost_stat started)" 0
	check "cubevs-fp still runs and answers" eq "$(api_status GET /sandboxes/bad)" 200
	check "vhost mbufs at idle" wait_idle
	check "DELETE removes the socket" eq "$(api_status DELETE /sandboxes/bad)" 204
	check "the socket file is gone" test ! -e "$VSOCK"
	tb_done
}

# QEMU as a VMM configured with host_mtu (VIRTIO_NET_F_MTU): a wrapper first in PATH adds it
# to the virtio-net device the microVM tool asks for (the tool has no option for it).
qemu_host_mtu() { # mtu
	local real
	real=$(command -v qemu-system-x86_64)
	mkdir -p "$TB_DIR/qbin"
	printf '%s\n' '#!/bin/bash' 'a=()' 'for x in "$@"; do' \
		"	case \$x in virtio-net-pci,*) x+=\",host_mtu=$1\" ;; esac" \
		'	a+=("$x")' 'done' "exec \"$real\" \"\${a[@]}\"" >"$TB_DIR/qbin/qemu-system-x86_64"
	chmod +x "$TB_DIR/qbin/qemu-system-x86_64"
	export PATH=$TB_DIR/qbin:$PATH
}

mtu_of() { api_body GET "/sandboxes/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("mtu"))'; }

# The guest's average frame one way (rx or tx), from its own counters.
guest_avg() { # host-port rx|tx
	gx "$1" "echo \$((\$(cat /sys/class/net/eth0/statistics/$2_bytes) / \$(cat /sys/class/net/eth0/statistics/$2_packets)))"
}

# A VMM that gives its guest MTU 9000 (QEMU host_mtu): the vhost-user port learns it when the
# device starts, the guest is served at 9000, and its jumbo frames go both ways through a world
# of 9000 as mbuf chains, 20 MB each way, none clamped or dropped.
case_jumbo() {
	tb_setup
	mvm_ready
	tb_add_world
	local sha
	tb_world_mtu 9000
	tb_server "$NS_W" 8000 --name world
	qemu_host_mtu 9000
	VSOCK=$TB_DIR/vhost/vmv.sock
	fp_start
	eq "$(api_status PUT /sandboxes/vmv "{\"vhostUser\":{\"socket\":\"$VSOCK\",\"mode\":\"server\"},\"exposedPorts\":[8080]}")" 201 ||
		die "register vmv"
	HPV=$(hostport_of vmv 8080)
	check "before its VMM comes, GET shows virtio's 1500" eq "$(mtu_of vmv)" 1500
	vm_boot vmv --vhost-user "$VSOCK"
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	check "the VMM negotiated VIRTIO_NET_F_MTU" test $(( $(vhost_features vmv) >> 3 & 1 )) = 1
	check "GET shows the guest served at 9000" eq "$(mtu_of vmv)" 9000
	check "the guest's eth0 took 9000 from its VMM" eq \
		"$(gx "$HPV" "cat /sys/class/net/eth0/mtu")" 9000
	sha=$(sed -n 's/^BLOB \([0-9a-f]*\) .*/\1/p' "$TB_DIR/vmv.log" | tail -n1)
	check "20 MB from the guest to the world, sha256 matches" eq \
		"$(nsc curl -s -m 120 "http://$NODE_IP:$HPV/blob" | sha256sum | cut -d' ' -f1)" "$sha"
	check "20 MB from the world to the guest, sha256 matches" eq \
		"$(gx "$HPV" "wget -q -O - 'http://$WORLD_IP:8000/blob?n=$BLOB' | sha256sum" |
		   cut -d' ' -f1)" "$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $BLOB)"
	check "the guest sent jumbo frames (average $(guest_avg "$HPV" tx) bytes)" \
		test "$(guest_avg "$HPV" tx)" -gt 4000
	check "and received them (average $(guest_avg "$HPV" rx) bytes)" \
		test "$(guest_avg "$HPV" rx)" -gt 4000
	check "no MSS was clamped: the whole path is 9000" eq "$(stat_of worker mss_clamped)" 0
	check "no frame dropped as too big" eq "$(stat_of drops too_big)" 0
	check "vhost mbufs back to idle" wait_idle
	vm_stop vmv
	tb_done
}

# Real guests over IPv6 (issue 34): a microVM on a vhost-user port and one on a TAP, their
# kernels as Debian ships them, take their address and default route from our router
# advertisement and reach the IPv6 world host through NAT66, IPv4 beside it.
case_ipv6() {
	tb_setup
	mvm_ready
	tb_add_world
	ipv6_bed
	tb_server "$NS_W" 8000 --name world --ipv6 --tcp-echo 7000
	VSOCK=$TB_DIR/vhost/vmv.sock
	nsn ip tuntap add dev vt2 mode tap
	nsn ip link set vt2 up
	offloads_default "$NS_N" vt2
	fp_start --node-ip6 $NODE_IP6 --guest-prefix6 $GUEST_PFX6
	eq "$(api_status PUT /sandboxes/vmv "{\"vhostUser\":{\"socket\":\"$VSOCK\",\"mode\":\"server\"},\"exposedPorts\":[8080]}")" 201 ||
		die "register vmv"
	eq "$(register vmt vt2 '[8080]' | tail -n1)" 201 || die "register vmt"
	HPV=$(hostport_of vmv 8080)
	HPT=$(hostport_of vmt 8080)
	nsn ping -6 -c 1 -W 2 -q $ROUTER6_N >/dev/null
	vm_boot vmv --vhost-user "$VSOCK"
	vm_boot vmt --tap vt2
	nsn ping -c 1 -W 2 -q $CLIENT_IP >/dev/null
	local id hp a
	for id in vmv vmt; do
		hp=$([ $id = vmv ] && echo "$HPV" || echo "$HPT")
		# SLAAC and duplicate address detection take a second or two after link up.
		a=$(gx "$hp" 'for i in $(seq 50); do a=$(ip -6 addr show dev eth0 scope global |
			grep -v tentative | sed -n "s/.*inet6 \([0-9a-f:]*\).*/\1/p"); \
			[ -n "$a" ] && { echo $a; break; }; sleep 0.1; done')
		check "$id formed an address in $GUEST_PFX6 from our advertisement ($a)" \
			test "${a#2001:2:0:6:}" != "$a" -a -n "$a"
		check "$id took its default route through fe80::1" \
			contains "$(gx "$hp" 'ip -6 route show default')" "via fe80::1"
		check "$id pings the world host over IPv6" \
			contains "$(gx "$hp" "ping -6 -c 2 -W 2 $WORLD_IP6")" " 0% packet loss"
		check "$id → world over IPv6: the server sees the node's IPv6 address and a SNAT port" \
			in_snat6 "$(gx "$hp" "wget -q -O - http://[$WORLD_IP6]:8000/peer")"
		check "20 MB from the world to $id over IPv6, sha256 matches" eq \
			"$(gx "$hp" "wget -q -O - 'http://[$WORLD_IP6]:8000/blob?n=$BLOB' | sha256sum" |
			   cut -d' ' -f1)" "$(python3 "$SRC_DIR/sbxserver.py" --blob-sha $BLOB)"
		# 4 MB of its blob out to the world host's echo and back: the upload leaves the TAP
		# guest in TSO frames (offloads as the VMM offers them).
		check "4 MB from $id to the world over IPv6 and echoed back, sha256 matches" eq \
			"$(gx "$hp" "head -c 4194304 /www/blob | nc -w 2 $WORLD_IP6 7000 | sha256sum" |
			   cut -d' ' -f1)" \
			"$(gx "$hp" "head -c 4194304 /www/blob | sha256sum" | cut -d' ' -f1)"
		check "$id's IPv4 egress works beside it" \
			in_snat "$(gx "$hp" "wget -q -O - http://$WORLD_IP:8000/peer")"
	done
	check "the guests' flows went through NAT66 (egress6_flows $(stat_of worker egress6_flows))" \
		test "$(stat_of worker egress6_flows)" -ge 6
	check "nothing of theirs was dropped as unknown IPv6 or spoofed" \
		eq "$(stat_of drops guest_spoof)" 0
	check "vhost mbufs back to idle" wait_idle
	vm_stop vmv
	vm_stop vmt
	tb_done
}

# The TAP case of a VMM going away and coming back (issue 21): the VM stops, its TAP is
# deleted and made again, the VM boots again on it, and its exposed port serves without any
# API call; the vhost-user VM beside it never notices.
case_tapback() {
	bed
	local n gone=
	check "before: world → vmt" eq "$(nsc curl -s -m 10 "http://$NODE_IP:$HPT/id")" vmt
	vm_stop vmt
	nsn ip link del vt2
	for n in $(seq 60); do
		[ "$(api_body GET /sandboxes/vmt | python3 -c \
			'import json,sys; print(json.load(sys.stdin)["attached"])')" = False ] &&
			{ gone=1; break; }
		sleep 0.05
	done
	check "TAP deleted: vmt shows attached false" test -n "$gone"
	check "TAP deleted: with the reason" contains "$(api_body GET /sandboxes/vmt)" "disappeared"
	check "TAP deleted: vmv keeps serving" eq "$(nsc curl -s -m 10 "http://$NODE_IP:$HPV/id")" vmv
	nsn ip tuntap add dev vt2 mode tap
	nsn ip link set vt2 up
	offloads_default "$NS_N" vt2
	rm -f "$TB_DIR/vmt.log"
	vm_boot vmt --tap vt2
	check "TAP made again, VM booted again: world → vmt, no API call" \
		eq "$(nsc curl -s -m 10 "http://$NODE_IP:$HPT/id")" vmt
	check "and GET says attached" contains "$(api_body GET /sandboxes/vmt)" '"attached":true'
	check "vmv still serves" eq "$(nsc curl -s -m 10 "http://$NODE_IP:$HPV/id")" vmv
	tb_done
}

case "${1:-}" in
vms) case_vms ;;
tapback) case_tapback ;;
workers) case_workers ;;
client) case_client ;;
abuse) case_abuse ;;
jumbo) case_jumbo ;;
ipv6) case_ipv6 ;;
*) echo "usage: $0 vms|tapback|workers|client|abuse|jumbo|ipv6"; exit 2 ;;
esac
