/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/stat.h>

#include "config.h"
#include "ct.h"

enum {
	OPT_WORLD_IFACE = 256,
	OPT_NODE_IP,
	OPT_NODE_IP6,
	OPT_GUEST_PFX6,
	OPT_SBX_PFX6,
	OPT_API_LISTEN,
	OPT_HOST_PORTS,
	OPT_RESERVED_PORTS,
	OPT_HOSTPORT_HOLD,
	OPT_SNAT_PORTS,
	OPT_SANDBOX_CIDR,
	OPT_MAX_SESSIONS,
	OPT_MAX_SANDBOXES,
	OPT_SBX_UMEM_FRAMES,
	OPT_GUEST_IP,
	OPT_GUEST_MAC,
	OPT_GW_IP,
	OPT_GW_MAC,
	OPT_SET_EPHEMERAL,
	OPT_HOST_IFACE,
	OPT_NH_MAC,
	OPT_TEST_CLOCK,
	OPT_TEST_UNPACKED_POOL,
	OPT_CT_TIMEOUT,
	OPT_TCP_LIBERAL,
	OPT_SBX_LIMIT,		/* + CVS_SLIM_*: keep these last but OPT_VERSION */
	OPT_SBX_LIMIT_END = OPT_SBX_LIMIT + CVS_SLIM_MAX - 1,
	OPT_WORKERS,
	OPT_WORLD_QUEUES,
	OPT_IDLE_SLEEP,
	OPT_STATE_FILE,
	OPT_RUNTIME_DIR,
	OPT_BPF_PIN_DIR,
	OPT_RESTART_GRACE,
	OPT_FRAG_CONTEXTS,
	OPT_FRAG_MAX,
	OPT_FRAG_HELD,
	OPT_FRAG_TIMEOUT,
	OPT_DETACH_ON_EXIT,
	OPT_ROLLBACK_TO,
	OPT_API_SOCKET,
	OPT_API_SOCKET_MODE,
	OPT_VERSION,
};

