/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cvs_common.h"
#include "fpb_util.h"
#include "fpbench.h"

volatile sig_atomic_t fpb_stop;
static const char *fpb_prog = "fpb";

static void
on_signal(int sig)
{
	(void)sig;
	fpb_stop = 1;
}

static int
libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level > LIBBPF_WARN && !getenv("FPB_DEBUG"))
		return 0;
	fprintf(stderr, "%s: libbpf: ", fpb_prog);
	return vfprintf(stderr, fmt, ap);
}

void
fpb_init(const char *prog)
{
	struct sigaction sa;

	fpb_prog = prog;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	libbpf_set_print(libbpf_print);
}

void
fpb_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cvs_verr(fpb_prog, fmt, ap);
	va_end(ap);
	exit(1);
}

uint64_t
fpb_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
fpb_sleep_until(uint64_t t_ns)
{
	while (!fpb_stop) {
		uint64_t now = fpb_now_ns();
		struct timespec ts;
		uint64_t d;

		if (now >= t_ns)
			return;
		/* Short naps so a signal is noticed quickly. */
		d = t_ns - now > 100000000ull ? 100000000ull : t_ns - now;
		ts.tv_sec = 0;
		ts.tv_nsec = (long)d;
		nanosleep(&ts, NULL);
	}
}

int
fpb_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

uint32_t
fpb_parse_ip(const char *s, const char *what)
{
	struct in_addr a;
	uint32_t h;

	if (inet_pton(AF_INET, s, &a) != 1)
		fpb_die("%s: '%s' is not an IPv4 address", what, s);
	h = ntohl(a.s_addr);
	fpb_check_range(h, h, what);
	return h;
}

void
fpb_check_range(uint32_t first, uint32_t last, const char *what)
{
	/* The kit only ever talks within the benchmarking range (RFC 2544 / RFC 5735). */
	if ((first & FPB_NET_MASK) != FPB_NET || (last & FPB_NET_MASK) != FPB_NET || last < first)
		fpb_die("%s: refusing addresses outside 198.18.0.0/15", what);
}

uint32_t
fpb_parse_ip6(const char *s, const char *what, uint8_t a[16])
{
	static const uint8_t net[6] = FPB_NET6;

	if (inet_pton(AF_INET6, s, a) != 1)
		fpb_die("%s: '%s' is not an IPv6 address", what, s);
	if (memcmp(a, net, sizeof(net)))
		fpb_die("%s: refusing addresses outside 2001:2::/48", what);
	return (uint32_t)a[12] << 24 | (uint32_t)a[13] << 16 | (uint32_t)a[14] << 8 | a[15];
}

int
fpb_parse_mac(const char *s, uint8_t mac[6])
{
	unsigned int b[6];
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

int
fpb_iface_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0)
		rc = -errno;
	else
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
	return rc;
}

unsigned long
fpb_parse_num(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || v > max)
		fpb_die("%s: '%s' is not a number up to %lu", what, s, max);
	return v;
}

struct bpf_object *
fpb_bpf_open(const unsigned char *buf, size_t len, const char *name)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *obj;
	int err;

	obj = bpf_object__open_mem(buf, len, &oo);
	if (!obj) {
		fprintf(stderr, "%s: cannot open BPF object %s: %s\n", fpb_prog, name,
			strerror(errno));
		return NULL;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "%s: cannot load BPF object %s: %s (needs root or CAP_BPF and "
			"CAP_NET_ADMIN)\n", fpb_prog, name, strerror(-err));
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

int
fpb_percpu_sum(int map_fd, uint32_t key, uint64_t *out, size_t nfields)
{
	int ncpu = libbpf_num_possible_cpus(), c;
	uint64_t *v;
	size_t f;

	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu * nfields, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map_fd, &key, v)) {
		free(v);
		return -errno;
	}
	memset(out, 0, nfields * sizeof(*out));
	for (c = 0; c < ncpu; c++)
		for (f = 0; f < nfields; f++)
			out[f] += v[(size_t)c * nfields + f];
	free(v);
	return 0;
}
