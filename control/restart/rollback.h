/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The way back to an earlier release (issue 36): `cubevs-fp -- FLAGS --rollback-to RELEASE`,
 * run with cubevs-fp stopped and the flags RELEASE will run with, leaves the node as RELEASE
 * reads it, so that its start adopts the sessions, restores every registration and attaches
 * every sandbox, with no pin of ours it does not know left behind:
 *   - the state file: the journal folded into one snapshot without the fields RELEASE does not
 *     know (journalSeq, writtenBy), the journal removed;
 *   - the session region: carried to the shape RELEASE runs with (its default
 *     --max-sandboxes unless the flag is given), its release record cleared;
 *   - the sandbox interfaces' pinned BPF links: rtnetlink attachments of the same programs
 *     (RELEASE replaces a program through rtnetlink and cannot replace a link's);
 *   - the pins RELEASE does not know, and the funnel interfaces it has no use for: removed.
 * Control thread, one-shot: no EAL, no worker. Each step says what it did on 'out'.
 */
#ifndef CVS_ROLLBACK_H
#define CVS_ROLLBACK_H

#include <stdio.h>

#include "config.h"

/* 0 when the node is ready for cfg->rollback_to; 1 with the reason on stderr when not. */
int rollback_run(const struct cvs_config *cfg, FILE *out);

#endif /* CVS_ROLLBACK_H */
