/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DPDK log type per component, steerable with --log-level=cvs.ct:debug. Before EAL is up
 * messages go to stderr.
 */
#ifndef CVS_LOG_H
#define CVS_LOG_H

#include <rte_log.h>

extern int cvs_log_main;
extern int cvs_log_ctl;
extern int cvs_log_ct;
extern int cvs_log_xdp;
extern int cvs_log_api;

#define CVS_LOG(level, type, fmt, ...) \
	rte_log(RTE_LOG_##level, cvs_log_##type, "cvs." #type ": " fmt "\n", ##__VA_ARGS__)

/* Register the log types (after EAL) and route libbpf and libxdp messages into cvs.xdp. */
void cvs_log_init(void);

#endif /* CVS_LOG_H */
