/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "cvs_common.h"
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

/*
 * Route to dst (alen bytes of 'family'): the neighbour to use, the gateway or dst itself.
 * Only a unicast route out of the world interface counts.
 */
static int
nh_route_af(struct nexthop *n, int family, const void *dst, uint16_t alen, void *via)
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
	q.rt.rtm_family = (uint8_t)family;
	q.rt.rtm_dst_len = (uint8_t)(alen * 8);
	nl_attr(&q, RTA_DST, dst, alen);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (h->nlmsg_type != RTM_NEWROUTE)
		return -ENOENT;
	rt = NLMSG_DATA(h);
	memcpy(via, dst, alen);
	len = (int)RTM_PAYLOAD(h);
	for (a = RTM_RTA(rt); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == alen)
			memcpy(via, RTA_DATA(a), alen);
		else if (a->rta_type == RTA_OIF)
			memcpy(&oif, RTA_DATA(a), 4);
	}
	if (rt->rtm_type != RTN_UNICAST || oif != n->ifindex)
		return -ENETUNREACH;
	return 0;
}

static int
nh_route(struct nexthop *n, uint32_t dst, uint32_t *via)
{
	return nh_route_af(n, AF_INET, &dst, 4, via);
}

static bool
nh_state_valid(uint16_t state)
{
	return state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT |
			NUD_NOARP);
}

/*
 * Parse a neighbour message of the world interface in 'family' (its addresses alen bytes);
 * true with ip/mac when usable.
 */
static bool
nh_parse_neigh_af(struct nexthop *n, struct nlmsghdr *h, int family, void *ip, uint16_t alen,
		  uint8_t mac[6])
{
	struct ndmsg *nd = NLMSG_DATA(h);
	struct rtattr *a;
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*nd)));
	bool have_ip = false, have_mac = false;

	if (nd->ndm_family != family || nd->ndm_ifindex != n->ifindex)
		return false;
	for (a = (struct rtattr *)((char *)nd + NLMSG_ALIGN(sizeof(*nd))); RTA_OK(a, len);
	     a = RTA_NEXT(a, len)) {
		if (a->rta_type == NDA_DST && RTA_PAYLOAD(a) == alen) {
			memcpy(ip, RTA_DATA(a), alen);
			have_ip = true;
		} else if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
			memcpy(mac, RTA_DATA(a), 6);
			have_mac = true;
		}
	}
	return have_ip && have_mac && h->nlmsg_type == RTM_NEWNEIGH &&
	       nh_state_valid(nd->ndm_state);
}

static bool
nh_parse_neigh(struct nexthop *n, struct nlmsghdr *h, uint32_t *ip, uint8_t mac[6])
{
	return nh_parse_neigh_af(n, h, AF_INET, ip, 4, mac);
}

/* Known MAC of a neighbour in 'family', or ask the kernel to resolve it. */
static bool
nh_neigh_af(struct nexthop *n, int family, const void *ip, uint16_t alen, uint8_t mac[6])
{
	struct nl_req q;
	char buf[NL_BUF];
	uint8_t got[16];
	int len;

	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	q.h.nlmsg_type = RTM_GETNEIGH;
	q.h.nlmsg_flags = NLM_F_REQUEST;
	q.nd.ndm_family = (uint8_t)family;
	q.nd.ndm_ifindex = n->ifindex;
	nl_attr(&q, NDA_DST, ip, alen);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len > 0 && nh_parse_neigh_af(n, (struct nlmsghdr *)buf, family, got, alen, mac) &&
	    !memcmp(got, ip, alen))
		return true;
	/* Not known (or not valid): let the kernel resolve it; a notification follows. */
	memset(&q, 0, sizeof(q));
	q.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg));
	q.h.nlmsg_type = RTM_NEWNEIGH;
	q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK;
	q.nd.ndm_family = (uint8_t)family;
	q.nd.ndm_ifindex = n->ifindex;
	q.nd.ndm_state = NUD_NONE;
	q.nd.ndm_flags = NTF_USE;
	nl_attr(&q, NDA_DST, ip, alen);
	len = nl_query(n, &q, buf, sizeof(buf));
	if (len < 0 && len != -ETIMEDOUT)
		CVS_LOG(DEBUG, ctl, "neighbour resolution request failed: %s", strerror(-len));
	return false;
}

