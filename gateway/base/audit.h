/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the audit log, one JSON line per tool call in a file of its own, rotated by
 * size. A line says who was called and how it went, never what was said: the server, the
 * tool, the arguments' names and size (not their values), the outcome, the duration.
 */
#ifndef GW_AUDIT_H
#define GW_AUDIT_H

#include <stdint.h>

#include <jansson.h>

#include "base/flags.h"

#define GW_AUDIT_FILE		"/var/log/mcp-gateway/audit.log"

struct audit;

/* serve's flags (launch hands --audit-log on), for a struct flag table (flags.h). */
#define AUDIT_FLAGS(path, max_bytes, keep) \
	{"audit-log", FLAG_STRING, &(path), "the audit log, one line per tool call; " \
	 "\"none\" turns it off (default " GW_AUDIT_FILE ")", false}, \
	{"audit-max-bytes", FLAG_INT, &(max_bytes), "rotate the audit log at this size " \
	 "(default 10 MiB)", false}, \
	{"audit-keep", FLAG_INT, &(keep), "rotated audit logs kept (default 3)", false}

/* One call: status "ok", "tool_error" (a result with isError), "error", "denied". */
struct audit_call {
	const char *server;
	const char *tool;
	json_t *args;		/* the call's arguments, or NULL */
	const char *status;
	int code;		/* the JSON-RPC error code of "error", else 0 */
	int64_t ns;		/* how long it took */
};

/*
 * Open (append, 0600; its directory made if missing) 'path', rotated once it reaches
 * max_bytes into path.1 .. path.<keep>. NULL with *err for a file that cannot be opened; an
 * empty path or "none" is no log, and NULL without an error.
 */
struct audit *audit_open(const char *path, long long max_bytes, long long keep, char **err);
/*
 * Any thread; a NULL log takes nothing. A write that fails is dropped, counted and logged.
 * Written at once, except on the thread that called audit_hold(): its lines wait in memory
 * (up to 64 KiB) for its audit_flush(), so a loop turn that ends many calls writes them in
 * one system call (the loop flushes before the first of their answers is sent).
 */
void audit_write(struct audit *a, const struct audit_call *c);
void audit_hold(struct audit *a);
void audit_flush(struct audit *a);
void audit_close(struct audit *a);

#endif /* GW_AUDIT_H */