static const struct option cvs_long_opts[] = {
	{ "world-iface", required_argument, NULL, OPT_WORLD_IFACE },
	{ "node-ip", required_argument, NULL, OPT_NODE_IP },
	{ "node-ip6", required_argument, NULL, OPT_NODE_IP6 },
	{ "guest-prefix6", required_argument, NULL, OPT_GUEST_PFX6 },
	{ "sandbox-prefix6", required_argument, NULL, OPT_SBX_PFX6 },
	{ "api-listen", required_argument, NULL, OPT_API_LISTEN },
	{ "api-socket", required_argument, NULL, OPT_API_SOCKET },
	{ "api-socket-mode", required_argument, NULL, OPT_API_SOCKET_MODE },
	{ "host-port-range", required_argument, NULL, OPT_HOST_PORTS },
	{ "reserved-host-ports", required_argument, NULL, OPT_RESERVED_PORTS },
	{ "host-port-hold", required_argument, NULL, OPT_HOSTPORT_HOLD },
	{ "snat-port-range", required_argument, NULL, OPT_SNAT_PORTS },
	{ "sandbox-cidr", required_argument, NULL, OPT_SANDBOX_CIDR },
	{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
	{ "max-sandboxes", required_argument, NULL, OPT_MAX_SANDBOXES },
	{ "sandbox-umem-frames", required_argument, NULL, OPT_SBX_UMEM_FRAMES },
	{ "guest-ip", required_argument, NULL, OPT_GUEST_IP },
	{ "guest-mac", required_argument, NULL, OPT_GUEST_MAC },
	{ "gateway-ip", required_argument, NULL, OPT_GW_IP },
	{ "gateway-mac", required_argument, NULL, OPT_GW_MAC },
	{ "set-ephemeral-range", no_argument, NULL, OPT_SET_EPHEMERAL },
	{ "host-iface", required_argument, NULL, OPT_HOST_IFACE },
	{ "next-hop-mac", required_argument, NULL, OPT_NH_MAC },
	{ "test-clock", no_argument, NULL, OPT_TEST_CLOCK },
	/* Hidden: a fault on the world sockets' transmit, so that tests see their invalid
	 * descriptors counted and reported: on our own sockets a descriptor past the UMEM every
	 * 256th frame, on an EAL net_af_xdp port the mbuf pool its UMEM does not cover
	 * (control/ports/mbufpool.h). */
	{ "test-unpacked-pool", no_argument, NULL, OPT_TEST_UNPACKED_POOL },
	{ "ct-timeout", required_argument, NULL, OPT_CT_TIMEOUT },
	{ "tcp-liberal", no_argument, NULL, OPT_TCP_LIBERAL },
	{ "sandbox-max-sessions", required_argument, NULL, OPT_SBX_LIMIT + CVS_SLIM_SESSIONS },
	{ "sandbox-max-inbound", required_argument, NULL, OPT_SBX_LIMIT + CVS_SLIM_INBOUND },
	{ "sandbox-new-sessions-per-sec", required_argument, NULL, OPT_SBX_LIMIT + CVS_SLIM_RATE },
	{ "sandbox-new-sessions-burst", required_argument, NULL, OPT_SBX_LIMIT + CVS_SLIM_BURST },
	{ "sandbox-snat-ports-per-endpoint", required_argument, NULL,
	  OPT_SBX_LIMIT + CVS_SLIM_SNAT },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "world-queues", required_argument, NULL, OPT_WORLD_QUEUES },
	{ "idle-sleep-us", required_argument, NULL, OPT_IDLE_SLEEP },
	{ "state-file", required_argument, NULL, OPT_STATE_FILE },
	{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
	{ "bpf-pin-dir", required_argument, NULL, OPT_BPF_PIN_DIR },
	{ "restart-grace", required_argument, NULL, OPT_RESTART_GRACE },
	{ "frag-contexts", required_argument, NULL, OPT_FRAG_CONTEXTS },
	{ "frag-max", required_argument, NULL, OPT_FRAG_MAX },
	{ "frag-held", required_argument, NULL, OPT_FRAG_HELD },
	{ "frag-timeout", required_argument, NULL, OPT_FRAG_TIMEOUT },
	{ "detach-on-exit", no_argument, NULL, OPT_DETACH_ON_EXIT },
	{ "rollback-to", required_argument, NULL, OPT_ROLLBACK_TO },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

void
cvs_config_defaults(struct cvs_config *c)
{
	static const uint8_t guest_mac[6] = { 0x20, 0x90, 0x6f, 0xfc, 0xfc, 0xfc };
	static const uint8_t gw_mac[6] = { 0x20, 0x90, 0x6f, 0xcf, 0xcf, 0xcf };

	memset(c, 0, sizeof(*c));
	c->api_addr = htonl(INADDR_LOOPBACK);
	c->api_port = 9180;
	c->api_socket_mode = 0600;
	c->host_ports = (struct cvs_range){ 20000, 29999 };
	c->hostport_hold_s = 600;
	c->snat_ports = (struct cvs_range){ 30000, 65535 };
	inet_pton(AF_INET, "192.168.0.0", &c->sandbox_net);
	c->sandbox_prefix = 18;
	c->max_sessions = 1048576;
	c->max_sandboxes = 8192;
	c->sandbox_umem_frames = CVS_UMEM_FRAMES_DEFAULT;
	inet_pton(AF_INET, "169.254.68.6", &c->guest_ip);
	inet_pton(AF_INET, "169.254.68.5", &c->gw_ip);
	{
		uint8_t pfx6[16];

		inet_pton(AF_INET6, CVS_GUEST_PFX6_DEFAULT, pfx6);
		memcpy(c->guest_pfx6, pfx6, sizeof(c->guest_pfx6));
		inet_pton(AF_INET6, CVS_SBX_PFX6_DEFAULT, pfx6);
		memcpy(c->sbx_pfx6, pfx6, sizeof(c->sbx_pfx6));
	}
	memcpy(c->guest_mac, guest_mac, 6);
	memcpy(c->gw_mac, gw_mac, 6);
	strcpy(c->host_iface, "cube-dev");
	c->workers = 1;
	memcpy(c->timeouts, ct_default_timeouts, sizeof(ct_default_timeouts));
	snprintf(c->state_file, sizeof(c->state_file), "%s", CVS_STATE_FILE_DEFAULT);
	snprintf(c->runtime_dir, sizeof(c->runtime_dir), "%s", CVS_RUNTIME_DIR_DEFAULT);
	snprintf(c->bpf_pin_dir, sizeof(c->bpf_pin_dir), "%s", CVS_BPF_PIN_DIR_DEFAULT);
	c->restart_grace_s = 10;
	c->frag = (struct frag_cfg){ .contexts = FRAG_DEF_CONTEXTS, .max_frags = FRAG_DEF_MAX_FRAGS,
				     .held = FRAG_DEF_HELD, .timeout = FRAG_DEF_TIMEOUT };
}

int
cvs_parse_port_list(const char *s, struct cvs_range *out, uint32_t max, uint32_t *n)
{
	char buf[32];
	const char *p = s;

	do {
		size_t len = strcspn(p, ",");
		uint32_t v;

		if (len == 0 || len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (*n >= max)
			return -E2BIG;
		if (strchr(buf, '-')) {
			if (cvs_parse_range(buf, &out[*n]))
				return -EINVAL;
		} else {
			if (cvs_parse_u32(buf, 1, 65535, &v))
				return -EINVAL;
			out[*n] = (struct cvs_range){ (uint16_t)v, (uint16_t)v };
		}
		(*n)++;
		p += len;
	} while (*p++ == ',');
	return 0;
}

static int
cvs_parse_cidr(const char *s, uint32_t *net, uint8_t *prefix)
{
	char buf[INET_ADDRSTRLEN];
	uint32_t len, mask;

	if (cvs_split_prefix(s, buf, sizeof(buf), 16, 24, &len) || cvs_parse_ipv4(buf, net))
		return -EINVAL;
	mask = htonl(~0u << (32 - len));
	if (*net & ~mask)
		return -EINVAL;
	*prefix = (uint8_t)len;
	return 0;
}

static int
cvs_bad(char *err, size_t errlen, const char *opt, const char *val, const char *want)
{
	snprintf(err, errlen, "invalid value '%s' for --%s: expected %s", val, opt, want);
	return -EINVAL;
}

static bool
cvs_ranges_overlap(struct cvs_range a, struct cvs_range b)
{
	return a.lo <= b.hi && b.lo <= a.hi;
}

/* A reserved port outside the range is a typo the operator wants to hear about. */
static int
cvs_check_reserved(const struct cvs_config *c, char *err, size_t errlen)
{
	uint32_t i;

	for (i = 0; i < c->n_reserved; i++) {
		if (c->reserved[i].lo >= c->host_ports.lo && c->reserved[i].hi <= c->host_ports.hi)
			continue;
		snprintf(err, errlen, "--reserved-host-ports %u-%u is outside --host-port-range %u-%u",
			 c->reserved[i].lo, c->reserved[i].hi, c->host_ports.lo,
			 c->host_ports.hi);
		return -EINVAL;
	}
	return 0;
}

/*
 * The per-sandbox limits not given (docs/datapath.md, "Per-sandbox limits"): a sandbox lives
 * on one worker, so its shares are of that worker's table and SNAT share.
 */
static void
cvs_config_limits(struct cvs_config *c)
{
	uint32_t nw = c->workers ? c->workers : 1, table = c->max_sessions / nw;
	uint32_t snat = ((uint32_t)c->snat_ports.hi - c->snat_ports.lo + 1) / nw, d[CVS_SLIM_MAX];
	int k;

	/*
	 * A 16th of the table, but never below 1,024: on a small table a 16th is less than one
	 * busy sandbox's honest use. A table of 1,024 or fewer has no share (0): it has only
	 * the table-full policy, which a share of all of it would pre-empt.
	 */
	d[CVS_SLIM_SESSIONS] = table / 16 > 1024 ? table / 16 : table <= 1024 ? 0 : 1024;
	d[CVS_SLIM_INBOUND] = d[CVS_SLIM_SESSIONS];
	d[CVS_SLIM_RATE] = 2000;
	d[CVS_SLIM_BURST] = 4 * (c->sbx_lim_given & (1u << CVS_SLIM_RATE) ?
				 c->sbx_lim[CVS_SLIM_RATE] : d[CVS_SLIM_RATE]);
	d[CVS_SLIM_SNAT] = snat / 8 > 16 ? snat / 8 : 16;
	for (k = 0; k < CVS_SLIM_MAX; k++)
		if (!(c->sbx_lim_given & (1u << k)))
			c->sbx_lim[k] = d[k];
}

/* Options that set a number in a range, a flag, an address or a MAC: one row each. */
struct cvs_num_opt {
	int opt;
	size_t off;
	uint32_t lo, hi;
	bool pow2;		/* a power of two only */
	const char *want;
};

#define CVS_AT(f)	offsetof(struct cvs_config, f)

static const struct cvs_num_opt cvs_num_opts[] = {
	{ OPT_MAX_SESSIONS, CVS_AT(max_sessions), 16, 1u << 28, false, "an integer 16..268435456" },
	{ OPT_MAX_SANDBOXES, CVS_AT(max_sandboxes), 1, 65534, false, "an integer 1..65534" },
	{ OPT_SBX_UMEM_FRAMES, CVS_AT(sandbox_umem_frames), CVS_UMEM_FRAMES_MIN, CVS_UMEM_FRAMES_MAX, true,
	  "a power of two 512..16384" },
	{ OPT_WORKERS, CVS_AT(workers), 1, 16, false, "an integer 1..16" },
	{ OPT_WORLD_QUEUES, CVS_AT(world_queues), 1, 16, false, "an integer 1..16" },
	{ OPT_IDLE_SLEEP, CVS_AT(idle_sleep_us), 0, 100000, false, "microseconds 0..100000" },
	{ OPT_HOSTPORT_HOLD, CVS_AT(hostport_hold_s), 0, 86400 * 7, false, "seconds, 0 to 604800" },
	{ OPT_RESTART_GRACE, CVS_AT(restart_grace_s), 0, 600, false, "seconds 0..600" },
	{ OPT_FRAG_CONTEXTS, CVS_AT(frag.contexts), 0, 1u << 20, false, "an integer 0..1048576" },
	{ OPT_FRAG_MAX, CVS_AT(frag.max_frags), 2, FRAG_MAX_FRAGS_LIMIT, false,
	  "an integer 2..8192" },
	{ OPT_FRAG_HELD, CVS_AT(frag.held), 0, 1u << 18, false, "an integer 0..262144" },
	{ OPT_FRAG_TIMEOUT, CVS_AT(frag.timeout), 1, 60, false, "seconds 1..60" },
};

static const struct { int opt; size_t off; } cvs_flag_opts[] = {
	{ OPT_SET_EPHEMERAL, CVS_AT(set_ephemeral) },
	{ OPT_TEST_CLOCK, CVS_AT(test_clock) },
	{ OPT_TEST_UNPACKED_POOL, CVS_AT(test_unpacked_pool) },
	{ OPT_TCP_LIBERAL, CVS_AT(tcp_liberal) },
	{ OPT_DETACH_ON_EXIT, CVS_AT(detach_on_exit) },
	{ 'h', CVS_AT(help) },
	{ OPT_VERSION, CVS_AT(version) },
};

static const struct { int opt; size_t off; bool mac; const char *want; } cvs_addr_opts[] = {
	{ OPT_GUEST_IP, CVS_AT(guest_ip), false, "an IPv4 address" },
	{ OPT_GW_IP, CVS_AT(gw_ip), false, "an IPv4 address" },
	{ OPT_GUEST_MAC, CVS_AT(guest_mac), true, "a MAC like 20:90:6f:fc:fc:fc" },
	{ OPT_GW_MAC, CVS_AT(gw_mac), true, "a MAC like 20:90:6f:cf:cf:cf" },
};

#define CVS_NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* A row of the tables above: 0, -EINVAL with the message, -ENOENT when not one of them. */
static int
cvs_opt_table(struct cvs_config *c, int opt, const char *name, const char *arg, char *err,
	      size_t errlen)
{
	char *base = (char *)c;
	size_t i;

	for (i = 0; i < CVS_NELEM(cvs_num_opts); i++) {
		const struct cvs_num_opt *o = &cvs_num_opts[i];
		uint32_t *at = (uint32_t *)(base + o->off);

		if (o->opt != opt)
			continue;
		if (cvs_parse_u32(arg, o->lo, o->hi, at) || (o->pow2 && (*at & (*at - 1))))
			return cvs_bad(err, errlen, name, arg, o->want);
		return 0;
	}
	for (i = 0; i < CVS_NELEM(cvs_flag_opts); i++)
		if (cvs_flag_opts[i].opt == opt) {
			*(bool *)(base + cvs_flag_opts[i].off) = true;
			return 0;
		}
	for (i = 0; i < CVS_NELEM(cvs_addr_opts); i++) {
		void *at = base + cvs_addr_opts[i].off;

		if (cvs_addr_opts[i].opt != opt)
			continue;
		if (cvs_addr_opts[i].mac ? cvs_parse_mac(arg, at) : cvs_parse_ipv4(arg, at))
			return cvs_bad(err, errlen, name, arg, cvs_addr_opts[i].want);
		return 0;
	}
	return -ENOENT;
}

/* An interface name option; 'none' empties it when allowed. */
static int
cvs_opt_iface(char *dst, bool none_ok, const char *name, const char *arg, char *err,
	      size_t errlen)
{
	if (none_ok && !strcmp(arg, "none")) {
		dst[0] = '\0';
		return 0;
	}
	if (!*arg || strlen(arg) >= IF_NAMESIZE || strchr(arg, '/') || strchr(arg, ','))
		return cvs_bad(err, errlen, name, arg,
			       none_ok ? "an interface name or none" : "an interface name");
	strcpy(dst, arg);
	return 0;
}

static int
cvs_opt_api_listen(struct cvs_config *c, const char *name, const char *arg, char *err,
		   size_t errlen)
{
	char buf[64], *colon;
	uint32_t port;

	if (strlen(arg) >= sizeof(buf))
		return cvs_bad(err, errlen, name, arg, "ADDR:PORT");
	strcpy(buf, arg);
	colon = strrchr(buf, ':');
	if (!colon)
		return cvs_bad(err, errlen, name, arg, "ADDR:PORT");
	*colon = '\0';
	if (cvs_parse_ipv4(buf, &c->api_addr) || cvs_parse_u32(colon + 1, 1, 65535, &port))
		return cvs_bad(err, errlen, name, arg, "ADDR:PORT");
	c->api_port = (uint16_t)port;
	return 0;
}

static int
cvs_opt_ct_timeout(struct cvs_config *c, const char *name, const char *arg, char *err,
		   size_t errlen)
{
	const char *eq = strchr(arg, '=');
	uint32_t sec;
	int k;

	for (k = 0; eq && k < CT_C_MAX; k++)
		if (strlen(ct_class_names[k]) == (size_t)(eq - arg) &&
		    !strncmp(ct_class_names[k], arg, (size_t)(eq - arg)))
			break;
	if (!eq || k == CT_C_MAX || cvs_parse_u32(eq + 1, 1, 86400 * 7, &sec))
		return cvs_bad(err, errlen, name, arg,
			       "CLASS=SECONDS with a known class (see --help)");
	c->timeouts[k] = sec;
	return 0;
}

static int
cvs_opt_state_file(struct cvs_config *c, const char *name, const char *arg, char *err,
		   size_t errlen)
{
	if (!strcmp(arg, "none")) {
		c->state_file[0] = '\0';
		return 0;
	}
	if (arg[0] != '/' || strlen(arg) >= sizeof(c->state_file) || arg[strlen(arg) - 1] == '/')
		return cvs_bad(err, errlen, name, arg,
			       "an absolute file path (under 256 bytes) or 'none'");
	strcpy(c->state_file, arg);
	return 0;
}

_Static_assert(sizeof(((struct cvs_config *)0)->runtime_dir) == 200 &&
	       sizeof(((struct cvs_config *)0)->bpf_pin_dir) == 200, "cvs_opt_dir() bound");

/* --runtime-dir, --bpf-pin-dir: into a 200-byte field. */
static int
cvs_opt_dir(char *dst, const char *name, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "none")) {
		dst[0] = '\0';
		return 0;
	}
	if (arg[0] != '/' || strlen(arg) >= 200)
		return cvs_bad(err, errlen, name, arg,
			       "an absolute directory (under 200 bytes) or 'none'");
	strcpy(dst, arg);
	return 0;
}

static int
cvs_opt_reserved(struct cvs_config *c, const char *name, const char *arg, char *err,
		 size_t errlen)
{
	int r = cvs_parse_port_list(arg, c->reserved, CVS_MAX_RESERVED, &c->n_reserved);

	if (r == -E2BIG)
		return cvs_bad(err, errlen, name, arg, "at most 64 ports or ranges in all");
	if (r)
		return cvs_bad(err, errlen, name, arg,
			       "P or LO-HI within 1-65535, separated by commas");
	return 0;
}

/*
 * --node-ip6: the address the node's kernel owns on the world link; one that cannot be a
 * unicast source beyond the link is refused by name.
 */
static int
cvs_opt_node_ip6(struct cvs_config *c, const char *name, const char *arg, char *err,
		 size_t errlen)
{
	const char *why;

	if (cvs_parse_ipv6(arg, c->node_ip6))
		return cvs_bad(err, errlen, name, arg, "an IPv6 address such as 2001:db8::1");
	why = cvs_ipv6_not_unicast(c->node_ip6);
	if (why) {
		snprintf(err, errlen, "invalid value '%s' for --%s: a %s address; expected the "
			 "node's global unicast or unique local (fc00::/7) IPv6 address", arg,
			 name, why);
		return -EINVAL;
	}
	c->have_ip6 = true;
	return 0;
}

/* --guest-prefix6: a /64 only, the one length SLAAC forms addresses in. */
static int
cvs_opt_guest_pfx6(struct cvs_config *c, const char *name, const char *arg, char *err,
		   size_t errlen)
{
	uint8_t a[16];
	uint32_t len;

	if (cvs_parse_prefix6(arg, a, &len) || len != 64)
		return cvs_bad(err, errlen, name, arg,
			       "PREFIX/64 with no host bits, such as fd00:a9fe:4406::/64");
	if (cvs_ipv6_not_unicast(a))
		return cvs_bad(err, errlen, name, arg, "a unicast /64 (global or fc00::/7)");
	memcpy(c->guest_pfx6, a, 8);
	return 0;
}

/*
 * --sandbox-prefix6: a /96, what a sandbox's IPv4 address on cube-dev follows to make its
 * IPv6 one (RFC 6052's /96 form); not the guests' /64, or host flows would look like theirs.
 */
static int
cvs_opt_sbx_pfx6(struct cvs_config *c, const char *name, const char *arg, char *err,
		 size_t errlen)
{
	uint8_t a[16];
	uint32_t len;

	if (cvs_parse_prefix6(arg, a, &len) || len != 96)
		return cvs_bad(err, errlen, name, arg,
			       "PREFIX/96 with no host bits, such as fd00:a9fe:4407::/96");
	if (cvs_ipv6_not_unicast(a))
		return cvs_bad(err, errlen, name, arg, "a unicast /96 (global or fc00::/7)");
	memcpy(c->sbx_pfx6, a, 12);
	return 0;
}

/* Every option that is not a row of the tables; -ENOENT for an unknown one. */
static int
cvs_opt_other(struct cvs_config *c, int opt, const char *name, const char *arg, char *err,
	      size_t errlen)
{
	switch (opt) {
	case OPT_WORLD_IFACE:
		return cvs_opt_iface(c->world_iface, false, name, arg, err, errlen);
	case OPT_HOST_IFACE:
		return cvs_opt_iface(c->host_iface, true, name, arg, err, errlen);
	case OPT_NODE_IP:
		if (cvs_parse_ipv4(arg, &c->node_ip) || !c->node_ip)
			return cvs_bad(err, errlen, name, arg, "an IPv4 address");
		return 0;
	case OPT_NODE_IP6:
		return cvs_opt_node_ip6(c, name, arg, err, errlen);
	case OPT_GUEST_PFX6:
		return cvs_opt_guest_pfx6(c, name, arg, err, errlen);
	case OPT_SBX_PFX6:
		return cvs_opt_sbx_pfx6(c, name, arg, err, errlen);
	case OPT_API_LISTEN:
		return cvs_opt_api_listen(c, name, arg, err, errlen);
	case OPT_HOST_PORTS:
	case OPT_SNAT_PORTS:
		if (cvs_parse_range(arg, opt == OPT_HOST_PORTS ? &c->host_ports : &c->snat_ports))
			return cvs_bad(err, errlen, name, arg, "LO-HI within 1-65535");
		return 0;
	case OPT_RESERVED_PORTS:
		return cvs_opt_reserved(c, name, arg, err, errlen);
	case OPT_SANDBOX_CIDR:
		if (cvs_parse_cidr(arg, &c->sandbox_net, &c->sandbox_prefix))
			return cvs_bad(err, errlen, name, arg,
				       "NET/LEN with LEN 16..24 and no host bits");
		return 0;
	case OPT_NH_MAC:
		if (cvs_parse_mac(arg, c->nh_fallback))
			return cvs_bad(err, errlen, name, arg, "a MAC address");
		c->have_nh_fallback = true;
		return 0;
	case OPT_CT_TIMEOUT:
		return cvs_opt_ct_timeout(c, name, arg, err, errlen);
	case OPT_STATE_FILE:
		return cvs_opt_state_file(c, name, arg, err, errlen);
	case OPT_API_SOCKET:
		c->api_socket_off = !strcmp(arg, "none");
		if (!c->api_socket_off && (arg[0] != '/' || strlen(arg) >= sizeof(c->api_socket)))
			return cvs_bad(err, errlen, name, arg, "an absolute path of at most 107 "
				       "bytes, or 'none'");
		snprintf(c->api_socket, sizeof(c->api_socket), "%s", c->api_socket_off ? "" : arg);
		c->api_socket_given = !c->api_socket_off;
		return 0;
	case OPT_API_SOCKET_MODE: {
		char *end;
		unsigned long m = strtoul(arg, &end, 8);

		if (!arg[0] || *end || m > 0777)
			return cvs_bad(err, errlen, name, arg, "an octal mode such as 0660");
		c->api_socket_mode = (uint32_t)m;
		return 0;
	}
	case OPT_ROLLBACK_TO:
		/* Which releases can be rolled back to is rollback.c's to say. */
		if (!arg[0] || strlen(arg) >= sizeof(c->rollback_to))
			return cvs_bad(err, errlen, name, arg, "a release such as 0.1.0");
		strcpy(c->rollback_to, arg);
		return 0;
	case OPT_RUNTIME_DIR:
		return cvs_opt_dir(c->runtime_dir, name, arg, err, errlen);
	case OPT_BPF_PIN_DIR:
		return cvs_opt_dir(c->bpf_pin_dir, name, arg, err, errlen);
	case OPT_SBX_LIMIT ... OPT_SBX_LIMIT_END:
		if (cvs_parse_u32(arg, 0, 1u << 30, &c->sbx_lim[opt - OPT_SBX_LIMIT]))
			return cvs_bad(err, errlen, name, arg,
				       "an integer 0..1073741824 (0: no limit)");
		c->sbx_lim_given |= 1u << (opt - OPT_SBX_LIMIT);
		return 0;
	}
	return -ENOENT;
}

/* What no single option can say wrong: combinations. */
static int
cvs_config_check(struct cvs_config *c, char *err, size_t errlen)
{
	cvs_config_limits(c);
	/* The API socket lives with the session region unless placed elsewhere. */
	if (!c->api_socket_off && !c->api_socket[0] && c->runtime_dir[0] &&
	    (size_t)snprintf(c->api_socket, sizeof(c->api_socket), "%s/api.sock",
			     c->runtime_dir) >= sizeof(c->api_socket)) {
		snprintf(err, errlen, "--runtime-dir %s is too long for the API socket in it; "
			 "give --api-socket PATH (at most 107 bytes) or --api-socket none",
			 c->runtime_dir);
		return -EINVAL;
	}
	if (!c->world_queues)
		c->world_queues = c->workers;
	if (c->world_queues > c->workers) {
		snprintf(err, errlen, "--world-queues %u is more than --workers %u",
			 c->world_queues, c->workers);
		return -EINVAL;
	}
	if (cvs_ranges_overlap(c->host_ports, c->snat_ports)) {
		snprintf(err, errlen, "--host-port-range %u-%u overlaps --snat-port-range %u-%u",
			 c->host_ports.lo, c->host_ports.hi, c->snat_ports.lo, c->snat_ports.hi);
		return -EINVAL;
	}
	if (c->guest_ip == c->gw_ip) {
		snprintf(err, errlen, "--guest-ip and --gateway-ip must differ");
		return -EINVAL;
	}
	/* Host flows to a sandbox would look like a guest's own addresses. */
	if (!memcmp(c->sbx_pfx6, c->guest_pfx6, 8)) {
		snprintf(err, errlen, "--sandbox-prefix6 must lie outside --guest-prefix6");
		return -EINVAL;
	}
	return cvs_check_reserved(c, err, errlen);
}

int
cvs_config_parse(struct cvs_config *c, int argc, char **argv, char *err, size_t errlen)
{
	int opt, idx, ret;

	cvs_config_defaults(c);
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", cvs_long_opts, &idx)) != -1) {
		const char *name = NULL;
		int i;

		if (opt == ':') {
			snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return -EINVAL;
		}
		for (i = 0; cvs_long_opts[i].name; i++)
			if (cvs_long_opts[i].val == opt)
				name = cvs_long_opts[i].name;
		c->max_sandboxes_given |= opt == OPT_MAX_SANDBOXES;
		ret = cvs_opt_table(c, opt, name, optarg, err, errlen);
		if (ret == -ENOENT)
			ret = cvs_opt_other(c, opt, name, optarg, err, errlen);
		if (ret == -ENOENT) {
			snprintf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return -EINVAL;
		}
		if (ret)
			return ret;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return -EINVAL;
	}
	if (c->help || c->version)
		return 0;
	return cvs_config_check(c, err, errlen);
}

