/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fpgen: traffic generator of the benchmark kit.
 *
 * Default mode blasts frames with an XDP program run through BPF_PROG_TEST_RUN and
 * BPF_F_TEST_XDP_LIVE_FRAMES (XDP_TX out of --iface): several Mpps from one CPU, in calls of
 * at least a few hundred thousand frames (each call costs ~24 ms of set-up), so it cannot
 * pace. --paced RATE sends through an AF_PACKET socket at a fixed rate instead, with a stamp
 * (sequence + CLOCK_MONOTONIC) in every payload, for latency and loss with fpsink.
 *
 * Flows: flow f (0 <= f < --flows) has source address --src + f / K and source port
 * --sport + f % K, K = --ports-per-ip. Frames cycle through the flows in order. Every address
 * must be inside 198.18.0.0/15, or with IPv6 addresses inside 2001:2::/48 (there the flows'
 * addresses differ in the last 32 bits); both --count and --seconds are required.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpb_util.h"
#include "fpbench.h"

extern const unsigned char fpb_bpf_fpgen[];
extern const size_t fpb_bpf_fpgen_len;

enum gen_proto { GP_UDP, GP_SYN, GP_ACK };

struct gen_opts {
	const char *iface;
	uint8_t smac[6], dmac[6];
	bool have_dmac;
	uint32_t src, dst;	/* host order; IPv6: src is the last 32 bits of src6 */
	bool ip6;
	uint8_t src6[16], dst6[16];
	uint16_t sport, dport;
	uint32_t flows, ppi;
	enum gen_proto proto;
	uint32_t size;
	uint64_t count;
	double seconds;
	bool stamp;
	bool partial;	/* L4 checksums left partial, as a sender with TX offload on */
	uint64_t paced;		/* pps, 0 = live frames */
	int cpu;
	uint32_t batch;
	bool json;
};

static uint16_t
fold(uint32_t s)
{
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static uint32_t
sum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

/*
 * Fill IP and L4 checksums of a frame built by build_template(); with 'partial' the L4 one
 * holds the pseudo-header sum only, as a veth or a virtio guest with TX checksum offload on
 * hands it over (CHECKSUM_PARTIAL), for cubevs-fp to complete. IPv6 (ip6) has no header
 * checksum and 32 bytes of addresses in the pseudo-header.
 */
static void
fix_checksums(uint8_t *f, uint32_t len, uint8_t proto, bool partial, bool ip6)
{
	uint8_t *ip = f + 14, *l4 = f + (ip6 ? 54 : 34);
	uint32_t l4len = len - (uint32_t)(l4 - f), s;
	uint16_t ck;
	int off = proto == IPPROTO_TCP ? 16 : 6;

	if (!ip6) {
		ip[10] = ip[11] = 0;
		ck = (uint16_t)~fold(sum16(ip, 20, 0));
		ip[10] = (uint8_t)(ck >> 8);
		ip[11] = (uint8_t)ck;
	}
	l4[off] = l4[off + 1] = 0;
	s = (ip6 ? sum16(ip + 8, 32, 0) : sum16(ip + 12, 8, 0)) + proto + l4len;
	ck = partial ? fold(s) : (uint16_t)~fold(sum16(l4, l4len, s));
	if (proto == IPPROTO_UDP && ck == 0)
		ck = 0xffff;
	l4[off] = (uint8_t)(ck >> 8);
	l4[off + 1] = (uint8_t)ck;
}

/* The IP header of flow 0's frame (len bytes in all): IPv4 or IPv6 (next header at ip[6]). */
static void
build_ip(const struct gen_opts *o, uint8_t *ip, uint32_t len, uint8_t proto)
{
	uint32_t s = htonl(o->src), d = htonl(o->dst), tot = len - 14;

	if (o->ip6) {
		tot -= 40;	/* the payload length */
		ip[0] = 0x60;
		ip[4] = (uint8_t)(tot >> 8);
		ip[5] = (uint8_t)tot;
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, o->src6, 16);
		memcpy(ip + 24, o->dst6, 16);
		return;
	}
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &s, 4);
	memcpy(ip + 16, &d, 4);
}

