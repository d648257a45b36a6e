#!/bin/bash
# Installs what building and testing cubevs-fp needs on Debian 12 (as root). Idempotent:
# only missing packages are installed.
set -euo pipefail

# libclang-rt-14-dev: ASan/UBSan/libFuzzer runtimes for the clang sanitizer build (build-san).
# dpdk-dev: dpdk-telemetry.py (ops-metrics checks telemetry with it) and dpdk-testpmd (fpbench);
# Debian 12's dpdk package does not ship them.
# debhelper, dpkg-dev: the Debian packages (debian/, tests/pkg/test_deb.sh).
DEBS=(build-essential meson ninja-build pkg-config python3 clang llvm libclang-rt-14-dev
	libdpdk-dev dpdk dpdk-dev libxdp-dev libbpf-dev libjansson-dev libmicrohttpd-dev
	libcurl4-openssl-dev linux-libc-dev
	iproute2 ethtool curl iputils-ping git ca-certificates valgrind
	python3-yaml python3-jsonschema debhelper dpkg-dev
	qemu-system-x86 busybox-static xz-utils gnuplot-nox containernetworking-plugins containerd)
# qemu-system-x86, busybox-static, xz-utils (and ethtool above): what ../shared/tools/microvm
# needs to build and boot the microVM sandboxes of tests/netns/test_vhost.sh.
# gnuplot-nox: the picture tools/bench/scalebench draws beside its JSON.
# containernetworking-plugins: the CNI ptp and host-local plugins of tests/netns/test_cni.sh;
# containerd (with runc): the real runtime of its case 'containerd' (ctr run --cni).

# Node.js 18+ for the gateway tests (the official MCP SDK); Debian 12 ships 18.
if ! command -v node >/dev/null 2>&1 ||
	[ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -lt 18 ]; then
	DEBS+=(nodejs npm)
elif ! command -v npm >/dev/null 2>&1; then
	DEBS+=(npm)
fi

missing=()
for p in "${DEBS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
