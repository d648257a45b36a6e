/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "log.h"
#include "nexthop.h"
#include "worker.h"

#define NL_BUF 16384

struct nl_req {
	struct nlmsghdr h;
	union {
		struct rtmsg rt;
		struct ndmsg nd;
	};
	char attrs[64];
};

static void
nl_attr(struct nl_req *q, uint16_t type, const void *data, uint16_t len)
{
	struct rtattr *a = (struct rtattr *)((char *)q + NLMSG_ALIGN(q->h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	q->h.nlmsg_len = NLMSG_ALIGN(q->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Send a request and read the answer into buf (one message expected). */
static int
nl_query(struct nexthop *n, struct nl_req *q, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = n->q_fd, .events = POLLIN };
	ssize_t r;

	q->h.nlmsg_seq = ++n->seq;
	if (send(n->q_fd, q, q->h.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *h;

		if (poll(&pfd, 1, 200) <= 0)
			return -ETIMEDOUT;
		r = recv(n->q_fd, buf, len, 0);
		if (r < 0)
			return -errno;
		h = (struct nlmsghdr *)buf;
		if (!NLMSG_OK(h, (size_t)r) || h->nlmsg_seq != n->seq)
			continue;	/* a late answer to an earlier query */
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			return e->error;
		}
		return (int)r;
	}
}

/* Route to dst: the neighbour to use (gateway or dst itself). */
static int
nh_route(struct nexthop *n, uint32_t dst, uint32_t *via)
{
	struct nl_req q;
	char buf[NL_BUF];
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	struct rtmsg *rt;
	struct rtattr *a;
	int len, oif = 0;

	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
	q.h.nlmsg_type = RTM_GETROUTE;
	q.h.nlmsg_flags = NLM_F_REQUEST;
	q.rt.rtm_family = AF_INET;
	q.rt.rtm_dst_len = 32;
	nl_attr(&q, RTA_DST, &dst, 4);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (h->nlmsg_type != RTM_NEWROUTE)
		return -ENOENT;
	rt = NLMSG_DATA(h);
	*via = dst;
	len = (int)RTM_PAYLOAD(h);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY)
			memcpy(via, RTA_DATA(a), 4);
		else if (a->rta_type == RTA_OIF)
			memcpy(&oif, RTA_DATA(a), 4);
	}
	if (rt->rtm_type != RTN_UNICAST || oif != n->ifindex)
		return -ENETUNREACH;
	return 0;
}

static bool
nh_state_valid(uint16_t state)
{
	return state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT |
			NUD_NOARP);
}

/* Parse a neighbour message of the world interface; true with ip/mac when usable. */
static bool
nh_parse_neigh(struct nexthop *n, struct nlmsghdr *h, uint32_t *ip, uint8_t mac[6])
{
	struct ndmsg *nd = NLMSG_DATA(h);
	struct rtattr *a;
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	bool have_ip = false, have_mac = false;

	if (nd->ndm_family != AF_INET || nd->ndm_ifindex != n->ifindex)
		return false;
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == 4) {
			memcpy(ip, RTA_DATA(a), 4);
			have_ip = true;
		} else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	return have_ip && have_mac && h->nlmsg_type == RTM_NEWNEIGH &&
	       nh_state_valid(nd->ndm_state);
}

/* Known MAC of a neighbour, or ask the kernel to resolve it. */
static bool
nh_neigh(struct nexthop *n, uint32_t ip, uint8_t mac[6])
{
	struct nl_req q;
	char buf[NL_BUF];
	uint32_t got;
	int len;

	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	q.h.nlmsg_type = RTM_GETNEIGH;
	q.h.nlmsg_flags = NLM_F_REQUEST;
	q.nd.ndm_family = AF_INET;
	q.nd.ndm_ifindex = n->ifindex;
	nl_attr(&q, NDA_DST, &ip, 4);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len > 0 && nh_parse_neigh(n, (struct nlmsghdr *)buf, &got, mac) && got == ip)
		return true;
	/* Not known (or not valid): let the kernel resolve it; a notification follows. */
	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	q.h.nlmsg_type = RTM_NEWNEIGH;
	q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	q.nd.ndm_family = AF_INET;
	q.nd.ndm_ifindex = n->ifindex;
	q.nd.ndm_state = NUD_NONE;
	q.nd.ndm_flags = NTF_USE;
	nl_attr(&q, NDA_DST, &ip, 4);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len < 0 && len != -ETIMEDOUT)
		CVS_LOG(DEBUG, ctl, "neighbour resolution request failed: %s", strerror(-len));
	return false;
}

