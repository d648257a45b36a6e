/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <stdlib.h>

#include "cvs_common.h"

void
cvs_verr(const char *prog, const char *fmt, va_list ap)
{
	char *msg = NULL;

	if (vasprintf(&msg, fmt, ap) < 0) {
		fprintf(stderr, "%s: out of memory printing an error\n", prog);
		return;
	}
	/*
	 * One call on the unbuffered stderr is one write: a line from another process sharing
	 * the terminal or the journal cannot land in the middle of ours.
	 */
	fprintf(stderr, "%s: %s\n", prog, msg);
	free(msg);
}

void
cvs_err(const char *prog, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cvs_verr(prog, fmt, ap);
	va_end(ap);
}
