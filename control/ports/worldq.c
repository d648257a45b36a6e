/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bpf/bpf.h>

#include "worldq.h"
#include "xskport.h"

/*
 * Steered to once it carries the interface's MTU: a jumbo MTU needs multi-buffer, which a
 * kernel before 6.6 or a zero-copy driver without it does not bind.
 */
static int
worldq_map(struct worldq *q, uint32_t i, char *err, size_t errlen)
{
	uint32_t mtu = worldq_mtu(q->ifname), max = xskport_mtu_max(q->xp[i]);
	int fd = q->xp[i]->fd;

	if (mtu > max) {
		snprintf(err, errlen, "%s has MTU %u; its queue %u carries at most %u here (AF_XDP "
			 "without multi-buffer: it needs kernel 6.6, and in zero-copy mode a "
			 "driver with it): set its MTU to %u or less", q->ifname, mtu, i, max, max);
		return -EMSGSIZE;
	}
	if (!bpf_map_update_elem(q->xsks_fd, &i, &fd, BPF_ANY))
		return 0;
	snprintf(err, errlen, "cannot steer %s queue %u to its socket: %s", q->ifname, i,
		 strerror(errno));
	return -errno;
}

int
worldq_open(struct worldq *q, const char *ifname, int ifindex, uint32_t nq, uint32_t frames,
	    int xsks_fd, bool share, char *err, size_t errlen)
{
	uint32_t i;
	int ret;

	memset(q, 0, sizeof(*q));
	q->xsks_fd = xsks_fd;
	q->ifindex = ifindex;
	snprintf(q->ifname, sizeof(q->ifname), "%s", ifname);
	if (nq > CVS_XSKS_MAX) {
		snprintf(err, errlen, "%u world queues: at most %u", nq, CVS_XSKS_MAX);
		return -EINVAL;
	}
	q->n = nq;
	for (i = 0; i < nq; i++) {
		/* The probe: bound in zero-copy mode or not at all. */
		q->xp[i] = xskport_create_opts(ifname, ifindex, i, i, frames, frames / 2, share,
					       err, errlen);
		if (!q->xp[i] && share)
			continue;
		ret = q->xp[i] ? worldq_map(q, i, err, errlen) : -errno;
		if (ret) {
			worldq_close(q);
			return ret;
		}
	}
	return 0;
}

bool
worldq_pending(const struct worldq *q, uint32_t i)
{
	return i < q->n && !q->xp[i];
}

int
worldq_share(struct worldq *q, uint32_t i, struct xskport *owner, uint32_t fill, char *err,
	     size_t errlen)
{
	q->xp[i] = xskport_create_shared(owner, q->ifname, q->ifindex, i, i, fill, err, errlen);
	if (!q->xp[i])
		return -errno;
	return worldq_map(q, i, err, errlen);
}

void
worldq_close(struct worldq *q)
{
	uint32_t i;

	/* A closed socket leaves the map by itself: the program then holds the gap (gap_drop). */
	for (i = 0; i < q->n; i++)
		xskport_destroy(q->xp[i]);
	memset(q, 0, sizeof(*q));
}

int
worldq_read(const struct worldq *q, uint32_t i, struct xdp_statistics *xs)
{
	socklen_t len = sizeof(*xs);

	memset(xs, 0, sizeof(*xs));
	if (i >= q->n)
		return -ENOENT;
	if (!q->xp[i])
		return -EAGAIN;
	return getsockopt(q->xp[i]->fd, SOL_XDP, XDP_STATISTICS, xs, &len) ? -errno : 0;
}

static int
worldq_ifreq(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret;

	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	ret = ioctl(fd, req, ifr) ? -errno : 0;
	close(fd);
	return ret;
}

int
worldq_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int ret = worldq_ifreq(ifname, SIOCGIFHWADDR, &ifr);

	if (!ret)
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return ret;
}

uint16_t
worldq_mtu(const char *ifname)
{
	struct ifreq ifr;

	if (worldq_ifreq(ifname, SIOCGIFMTU, &ifr) || ifr.ifr_mtu <= 0)
		return 0;
	return ifr.ifr_mtu > 65535 ? 65535 : (uint16_t)ifr.ifr_mtu;
}

bool
worldq_link_up(const char *ifname)
{
	struct ifreq ifr;

	return !worldq_ifreq(ifname, SIOCGIFFLAGS, &ifr) &&
	       (ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) == (IFF_UP | IFF_RUNNING);
}