/* Flow 0's frame: Ethernet + IPv4/IPv6 + UDP or TCP, zero payload (room for a stamp). */
static uint32_t
build_template(const struct gen_opts *o, uint8_t *f, uint16_t *payload_off)
{
	uint32_t l4len = o->proto == GP_UDP ? 8 : 20, len = o->size, l4o = o->ip6 ? 54 : 34;
	uint8_t *l4 = f + l4o, proto = o->proto == GP_UDP ? IPPROTO_UDP : IPPROTO_TCP;
	uint16_t v;

	memset(f, 0, FPB_FRAME_MAX);
	if (len < l4o + l4len + (o->stamp ? sizeof(struct fpb_stamp) : 0))
		len = l4o + l4len + (uint32_t)(o->stamp ? sizeof(struct fpb_stamp) : 0);
	if (len < 60)
		len = 60;
	if (len > FPB_FRAME_MAX)
		fpb_die("--size: at most %d bytes", FPB_FRAME_MAX);
	memcpy(f, o->dmac, 6);
	memcpy(f + 6, o->smac, 6);
	f[12] = o->ip6 ? 0x86 : 0x08;
	f[13] = o->ip6 ? 0xdd : 0x00;
	build_ip(o, f + 14, len, proto);
	v = htons(o->sport);
	memcpy(l4, &v, 2);
	v = htons(o->dport);
	memcpy(l4 + 2, &v, 2);
	if (o->proto == GP_UDP) {
		v = htons((uint16_t)(len - l4o));
		memcpy(l4 + 4, &v, 2);
	} else {
		l4[4] = 0x10;	/* seq: any fixed value */
		l4[12] = 5 << 4;
		l4[13] = o->proto == GP_SYN ? 0x02 : 0x10;
		l4[14] = 0xff;
		l4[15] = 0xff;
		if (o->proto == GP_ACK)
			l4[8] = 0x20;	/* ack number */
	}
	*payload_off = o->stamp ? (uint16_t)(l4o + l4len) : 0;
	fix_checksums(f, len, proto, o->partial, o->ip6);
	return len;
}

static void
report(const struct gen_opts *o, const char *mode, uint64_t sent, uint64_t ns)
{
	double pps = ns ? (double)sent * 1e9 / (double)ns : 0;

	if (o->json)
		printf("{\"mode\":\"%s\",\"sent\":%" PRIu64 ",\"seconds\":%.3f,\"pps\":%.0f}\n",
		       mode, sent, ns / 1e9, pps);
	else
		printf("fpgen: %s: %" PRIu64 " frames in %.3f s, %.3f Mpps offered\n", mode, sent,
		       ns / 1e9, pps / 1e6);
	fflush(stdout);
}

