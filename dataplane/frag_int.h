/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fragment table's insides, shared by its two files and nobody else: frag.c (the
 * contexts: hash, expiry, ranges, verdicts) and frag_hold.c (the copies of fragments held
 * ahead of their first, in two sizes, and the queue of released ones).
 */
#ifndef CVS_FRAG_INT_H
#define CVS_FRAG_INT_H

#include "frag.h"

#define FRAG_NIL	UINT32_MAX
#define FRAG_MF		0x2000
#define FRAG_OFFMASK	0x1fff
#define FRAG_IP_MAX	65535u
/* Contexts a new datagram may reclaim from the timed-out head of the list, at most. */
#define FRAG_RECLAIM	4

enum {
	FRAG_C_FREE = 0,
	FRAG_C_WAITING,		/* no first fragment yet: later ones are held */
	FRAG_C_XLATED,		/* first translated: later ones leave as x */
	FRAG_C_REFUSED,		/* cannot complete: later ones dropped with 'why' */
};

/* Bytes [start, end) of the datagram's data; end is at most 65,535. */
struct frag_range {
	uint16_t start;
	uint16_t end;
};

struct frag_ctx {
	struct frag_key key;
	uint32_t hnext;		/* hash chain */
	uint32_t prev;		/* expiry list */
	uint32_t next;		/* expiry list, or free list */
	uint32_t last_seen;
	uint32_t held_head;	/* copies, in arrival order */
	uint32_t held_tail;
	struct frag_xlat x;
	uint32_t covered;	/* bytes of data seen */
	uint32_t zi;		/* zone index of the counts */
	uint16_t nranges;
	uint16_t end;		/* the datagram's data length, once the last fragment came */
	uint16_t maxend;	/* the furthest byte seen */
	uint16_t nheld;
	uint8_t state;
	uint8_t last;		/* the fragment with MF clear came */
	uint8_t why;		/* FRAG_C_REFUSED: the reason later fragments count as */
};

/* A copy: entries [0, held) have FRAG_HOLD_ROOM bytes each, [held, held + held_jumbo) more. */
struct frag_hold {
	uint32_t next;		/* the context's copies, the released queue, or a free stack */
	uint32_t len;
	struct frag_xlat x;	/* set on release */
};

struct frag_table {
	struct frag_cfg cfg;
	uint32_t max_zones;
	uint32_t nzi;		/* zone indexes: 0 world, 1..max_zones, then the host and others */
	uint32_t hmask;
	uint32_t *heads;
	struct frag_ctx *ctx;
	struct frag_range *range;
	struct frag_hold *hold;
	uint8_t *buf;		/* the copies of FRAG_HOLD_ROOM */
	uint8_t *jbuf;		/* the copies of FRAG_JUMBO_ROOM */
	uint32_t *zone_ctx, *zone_held;	/* per zone index: contexts, copies held */
	uint32_t free_ctx, free_hold, free_jumbo;
	uint32_t lru_head, lru_tail;	/* every context in use, oldest last fragment first */
	uint32_t rel_head, rel_tail;	/* released copies not taken yet */
	uint32_t lent;		/* the copy frag_take() handed out last */
	struct frag_xlat giveback;	/* where a world datagram's copies go if its first never comes */
	bool have_giveback;
	uint32_t in_use, held_in_use;
	uint64_t seed;
	void *mem;
	size_t bytes;
	struct frag_stats st;
};


static inline bool
frag_goes_to(const struct frag_xlat *x, uint8_t action, uint32_t slot)
{
	return x->action == action && x->slot == slot;
}

/* frag_hold.c */
/* Sizes of the copies' arrays (entries, small and jumbo buffers), for frag_create()'s layout. */
void frag_hold_sizes(const struct frag_cfg *c, size_t sz[3]);
/* After the layout: every copy on its free stack. */
void frag_hold_init(struct frag_table *t);
/* Drop the copies a context holds, counted as 'why'. */
void frag_drop_held(struct frag_table *t, struct frag_ctx *c, enum frag_reason why);
/* Hold a copy of the frame for c: FRAG_R_MAX when held, else why not. */
enum frag_reason frag_hold_copy(struct frag_table *t, struct frag_ctx *c, const uint8_t *frame,
				uint32_t len);
/* c's copies to the released queue with c->x, counted in *count; returns how many. */
uint32_t frag_release(struct frag_table *t, struct frag_ctx *c, uint64_t *count);
/* c's copies to send() in order, then back to their stacks (handed_over); returns how many. */
uint32_t frag_give_held(struct frag_table *t, struct frag_ctx *c, frag_send_fn *send, void *arg);
/* The copy frag_take() lent goes back to its stack. */
void frag_end_loan(struct frag_table *t);
/* Released copies not taken yet towards ('action', 'slot') are dropped (FLUSHED). */
void frag_flush_released(struct frag_table *t, uint8_t action, uint32_t slot);

#endif /* CVS_FRAG_INT_H */
