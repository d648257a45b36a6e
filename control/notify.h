/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The systemd readiness protocol without libsystemd: one datagram to $NOTIFY_SOCKET. Does
 * nothing when the variable is unset (not started by systemd).
 */
#ifndef CVS_NOTIFY_H
#define CVS_NOTIFY_H

/* Send "READY=1", "STOPPING=1", "STATUS=..." lines. Returns 1 sent, 0 not asked, -errno. */
int notify_send(const char *msg);

/* The watchdog interval systemd asks for in microseconds ($WATCHDOG_USEC), 0 when none. */
unsigned long long notify_watchdog_usec(void);

#endif /* CVS_NOTIFY_H */
