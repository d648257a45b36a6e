#!/bin/bash
# What the package tests share (sourced): the packages, apt's flags, and the conditions under
# which installing and purging them on this machine harms nothing (else a skip, or a failure
# when a build tool is missing).
PKGS=(cubevs-fp mcp-gateway)
STATE_DIR=/var/lib/cubevs-fp
export DEBIAN_FRONTEND=noninteractive
APT=(apt-get -y -qq --no-install-recommends -o DPkg::Lock::Timeout=300)

is_installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^.i'; }

pkg_preconditions() {
	local p t
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: needs root (installs packages)"
		exit 77
	fi
	if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
		echo "SKIP: not a Debian system (no dpkg/apt-get)"
		exit 77
	fi
	for p in "${PKGS[@]}"; do
		if is_installed "$p"; then
			echo "SKIP: package $p is installed on this machine; the test would replace" \
				"and purge it"
			exit 77
		fi
	done
	if [ -e "$STATE_DIR" ]; then
		echo "SKIP: $STATE_DIR exists (a node's registrations); purging the test's" \
			"package would remove it"
		exit 77
	fi
	for t in dpkg-buildpackage dh; do
		if ! command -v "$t" >/dev/null; then
			echo "FAIL: $t missing (tools/deps.sh installs it)"
			exit 1
		fi
	done
}