int
cvs_check_ephemeral(const struct cvs_config *c, const char *path, bool fix, char *msg,
		    size_t msglen)
{
	struct cvs_range eph, want = { 10000, 19999 };
	unsigned int lo, hi;
	FILE *f = fopen(path, "r");
	int n;

	if (!f) {
		snprintf(msg, msglen, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	n = fscanf(f, "%u %u", &lo, &hi);
	fclose(f);
	if (n != 2 || lo > hi || hi > 65535) {
		snprintf(msg, msglen, "cannot parse %s", path);
		return -EINVAL;
	}
	eph = (struct cvs_range){ (uint16_t)lo, (uint16_t)hi };
	if (!cvs_ranges_overlap(eph, c->host_ports) && !cvs_ranges_overlap(eph, c->snat_ports))
		return 0;
	if (!fix || cvs_ranges_overlap(want, c->host_ports) ||
	    cvs_ranges_overlap(want, c->snat_ports)) {
		snprintf(msg, msglen,
			 "kernel ephemeral ports %u-%u overlap the host-port range %u-%u or the "
			 "SNAT range %u-%u: replies to the node's own connections would be "
			 "steered away from the kernel; set it with "
			 "'sysctl -w net.ipv4.ip_local_port_range=\"10000 19999\"' "
			 "or start with --set-ephemeral-range",
			 lo, hi, c->host_ports.lo, c->host_ports.hi, c->snat_ports.lo,
			 c->snat_ports.hi);
		return -EADDRINUSE;
	}
	f = fopen(path, "w");
	if (!f || fprintf(f, "%u %u\n", want.lo, want.hi) < 0 || fclose(f) != 0) {
		snprintf(msg, msglen, "cannot write %s: %s", path, strerror(errno));
		return -errno;
	}
	snprintf(msg, msglen, "moved net.ipv4.ip_local_port_range from %u-%u to %u-%u", lo, hi,
		 want.lo, want.hi);
	return 1;
}

int
cvs_make_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (!mkdir(dir, 0700))
		return 1;
	if (errno != EEXIST) {
		int e = errno;

		snprintf(err, errlen, "cannot create directory %s: %s", dir, strerror(e));
		return -e;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s exists and is not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

int
cvs_config_make_dirs(const struct cvs_config *c, char *err, size_t errlen)
{
	/* The directory of the default state file, without its last component. */
	static const char state_dir[] = CVS_STATE_FILE_DEFAULT;
	char dir[sizeof(state_dir)];
	int ret;

	if (strcmp(c->state_file, CVS_STATE_FILE_DEFAULT))
		return 0;
	memcpy(dir, state_dir, sizeof(dir));
	*strrchr(dir, '/') = '\0';
	ret = cvs_make_dir(dir, err, errlen);
	if (ret > 0)
		snprintf(err, errlen, "created the state directory %s (mode 0700)", dir);
	return ret;
}
