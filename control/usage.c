/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The usage text of cubevs-fp, apart from the parser (config.c) it describes: one function
 * per group of options, in the order --help has always printed them.
 */
#include <stdio.h>

#include "config.h"

/* The world interface, the node address and the API. */
static void
config_usage_node(FILE *f)
{
	fputs(
		"  --world-iface IFACE       create the net_af_xdp world port on IFACE with the\n"
		"                            built-in steering program (else the first EAL port)\n"
		"  --node-ip IP              node address for host ports [first IPv4 of IFACE]\n"
		"  --node-ip6 ADDR           the node's IPv6 address on IFACE (global or ULA), the\n"
		"                            source of sandboxes' IPv6 egress (NAT66) [none: no\n"
		"                            IPv6 NAT]\n"
		"  --guest-prefix6 PREFIX/64 the /64 guests form their IPv6 addresses in\n"
		"                            [fd00:a9fe:4406::/64]\n"
		"  --sandbox-prefix6 PREFIX/96 with --node-ip6, a sandbox's IPv6 address on\n"
		"                            cube-dev: this prefix and its IPv4 sandbox address\n"
		"                            [fd00:a9fe:4407::/96]\n"
		"  --api-listen ADDR:PORT    control API address [127.0.0.1:9180]\n"
		"  --api-socket PATH         the API on a unix socket too, what cubevs-fpctl and\n"
		"                            local clients use; 'none' for TCP only\n"
		"                            [RUNTIME-DIR/api.sock]\n"
		"  --api-socket-mode MODE    its file mode, octal [0600: root only]\n",
	      f);
}

/* The host ports, the SNAT ports and the sandbox addresses. */
static void
config_usage_ranges(FILE *f)
{
	fputs(
		"  --host-port-range LO-HI   host ports for exposed container ports [20000-29999]\n"
		"  --reserved-host-ports LIST  host ports never handed out, P or LO-HI separated\n"
		"                            by commas, repeatable (ports with a kernel listener\n"
		"                            on the node are skipped anyway) [none]\n"
		"  --host-port-hold SECONDS  a deleted sandbox id gets its host ports back when it\n"
		"                            is registered again within this time, 0 = off [600]\n"
		"  --snat-port-range LO-HI   source ports for egress and hairpin [30000-65535]\n"
		"  --sandbox-cidr NET/LEN    sandbox addresses, /16../24 [192.168.0.0/18]\n",
	      f);
}

/* Table sizes, the funnel's frames and the workers. */
static void
config_usage_capacity(FILE *f)
{
	fputs(
		"  --max-sessions N          session table capacity [1048576]\n"
		"  --max-sandboxes N         sandbox slots [8192]\n"
		"  --sandbox-umem-frames N   2 KiB UMEM frames of each worker's sandbox socket (the\n"
		"                            funnel that carries all its sandboxes), half receive,\n"
		"                            half transmit; a power of two 512..16384; pinned\n"
		"                            memory: N x 2 KiB per worker [8192, 16 MiB]\n"
		"  --workers N               worker lcores [1]\n"
		"  --world-queues N          world queues (queue_count=N on the world interface),\n"
		"                            read by the first N workers [as many as workers]\n"
		"  --idle-sleep-us N         an idle worker sleeps N us per loop (shared CPUs) [0]\n",
	      f);
}

/* What every guest sees: its address, its gateway, the host path, the next hop. */
static void
config_usage_guest(FILE *f)
{
	fputs(
		"  --guest-ip IP             address of every guest [169.254.68.6]\n"
		"  --guest-mac MAC           MAC of every guest [20:90:6f:fc:fc:fc]\n"
		"  --gateway-ip IP           guest default gateway [169.254.68.5]\n"
		"  --gateway-mac MAC         gateway MAC answered by the ARP proxy [20:90:6f:cf:cf:cf]\n"
		"  --host-iface NAME|none    kernel interface (net_tap) through which host processes\n"
		"                            reach sandbox IPs [cube-dev]\n"
		"  --next-hop-mac MAC        world next hop when the kernel knows no gateway [none]\n",
	      f);
}

