/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DPDK telemetry commands (/cubevs/stats, /cubevs/sandboxes, /cubevs/sessions), answered from
 * the same enumeration as /metrics. Read them with dpdk-telemetry.py -f FILE_PREFIX.
 */
#ifndef CVS_TELEMETRY_H
#define CVS_TELEMETRY_H

#include "obs.h"

/* Register the commands; they answer from 'o' until telemetry_stop(). */
int telemetry_start(struct obs *o);
void telemetry_stop(void);

#endif /* CVS_TELEMETRY_H */
