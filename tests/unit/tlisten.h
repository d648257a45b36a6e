/* SPDX-License-Identifier: BSD-3-Clause */
/* A real kernel TCP listener for tests that ask the kernel about listeners (sock_diag). */
#ifndef CVS_TLISTEN_H
#define CVS_TLISTEN_H

#include <stdint.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Listens on addr:0 and returns the fd (-1 on failure), the kernel's port in *port. */
static inline int
t_listen_v4(const char *addr, uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, addr, &sa.sin_addr);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

#endif /* CVS_TLISTEN_H */