static void
nh_track(struct nexthop *n, uint32_t dst, uint32_t via, const uint8_t *mac)
{
	uint32_t i;

	for (i = 0; i < n->n; i++)
		if (n->dst[i] == dst)
			break;
	if (i == n->n) {
		if (n->n == NH_TRACK_MAX)
			return;	/* cache full: the worker falls back to the gateway */
		n->n++;
	}
	n->dst[i] = dst;
	n->via[i] = via;
	n->resolved[i] = mac != NULL;
	if (mac) {
		dp_nh_store(n->nh, dst, mac);
		n->resolutions++;
	}
}

static void
nh_default(struct nexthop *n)
{
	uint8_t mac[6];
	uint32_t via = 0;

	/* The route to an address nobody owns is the default route. */
	if (!nh_route(n, htonl(0x01010101), &via) && via != htonl(0x01010101)) {
		n->gw_ip = via;
		nh_track(n, 0, via, nh_neigh(n, via, mac) ? mac : NULL);
		if (n->resolved[0] || !n->have_fallback)
			return;
	}
	if (n->have_fallback)
		dp_nh_store(n->nh, 0, n->fallback);
}

int
nexthop_open(struct nexthop *n, int ifindex, struct dp_nh *nh, struct worker *w, uint32_t nw,
	     const uint8_t *fallback, char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	memset(n, 0, sizeof(*n));
	n->ifindex = ifindex;
	n->nh = nh;
	n->w = w;
	n->nw = nw;
	if (fallback) {
		n->have_fallback = true;
		memcpy(n->fallback, fallback, 6);
	}
	n->q_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	n->ev_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	sa.nl_groups = RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE;
	if (n->q_fd < 0 || n->ev_fd < 0 || bind(n->ev_fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "cannot open netlink for next hops: %s", strerror(errno));
		nexthop_close(n);
		return -errno;
	}
	nh_default(n);
	return 0;
}

static void
nh_resolve(struct nexthop *n, uint32_t dst)
{
	uint8_t mac[6];
	uint32_t via;

	n->requests++;
	if (nh_route(n, dst, &via))
		return;
	nh_track(n, dst, via, nh_neigh(n, via, mac) ? mac : NULL);
}

void
nexthop_poll(struct nexthop *n)
{
	char buf[NL_BUF];
	uint32_t dst, budget = 64, k;
	bool flush = false;
	ssize_t len;

	for (k = 0; k < n->nw; k++) {
		while (budget && dp_nh_next_request(&n->w[k].nhreq, &dst)) {
			uint32_t i;

			budget--;
			/* Requests repeat while a resolution is pending: look up each once. */
			for (i = 0; i < n->n && n->dst[i] != dst; i++)
				;
			if (i == n->n || n->resolved[i])
				nh_resolve(n, dst);
		}
	}
	while ((len = recv(n->ev_fd, buf, sizeof(buf), 0)) > 0) {
		struct nlmsghdr *h;

		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len);
		     h = NLMSG_NEXT(h, len)) {
			uint8_t mac[6];
			uint32_t ip, i;

			if (h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE ||
			    h->nlmsg_type == RTM_DELNEIGH) {
				flush = true;
				continue;
			}
			if (h->nlmsg_type != RTM_NEWNEIGH || !nh_parse_neigh(n, h, &ip, mac))
				continue;
			for (i = 0; i < n->n; i++)
				if (n->via[i] == ip)
					nh_track(n, n->dst[i], ip, mac);
		}
	}
	if (flush) {
		/* Routes changed: forget everything; workers ask again. */
		dp_nh_clear(n->nh);
		n->n = 0;
		nh_default(n);
	}
}

void
nexthop_close(struct nexthop *n)
{
	if (n->q_fd > 0)
		close(n->q_fd);
	if (n->ev_fd > 0)
		close(n->ev_fd);
	n->q_fd = n->ev_fd = -1;
}
