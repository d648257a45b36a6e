/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shallow virtual reassembly of IPv4 fragments, as VPP does it. A NAT cannot translate a
 * fragment other than the first by itself: it carries no ports. So a per-worker table
 * remembers, per datagram (source, destination, id, protocol and the zone it came from), how
 * its first fragment was translated, and every later fragment leaves the same way. Fragments
 * that arrive before their first are copied and held, and handed back once the first is
 * translated. Fragments are never rebuilt into one datagram: the receiver reassembles, and
 * what passes here is each fragment as it came, translated.
 *
 * The table also keeps, per datagram, the ranges of data it has let through, so that it never
 * forwards two fragments that overlap (the overlapping fragment attacks of RFC 1858 and
 * RFC 3128 rewrite the ports or flags of a first fragment at the receiver) and knows when a
 * datagram is complete, to forget it at once. A datagram that can no longer be completed
 * (too many fragments, a fragment it could not hold, a first fragment the NAT refused) is
 * "refused": its held copies are dropped and its later fragments too, for the timeout, rather
 * than held for a first that will never come.
 *
 * Everything is allocated by frag_create() on the control thread; per packet there is no
 * allocation, lock or syscall. Single writer: only the worker that owns a table calls the
 * other functions. Time is a seconds counter passed in by the caller, as for ct.h.
 */
#ifndef CVS_FRAG_H
#define CVS_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Room of one held copy. Most fragments fit the small one; a jumbo network's (up to an IP MTU
 * of 9,216 with its Ethernet header) takes one of the few large ones; a frame larger than
 * that is not held (FRAG_R_NO_HOLD).
 */
#define FRAG_HOLD_ROOM	2048u
#define FRAG_JUMBO_ROOM	9240u

/* 0 in a field of struct frag_cfg takes its default. */
#define FRAG_DEF_CONTEXTS	4096u
#define FRAG_DEF_MAX_FRAGS	64u
#define FRAG_DEF_HELD		1024u
#define FRAG_DEF_TIMEOUT	2u
/* A datagram cannot have more: 65,535 bytes in 8-byte units. */
#define FRAG_MAX_FRAGS_LIMIT	8192u

struct frag_cfg {
	uint32_t contexts;	/* datagrams tracked at once per worker (default 4096) */
	uint32_t max_frags;	/* fragments of one datagram (default 64; 65,535 bytes at MTU 1500 is 45) */
	uint32_t held;		/* copies held before their first fragment, per worker (default 1024) */
	uint32_t held_jumbo;	/* and beside them, of FRAG_JUMBO_ROOM (default held / 16, at least 4) */
	uint32_t timeout;	/* seconds a datagram's context lives after its last fragment (default 2) */
	uint32_t zone_share;	/* contexts one zone may hold (default contexts / 8, at least 16) */
	uint32_t held_share;	/* copies one zone may hold (default held / 8, at least 16) */
};

/*
 * A datagram: zone 0 the world, CVS_ZONE_HOST (dp.h) the host, slot + 1 a sandbox. Compared
 * field by field, so the padding need not be cleared. Addresses and id as in the header: an
 * IPv4 datagram's in saddr, daddr and the low 16 bits of id (a6 zero), an IPv6 datagram's
 * (v6 set) in a6 (source, then destination) and the Fragment header's 32-bit id (saddr and
 * daddr zero). One table serves both families: the key says which.
 */
struct frag_key {
	uint32_t saddr;
	uint32_t daddr;
	uint32_t id;
	uint16_t zone;
	uint8_t proto;
	uint8_t v6;
	uint8_t a6[32];
};

/*
 * What every fragment of a datagram becomes, taken from its translated first fragment: the
 * addresses to write (network order), the Ethernet addresses, and where it goes (action an
 * enum dp_action, slot for DP_TO_SANDBOX, mtu as dp_result.mtu). The table only stores it.
 */
struct frag_xlat {
	uint32_t saddr;
	uint32_t daddr;
	uint8_t a6[32];		/* an IPv6 datagram's source and destination (v6 set) */
	uint8_t v6;
	uint8_t dst_mac[6];
	uint8_t src_mac[6];
	uint8_t action;
	uint32_t slot;
	uint16_t mtu;
};

