/* SPDX-License-Identifier: BSD-3-Clause */
/* gwload's modes (gwload.c says what each does). */
#ifndef GWLOAD_H
#define GWLOAD_H

#include "gwhttp.h"

struct opts {
	int sessions, calls, warmup, timeout, hold, sse, idle, cpu_pid;
	const char *token;
};
extern struct opts opt;

/* Sorts lat and prints the figures line. */
void report(const char *mode, double *lat, long n, long errors, double secs);
/* The session's first two messages; fills sid. 0 or -1 (printed on stderr). */
int mcp_initialize(struct gw_conn *c, const struct gw_url *u, char *sid, size_t sidlen);
/* One echo call with id; its latency in *us. 0 or -1. */
int mcp_call(struct gw_conn *c, const struct gw_url *u, const char *sid, json_int_t id,
	const char *text, double *us);
int run_load(const struct gw_url *u);
int run_open(const struct gw_url *u);
int run_stdio(char **cmd);

#endif
