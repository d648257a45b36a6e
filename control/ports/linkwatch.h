/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's link events, one rtnetlink socket (RTMGRP_LINK), read from the control loop:
 * every interface that appears, changes or goes is told to the registry (reg_link_seen(),
 * reg_link_gone()), which attaches, detaches and repairs sandboxes by it. No interface is
 * polled; when the socket overflowed and events were lost, every interface sandbox is checked
 * once (reg_link_resync()).
 */
#ifndef CVS_LINKWATCH_H
#define CVS_LINKWATCH_H

#include <stddef.h>
#include <stdint.h>

struct registry;

struct linkwatch {
	int fd;
	uint64_t events;	/* link messages read */
	uint64_t overflows;	/* times events were lost and everything was checked */
};

int linkwatch_open(struct linkwatch *lw, char *err, size_t errlen);
/* Read what is pending, without waiting. Returns how many sandboxes changed state. */
uint32_t linkwatch_poll(struct linkwatch *lw, struct registry *r);
void linkwatch_close(struct linkwatch *lw);

#endif /* CVS_LINKWATCH_H */