static bool
nh_neigh(struct nexthop *n, uint32_t ip, uint8_t mac[6])
{
	return nh_neigh_af(n, AF_INET, &ip, 4, mac);
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

/*
 * IPv6: the node's default router on the world link is the one next hop (dp.h, nh6_mac), so
 * only it is tracked: from the default route, its neighbour entry, and their notifications.
 * 2001:db8::1 (RFC 3849, documentation) is nobody's: the route to it is the default route.
 */
static const uint8_t nh6_probe[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };

#define NH6_RETRY_MS	1000	/* asking the kernel again while the router's MAC is unknown */

static void
nh6_publish(struct nexthop *n, const uint8_t *mac)
{
	uint64_t v = mac ? dp_mac_pack(mac) : 0;
	char ip[INET6_ADDRSTRLEN];

	if (v == n->mac6)
		return;
	n->mac6 = v;
	atomic_store_explicit(n->nh6_mac, v, memory_order_release);
	inet_ntop(AF_INET6, n->gw6, ip, sizeof(ip));
	if (mac)
		CVS_LOG(INFO, ctl, "IPv6 next hop %s at %02x:%02x:%02x:%02x:%02x:%02x", ip, mac[0],
			mac[1], mac[2], mac[3], mac[4], mac[5]);
	else
		CVS_LOG(WARNING, ctl, "IPv6 next hop lost (router %s): IPv6 egress waits for it",
			n->have_gw6 ? ip : "none");
}

/* The default router and its MAC, asked again: at start and when routes or it changed. */
static void
nh6_lookup(struct nexthop *n)
{
	uint8_t via[16], mac[6];
	bool had = n->have_gw6;

	n->retry6_ms = cvs_now_ms() + NH6_RETRY_MS;
	n->have_gw6 = !nh_route_af(n, AF_INET6, nh6_probe, 16, via) &&
		      memcmp(via, nh6_probe, 16);
	if (!n->have_gw6) {
		if (had || !n->said_no_gw6)
			CVS_LOG(WARNING, ctl, "no IPv6 default route through a router on the world "
				"interface: IPv6 egress waits for one");
		n->said_no_gw6 = true;
		nh6_publish(n, NULL);
		return;
	}
	/* Another router: its MAC is not the old one's. */
	if (had && memcmp(via, n->gw6, 16))
		nh6_publish(n, NULL);
	memcpy(n->gw6, via, 16);
	if (nh_neigh_af(n, AF_INET6, n->gw6, 16, mac))
		nh6_publish(n, mac);
}

int
nexthop_open_ip6(struct nexthop *n, _Atomic uint64_t *mac, char *err, size_t errlen)
{
	int grp = RTNLGRP_IPV6_ROUTE;

	/* Neighbours of every family come already (RTMGRP_NEIGH); IPv6 routes join here. */
	if (setsockopt(n->ev_fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp))) {
		snprintf(err, errlen, "cannot listen to IPv6 route changes: %s", strerror(errno));
		return -errno;
	}
	n->nh6_mac = mac;
	n->mac6 = 0;
	atomic_store_explicit(mac, 0, memory_order_release);
	nh6_lookup(n);
	return 0;
}

/*
 * An IPv6 notification: a route change or the router's entry gone means a new look; its
 * entry valid gives its MAC. True when the message was an IPv6 route (the IPv4 cache does
 * not care); neighbour messages go on to the IPv4 code as they always did.
 */
static bool
nh6_event(struct nexthop *n, struct nlmsghdr *h, bool *again)
{
	uint8_t ip[16], mac[6];
	bool route = h->nlmsg_type == RTM_NEWROUTE || h->nlmsg_type == RTM_DELROUTE;

	if (h->nlmsg_len < NLMSG_LENGTH(1) || *(uint8_t *)NLMSG_DATA(h) != AF_INET6)
		return false;
	if (route) {
		*again = true;
		return true;
	}
	if (!n->have_gw6)
		return false;
	if (nh_parse_neigh_af(n, h, AF_INET6, ip, 16, mac)) {
		if (!memcmp(ip, n->gw6, 16))
			nh6_publish(n, mac);
	} else if (h->nlmsg_type == RTM_DELNEIGH) {
		*again = true;
	}
	return false;
}

void
nexthop_poll(struct nexthop *n)
{
	char buf[NL_BUF];
	uint32_t dst, budget = 64, k;
	bool flush = false, again6 = false;
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

			if (n->nh6_mac && nh6_event(n, h, &again6))
				continue;
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
	/* No notification follows a resolution that failed: ask again now and then. */
	if (n->nh6_mac && (again6 || (n->have_gw6 && !n->mac6 && cvs_now_ms() >= n->retry6_ms)))
		nh6_lookup(n);
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
