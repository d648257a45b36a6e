/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The end of a deleted sandbox's link, off the path of the request that deleted it.
 *
 * Ending a link on a veth takes RTNL and, under it, waits for an RCU grace period
 * (veth_disable_xdp -> synchronize_rcu_expedited); closing the link's fd takes RTNL once
 * more. Done by each DELETE before its answer, 20 concurrent clients queued on RTNL, a kernel
 * mutex that hands itself to whoever comes first: off-CPU time of the API threads was 70 %
 * waiting there, and the clients' DELETE p99 11-13 ms where the rest of a deletion takes
 * well under one. So a deletion only takes the link off its slot (its entries are gone: the
 * program passes the interface's frames to the kernel from then on), and one thread here
 * ends the links in turn; one taker of RTNL at a time has nobody to queue behind.
 *
 * An attach to an interface whose link is still here ends it first (xdpend_now()), so a
 * PUT right after a DELETE of the same interface finds it free; a restart's sweep removes the
 * pins of links a crash left here. One slot has one link: 'late' never holds more than
 * nlinks.
 */
#include <errno.h>
#include <stdlib.h>

#include "xdpend.h"

/* The next late link, 0 when none; called and returns with end_lock held. */
static int
xdpend_pop(struct xdp_sbx *x, int ifindex, int *fd)
{
	uint32_t i;

	for (i = 0; i < x->nlate; i++) {
		if (ifindex && x->late[i].ifindex != ifindex)
			continue;
		ifindex = x->late[i].ifindex;
		*fd = x->late[i].fd;
		x->late[i] = x->late[--x->nlate];
		return ifindex;
	}
	return 0;
}

/* Whether another thread is ending the link of ifindex now; under end_lock. */
static bool
xdpend_ending(const struct xdp_sbx *x, int ifindex)
{
	uint32_t i;

	for (i = 0; i < x->nending; i++)
		if (x->ending[i] == ifindex)
			return true;
	return false;
}

/*
 * Every interface being ended is listed, so that an attach to it waits for the unlink of
 * its pin and no other.
 */
void
xdpend_now(struct xdp_sbx *x, int ifindex)
{
	int fd, got;
	uint32_t i;

	if (!x->late)
		return;
	pthread_mutex_lock(&x->end_lock);
	while ((got = xdpend_pop(x, ifindex, &fd)) || (ifindex && xdpend_ending(x, ifindex))) {
		if (!got) {
			pthread_cond_wait(&x->ended, &x->end_lock);
			continue;
		}
		if (x->nending == XDPSBX_ENDING_MAX) {
			/* More enders than slots: this one ends it with the lock held. */
			xdpsbx_link_end(x, got, fd);
			continue;
		}
		x->ending[x->nending++] = got;
		pthread_mutex_unlock(&x->end_lock);
		xdpsbx_link_end(x, got, fd);
		pthread_mutex_lock(&x->end_lock);
		for (i = 0; i < x->nending && x->ending[i] != got; i++)
			;
		x->ending[i] = x->ending[--x->nending];
		pthread_cond_broadcast(&x->ended);
	}
	pthread_mutex_unlock(&x->end_lock);
}

static void *
xdpend_main(void *arg)
{
	struct xdp_sbx *x = arg;
	bool stop;

	for (;;) {
		pthread_mutex_lock(&x->end_lock);
		while (!x->end_stop && !x->nlate)
			pthread_cond_wait(&x->late_cv, &x->end_lock);
		stop = x->end_stop;
		pthread_mutex_unlock(&x->end_lock);
		if (stop)
			return NULL;
		xdpend_now(x, 0);
	}
}

int
xdpend_init(struct xdp_sbx *x, uint32_t n)
{
	x->late = calloc(n ? n : 1, sizeof(*x->late));
	if (!x->late)
		return -ENOMEM;
	pthread_mutex_init(&x->end_lock, NULL);
	pthread_cond_init(&x->ended, NULL);
	pthread_cond_init(&x->late_cv, NULL);
	/* Without the thread every push ends its link at once, as before it. */
	x->ender_on = !pthread_create(&x->ender, NULL, xdpend_main, x);
	if (x->ender_on)
		pthread_setname_np(x->ender, "cvs-link-end");
	return 0;
}

void
xdpend_push(struct xdp_sbx *x, int ifindex, int fd)
{
	pthread_mutex_lock(&x->end_lock);
	if (x->ender_on && x->nlate < x->nlinks) {
		x->late[x->nlate].fd = fd;
		x->late[x->nlate++].ifindex = ifindex;
		fd = -1;
		pthread_cond_signal(&x->late_cv);
	}
	pthread_mutex_unlock(&x->end_lock);
	if (fd >= 0)
		xdpsbx_link_end(x, ifindex, fd);
}

uint32_t
xdpctl_sbx_ending(struct xdp_sbx *x)
{
	uint32_t n;

	if (!x->late)
		return 0;
	pthread_mutex_lock(&x->end_lock);
	n = x->nlate + x->nending;
	pthread_mutex_unlock(&x->end_lock);
	return n;
}

void
xdpend_fini(struct xdp_sbx *x)
{
	if (!x->late)
		return;
	if (x->ender_on) {
		pthread_mutex_lock(&x->end_lock);
		x->end_stop = true;
		pthread_cond_signal(&x->late_cv);
		pthread_mutex_unlock(&x->end_lock);
		pthread_join(x->ender, NULL);
		x->ender_on = false;
	}
	xdpend_now(x, 0);
	pthread_mutex_destroy(&x->end_lock);
	pthread_cond_destroy(&x->ended);
	pthread_cond_destroy(&x->late_cv);
	free(x->late);
	x->late = NULL;
}
