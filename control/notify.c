/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "notify.h"

int
notify_send(const char *msg)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t plen;
	socklen_t salen;
	ssize_t n;
	int fd;

	if (!path || !*path)
		return 0;
	plen = strlen(path);
	/* Absolute path, or '@' for the abstract namespace; anything else is not for us. */
	if ((path[0] != '/' && path[0] != '@') || plen >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, plen);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	close(fd);
	return n < 0 ? -errno : 1;
}

unsigned long long
notify_watchdog_usec(void)
{
	const char *s = getenv("WATCHDOG_USEC"), *pid = getenv("WATCHDOG_PID");
	char *end;
	unsigned long long v;

	if (!s)
		return 0;
	/* WATCHDOG_PID, when set, names the process that must ping. */
	if (pid && strtol(pid, NULL, 10) != (long)getpid())
		return 0;
	v = strtoull(s, &end, 10);
	return *end ? 0 : v;
}
