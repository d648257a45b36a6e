/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include "linkwatch.h"
#include "registry.h"
#include "rtnl.h"

#define LW_BUF		65536
/* Thousands of interfaces made in one 'ip -batch' must not overflow it. */
#define LW_RCVBUF	(8 << 20)

int
linkwatch_open(struct linkwatch *lw, char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int sz = LW_RCVBUF;

	memset(lw, 0, sizeof(*lw));
	lw->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (lw->fd < 0) {
		snprintf(err, errlen, "cannot open an rtnetlink socket: %s", strerror(errno));
		return -errno;
	}
	/* RCVBUFFORCE passes net.core.rmem_max as root; RCVBUF is what is left otherwise. */
	if (setsockopt(lw->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)))
		setsockopt(lw->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (bind(lw->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, errlen, "cannot listen to link events: %s", strerror(errno));
		close(lw->fd);
		lw->fd = -1;
		return -errno;
	}
	return 0;
}

/* The name and XDP program id of one link message. */
static void
linkwatch_attrs(struct nlmsghdr *h, char *name, size_t namelen, uint32_t *xdp_id)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	int left = (int)IFLA_PAYLOAD(h);
	struct rtattr *a;

	name[0] = '\0';
	*xdp_id = 0;
	for (a = IFLA_RTA(ifi); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		if (a->rta_type == IFLA_IFNAME && RTA_PAYLOAD(a) > 0) {
			snprintf(name, namelen, "%.*s", (int)RTA_PAYLOAD(a), (char *)RTA_DATA(a));
		} else if (a->rta_type == IFLA_XDP) {
			*xdp_id = rtnl_xdp_nest_id(a);
		}
	}
}

static uint32_t
linkwatch_one(struct linkwatch *lw, struct registry *r, struct nlmsghdr *h)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	char name[IF_NAMESIZE];
	uint32_t xdp_id;

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return 0;
	lw->events++;
	linkwatch_attrs(h, name, sizeof(name), &xdp_id);
	if (h->nlmsg_type == RTM_DELLINK)
		return reg_link_gone(r, ifi->ifi_index, name);
	if (h->nlmsg_type == RTM_NEWLINK && name[0])
		return reg_link_seen(r, ifi->ifi_index, name, xdp_id);
	return 0;
}

uint32_t
linkwatch_poll(struct linkwatch *lw, struct registry *r)
{
	static char buf[LW_BUF];
	uint32_t changed = 0;

	if (lw->fd < 0)
		return 0;
	for (;;) {
		ssize_t n = recv(lw->fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0 && errno == ENOBUFS) {
			/* Events were lost: what the kernel has now is the truth. */
			lw->overflows++;
			changed += reg_link_resync(r);
			continue;
		}
		if (n <= 0)
			break;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n))
			changed += linkwatch_one(lw, r, h);
	}
	return changed;
}

void
linkwatch_close(struct linkwatch *lw)
{
	if (lw->fd >= 0)
		close(lw->fd);
	lw->fd = -1;
}
