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
