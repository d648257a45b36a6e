/* SPDX-License-Identifier: BSD-3-Clause */
#include "counters.h"

const char *const cvs_drop_names[CVS_DROP_MAX] = {
#define CVS_DROP_NAME(n, s, h) [CVS_DROP_##n] = s,
	CVS_DROP_REASONS(CVS_DROP_NAME)
#undef CVS_DROP_NAME
};

const char *const cvs_wcounter_names[CVS_WC_MAX] = {
#define CVS_WC_NAME(n, s, h) [CVS_WC_##n] = s,
	CVS_WORKER_COUNTERS(CVS_WC_NAME)
#undef CVS_WC_NAME
};

const char *const cvs_wcounter_help[CVS_WC_MAX] = {
#define CVS_WC_HELP(n, s, h) [CVS_WC_##n] = h,
	CVS_WORKER_COUNTERS(CVS_WC_HELP)
#undef CVS_WC_HELP
};

const char *const cvs_drop_help[CVS_DROP_MAX] = {
#define CVS_DROP_HELP(n, s, h) [CVS_DROP_##n] = h,
	CVS_DROP_REASONS(CVS_DROP_HELP)
#undef CVS_DROP_HELP
};

const char *const cvs_pcounter_names[CVS_PC_MAX] = {
#define CVS_PC_NAME(n, s, h) [CVS_PC_##n] = s,
	CVS_PORT_COUNTERS(CVS_PC_NAME)
#undef CVS_PC_NAME
};

const char *const cvs_pcounter_help[CVS_PC_MAX] = {
#define CVS_PC_HELP(n, s, h) [CVS_PC_##n] = h,
	CVS_PORT_COUNTERS(CVS_PC_HELP)
#undef CVS_PC_HELP
};
