/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: the log, and copying children's output into it per line (log.c). */
#ifndef GW_LOG_H
#define GW_LOG_H

#include <stdbool.h>
#include <stddef.h>

void log_write(const char *level, const char *msg, const char *kvfmt, ...)
	__attribute__((format(printf, 3, 4)));
#define log_info(msg, ...)	log_write("INFO", msg, __VA_ARGS__)
#define log_warn(msg, ...)	log_write("WARN", msg, __VA_ARGS__)
#define log_error(msg, ...)	log_write("ERROR", msg, __VA_ARGS__)
/* "mcp-gateway: msg" on stderr: a command's failure before there is a log. */
void die_msg(const char *msg);

/* Copies a child's output to a log fd, putting "[name] " at the start of every line. */
struct prefixw {
	int fd;
	char *prefix;
	size_t plen;
	bool mid_line;
};

int prefixw_init(struct prefixw *w, int fd, const char *name);
int prefixw_write(struct prefixw *w, const void *buf, size_t len);
void prefixw_fini(struct prefixw *w);

/* Writes held + in with every secret replaced by "********"; in == NULL flushes at EOF. */
struct strbuf;
int prefixw_write_masked(struct prefixw *w, char *const *secrets, struct strbuf *held,
			 const char *in, size_t n);

struct pump;
struct pump *pump_start(int fd, const char *name, int logfd);
/* The same, with the values of secrets masked (the server's own envs). */
struct pump *pump_start_masked(int fd, const char *name, int logfd, char *const *secrets);
int pump_wait(struct pump *p, int timeout_ms);
/* Waits for EOF and keeps the reference. */
int pump_settle(struct pump *p, int timeout_ms);
/* The first path the child said it was denied ("permission denied"); false when none. */
bool pump_denied(struct pump *p, char *out, size_t len);

#endif /* GW_LOG_H */