/* Why a fragment was dropped: _(ENUM, "name", "help"), counted in frag_stats.drop. */
#define FRAG_REASONS(_) \
	_(NO_CONTEXT,	"frag_no_context", \
	  "fragment of a new datagram refused: the fragment table is full of live datagrams") \
	_(ZONE_SHARE,	"frag_zone_share", \
	  "fragment of a new datagram refused: its port holds its share of the fragment table") \
	_(NO_HOLD,	"frag_no_hold", \
	  "fragment ahead of its first not held: no free copy buffer, or larger than one") \
	_(HOLD_SHARE,	"frag_hold_share", \
	  "fragment ahead of its first not held: its port holds its share of copy buffers") \
	_(TOO_MANY,	"frag_too_many", \
	  "fragment of a datagram with more fragments than the table keeps (it and the later ones)") \
	_(OVERLAP,	"frag_overlap", \
	  "fragment overlapping another of its datagram (not forwarded: it could rewrite it)") \
	_(DUPLICATE,	"frag_duplicate", \
	  "fragment that repeats one of its datagram already let through or held") \
	_(TOO_LONG,	"frag_too_long", \
	  "fragment whose datagram would reassemble past 65,535 bytes, header included") \
	_(BAD_LENGTH,	"frag_bad_length", \
	  "fragment without data, not a multiple of 8 bytes before the last, or past the datagram's end") \
	_(BAD_FIRST,	"frag_bad_first", \
	  "second first fragment, or a fragment of a datagram whose first fragment was refused") \
	_(EXPIRED,	"frag_expired", \
	  "held fragment whose first fragment did not come within the timeout") \
	_(FORGOTTEN,	"frag_forgotten", \
	  "held fragment dropped when its datagram was refused (first not translated, or a fragment lost)") \
	_(FLUSHED,	"frag_flushed", \
	  "held fragment dropped with its sandbox")

enum frag_reason {
#define FRAG_R_ENUM(n, s, h) FRAG_R_##n,
	FRAG_REASONS(FRAG_R_ENUM)
#undef FRAG_R_ENUM
	FRAG_R_MAX
};

/* Their names and help texts are the drop reasons' (counters.h: CVS_DROP_FRAG_BASE + r). */

/* Written only by the owning worker; a reader on another thread may see torn values. */
struct frag_stats {
	uint64_t drop[FRAG_R_MAX];
	uint64_t contexts;	/* datagrams tracked (contexts created) */
	uint64_t held;		/* copies taken of fragments ahead of their first */
	uint64_t released;	/* held copies handed back once their first was translated */
	uint64_t forwarded;	/* fragments after the first translated directly */
	uint64_t completed;	/* datagrams forgotten at once, every byte seen */
	uint64_t expired;	/* contexts freed by the timeout */
	uint64_t given_back;	/* world copies handed to the kernel: their first never came */
	uint64_t handed_over;	/* copies sent after their first fragment to another worker */
};

struct frag_table;

/*
 * Control thread. 'cfg' may be NULL (every default), 'max_zones' is the number of sandbox
 * slots (zones 1..max_zones; any other zone but 0 counts with the host's). NULL with errno
 * EINVAL for a configuration out of range (max_frags under 2 or over FRAG_MAX_FRAGS_LIMIT, a
 * share over its pool, more than 2^24 contexts or held copies), ENOMEM when memory is short.
 * Every page is touched here, so the worker never waits on a page fault.
 */
struct frag_table *frag_create(const struct frag_cfg *cfg, uint32_t max_zones);
void frag_destroy(struct frag_table *t);
const struct frag_stats *frag_stats(const struct frag_table *t);
/* The configuration with its defaults filled in. */
const struct frag_cfg *frag_config(const struct frag_table *t);
/* Contexts in use: all of them, or one zone's. */
uint32_t frag_in_use(const struct frag_table *t);
uint32_t frag_zone_in_use(const struct frag_table *t, uint16_t zone);
/* Copy buffers in use: held, released and not taken yet, or the one frag_take() lent. */
uint32_t frag_held_in_use(const struct frag_table *t);
/* Bytes the table allocated. */
size_t frag_memory(const struct frag_table *t);

enum frag_verdict {
	FRAG_FORWARD,	/* translate it as *x and send it on */
	FRAG_HELD,	/* a copy was taken: the caller may reuse the frame */
	FRAG_DROP,	/* *why says why, counted in the stats */
};