static int
run_live(const struct gen_opts *o)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct fpg_cfg cfg;
	struct xdp_md ctx;
	uint64_t sent = 0, t0, deadline, chunk = 262144;
	uint32_t k = 0;
	int ifindex, pfd, cfd;

	ifindex = (int)if_nametoindex(o->iface);
	if (!ifindex)
		fpb_die("--iface %s: %s", o->iface, strerror(errno));
	memset(&cfg, 0, sizeof(cfg));
	cfg.len = build_template(o, cfg.frame, &cfg.payload_off);
	cfg.flows = o->flows;
	cfg.ports_per_ip = o->ppi;
	cfg.saddr0 = o->src;
	cfg.sport0 = o->sport;
	cfg.l4_off = o->ip6 ? 54 : 34;
	cfg.l4_check_off = (uint16_t)(cfg.l4_off + (o->proto == GP_UDP ? 6 : 16));
	cfg.ip6 = o->ip6;
	cfg.proto = o->proto == GP_UDP ? IPPROTO_UDP : IPPROTO_TCP;
	cfg.partial = o->partial;

	obj = fpb_bpf_open(fpb_bpf_fpgen, fpb_bpf_fpgen_len, "fpgen");
	if (!obj)
		return 1;
	prog = bpf_object__find_program_by_name(obj, "fpg_prog");
	cfd = bpf_object__find_map_fd_by_name(obj, "fpg_cfg");
	if (!prog || cfd < 0 || bpf_map_update_elem(cfd, &k, &cfg, 0))
		fpb_die("cannot configure the generator program: %s", strerror(errno));
	pfd = bpf_program__fd(prog);

	memset(&ctx, 0, sizeof(ctx));
	ctx.ingress_ifindex = (uint32_t)ifindex;
	ctx.data_end = cfg.len;	/* the kernel wants the frame's extent in ctx as well */
	t0 = fpb_now_ns();
	deadline = t0 + (uint64_t)(o->seconds * 1e9);
	while (sent < o->count && !fpb_stop) {
		LIBBPF_OPTS(bpf_test_run_opts, tr,
			.data_in = cfg.frame,
			.data_size_in = cfg.len,
			.ctx_in = &ctx,
			.ctx_size_in = sizeof(ctx),
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			.batch_size = o->batch);
		uint64_t n = o->count - sent < chunk ? o->count - sent : chunk;
		uint64_t c0 = fpb_now_ns(), now, left;

		if (c0 >= deadline)
			break;
		tr.repeat = (uint32_t)n;
		if (bpf_prog_test_run_opts(pfd, &tr))
			fpb_die("BPF_PROG_TEST_RUN (live frames) failed: %s (kernel >= 5.18 needed)",
				strerror(errno));
		sent += n;
		now = fpb_now_ns();
		/* Size the next call to about a tenth of the time left, within [64k, 4M]. */
		left = deadline > now ? deadline - now : 0;
		chunk = (uint64_t)((double)n * 1e9 / (double)(now - c0 + 1) * (double)left / 1e10);
		if (chunk < 65536)
			chunk = 65536;
		if (chunk > 4194304)
			chunk = 4194304;
	}
	report(o, "live", sent, fpb_now_ns() - t0);
	bpf_object__close(obj);
	return 0;
}

/* Per-frame flow fields and stamp, then full checksums (paced rates are low). */
static void
paced_frame(const struct gen_opts *o, uint8_t *f, uint32_t len, uint16_t po, uint64_t seq)
{
	uint32_t fl = (uint32_t)(seq % o->flows);
	uint32_t s = htonl(o->src + fl / o->ppi);
	uint16_t sp = htons((uint16_t)(o->sport + fl % o->ppi));
	struct fpb_stamp st = { .magic = FPB_MAGIC, .seq = (uint32_t)seq };

	/* The source (IPv6: its last 32 bits) and the source port. */
	memcpy(f + (o->ip6 ? 34 : 26), &s, 4);
	memcpy(f + (o->ip6 ? 54 : 34), &sp, 2);
	st.ts_ns = fpb_now_ns();
	memcpy(f + po, &st, sizeof(st));
	fix_checksums(f, len, o->ip6 ? f[20] : f[23], o->partial, o->ip6);
}

