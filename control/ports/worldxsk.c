/* SPDX-License-Identifier: BSD-3-Clause */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "log.h"
#include "worldxsk.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

void
worldxsk_init(struct worldxsk *x)
{
	memset(x, 0, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
}

void
worldxsk_fini(struct worldxsk *x)
{
	pthread_mutex_destroy(&x->lock);
}

static bool
wx_known(const struct worldxsk *x, uint64_t ino)
{
	uint32_t i;

	for (i = 0; i < x->nknown; i++)
		if (x->known[i] == ino)
			return true;
	return false;
}

/*
 * Call fn for every AF_XDP socket of the process that is not known yet, and remember it. Few
 * descriptors exist while the ports are set up (no sandbox is attached before).
 */
static void
wx_new_sockets(struct worldxsk *x, void (*fn)(struct worldxsk *, int, uint64_t, uint32_t),
	       uint32_t q)
{
	struct dirent *de;
	struct stat st;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return;
	while ((de = readdir(d))) {
		socklen_t len = sizeof(int);
		char *end;
		long f = strtol(de->d_name, &end, 10);
		int dom = 0;

		if (*end || end == de->d_name || f == dirfd(d) || fstat((int)f, &st) ||
		    !S_ISSOCK(st.st_mode) || wx_known(x, st.st_ino))
			continue;
		if (getsockopt((int)f, SOL_SOCKET, SO_DOMAIN, &dom, &len) || dom != AF_XDP)
			continue;
		if (x->nknown < WORLDXSK_KNOWN_MAX)
			x->known[x->nknown++] = st.st_ino;
		if (fn)
			fn(x, (int)f, st.st_ino, q);
	}
	closedir(d);
}

void
worldxsk_begin(struct worldxsk *x)
{
	wx_new_sockets(x, NULL, 0);
}

static void
wx_take(struct worldxsk *x, int fd, uint64_t ino, uint32_t q)
{
	/* One socket per rx queue: a second one is not a queue's, and we cannot tell which. */
	pthread_mutex_lock(&x->lock);
	if (x->n && x->queue[x->n - 1] == q) {
		CVS_LOG(WARNING, ctl, "world port queue %u: more than one new AF_XDP socket; its "
			"kernel statistics are not shown", q);
		x->n--;
	} else if (x->n < OBS_WXSK_MAX) {
		x->fd[x->n] = fd;
		x->ino[x->n] = ino;
		x->queue[x->n] = q;
		x->n++;
	}
	pthread_mutex_unlock(&x->lock);
}

void
worldxsk_note_queue(struct worldxsk *x, uint32_t q)
{
	wx_new_sockets(x, wx_take, q);
}

int
worldxsk_read(struct worldxsk *x, uint32_t i, uint32_t *queue, struct xdp_statistics *xs)
{
	socklen_t len = sizeof(*xs);
	struct stat st;
	int ret = -ENOENT;

	memset(xs, 0, sizeof(*xs));
	pthread_mutex_lock(&x->lock);
	if (i < x->n) {
		*queue = x->queue[i];
		/* A descriptor the PMD closed may be another file by now. */
		if (fstat(x->fd[i], &st) || st.st_ino != x->ino[i])
			ret = -ESTALE;
		else
			ret = getsockopt(x->fd[i], SOL_XDP, XDP_STATISTICS, xs, &len) ? -errno : 0;
	}
	pthread_mutex_unlock(&x->lock);
	return ret;
}
