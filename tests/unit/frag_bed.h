/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fragment tests share (test_frag.c, test_frag_random.c): IPv4 fragments made by
 * mtu_fragment() or built at any offset, the translations they carry, and frag.h called the
 * way the data path calls it. Each test file is its own program: the buffers are its own.
 */
#ifndef CVS_TEST_FRAG_BED_H
#define CVS_TEST_FRAG_BED_H

#include <stdbool.h>

#include "t.h"
#include "pktgen.h"
#include "dp.h"
#include "frag.h"
#include "mtu.h"

#define NOUT	64
#define ROOM	1600
#define DG_MAX	70000

static uint8_t dg[DG_MAX] __attribute__((unused));
static uint8_t bufs[NOUT][ROOM];
static uint8_t *outs[NOUT];
static uint32_t lens[NOUT];
static uint8_t big[9400] __attribute__((unused));

/* A datagram of 'paylen' UDP data bytes from 'saddr' with 'id', split at 'mtu' into bufs. */
static inline uint32_t
split(uint32_t saddr, uint16_t id, uint32_t paylen, uint32_t mtu)
{
	uint32_t n = build_frame(dg, IPPROTO_UDP_, saddr, ip4("198.51.100.7"), htons(4000),
				 htons(53), 0, paylen);
	struct ip4_hdr *ip = (struct ip4_hdr *)(dg + 14);

	ip->id = htons(id);
	ip->check = 0;
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, 20, 0));
	return mtu_fragment(dg, n, mtu, outs, NOUT, ROOM, lens);
}

/* One fragment of datagram 'id' from 'saddr': data bytes [off, off + plen), MF as given. */
static inline uint32_t
mkfrag(uint8_t *f, uint32_t saddr, uint16_t id, uint32_t off, uint32_t plen, bool mf)
{
	struct ip4_hdr *ip = (struct ip4_hdr *)(f + 14);
	uint32_t i;

	memset(f, 0, 14);
	f[12] = 8;
	memset(ip, 0, 20);
	ip->ver_ihl = 0x45;
	ip->tot_len = htons((uint16_t)(20 + plen));
	ip->id = htons(id);
	ip->frag_off = htons((uint16_t)(off / 8 | (mf ? 0x2000 : 0)));
	ip->ttl = 64;
	ip->proto = IPPROTO_UDP_;
	ip->saddr = saddr;
	ip->daddr = ip4("198.51.100.7");
	for (i = 0; i < plen; i++)
		f[34 + i] = (uint8_t)(off + i + id);
	ip->check = (uint16_t)~csum_fold(csum_partial(ip, 20, 0));
	return 34 + plen;
}

static inline struct frag_key
key_of(const uint8_t *f, uint16_t zone)
{
	const struct ip4_hdr *ip = (const struct ip4_hdr *)(f + 14);
	struct frag_key k;

	memset(&k, 0xa5, sizeof(k));	/* the padding must not matter, nor a6 for IPv4 */
	k.v6 = 0;
	k.saddr = ip->saddr;
	k.daddr = ip->daddr;
	k.id = ip->id;
	k.zone = zone;
	k.proto = ip->proto;
	return k;
}

static inline struct frag_xlat
xl_of(uint32_t n)
{
	struct frag_xlat x;

	memset(&x, 0, sizeof(x));
	x.saddr = htonl(0x0a000000u + n);
	x.daddr = htonl(0xc0a80000u + n);
	x.dst_mac[5] = (uint8_t)n;
	x.src_mac[4] = (uint8_t)(n >> 8);
	x.action = DP_TO_SANDBOX;
	x.slot = n;
	x.mtu = 1500;
	return x;
}

static inline bool
xl_eq(const struct frag_xlat *a, const struct frag_xlat *b)
{
	return a->saddr == b->saddr && a->daddr == b->daddr && a->action == b->action &&
	       a->slot == b->slot && a->mtu == b->mtu && !memcmp(a->dst_mac, b->dst_mac, 6) &&
	       !memcmp(a->src_mac, b->src_mac, 6);
}

static inline enum frag_verdict
other(struct frag_table *t, const uint8_t *f, uint32_t len, uint16_t zone, uint32_t now,
      struct frag_xlat *x, enum frag_reason *why)
{
	struct frag_key k = key_of(f, zone);

	*why = FRAG_R_MAX;
	return frag_other(t, &k, f, len, now, x, why);
}

static inline uint32_t
first(struct frag_table *t, const uint8_t *f, uint32_t len, uint16_t zone, uint32_t now,
      const struct frag_xlat *x, enum frag_verdict *v, enum frag_reason *why)
{
	struct frag_key k = key_of(f, zone);

	*why = FRAG_R_MAX;
	return frag_first(t, &k, f, len, x, now, v, why);
}

/* other() that must give 'want' (and, dropped, the reason 'r'). */
#define OTHER(t, f, l, z, now, want, r) do { \
	struct frag_xlat _x; enum frag_reason _w; \
	CHECK_EQ(other(t, f, l, z, now, &_x, &_w), want); \
	if ((want) == FRAG_DROP) \
		CHECK_EQ(_w, r); \
} while (0)

static inline uint64_t
drops(const struct frag_table *t, enum frag_reason r)
{
	return frag_stats(t)->drop[r];
}

/* Take every released copy: the i-th must be bufs[order[i]], byte for byte, with x. */
static inline void
take_expect(struct frag_table *t, const uint32_t *order, uint32_t n, const struct frag_xlat *x)
{
	uint8_t *f;
	uint32_t len, i = 0;
	struct frag_xlat got;

	while (frag_take(t, &f, &len, &got)) {
		CHECK(i < n);
		if (i < n) {
			CHECK_EQ(len, lens[order[i]]);
			CHECK(!memcmp(f, bufs[order[i]], len));
		}
		CHECK(xl_eq(&got, x));
		i++;
	}
	CHECK_EQ(i, n);
}

/* a[0..n) in a random order (rand(), seeded by the test). */
static inline void
shuffle(uint32_t *a, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)rand() % i, tmp = a[i - 1];

		a[i - 1] = a[j];
		a[j] = tmp;
	}
}

/* The release buffers' addresses, before any split(). */
static inline void
frag_bed_init(void)
{
	for (uint32_t i = 0; i < NOUT; i++)
		outs[i] = bufs[i];
}

#endif /* CVS_TEST_FRAG_BED_H */
