/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "hostlisten.h"

/* Bounded so that a kernel that keeps answering can never hold the control thread. */
#define HL_MAX_MESSAGES	65536

/* A socket to ask on; a kernel without the tcp_diag module would leave recv() waiting. */
static int
hl_open(void)
{
	struct timeval tv = { .tv_sec = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * With --node-ip6 a host port answers on the node's IPv6 address too (steer6()), so IPv6
 * listeners that address reaches count as well: on it, or on [::] even when V6ONLY. Set once
 * at start (hostlisten_node_ip6()), before any scan.
 */
static uint32_t hl_node6[4];
static bool hl_have6;

void
hostlisten_node_ip6(const uint8_t ip6[16])
{
	hl_have6 = ip6 != NULL;
	if (ip6)
		memcpy(hl_node6, ip6, 16);
}

/* port 0: a dump of every TCP listener of the family; else the lookup of src:port. */
static int
hl_request(int fd, uint8_t family, const uint32_t src[4], uint16_t port)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	memset(&req, 0, sizeof(req));
	req.nlh.nlmsg_len = sizeof(req);
	req.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	/* A lookup asks for the acknowledgement that ends it, as NLMSG_DONE ends a dump. */
	req.nlh.nlmsg_flags = NLM_F_REQUEST | (port ? NLM_F_ACK : NLM_F_DUMP);
	req.r.sdiag_family = family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = 1u << TCP_LISTEN;
	if (port) {
		memcpy(req.r.id.idiag_src, src, family == AF_INET6 ? 16 : 4);
		req.r.id.idiag_sport = htons(port);
		req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	}
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* An IPv6 listener reaches IPv4 clients only when it is not V6ONLY; the kernel says which. */
static bool
hl_v6only(const struct inet_diag_msg *m, int len)
{
	const struct rtattr *a = (const struct rtattr *)(m + 1);
	int rem = len - (int)NLMSG_ALIGN(sizeof(*m));

	for (; RTA_OK(a, rem); a = RTA_NEXT(a, rem))
		if (a->rta_type == INET_DIAG_SKV6ONLY && RTA_PAYLOAD(a) >= 1)
			return *(const uint8_t *)RTA_DATA(a) != 0;
	return false;	/* not reported: assume it shadows, the safe side */
}

static bool
hl_reaches(const struct inet_diag_msg *m, int len, uint32_t node_ip)
{
	const uint32_t *a = m->id.idiag_src;

	if (m->idiag_family == AF_INET)
		return a[0] == 0 || a[0] == node_ip;
	if (m->idiag_family != AF_INET6)
		return false;
	if (a[0] == 0 && a[1] == 0 && a[2] == 0 && a[3] == 0)
		return hl_have6 || !hl_v6only(m, len);
	if (hl_have6 && !memcmp(a, hl_node6, 16))
		return true;
	return a[0] == 0 && a[1] == 0 && a[2] == htonl(0xffff) && a[3] == node_ip;
}

/* Reads one answer (a dump or a lookup) to its end; the ports it marked or a negative errno. */
static int
hl_collect(int fd, uint32_t node_ip, uint16_t lo, uint16_t hi, uint64_t *bits)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	int found = 0, msgs = 0;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;
		int rem;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		rem = (int)n;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, rem); h = NLMSG_NEXT(h, rem)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);
			int len = (int)h->nlmsg_len - NLMSG_HDRLEN;
			uint16_t port, i;

			if (h->nlmsg_type == NLMSG_DONE)
				return found;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : found;	/* 0: a lookup's ack */
			}
			if (++msgs > HL_MAX_MESSAGES)
				return -E2BIG;
			if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY || len < (int)sizeof(*m))
				continue;
			port = ntohs(m->id.idiag_sport);
			if (port < lo || port > hi || !hl_reaches(m, len, node_ip))
				continue;
			i = port - lo;
			if (!(bits[i / 64] & (1ull << (i % 64)))) {
				bits[i / 64] |= 1ull << (i % 64);
				found++;
			}
		}
	}
}

/*
 * One port: the kernel's own lookup of the socket a connection from outside to
 * node_ip:port would reach (inet_diag without NLM_F_DUMP looks the 4-tuple up, established
 * first, then listeners, dual-stack [::] included). No remote has address 0.0.0.0, so
 * what it finds is a listener, read as a dump's answer is (hl_collect). O(1), where the dump
 * walks every bucket of the listening hash (tens of thousands on a big host) whatever the
 * number of listeners.
 */
int
hostlisten_check(uint32_t node_ip, uint16_t port)
{
	uint32_t src[4] = { node_ip };
	uint64_t bit = 0;
	int fd = hl_open(), ret;

	if (fd < 0)
		return fd;
	ret = hl_request(fd, AF_INET, src, port);
	if (!ret)
		ret = hl_collect(fd, node_ip, port, port, &bit);
	/* And a connection to [node6]:port, which reaches [::] listeners, V6ONLY or not. */
	if ((ret == 0 || ret == -ENOENT) && hl_have6) {
		ret = hl_request(fd, AF_INET6, hl_node6, port);
		if (!ret)
			ret = hl_collect(fd, node_ip, port, port, &bit);
	}
	close(fd);
	return ret == -ENOENT ? 0 : ret;	/* ENOENT: nothing there, the usual answer */
}

int
hostlisten_scan(uint32_t node_ip, uint16_t lo, uint16_t hi, uint64_t *bits)
{
	static const uint8_t families[] = { AF_INET, AF_INET6 };
	int fd, total = 0, ret = 0;
	unsigned int f;

	if (lo > hi)
		return -EINVAL;
	fd = hl_open();
	if (fd < 0)
		return fd;
	for (f = 0; f < sizeof(families); f++) {
		ret = hl_request(fd, families[f], NULL, 0);
		if (ret == 0)
			ret = hl_collect(fd, node_ip, lo, hi, bits);
		/* A node without IPv6 answers ENOENT for AF_INET6: nothing listens there. */
		if (ret == -ENOENT && families[f] == AF_INET6)
			ret = 0;
		if (ret < 0)
			break;
		total += ret;
	}
	close(fd);
	return ret < 0 ? ret : total;
}
