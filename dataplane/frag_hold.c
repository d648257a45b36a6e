/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fragment table's copies (frag.h, frag_int.h): fragments that came ahead of their
 * datagram's first, held until it comes, then queued for frag_take(). Two stacks of buffers:
 * many of FRAG_HOLD_ROOM, which a fragment of a network up to MTU 2,034 fits, and a few of
 * FRAG_JUMBO_ROOM for a jumbo network's fragments, so that those are carried too without
 * giving every copy 9 KiB. A held copy counts in its zone's share whatever its size.
 */
#include <string.h>

#include "frag_int.h"

void
frag_hold_sizes(const struct frag_cfg *c, size_t sz[3])
{
	sz[0] = (size_t)(c->held + c->held_jumbo) * sizeof(struct frag_hold);
	sz[1] = (size_t)c->held * FRAG_HOLD_ROOM;
	sz[2] = (size_t)c->held_jumbo * FRAG_JUMBO_ROOM;
}

/* Entries [0, held) are small, the rest jumbo: the index tells the stack and the buffer. */
static bool
frag_is_jumbo(const struct frag_table *t, uint32_t i)
{
	return i >= t->cfg.held;
}

static uint32_t *
frag_stack(struct frag_table *t, bool jumbo)
{
	return jumbo ? &t->free_jumbo : &t->free_hold;
}

void
frag_hold_init(struct frag_table *t)
{
	uint32_t n = t->cfg.held + t->cfg.held_jumbo, i;

	for (i = 0; i < n; i++)
		t->hold[i].next = i + 1 < n && i + 1 != t->cfg.held ? i + 1 : FRAG_NIL;
	t->free_hold = t->cfg.held ? 0 : FRAG_NIL;
	t->free_jumbo = t->cfg.held_jumbo ? t->cfg.held : FRAG_NIL;
}

static uint8_t *
frag_buf_at(const struct frag_table *t, uint32_t i)
{
	if (frag_is_jumbo(t, i))
		return t->jbuf + (size_t)(i - t->cfg.held) * FRAG_JUMBO_ROOM;
	return t->buf + (size_t)i * FRAG_HOLD_ROOM;
}

static void
frag_hold_put(struct frag_table *t, uint32_t i)
{
	uint32_t *top = frag_stack(t, frag_is_jumbo(t, i));

	t->hold[i].next = *top;
	*top = i;
	t->held_in_use--;
}

void
frag_drop_held(struct frag_table *t, struct frag_ctx *c, enum frag_reason why)
{
	uint32_t i = c->held_head, next;

	if (!c->nheld)
		return;
	while (i != FRAG_NIL) {
		next = t->hold[i].next;
		frag_hold_put(t, i);
		i = next;
	}
	t->st.drop[why] += c->nheld;
	t->zone_held[c->zi] -= c->nheld;
	c->nheld = 0;
	c->held_head = c->held_tail = FRAG_NIL;
}

enum frag_reason
frag_hold_copy(struct frag_table *t, struct frag_ctx *c, const uint8_t *frame, uint32_t len)
{
	uint32_t *top = frag_stack(t, len > FRAG_HOLD_ROOM), i = *top;

	if (t->zone_held[c->zi] >= t->cfg.held_share)
		return FRAG_R_HOLD_SHARE;
	if (i == FRAG_NIL || len > FRAG_JUMBO_ROOM)
		return FRAG_R_NO_HOLD;
	*top = t->hold[i].next;
	t->held_in_use++;
	memcpy(frag_buf_at(t, i), frame, len);
	t->hold[i].len = len;
	t->hold[i].next = FRAG_NIL;
	if (c->held_tail != FRAG_NIL)
		t->hold[c->held_tail].next = i;
	else
		c->held_head = i;
	c->held_tail = i;
	c->nheld++;
	t->zone_held[c->zi]++;
	t->st.held++;
	return FRAG_R_MAX;
}

uint32_t
frag_give_held(struct frag_table *t, struct frag_ctx *c, frag_send_fn *send, void *arg)
{
	uint32_t n = c->nheld, i, next;

	for (i = c->held_head; i != FRAG_NIL; i = next) {
		next = t->hold[i].next;
		send(arg, frag_buf_at(t, i), t->hold[i].len);
		frag_hold_put(t, i);
	}
	t->zone_held[c->zi] -= n;
	t->st.handed_over += n;
	c->nheld = 0;
	c->held_head = c->held_tail = FRAG_NIL;
	return n;
}

uint32_t
frag_release(struct frag_table *t, struct frag_ctx *c, uint64_t *count)
{
	uint32_t n = c->nheld, i;

	if (!n)
		return 0;
	for (i = c->held_head; i != FRAG_NIL; i = t->hold[i].next)
		t->hold[i].x = c->x;
	if (t->rel_tail != FRAG_NIL)
		t->hold[t->rel_tail].next = c->held_head;
	else
		t->rel_head = c->held_head;
	t->rel_tail = c->held_tail;
	t->zone_held[c->zi] -= n;
	*count += n;
	c->nheld = 0;
	c->held_head = c->held_tail = FRAG_NIL;
	return n;
}

void
frag_end_loan(struct frag_table *t)
{
	if (t->lent != FRAG_NIL) {
		frag_hold_put(t, t->lent);
		t->lent = FRAG_NIL;
	}
}

bool
frag_take(struct frag_table *t, uint8_t **frame, uint32_t *len, struct frag_xlat *x)
{
	uint32_t i = t->rel_head;

	frag_end_loan(t);
	if (i == FRAG_NIL)
		return false;
	t->rel_head = t->hold[i].next;
	if (t->rel_head == FRAG_NIL)
		t->rel_tail = FRAG_NIL;
	t->lent = i;
	*frame = frag_buf_at(t, i);
	*len = t->hold[i].len;
	*x = t->hold[i].x;
	return true;
}

void
frag_flush_released(struct frag_table *t, uint8_t action, uint32_t slot)
{
	uint32_t *p = &t->rel_head, i;

	t->rel_tail = FRAG_NIL;
	while ((i = *p) != FRAG_NIL) {
		if (frag_goes_to(&t->hold[i].x, action, slot)) {
			*p = t->hold[i].next;
			frag_hold_put(t, i);
			t->st.drop[FRAG_R_FLUSHED]++;
			continue;
		}
		t->rel_tail = i;
		p = &t->hold[i].next;
	}
}

bool
frag_ready(const struct frag_table *t)
{
	return t->rel_head != FRAG_NIL;
}

uint32_t
frag_held_in_use(const struct frag_table *t)
{
	return t->held_in_use;
}
