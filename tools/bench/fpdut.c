/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fpdut: run one eBPF baseline on an interface for a bounded time: TC ingress DNAT +
 * bpf_redirect (optionally with the CubeVS-shaped 1M-entry session map), or the same in XDP.
 * Prints "ready" once attached; on exit (time up, SIGINT or SIGTERM) detaches its own program
 * and prints its counters and the number of sessions in the map.
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
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpb_util.h"
#include "fpbench.h"

extern const unsigned char fpb_bpf_fpdut[];
extern const size_t fpb_bpf_fpdut_len;

static uint64_t
count_sessions(int fd)
{
	struct dut_sess_key k, next;
	uint64_t n = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		n++;
		k = next;
		prev = &k;
	}
	return n;
}

static void
usage(void)
{
	printf("usage: fpdut --iface IF --mode tc|xdp --match IP:PORT --to IP:PORT --out IF\n"
	       "             --dst-mac MAC --seconds S [--sessions] [--max-sessions N] [--json]\n"
	       "       fpdut --iface IF --mode reflect --seconds S [--json]\n"
	       "DNATs TCP/UDP to IP:PORT arriving on IF and redirects it out of --out to\n"
	       "--dst-mac. --sessions adds the CubeVS-shaped session map (--max-sessions\n"
	       "entries, 1048576 by default, preallocated). reflect sends every TCP/UDP frame,\n"
	       "IPv4 or IPv6, back where it came from with addresses and ports swapped (a remote\n"
	       "peer).\n");
}

static void
parse_ep(const char *s, uint32_t *ip, uint16_t *port, const char *what)
{
	char buf[64], *colon;

	snprintf(buf, sizeof(buf), "%s", s);
	colon = strchr(buf, ':');
	if (!colon)
		fpb_die("%s: IP:PORT expected", what);
	*colon = 0;
	*ip = htonl(fpb_parse_ip(buf, what));
	*port = htons((uint16_t)fpb_parse_num(colon + 1, what, 65535));
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "match", required_argument, NULL, 'M' },
		{ "to", required_argument, NULL, 'T' },
		{ "out", required_argument, NULL, 'o' },
		{ "dst-mac", required_argument, NULL, 'd' },
		{ "seconds", required_argument, NULL, 't' },
		{ "sessions", no_argument, NULL, 's' },
		{ "max-sessions", required_argument, NULL, 'x' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *iface = NULL, *mode = NULL, *out = NULL;
	struct dut_cfg cfg;
	struct bpf_object *obj;
	struct bpf_program *prog;
	double secs = 0;
	uint64_t st[DUT_C_MAX], nsess;
	uint32_t k = 0, max_sess = DUT_SESSIONS_MAX;
	int c, ifindex, err, cfd, sfd, xdp, reflect, json = 0, have = 0;
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 0xfb, .priority = 1);

	fpb_init("fpdut");
	memset(&cfg, 0, sizeof(cfg));
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'M':
			parse_ep(optarg, &cfg.match_daddr, &cfg.match_dport, "--match");
			have |= 1;
			break;
		case 'T':
			parse_ep(optarg, &cfg.new_daddr, &cfg.new_dport, "--to");
			have |= 2;
			break;
		case 'o':
			out = optarg;
			break;
		case 'd':
			if (fpb_parse_mac(optarg, cfg.dst_mac))
				fpb_die("--dst-mac: bad MAC");
			have |= 4;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 's':
			cfg.flags |= DUT_F_SESSIONS;
			break;
		case 'x':
			max_sess = (uint32_t)fpb_parse_num(optarg, "--max-sessions", 1u << 24);
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	reflect = mode && !strcmp(mode, "reflect");
	if (!iface || !mode || secs <= 0 || secs > 3600 ||
	    (!reflect && (!out || have != 7 || (strcmp(mode, "tc") && strcmp(mode, "xdp"))))) {
		usage();
		return 2;
	}
	xdp = !strcmp(mode, "xdp");
	ifindex = (int)if_nametoindex(iface);
	if (!ifindex)
		fpb_die("unknown interface %s", iface);
	if (!reflect) {
		cfg.out_ifindex = if_nametoindex(out);
		if (!cfg.out_ifindex)
			fpb_die("unknown interface %s", out);
		if (fpb_iface_mac(out, cfg.src_mac))
			fpb_die("cannot read the MAC of %s", out);
	}

	obj = bpf_object__open_mem(fpb_bpf_fpdut, fpb_bpf_fpdut_len, NULL);
	if (!obj)
		fpb_die("cannot open the baseline object: %s", strerror(errno));
	/* The session map is preallocated at its size, as CubeVS's is. */
	bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "dut_sess"), max_sess);
	err = bpf_object__load(obj);
	if (err)
		fpb_die("cannot load the baseline object: %s (needs root)", strerror(-err));
	prog = bpf_object__find_program_by_name(obj, reflect ? "dut_reflect" :
						xdp ? "dut_xdp" : "dut_tc");
	cfd = bpf_object__find_map_fd_by_name(obj, "dut_cfg");
	sfd = bpf_object__find_map_fd_by_name(obj, "dut_stats");
	if (!prog || cfd < 0 || sfd < 0 || bpf_map_update_elem(cfd, &k, &cfg, 0))
		fpb_die("cannot configure the baseline program");
	if (xdp) {
		err = bpf_xdp_attach(ifindex, bpf_program__fd(prog),
				     XDP_FLAGS_DRV_MODE | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	} else {
		hook.ifindex = ifindex;
		err = bpf_tc_hook_create(&hook);
		if (err == -EEXIST)
			err = 0;
		if (!err) {
			tco.prog_fd = bpf_program__fd(prog);
			err = bpf_tc_attach(&hook, &tco);
		}
	}
	if (err)
		fpb_die("cannot attach %s program to %s: %s", mode, iface, strerror(-err));
	printf("ready\n");
	fflush(stdout);
	fpb_sleep_until(fpb_now_ns() + (uint64_t)(secs * 1e9));

	if (xdp) {
		bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	} else {
		tco.prog_fd = tco.prog_id = 0;
		tco.flags = 0;
		bpf_tc_detach(&hook, &tco);
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
	if (fpb_percpu_sum(sfd, 0, st, 1) || fpb_percpu_sum(sfd, 1, st + 1, 1) ||
	    fpb_percpu_sum(sfd, 2, st + 2, 1) || fpb_percpu_sum(sfd, 3, st + 3, 1))
		memset(st, 0, sizeof(st));
	nsess = cfg.flags & DUT_F_SESSIONS ?
		count_sessions(bpf_object__find_map_fd_by_name(obj, "dut_sess")) : 0;
	if (json)
		printf("{\"forwarded\":%" PRIu64 ",\"passed\":%" PRIu64 ",\"new\":%" PRIu64
		       ",\"full\":%" PRIu64 ",\"sessions\":%" PRIu64 "}\n", st[DUT_C_FWD],
		       st[DUT_C_PASS], st[DUT_C_NEW], st[DUT_C_FULL], nsess);
	else
		printf("fpdut: forwarded %" PRIu64 " passed %" PRIu64 " new %" PRIu64 " full %"
		       PRIu64 " sessions %" PRIu64 "\n", st[DUT_C_FWD], st[DUT_C_PASS],
		       st[DUT_C_NEW], st[DUT_C_FULL], nsess);
	bpf_object__close(obj);
	return 0;
}
