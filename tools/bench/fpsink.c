/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fpsink: attach the counting XDP_DROP program to an interface for a bounded time and report
 * the receive rate over a measurement window (after --warmup), plus latency percentiles and
 * loss when the frames carry fpgen's stamps. Detaches its own program when done or on
 * SIGINT/SIGTERM.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpb_util.h"
#include "fpbench.h"

extern const unsigned char fpb_bpf_fpsink[];
extern const size_t fpb_bpf_fpsink_len;

#define NF (sizeof(struct fps_cnt) / sizeof(uint64_t))

struct snap {
	struct fps_cnt c;
	uint64_t hist[FPS_HIST_MAX];
	uint64_t t;
};

static int cnt_fd, hist_fd;

static void
snapshot(struct snap *s)
{
	uint32_t i;

	s->t = fpb_now_ns();
	if (fpb_percpu_sum(cnt_fd, 0, (uint64_t *)&s->c, NF))
		memset(&s->c, 0, sizeof(s->c));
	for (i = 0; i < FPS_HIST_MAX; i++)
		if (fpb_percpu_sum(hist_fd, i, &s->hist[i], 1))
			s->hist[i] = 0;
}

static double
percentile(const uint64_t *h, uint64_t total, double q)
{
	uint64_t want = (uint64_t)(q * (double)total), acc = 0;
	uint32_t i;

	if (!total)
		return 0;
	for (i = 0; i < FPS_HIST_MAX; i++) {
		acc += h[i];
		if (acc > want) {
			/* Middle of the bucket. */
			uint64_t lo = fps_bucket_lo(i);
			uint64_t hi = i + 1 < FPS_HIST_MAX ? fps_bucket_lo(i + 1) : lo;

			return (double)(lo + hi) / 2;
		}
	}
	return (double)fps_bucket_lo(FPS_HIST_MAX - 1);
}

static void
usage(void)
{
	printf("usage: fpsink --iface IF --seconds S [--warmup W] [--skb] [--json]\n"
	       "Drops and counts every frame arriving on IF for W + S seconds and reports the\n"
	       "rate over the last S seconds; stamped frames (fpgen --stamp/--paced) add\n"
	       "latency percentiles and loss. Prints 'ready' once attached.\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "iface", required_argument, NULL, 'i' },
		{ "seconds", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "skb", no_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *iface = NULL;
	double secs = 0, warm = 0;
	uint32_t flags = XDP_FLAGS_DRV_MODE, i;
	struct snap *a, *b;
	struct bpf_object *obj;
	struct bpf_program *prog;
	uint64_t pk, hist_total = 0, dt;
	int ifindex, json = 0, c, err;
	double pps;

	fpb_init("fpsink");
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			iface = optarg;
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'w':
			warm = atof(optarg);
			break;
		case 'k':
			flags = XDP_FLAGS_SKB_MODE;
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
	if (!iface || secs <= 0 || secs > 3600 || warm < 0 || warm > 3600) {
		fprintf(stderr, "fpsink: --iface and --seconds (0 < S <= 3600) are required\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(iface);
	if (!ifindex)
		fpb_die("--iface %s: %s", iface, strerror(errno));
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	if (!a || !b)
		fpb_die("out of memory");
	obj = fpb_bpf_open(fpb_bpf_fpsink, fpb_bpf_fpsink_len, "fpsink");
	if (!obj)
		return 1;
	prog = bpf_object__find_program_by_name(obj, "fps_prog");
	cnt_fd = bpf_object__find_map_fd_by_name(obj, "fps_cnt");
	hist_fd = bpf_object__find_map_fd_by_name(obj, "fps_hist");
	if (!prog || cnt_fd < 0 || hist_fd < 0)
		fpb_die("sink object lacks its program or maps");
	err = bpf_xdp_attach(ifindex, bpf_program__fd(prog), flags | XDP_FLAGS_UPDATE_IF_NOEXIST,
			     NULL);
	if (err)
		fpb_die("cannot attach XDP to %s: %s (another program there?)", iface,
			strerror(-err));
	printf("ready\n");
	fflush(stdout);

	fpb_sleep_until(fpb_now_ns() + (uint64_t)(warm * 1e9));
	snapshot(a);
	fpb_sleep_until(a->t + (uint64_t)(secs * 1e9));
	snapshot(b);
	bpf_xdp_detach(ifindex, flags, NULL);

	dt = b->t - a->t;
	pk = (uint64_t)(b->c.pkts) - a->c.pkts;
	pps = dt ? (double)pk * 1e9 / (double)dt : 0;
	for (i = 0; i < FPS_HIST_MAX; i++) {
		b->hist[i] -= a->hist[i];
		hist_total += b->hist[i];
	}
	if (json) {
		printf("{\"iface\":\"%s\",\"window_s\":%.3f,\"packets\":%" PRIu64 ",\"pps\":%.0f,"
		       "\"bytes\":%" PRIu64 ",\"total_packets\":%" PRIu64 ",\"stamped_total\":%"
		       PRIu64 ",\"max_seq\":%" PRIu64 ",\"reordered\":%" PRIu64,
		       iface, dt / 1e9, pk, pps, (uint64_t)(b->c.bytes - a->c.bytes),
		       (uint64_t)(b->c.pkts), (uint64_t)(b->c.stamped),
		       (uint64_t)(b->c.max_seq), (uint64_t)(b->c.reordered));
		if (hist_total)
			printf(",\"latency_ns\":{\"samples\":%" PRIu64 ",\"p50\":%.0f,\"p99\":%.0f,"
			       "\"p999\":%.0f,\"mean\":%.0f,\"max\":%" PRIu64 "}", hist_total,
			       percentile(b->hist, hist_total, 0.50),
			       percentile(b->hist, hist_total, 0.99),
			       percentile(b->hist, hist_total, 0.999),
			       (double)(b->c.lat_sum_ns - a->c.lat_sum_ns) / (double)hist_total,
			       (uint64_t)(b->c.lat_max_ns));
		printf("}\n");
	} else {
		printf("fpsink: %s: %" PRIu64 " frames in %.3f s = %.3f Mpps (total %" PRIu64
		       ", stamped %" PRIu64 ", reordered %" PRIu64 ")\n", iface, pk, dt / 1e9,
		       pps / 1e6, (uint64_t)(b->c.pkts), (uint64_t)(b->c.stamped), (uint64_t)(b->c.reordered));
		if (hist_total)
			printf("fpsink: latency ns p50 %.0f p99 %.0f p99.9 %.0f max %" PRIu64 "\n",
			       percentile(b->hist, hist_total, 0.50),
			       percentile(b->hist, hist_total, 0.99),
			       percentile(b->hist, hist_total, 0.999), (uint64_t)(b->c.lat_max_ns));
	}
	bpf_object__close(obj);
	free(a);
	free(b);
	return 0;
}