static int
run_paced(const struct gen_opts *o)
{
	enum { PB = 32 };
	uint8_t frames[PB][FPB_FRAME_MAX];
	struct mmsghdr msg[PB];
	struct iovec iov[PB];
	struct sockaddr_ll sll;
	uint64_t sent = 0, t0, deadline, gap;
	uint16_t po;
	uint32_t len;
	int fd, one = 1, i;

	len = build_template(o, frames[0], &po);
	for (i = 1; i < PB; i++)
		memcpy(frames[i], frames[0], len);
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0)
		fpb_die("AF_PACKET socket: %s (needs CAP_NET_RAW)", strerror(errno));
	setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = (int)if_nametoindex(o->iface);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, o->dmac, 6);
	if (!sll.sll_ifindex)
		fpb_die("--iface %s: %s", o->iface, strerror(errno));
	memset(msg, 0, sizeof(msg));
	for (i = 0; i < PB; i++) {
		iov[i].iov_base = frames[i];
		iov[i].iov_len = len;
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
		msg[i].msg_hdr.msg_name = &sll;
		msg[i].msg_hdr.msg_namelen = sizeof(sll);
	}
	gap = 1000000000ull / o->paced;
	if (!gap)
		gap = 1;
	t0 = fpb_now_ns();
	deadline = t0 + (uint64_t)(o->seconds * 1e9);
	while (sent < o->count && !fpb_stop) {
		uint64_t now = fpb_now_ns(), due;
		int n, r;

		if (now >= deadline)
			break;
		/* Frames due by now (at most PB at once); otherwise wait for the next one. */
		due = (now - t0) / gap + 1;
		if (due <= sent) {
			uint64_t next = t0 + sent * gap;

			if (next > now + 200000)
				fpb_sleep_until(next - 100000);
			continue;
		}
		n = (int)(due - sent < PB ? due - sent : PB);
		if ((uint64_t)n > o->count - sent)
			n = (int)(o->count - sent);
		for (i = 0; i < n; i++)
			paced_frame(o, frames[i], len, po, sent + (uint64_t)i);
		r = sendmmsg(fd, msg, (unsigned int)n, 0);
		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN)
				continue;
			fpb_die("sendmmsg: %s", strerror(errno));
		}
		sent += (uint64_t)r;
	}
	report(o, "paced", sent, fpb_now_ns() - t0);
	close(fd);
	return 0;
}

