/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef CVS_FRAG_SEQ_H
#define CVS_FRAG_SEQ_H

#include "dpbed.h"

/* The fragment sequences of the catalogue (frag_seq.c): the number that failed. */
int frag_sequences(struct dpbed *b);
/* The IPv6 fragment sequences and ICMPv6 error rows (frag6_seq.c): the number that failed. */
int ipv6_sequences(struct dpbed *b);
/* And written as fuzz_dp seeds into a directory. */
int ipv6_dump(struct dpbed *b, const char *dir);

#endif
