/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internet checksum helpers. The hot path updates checksums incrementally (RFC 1624); it
 * never verifies them, so a wrong checksum stays wrong and the receiver still rejects it. The
 * full computation serves packets the worker builds itself, the partial checksums of offloading
 * senders that the parser completes (csum_block), and tests.
 */
#ifndef CVS_CSUM_H
#define CVS_CSUM_H

#include <stdint.h>
#include <stddef.h>
#include <string.h>
#include <arpa/inet.h>

static inline uint16_t
csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* One's-complement sum of a buffer, in network byte order as stored in memory. */
static inline uint32_t
csum_partial(const void *buf, size_t len, uint32_t sum)
{
	const uint8_t *p = buf;
	uint16_t w;

	while (len > 1) {
		memcpy(&w, p, 2);
		sum += w;
		p += 2;
		len -= 2;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, 1);
		sum += w;
	}
	return sum;
}

/*
 * The TCP/UDP pseudo-header (RFC 793, 768): addresses as stored, the protocol and the L4
 * length, summed but not folded.
 */
static inline uint32_t
csum_pseudo(uint32_t saddr, uint32_t daddr, uint8_t proto, uint16_t l4len)
{
	return (saddr & 0xffff) + (saddr >> 16) + (daddr & 0xffff) + (daddr >> 16) +
	       htons(proto) + htons(l4len);
}

/* A 64-bit word at any alignment. */
typedef uint64_t csum_u64u __attribute__((aligned(1), may_alias));

/*
 * The same sum, eight bytes at a time into 128 bits (an add and an add-with-carry each, no
 * carry lost below 2^64 words): the completion of a whole segment's checksum, where
 * csum_partial's two-byte steps cost four times the instructions. Returns the 32-bit sum, not
 * folded.
 */
static inline uint32_t
csum_block(const void *buf, size_t len, uint32_t seed)
{
	const csum_u64u *w = buf;
	size_t i, n = len / 8;
	unsigned __int128 a = seed;
	uint64_t s;

#pragma GCC unroll 4
	for (i = 0; i < n; i++)
		a += w[i];
	s = (uint64_t)a + (uint64_t)(a >> 64);
	s += s < (uint64_t)a;	/* the end-around carry of that add */
	s = (s & 0xffffffffull) + (s >> 32);
	s = (s & 0xffffffffull) + (s >> 32);
	return csum_partial((const uint8_t *)buf + n * 8, len & 7, 0) +
	       (uint32_t)csum_fold((uint32_t)s);
}

/* HC' = ~(~HC + ~m + m'), for a 16-bit field changed from 'from' to 'to' (both as stored). */
static inline void
csum_replace2(uint16_t *check, uint16_t from, uint16_t to)
{
	uint32_t sum = (uint16_t)~*check;

	sum += (uint16_t)~from;
	sum += to;
	*check = (uint16_t)~csum_fold(sum);
}

static inline void
csum_replace4(uint16_t *check, uint32_t from, uint32_t to)
{
	uint32_t sum = (uint16_t)~*check;

	sum += (uint16_t)~(from & 0xffff);
	sum += (uint16_t)~(from >> 16);
	sum += to & 0xffff;
	sum += to >> 16;
	*check = (uint16_t)~csum_fold(sum);
}

#endif /* CVS_CSUM_H */