static void
usage(void)
{
	printf("usage: fpgen --iface IF --dst-mac MAC --dst IP --dport PORT --count N --seconds S\n"
	       "             [--proto udp|syn|ack] [--src IP] [--sport PORT] [--flows N]\n"
	       "             [--ports-per-ip K] [--size BYTES] [--stamp] [--paced PPS]\n"
	       "             [--cpu N] [--batch N] [--json] [--partial-csum]\n"
	       "Sends frames out of IF (run it inside the generator's namespace). Addresses must\n"
	       "be in 198.18.0.0/15, or all IPv6 in 2001:2::/48 (the flows then differ in the\n"
	       "source's last 32 bits). Both --count and --seconds bound the run; whichever ends\n"
	       "first wins. Without --paced: XDP live frames (fastest, unpaced). With --paced:\n"
	       "AF_PACKET at PPS frames per second, stamped for fpsink's latency histogram.\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "src-mac", required_argument, NULL, 'M' },
		{ "dst-mac", required_argument, NULL, 'm' },
		{ "src", required_argument, NULL, 's' },
		{ "dst", required_argument, NULL, 'd' },
		{ "sport", required_argument, NULL, 'S' },
		{ "dport", required_argument, NULL, 'D' },
		{ "flows", required_argument, NULL, 'f' },
		{ "ports-per-ip", required_argument, NULL, 'k' },
		{ "proto", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 'z' },
		{ "count", required_argument, NULL, 'n' },
		{ "seconds", required_argument, NULL, 't' },
		{ "stamp", no_argument, NULL, 'T' },
		{ "paced", required_argument, NULL, 'P' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "batch", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "partial-csum", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen_opts o = {
		.src = 0xc6130001u, .sport = 1024, .flows = 1, .ppi = 1, .proto = GP_UDP,
		.size = 60, .cpu = -1, .batch = 64,
	};
	bool have_smac = false, have_count = false, have_secs = false, have_dst = false;
	bool src6 = false;
	int c;

	fpb_init("fpgen");
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.iface = optarg;
			break;
		case 'M':
			if (fpb_parse_mac(optarg, o.smac))
				fpb_die("--src-mac: bad MAC '%s'", optarg);
			have_smac = true;
			break;
		case 'm':
			if (fpb_parse_mac(optarg, o.dmac))
				fpb_die("--dst-mac: bad MAC '%s'", optarg);
			o.have_dmac = true;
			break;
		case 's':
			src6 = strchr(optarg, ':') != NULL;
			if (src6)
				o.src = fpb_parse_ip6(optarg, "--src", o.src6);
			else
				o.src = fpb_parse_ip(optarg, "--src");
			break;
		case 'd':
			o.ip6 = strchr(optarg, ':') != NULL;
			if (o.ip6)
				fpb_parse_ip6(optarg, "--dst", o.dst6);
			else
				o.dst = fpb_parse_ip(optarg, "--dst");
			have_dst = true;
			break;
		case 'S':
			o.sport = (uint16_t)fpb_parse_num(optarg, "--sport", 65535);
			break;
		case 'D':
			o.dport = (uint16_t)fpb_parse_num(optarg, "--dport", 65535);
			break;
		case 'f':
			o.flows = (uint32_t)fpb_parse_num(optarg, "--flows", 1u << 24);
			break;
		case 'k':
			o.ppi = (uint32_t)fpb_parse_num(optarg, "--ports-per-ip", 60000);
			break;
		case 'p':
			if (!strcmp(optarg, "udp"))
				o.proto = GP_UDP;
			else if (!strcmp(optarg, "syn"))
				o.proto = GP_SYN;
			else if (!strcmp(optarg, "ack"))
				o.proto = GP_ACK;
			else
				fpb_die("--proto: udp, syn or ack");
			break;
		case 'z':
			o.size = (uint32_t)fpb_parse_num(optarg, "--size", FPB_FRAME_MAX);
			break;
		case 'n':
			o.count = fpb_parse_num(optarg, "--count", 1ul << 40);
			have_count = true;
			break;
		case 't':
			o.seconds = atof(optarg);
			have_secs = o.seconds > 0 && o.seconds <= 3600;
			if (!have_secs)
				fpb_die("--seconds: between 0 and 3600");
			break;
		case 'T':
			o.stamp = true;
			break;
		case 'P':
			o.paced = fpb_parse_num(optarg, "--paced", 100000000);
			o.stamp = true;
			break;
		case 'c':
			o.cpu = (int)fpb_parse_num(optarg, "--cpu", 1023);
			break;
		case 'b':
			o.batch = (uint32_t)fpb_parse_num(optarg, "--batch", 256);
			break;
		case 'j':
			o.json = true;
			break;
		case 'q':
			o.partial = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (!o.iface || !o.have_dmac || !have_dst || !o.dport || !have_count || !have_secs) {
		fprintf(stderr, "fpgen: --iface, --dst-mac, --dst, --dport, --count and --seconds "
			"are required\n");
		usage();
		return 2;
	}
	if (!o.flows || !o.ppi || o.sport + (uint32_t)(o.flows < o.ppi ? o.flows : o.ppi) - 1 >
	    65535)
		fpb_die("--flows/--ports-per-ip/--sport: source ports beyond 65535");
	if (src6 != o.ip6)
		fpb_die("--src and --dst: one address family (IPv6 needs --src too)");
	if (o.ip6 && o.src + (uint64_t)(o.flows - 1) / o.ppi > UINT32_MAX)
		fpb_die("--src/--flows: the flows' addresses beyond the source's last 32 bits");
	if (!o.ip6)
		fpb_check_range(o.src, o.src + (o.flows - 1) / o.ppi, "--src/--flows");
	if (!have_smac && fpb_iface_mac(o.iface, o.smac))
		fpb_die("--iface %s: cannot read its MAC", o.iface);
	if (o.cpu >= 0 && fpb_pin_cpu(o.cpu))
		fpb_die("--cpu %d: %s", o.cpu, strerror(errno));
	return o.paced ? run_paced(&o) : run_live(&o);
}