/* Session timeouts, TCP window tracking and the per-sandbox limits. */
static void
config_usage_sessions(FILE *f)
{
	fputs(
		"  --ct-timeout CLASS=SEC    session timeout of a class, repeatable; classes:\n"
		"                            tcp_syn tcp_established tcp_fin_wait tcp_close_wait\n"
		"                            tcp_last_ack tcp_time_wait tcp_close udp_unreplied\n"
		"                            udp_replied icmp [60 10800 120 60 30 120 10 30 180 30]\n"
		"  --tcp-liberal             no TCP window tracking: any segment of a session is\n"
		"                            accepted, an off-path RST can close it (as\n"
		"                            nf_conntrack_tcp_be_liberal, RSTs included) [off]\n"
		"  --sandbox-max-sessions N  sessions one sandbox may hold that it opened, 0 = no\n"
		"                            limit [a 16th of a worker's table, at least 1024]\n"
		"  --sandbox-max-inbound N   sessions opened towards one sandbox (its exposed\n"
		"                            ports), 0 = no limit [as --sandbox-max-sessions]\n"
		"  --sandbox-new-sessions-per-sec N  new sessions one sandbox opens a second, a\n"
		"                            token bucket, 0 = no limit [2000]\n"
		"  --sandbox-new-sessions-burst N  the bucket's size [4 x the rate]\n"
		"  --sandbox-snat-ports-per-endpoint N  SNAT ports one sandbox's live flows may hold\n"
		"                            towards one remote address:port, 0 = no limit [an 8th\n"
		"                            of a worker's share of --snat-port-range, at least 16]\n",
	      f);
}

/* What the tests move, the kernel's port range, and what outlives the process. */
static void
config_usage_state(FILE *f)
{
	fputs(
		"  --test-clock              allow POST /debug/clock to move the session clock (tests)\n"
		"  --set-ephemeral-range     move net.ipv4.ip_local_port_range out of the host-port\n"
		"                            and SNAT ranges (to 10000-19999) instead of refusing\n"
		"  --state-file PATH         registrations are kept here across restarts, 'none'\n"
		"                            keeps nothing [" CVS_STATE_FILE_DEFAULT "]\n"
		"  --runtime-dir DIR         sessions are kept here (shared memory) across restarts,\n"
		"                            'none' keeps nothing [" CVS_RUNTIME_DIR_DEFAULT "]\n"
		"  --bpf-pin-dir DIR         the XDP maps are pinned in DIR/<world-iface> (bpffs) and\n"
		"                            reused by the next process, 'none' pins nothing\n"
		"                            [" CVS_BPF_PIN_DIR_DEFAULT "]\n",
	      f);
}

/* IPv4 fragments. */
static void
config_usage_frag(FILE *f)
{
	fputs(
		"  --frag-contexts N         fragmented datagrams tracked at once per worker, each\n"
		"                            sandbox (and the world) at most an eighth; 0: fragments\n"
		"                            are dropped [4096]\n"
		"  --frag-max N              fragments of one datagram [64]\n"
		"  --frag-held N             fragments held per worker until their first comes [1024]\n"
		"  --frag-timeout SECONDS    a datagram's fragments wait this long for the rest [2]\n",
	      f);
}

/* The usage text, one group of options a function, in the order the text gives them. */
void
cvs_config_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [EAL options] -- [options]\n"
		"\n"
		"Userspace fast path of a sandbox node: exposed-port DNAT with connection tracking\n"
		"between the world interface (AF_XDP) and sandbox interfaces (AF_XDP sockets).\n"
		"\n"
		"Options:\n", prog);
	config_usage_node(f);
	config_usage_ranges(f);
	config_usage_capacity(f);
	config_usage_guest(f);
	config_usage_sessions(f);
	config_usage_state(f);
	config_usage_frag(f);
	fprintf(f,
		"  --restart-grace SECONDS   while no cubevs-fp runs, fast-path frames are held back\n"
		"                            this long after the last heartbeat, then go to the\n"
		"                            kernel; 0 passes them at once [10]\n"
		"  --detach-on-exit          a stop removes the steering program and drops the\n"
		"                            sessions (no restart follows)\n"
		"  --rollback-to RELEASE     with cubevs-fp stopped: make its state file, session\n"
		"                            region, pins and links what RELEASE (0.1.0) reads,\n"
		"                            then exit; give the flags that release will run with\n"
		"                            (docs/operations.md, Rolling back)\n"
		"  -h, --help                this text\n"
		"  --version                 print the version\n"
		"\n"
		"Example (test bed, no hugepages):\n"
		"  %s -l 0-1 --no-huge -m 512 --no-shconf -- --world-iface eth0\n",
		prog);
}
