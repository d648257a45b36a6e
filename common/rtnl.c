/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sys/socket.h>

#include "rtnl.h"

#define RTNL_BUF	16384

struct rtnl_req {
	union {
		struct {
			struct nlmsghdr h;
			struct ifinfomsg ifi;
		};
		char raw[1024];
	};
};

static struct rtattr *
rtnl_attr(struct rtnl_req *q, uint16_t type, const void *data, uint16_t len)
{
	struct nlmsghdr *h = &q->h;
	struct rtattr *a = (struct rtattr *)(q->raw + NLMSG_ALIGN(h->nlmsg_len));

	a->rta_type = type;
	a->rta_len = (uint16_t)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	h->nlmsg_len = NLMSG_ALIGN(h->nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

/* Close a nest opened by rtnl_attr(h, type, NULL, 0). */
static void
rtnl_nest_end(struct rtnl_req *q, struct rtattr *nest)
{
	nest->rta_len = (uint16_t)(q->raw + q->h.nlmsg_len - (char *)nest);
}

/*
 * Send one request and read its answer: the message itself into buf for a GET, the ack
 * otherwise. A socket per request: they are rare (a registration, a start), never per packet.
 */
static int
rtnl_call(struct nlmsghdr *h, char *buf, size_t len)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), ret;
	struct pollfd pfd = { .events = POLLIN };
	ssize_t r;

	if (fd < 0)
		return -errno;
	pfd.fd = fd;
	h->nlmsg_seq = 1;
	if (sendto(fd, h, h->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *m;

		if (poll(&pfd, 1, 1000) <= 0) {
			ret = -ETIMEDOUT;
			goto out;
		}
		r = recv(fd, buf, len, 0);
		if (r < 0) {
			ret = -errno;
			goto out;
		}
		m = (struct nlmsghdr *)buf;
		if (!NLMSG_OK(m, (size_t)r) || m->nlmsg_seq != 1)
			continue;
		if (m->nlmsg_type == NLMSG_ERROR) {
			ret = ((struct nlmsgerr *)NLMSG_DATA(m))->error;
			goto out;
		}
		ret = (int)r;
		goto out;
	}
out:
	close(fd);
	return ret;
}

static void
rtnl_req_init(struct rtnl_req *q, uint16_t type, uint16_t flags, int ifindex)
{
	memset(q, 0, sizeof(*q));
	q->h.nlmsg_len = NLMSG_LENGTH(sizeof(q->ifi));
	q->h.nlmsg_type = type;
	q->h.nlmsg_flags = NLM_F_REQUEST | flags;
	q->ifi.ifi_family = AF_UNSPEC;
	q->ifi.ifi_index = ifindex;
}

uint32_t
rtnl_xdp_nest_id(struct rtattr *xdp)
{
	int left = (int)RTA_PAYLOAD(xdp);
	struct rtattr *a;
	uint32_t id = 0;

	for (a = RTA_DATA(xdp); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if ((a->rta_type == IFLA_XDP_PROG_ID || a->rta_type == IFLA_XDP_DRV_PROG_ID ||
		     a->rta_type == IFLA_XDP_SKB_PROG_ID) && RTA_PAYLOAD(a) >= 4 && !id)
			memcpy(&id, RTA_DATA(a), 4);
	}
	return id;
}

int
rtnl_xdp_prog_id(int ifindex, uint32_t *id)
{
	static __thread char buf[RTNL_BUF];
	struct rtnl_req q;
	struct nlmsghdr *m = (struct nlmsghdr *)buf;
	struct rtattr *a;
	int ret, left;

	*id = 0;
	if (ifindex <= 0)
		return -ENODEV;
	rtnl_req_init(&q, RTM_GETLINK, 0, ifindex);
	ret = rtnl_call(&q.h, buf, sizeof(buf));
	if (ret < 0)
		return ret;
	if (m->nlmsg_type != RTM_NEWLINK)
		return -EPROTO;
	left = (int)IFLA_PAYLOAD(m);
	for (a = IFLA_RTA(NLMSG_DATA(m)); RTA_OK(a, left); a = RTA_NEXT(a, left))
		if (a->rta_type == IFLA_XDP)
			*id = rtnl_xdp_nest_id(a);
	return 0;
}

int
rtnl_veth_add(const char *name, const char *peer, uint32_t mtu)
{
	struct rtnl_req q;
	struct rtattr *info, *data, *pinfo;
	struct ifinfomsg pifi = { .ifi_family = AF_UNSPEC };
	char buf[1024];
	int ret;

	rtnl_req_init(&q, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK, 0);
	rtnl_attr(&q, IFLA_IFNAME, name, (uint16_t)strlen(name) + 1);
	rtnl_attr(&q, IFLA_MTU, &mtu, sizeof(mtu));
	info = rtnl_attr(&q, IFLA_LINKINFO, NULL, 0);
	rtnl_attr(&q, IFLA_INFO_KIND, "veth", 4);
	data = rtnl_attr(&q, IFLA_INFO_DATA, NULL, 0);
	pinfo = rtnl_attr(&q, VETH_INFO_PEER, &pifi, sizeof(pifi));
	rtnl_attr(&q, IFLA_IFNAME, peer, (uint16_t)strlen(peer) + 1);
	rtnl_attr(&q, IFLA_MTU, &mtu, sizeof(mtu));
	rtnl_nest_end(&q, pinfo);
	rtnl_nest_end(&q, data);
	rtnl_nest_end(&q, info);
	ret = rtnl_call(&q.h, buf, sizeof(buf));
	return ret > 0 ? 0 : ret;
}

int
rtnl_link_up(int ifindex, uint32_t mtu)
{
	struct rtnl_req q;
	char buf[1024];
	int ret;

	rtnl_req_init(&q, RTM_NEWLINK, NLM_F_ACK, ifindex);
	q.ifi.ifi_flags = IFF_UP;
	q.ifi.ifi_change = IFF_UP;
	if (mtu)
		rtnl_attr(&q, IFLA_MTU, &mtu, sizeof(mtu));
	ret = rtnl_call(&q.h, buf, sizeof(buf));
	return ret > 0 ? 0 : ret;
}

int
rtnl_link_del(int ifindex)
{
	struct rtnl_req q;
	char buf[1024];
	int ret;

	rtnl_req_init(&q, RTM_DELLINK, NLM_F_ACK, ifindex);
	ret = rtnl_call(&q.h, buf, sizeof(buf));
	return ret > 0 ? 0 : ret;
}
