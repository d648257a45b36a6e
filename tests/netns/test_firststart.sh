#!/bin/bash
# First start on a fresh machine: the commands of the README's "Running it" block, exactly as
# written there (only cubevs-fp's path and the interface name are substituted), in a node
# namespace whose kernel ephemeral range is Debian's default, with /var/lib and /run empty and
# no state directory. They must bring the node up ready, with /var/lib/cubevs-fp created 0700,
# and a second start must find it again.
#   test_firststart.sh              the README's block
#   test_firststart.sh unit FILE    the command line the systemd unit FILE runs (ExecStart=
#                                   with its Environment= defaults), without systemd
#
# The empty /var/lib and /run are temporary directories bind-mounted in a private mount
# namespace of cubevs-fp alone (unshare -m): the machine's own /var/lib/cubevs-fp and /run are
# never touched, and the test checks that too.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
README=${README:-$SRC_DIR/../../README.md}
REAL_STATE_DIR=/var/lib/cubevs-fp

# The shell lines of the first ```sh block after "## Running it", without comments.
readme_commands() {
	awk '/^## Running it/ { sect = 1; next }
	     sect && /^```sh/ { code = 1; next }
	     code && /^```/ { exit }
	     code && !/^[ \t]*(#|$)/ { print }' "$README"
}

# ExecStart= of a unit with its Environment= defaults expanded as systemd does ($VAR splits
# into words, ${VAR} is one word), as one shell-quoted line.
unit_command() { # unit file
	python3 - "$1" <<'PY'
import re, shlex, sys
env, cmd = {}, None
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("Environment="):
        for kv in shlex.split(line[len("Environment="):]):
            k, v = kv.split("=", 1)
            env[k] = v
    elif line.startswith("ExecStart="):
        cmd = line[len("ExecStart="):]
words = []
for w in shlex.split(cmd):
    m = re.fullmatch(r"\$(\w+)", w)
    if m:
        words += env.get(m.group(1), "").split()
    else:
        words.append(re.sub(r"\$\{(\w+)\}", lambda m: env.get(m.group(1), ""), w))
print(" ".join(shlex.quote(w) for w in words))
PY
}

# Run the README's lines in the node namespace, on the fresh /var/lib and /run; cubevs-fp is
# the last line and is exec'd, so $! is its PID.
readme_start() {
	: >"$TB_DIR/fp.log"
	ip netns exec "$NS_N" unshare -m --propagation private bash -c '
		set -e
		mount --bind "$1" /var/lib
		mount --bind "$2" /run
		source "$3"' fresh "$TB_DIR/var-lib" "$TB_DIR/run" "$TB_DIR/readme.sh" \
		>"$TB_DIR/fp.log" 2>&1 &
	FP_PID=$!
	TB_PIDS+=($FP_PID)
	local n
	for n in $(seq 150); do
		grep -q 'ready:' "$TB_DIR/fp.log" && return 0
		if ! kill -0 "$FP_PID" 2>/dev/null; then
			cat "$TB_DIR/fp.log"
			die "$SOURCE: cubevs-fp exited before it was ready"
		fi
		sleep 0.1
	done
	cat "$TB_DIR/fp.log"
	die "$SOURCE: cubevs-fp was not ready after 15 s"
}

mode_of() { stat -c '%a %U' "$1" 2>&1; }

tb_setup
tb_add_sandbox 1
tb_sandbox_server 1 8080
real_before=$(ls -ld --time-style=full-iso "$REAL_STATE_DIR" 2>&1)

if [ "${1:-}" = unit ]; then
	# The unit file of this checkout unless one is named.
	UNIT=${2:-$(dirname "${BASH_SOURCE[0]}")/../../docs/cubevs-fp.service}
	lines=("$(unit_command "$UNIT")")
	SOURCE="the unit's ExecStart"
	# The unit names its binary by path; the test runs the one under test.
	BIN=${lines[0]%% *}
else
	mapfile -t lines < <(readme_commands)
	[ ${#lines[@]} -gt 0 ] || die "no commands found under '## Running it' in $README"
	SOURCE="the README's commands"
	BIN=cubevs-fp
fi
[[ ${lines[-1]} == "$BIN "* ]] || die "$SOURCE: the last line does not run $BIN: ${lines[-1]}"
log "$SOURCE: ${lines[*]}"
{
	for l in "${lines[@]::${#lines[@]}-1}"; do
		printf '%s\n' "$l"
	done
	# The one substitution: the binary under test, on the bed's "NIC".
	printf 'exec %q%s\n' "$CUBEVS_FP" "$(sed "s|^$BIN||; s/ eth0\( \|$\)/ nic0\1/" \
		<<<"${lines[-1]}")"
} >"$TB_DIR/readme.sh"
check "$SOURCE: cubevs-fp on the world interface" grep -q -- '--world-iface nic0' \
	"$TB_DIR/readme.sh"

# A fresh machine: Debian's default ephemeral range, no state or runtime directories.
nsn sysctl -qw net.ipv4.ip_local_port_range="32768 60999"
mkdir -m 755 "$TB_DIR/var-lib" "$TB_DIR/run"

readme_start
check "ready after $SOURCE" eq "$(api_status GET /readyz)" 200
check "the node's ephemeral ports are out of the host-port and SNAT ranges" \
	eq "$(nsn sysctl -n net.ipv4.ip_local_port_range | awk '{ print $1, $2 }')" "10000 19999"
check "the start says it created the state directory" \
	grep -q "created the state directory $REAL_STATE_DIR (mode 0700)" "$TB_DIR/fp.log"
check "the state directory was created 0700, root's" \
	eq "$(mode_of "$TB_DIR/var-lib/cubevs-fp")" "700 root"
check "the state file was written there before the API answered" \
	test -s "$TB_DIR/var-lib/cubevs-fp/state.json"
check "EAL made its runtime directory on the fresh /run, 0700" \
	eq "$(mode_of "$TB_DIR/run/dpdk")" "700 root"
check "register a sandbox" eq "$(register s1 sb1 '[8080]' | tail -n1)" 201
hp=$(hostport_of s1 8080)
check "a client reaches the sandbox through the host port (and it sees the client)" \
	eq "$(nsc curl -s -m 5 "http://$NODE_IP:$hp/name")" "sandbox1 $CLIENT_IP"
check "the registration is in the default state file" \
	grep -q '"sandboxID": *"s1"' <(state_view "$TB_DIR/var-lib/cubevs-fp/state.json")
check "SIGTERM stops it with exit 0" fp_stop

# Second start: the directory is there now and is used as it is.
chmod 0700 "$TB_DIR/var-lib/cubevs-fp"
readme_start
check "ready again" eq "$(api_status GET /readyz)" 200
check "nothing created the second time" \
	bash -c "! grep -q 'created the state directory' '$TB_DIR/fp.log'"
check "the registration was restored with its host port" eq "$(hostport_of s1 8080)" "$hp"
check "SIGTERM stops it with exit 0 again" fp_stop

check "the machine's own $REAL_STATE_DIR is as it was" \
	eq "$(ls -ld --time-style=full-iso "$REAL_STATE_DIR" 2>&1)" "$real_before"
tb_done