/*
 * A fragment other than the first (offset > 0) of datagram 'k': 'frame', 'len' bytes, starts
 * at the Ethernet header, with an IPv4 header at frame + 14 already validated by the caller
 * (ihl, tot_len <= len - 14), or an IPv6 one (by the ethertype) whose Fragment header comes
 * right after it (payload length <= len - 54). Its datagram's first fragment translated → FRAG_FORWARD with *x;
 * not yet seen → a copy held (FRAG_HELD); else FRAG_DROP with *why. An exact repeat of a
 * fragment seen is a DUPLICATE; one that overlaps another is an OVERLAP and only it is
 * dropped (the datagram lives on: a forged fragment must not kill a genuine datagram, and
 * nothing overlapping leaves). Too many fragments, or one that cannot be held, refuse the
 * datagram: it can no longer be completed.
 */
enum frag_verdict frag_other(struct frag_table *t, const struct frag_key *k,
			     const uint8_t *frame, uint32_t len, uint32_t now,
			     struct frag_xlat *x, enum frag_reason *why);

/*
 * The first fragment (offset 0, MF set; 'frame' as for frag_other()) was translated as 'x':
 * record it. *v is FRAG_FORWARD when it is recorded (send the first on) and FRAG_DROP when it
 * is refused, with *why (counted): a second first fragment (BAD_FIRST, the datagram keeps its
 * first translation), the datagram already refused (its reason), a fragment the table cannot
 * track (NO_CONTEXT, ZONE_SHARE), or one that overlaps a held fragment, has a bad length or
 * is no first fragment (OVERLAP, BAD_LENGTH: the datagram is then refused as by
 * frag_refuse()). Returns the number of held fragments released, to take with frag_take(), 0
 * when refused. It ends the loan of the buffer frag_take() handed out last.
 */
uint32_t frag_first(struct frag_table *t, const struct frag_key *k, const uint8_t *frame,
		    uint32_t len, const struct frag_xlat *x, uint32_t now, enum frag_verdict *v,
		    enum frag_reason *why);

/*
 * The first fragment of datagram 'k' was not translated (policy, no session...): forget the
 * datagram, dropping its held copies (counted FORGOTTEN), and refuse its later fragments
 * (BAD_FIRST) while they keep coming within the timeout, so that they do not wait for a first
 * that will never come. Without a context to spare, nothing is remembered.
 */
void frag_refuse(struct frag_table *t, const struct frag_key *k, uint32_t now);

/*
 * The copies frag_first() released, one at a time in the order they arrived (datagram by
 * datagram), each with its datagram's translation. The frame may be rewritten in place; it
 * stays valid until the next frag_take() or frag_first() (frag_other() does not touch it).
 * false when none is left.
 */
bool frag_take(struct frag_table *t, uint8_t **frame, uint32_t *len, struct frag_xlat *x);

/*
 * Bounded expiry, as ct_expire(): at most 'budget' contexts looked at, oldest first; held
 * copies of those that timed out are dropped (EXPIRED, each), but a world datagram's (zone
 * 0) with a give-back set: those are released as it says (given_back). Returns the contexts
 * freed.
 */
uint32_t frag_expire(struct frag_table *t, uint32_t now, uint32_t budget);

/*
 * Where the copies of a world datagram go when it expires without its first fragment: x with
 * the datagram's own addresses (the kernel's side of cube-dev, for the node's own traffic
 * whose first fragment the steering program passed to the kernel). Control thread, once.
 */
void frag_set_giveback(struct frag_table *t, const struct frag_xlat *x);
/*
 * Datagram 'k''s first fragment went to another worker, its flow's owner: each copy held here
 * is given to send() (which copies it on its way there) in the order it came, and the
 * datagram is forgotten here; its later fragments follow the first. Returns the copies given.
 */
typedef void frag_send_fn(void *arg, const uint8_t *frame, uint32_t len);
uint32_t frag_handover(struct frag_table *t, const struct frag_key *k, uint32_t now,
		       frag_send_fn *send, void *arg);
/* Released copies wait for frag_take(). */
bool frag_ready(const struct frag_table *t);

/*
 * A sandbox goes: forget the datagrams seen in 'zone' and those translated towards
 * ('action', 'slot'), so that a slot given to another sandbox within the timeout never
 * receives a fragment meant for the one before (held copies counted FLUSHED). Walks the
 * whole table (the worker's mailbox, not per packet). Returns the contexts freed.
 */
uint32_t frag_flush(struct frag_table *t, uint16_t zone, uint8_t action, uint32_t slot);

#endif /* CVS_FRAG_H */
