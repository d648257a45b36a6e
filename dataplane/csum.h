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
 * The same sum, four bytes at a time into 64 bits (no carry is lost below 2^32 words): the
 * completion of a whole segment's checksum, where csum_partial's two-byte steps would cost
 * twice the loads. Returns the 32-bit sum, not folded.
 */
static inline uint32_t
csum_block(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	uint64_t a = seed, b = 0;
	uint32_t w, v;

	while (len >= 8) {
		memcpy(&w, p, 4);
		memcpy(&v, p + 4, 4);
		a += w;
		b += v;
		p += 8;
		len -= 8;
	}
	a += b;
	if (len >= 4) {
		memcpy(&w, p, 4);
		a += w;
		p += 4;
		len -= 4;
	}
	a = (a & 0xffffffffull) + (a >> 32);
	a = (a & 0xffffffffull) + (a >> 32);
	return csum_partial(p, len, 0) + (uint32_t)csum_fold((uint32_t)a);
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
