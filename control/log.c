/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdarg.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"

int cvs_log_main, cvs_log_ctl, cvs_log_ct, cvs_log_xdp, cvs_log_api;

static int
libbpf_to_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	uint32_t lvl = level == LIBBPF_WARN ? RTE_LOG_WARNING :
		       level == LIBBPF_INFO ? RTE_LOG_INFO : RTE_LOG_DEBUG;

	return rte_vlog(lvl, cvs_log_xdp, fmt, ap);
}

/* libxdp's messages (socket and program set-up) go to the same log type as libbpf's. */
static int
libxdp_to_log(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	uint32_t lvl = level == LIBXDP_WARN ? RTE_LOG_WARNING :
		       level == LIBXDP_INFO ? RTE_LOG_INFO : RTE_LOG_DEBUG;

	return rte_vlog(lvl, cvs_log_xdp, fmt, ap);
}

void
cvs_log_init(void)
{
	cvs_log_main = rte_log_register_type_and_pick_level("cvs.main", RTE_LOG_INFO);
	cvs_log_ctl = rte_log_register_type_and_pick_level("cvs.ctl", RTE_LOG_INFO);
	cvs_log_ct = rte_log_register_type_and_pick_level("cvs.ct", RTE_LOG_INFO);
	cvs_log_xdp = rte_log_register_type_and_pick_level("cvs.xdp", RTE_LOG_INFO);
	cvs_log_api = rte_log_register_type_and_pick_level("cvs.api", RTE_LOG_INFO);
	libbpf_set_print(libbpf_to_log);
	libxdp_set_print(libxdp_to_log);
}
