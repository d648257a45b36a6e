/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "funnel.h"
#include "worker.h"
#include "rtnl.h"
#include "xdpctl.h"
#include "xskport.h"

/* No addresses, no IPv6: the kernel must not send its own frames into a funnel. */
static void
funnel_quiet(const char *ifname)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	/* Without IPv6 in the kernel (no such file) there is nothing to quiet. */
	if (fd >= 0) {
		ssize_t r = write(fd, "1", 1);

		(void)r;
		close(fd);
	}
}

static int
funnel_links(struct funnel *f, char *err, size_t errlen)
{
	int ret;

	f->ifindex = (int)if_nametoindex(f->name);
	if (!f->ifindex) {
		ret = rtnl_veth_add(f->name, f->peer, FUNNEL_MTU);
		if (ret && ret != -EEXIST) {
			snprintf(err, errlen, "cannot create the funnel veth pair %s/%s: %s",
				 f->name, f->peer, strerror(-ret));
			return ret;
		}
		f->ifindex = (int)if_nametoindex(f->name);
	}
	f->peer_ifindex = (int)if_nametoindex(f->peer);
	if (!f->ifindex || !f->peer_ifindex) {
		snprintf(err, errlen, "%s exists without its peer %s: not a funnel of ours; remove "
			 "it ('ip link del %s')", f->name, f->peer, f->name);
		return -EEXIST;
	}
	funnel_quiet(f->name);
	funnel_quiet(f->peer);
	ret = rtnl_link_up(f->ifindex, FUNNEL_MTU);
	if (!ret)
		ret = rtnl_link_up(f->peer_ifindex, FUNNEL_MTU);
	if (ret)
		snprintf(err, errlen, "cannot set the funnel %s up: %s", f->name, strerror(-ret));
	return ret;
}

int
funnel_open(struct funnel *f, struct xdp_sbx *x, uint32_t worker, uint32_t nframes,
	    uint32_t fill, char *err, size_t errlen)
{
	int ret;

	memset(f, 0, sizeof(*f));
	f->worker = worker;
	snprintf(f->name, sizeof(f->name), "cvsfun%u", worker);
	snprintf(f->peer, sizeof(f->peer), "cvsfun%up", worker);
	if (worker >= CVS_FUN_MAX || !xdpctl_fun_loaded(x)) {
		snprintf(err, errlen, "no funnel for worker %u", worker);
		return -EINVAL;
	}
	ret = funnel_links(f, err, errlen);
	if (!ret)
		ret = xdpctl_fun_attach(x, worker, f->ifindex, f->peer_ifindex, err, errlen);
	if (ret)
		return ret;
	f->press = xdpctl_fun_press(x, worker);
	f->xp = xskport_create_opts(f->name, f->ifindex, 0, worker, nframes, fill, false, err,
				    errlen);
	if (!f->xp)
		return -errno;
	ret = xdpctl_fun_bind(x, worker, f->xp->fd);
	if (ret) {
		snprintf(err, errlen, "cannot bind the socket of %s: %s", f->name, strerror(-ret));
		funnel_close(f, x, false);
		return ret;
	}
	return 0;
}

int
funnel_for_worker(struct funnel *f, struct xdp_sbx *x, struct worker *w, uint32_t nframes,
		  uint32_t fill, char *err, size_t errlen)
{
	int ret = funnel_open(f, x, w->id, nframes, fill, err, errlen);

	if (ret)
		return ret;
	w->fun = f->xp;
	w->fun_press = f->press;
	return 0;
}

void
funnel_close(struct funnel *f, struct xdp_sbx *x, bool remove)
{
	if (f->xp) {
		xdpctl_fun_unbind(x, f->worker);
		xskport_destroy(f->xp);
		f->xp = NULL;
	}
	if (remove && f->ifindex) {
		xdpctl_fun_forget(x, f->worker);
		rtnl_link_del(f->ifindex);
		f->ifindex = f->peer_ifindex = 0;
	}
}

uint32_t
funnel_remove_from(struct xdp_sbx *x, uint32_t first)
{
	char name[IF_NAMESIZE];
	uint32_t w, n = 0;

	/* Funnels of workers a process before had and this one has not. */
	for (w = first; w < CVS_FUN_MAX; w++) {
		int ifindex;

		snprintf(name, sizeof(name), "cvsfun%u", w);
		ifindex = (int)if_nametoindex(name);
		if (!ifindex)
			continue;
		xdpctl_fun_forget(x, w);
		n += !rtnl_link_del(ifindex);
	}
	return n;
}
