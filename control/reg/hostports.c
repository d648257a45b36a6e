/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlisten.h"
#include "hostports.h"

static inline bool
hp_bit(const uint64_t *bits, uint32_t i)
{
	return (bits[i / 64] >> (i % 64)) & 1;
}

void
hostports_configure(struct hostports *h, const struct cvs_range *reserved, uint32_t n,
		    uint32_t hold_s)
{
	uint32_t words = (h->pa.hi - h->pa.lo + 1 + 63) / 64, i, p;

	memset(h->reserved, 0, words * sizeof(uint64_t));
	for (i = 0; i < n; i++)
		for (p = reserved[i].lo; p <= reserved[i].hi; p++)
			if (p >= h->pa.lo && p <= h->pa.hi)
				h->reserved[(p - h->pa.lo) / 64] |= 1ull << ((p - h->pa.lo) % 64);
	for (p = h->pa.lo; p <= h->pa.hi; p++)
		portalloc_skip(&h->pa, p, hp_bit(h->reserved, p - h->pa.lo) ||
			       hp_bit(h->listening, p - h->pa.lo));
	h->hold_s = hold_s;
}

int
hostports_init(struct hostports *h, struct cvs_range range, const struct cvs_range *reserved,
	       uint32_t n_reserved, uint32_t node_ip, uint32_t hold_s)
{
	uint32_t words = ((uint32_t)range.hi - range.lo + 1 + 63) / 64;
	int ret;

	memset(h, 0, sizeof(*h));
	ret = portalloc_init(&h->pa, range.lo, range.hi);
	if (ret)
		return ret;
	h->reserved = calloc(words, sizeof(uint64_t));
	h->listening = calloc(words, sizeof(uint64_t));
	h->hold_at = malloc(((size_t)range.hi - range.lo + 1) * sizeof(*h->hold_at));
	if (!h->reserved || !h->listening || !h->hold_at) {
		hostports_fini(h);
		return -ENOMEM;
	}
	memset(h->hold_at, 0xff, ((size_t)range.hi - range.lo + 1) * sizeof(*h->hold_at));
	memset(h->id_head, 0xff, sizeof(h->id_head));
	h->min_until = UINT64_MAX;
	hostports_configure(h, reserved, n_reserved, hold_s);
	h->node_ip = node_ip;
	return 0;
}

void
hostports_fini(struct hostports *h)
{
	portalloc_fini(&h->pa);
	free(h->reserved);
	free(h->listening);
	free(h->holds);
	free(h->hold_at);
	h->reserved = h->listening = NULL;
	h->holds = NULL;
	h->hold_at = NULL;
	h->nholds = h->cap = 0;
}

static int
hp_hold_of(const struct hostports *h, uint16_t port)
{
	if (port < h->pa.lo || port > h->pa.hi)
		return -1;
	return h->hold_at[port - h->pa.lo];
}

static uint32_t
hp_bucket(const char *id)
{
	uint32_t v = 2166136261u;

	while (*id) {
		v ^= (uint8_t)*id++;
		v *= 16777619u;
	}
	return v & (HOSTPORTS_ID_BUCKETS - 1);
}

/* The link in its id's chain that points at hold i. */
static int32_t *
hp_link_to(struct hostports *h, uint32_t i)
{
	int32_t *p = &h->id_head[hp_bucket(h->holds[i].id)];

	while (*p != (int32_t)i)
		p = &h->holds[*p].next;
	return p;
}

int
hostports_scan(struct hostports *h)
{
	uint32_t n = h->pa.hi - h->pa.lo + 1, i;
	int ret;

	memset(h->listening, 0, (n + 63) / 64 * sizeof(uint64_t));
	ret = hostlisten_scan(h->node_ip, (uint16_t)h->pa.lo, (uint16_t)h->pa.hi, h->listening);
	if (ret < 0) {
		/* Keep the skip bits of the last good scan rather than forgetting listeners. */
		h->st.scan_errors++;
		return ret;
	}
	h->nconflicts = 0;
	for (i = 0; i < n; i++) {
		bool listen = hp_bit(h->listening, i);

		portalloc_skip(&h->pa, h->pa.lo + i, listen || hp_bit(h->reserved, i));
		if (!listen || !portalloc_is_used(&h->pa, h->pa.lo + i) ||
		    hp_hold_of(h, (uint16_t)(h->pa.lo + i)) >= 0)
			continue;
		if (h->nconflicts < HOSTPORTS_MAX_CONFLICTS)
			h->conflicts[h->nconflicts] = (uint16_t)(h->pa.lo + i);
		h->nconflicts++;
	}
	return (int)h->nconflicts;
}

/* Remove hold i; the last one takes its place, and both indexes follow. */
static void
hp_hold_drop(struct hostports *h, uint32_t i)
{
	uint32_t last = h->nholds - 1;

	*hp_link_to(h, i) = h->holds[i].next;
	h->hold_at[h->holds[i].hport - h->pa.lo] = -1;
	if (i != last) {
		*hp_link_to(h, last) = (int32_t)i;
		h->holds[i] = h->holds[last];
		h->hold_at[h->holds[i].hport - h->pa.lo] = (int32_t)i;
	}
	h->nholds--;
}

static int
hp_hold_find(const struct hostports *h, const char *id, uint16_t cport)
{
	int32_t i;

	for (i = h->id_head[hp_bucket(id)]; i >= 0; i = h->holds[i].next)
		if (h->holds[i].cport == cport && !strcmp(h->holds[i].id, id))
			return i;
	return -1;
}

/* The range is short: the oldest hold gives its port up, to whoever asks now. */
static int
hp_break_oldest(struct hostports *h, uint16_t *out)
{
	uint32_t i, best = 0;

	if (!h->nholds)
		return -ENOSPC;
	for (i = 1; i < h->nholds; i++)
		if (h->holds[i].until < h->holds[best].until)
			best = i;
	*out = h->holds[best].hport;
	hp_hold_drop(h, best);
	h->st.holds_broken++;
	return 0;
}

/*
 * Has a node service started listening on the port since the last scan? Asked of the kernel
 * for this one candidate at allocation time (a service may have started a moment ago), not
 * by a scan of the range: that dump walks the kernel's whole listening hash, and it ran under
 * the registry lock once per registration. A port found taken is kept back until the next
 * scan says otherwise; when the kernel cannot be asked, the last scan's view stands.
 */
static bool
hp_listened(struct hostports *h, uint16_t port)
{
	uint32_t i = port - h->pa.lo;
	int ret = hostlisten_check(h->node_ip, port);

	if (ret < 0) {
		h->st.scan_errors++;
		return hp_bit(h->listening, i);
	}
	if (ret > 0) {
		h->listening[i / 64] |= 1ull << (i % 64);
		portalloc_skip(&h->pa, port, true);
	}
	return ret > 0;
}

/* Ports found listened on one by one before a scan of the whole range is cheaper. */
#define HP_CHECKS_BEFORE_SCAN	8

int
hostports_get(struct hostports *h, const char *id, uint16_t cport, uint64_t now,
	      uint16_t *out)
{
	uint32_t v, tries = 0;
	int i;

	hostports_expire(h, now);
	i = hp_hold_find(h, id, cport);
	if (i >= 0) {
		uint16_t port = h->holds[i].hport;

		hp_hold_drop(h, (uint32_t)i);
		/* A node service took the port meanwhile: it wins, the sandbox gets another. */
		if (!hp_bit(h->listening, port - h->pa.lo) && !hp_listened(h, port)) {
			*out = port;
			h->st.holds_reused++;
			return 0;
		}
		portalloc_put(&h->pa, port);
	}
	while (portalloc_get(&h->pa, &v) == 0) {
		if (!hp_listened(h, (uint16_t)v)) {
			*out = (uint16_t)v;
			return 0;
		}
		portalloc_put(&h->pa, v);	/* skipped from now on */
		if (++tries == HP_CHECKS_BEFORE_SCAN)
			hostports_scan(h);
	}
	return hp_break_oldest(h, out);
}

void
hostports_unget(struct hostports *h, uint16_t port)
{
	portalloc_put(&h->pa, port);
}

int
hostports_take(struct hostports *h, uint16_t port)
{
	int i = hp_hold_of(h, port);

	if (i >= 0) {
		hp_hold_drop(h, (uint32_t)i);
		return 0;	/* the port stays taken, now by its record */
	}
	return portalloc_take(&h->pa, port);
}

uint16_t
hostports_lo(const struct hostports *h)
{
	return (uint16_t)h->pa.lo;
}

uint16_t
hostports_hi(const struct hostports *h)
{
	return (uint16_t)h->pa.hi;
}

int
hostports_claim(struct hostports *h, const char *id, uint16_t port, char *who, size_t len)
{
	int i = hp_hold_of(h, port);

	if (port < h->pa.lo || port > h->pa.hi)
		return -ERANGE;
	if (i >= 0 && strcmp(h->holds[i].id, id)) {
		snprintf(who, len, "kept for sandbox %s, deleted lately", h->holds[i].id);
		return -EBUSY;
	}
	if (hp_bit(h->reserved, port - h->pa.lo)) {
		snprintf(who, len, "reserved: --reserved-host-ports");
		return -EBUSY;
	}
	if (i < 0 && portalloc_is_used(&h->pa, port)) {
		snprintf(who, len, "another sandbox's");
		return -EBUSY;
	}
	if (hp_listened(h, port)) {
		snprintf(who, len, "a process of the node listens on it");
		return -EBUSY;
	}
	return hostports_take(h, port) ? (snprintf(who, len, "not free"), -EBUSY) : 0;
}

static int
hp_hold_add(struct hostports *h, const char *id, uint16_t cport, uint16_t port, uint64_t until)
{
	if (h->nholds == h->cap) {
		uint32_t cap = h->cap ? h->cap * 2 : 64;
		struct hp_hold *n = realloc(h->holds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		h->holds = n;
		h->cap = cap;
	}
	snprintf(h->holds[h->nholds].id, sizeof(h->holds[0].id), "%s", id);
	h->holds[h->nholds].cport = cport;
	h->holds[h->nholds].hport = port;
	h->holds[h->nholds].until = until;
	h->holds[h->nholds].next = h->id_head[hp_bucket(h->holds[h->nholds].id)];
	h->id_head[hp_bucket(h->holds[h->nholds].id)] = (int32_t)h->nholds;
	h->hold_at[port - h->pa.lo] = (int32_t)h->nholds;
	if (until < h->min_until)
		h->min_until = until;
	h->nholds++;
	return 0;
}

void
hostports_release(struct hostports *h, const char *id, uint16_t cport, uint16_t port,
		  uint64_t now)
{
	/* Without memory for the hold the port is simply freed: nothing breaks, it is reused. */
	if (!h->hold_s || !portalloc_is_used(&h->pa, port) ||
	    hp_hold_add(h, id, cport, port, now + h->hold_s))
		portalloc_put(&h->pa, port);
}

void
hostports_expire(struct hostports *h, uint64_t now)
{
	uint32_t i = 0;

	/* Called for every host port handed out: nothing to do until the earliest runs out. */
	if (now < h->min_until)
		return;
	h->min_until = UINT64_MAX;
	while (i < h->nholds) {
		if (h->holds[i].until > now) {
			if (h->holds[i].until < h->min_until)
				h->min_until = h->holds[i].until;
			i++;
			continue;
		}
		portalloc_put(&h->pa, h->holds[i].hport);
		hp_hold_drop(h, i);
		h->st.holds_expired++;
	}
}

uint32_t
hostports_free(const struct hostports *h)
{
	return portalloc_free_count(&h->pa);
}

uint32_t
hostports_used(const struct hostports *h)
{
	return h->pa.used;
}

uint32_t
hostports_listening(const struct hostports *h)
{
	uint32_t words = (h->pa.hi - h->pa.lo + 1 + 63) / 64, w, n = 0;

	for (w = 0; w < words; w++)
		n += (uint32_t)__builtin_popcountll(h->listening[w]);
	return n;
}

uint32_t
hostports_size(const struct hostports *h)
{
	return h->pa.hi - h->pa.lo + 1;
}

json_t *
hostports_holds_json(const struct hostports *h, const char *id)
{
	json_t *arr = json_array(), *e;
	int32_t i, n = (int32_t)h->nholds;

	/* One id's holds from its chain (a journal record), all of them for the state file. */
	for (i = id ? h->id_head[hp_bucket(id)] : 0; arr && i >= 0 && i < n;
	     i = id ? h->holds[i].next : i + 1) {
		if (id && strcmp(h->holds[i].id, id))
			continue;
		e = json_pack("{s:i, s:i, s:I}", "containerPort", h->holds[i].cport,
			      "hostPort", h->holds[i].hport, "until", (json_int_t)h->holds[i].until);
		/* The state file names the id first, as it always did. */
		if (e && !id) {
			json_t *named = json_pack("{s:s}", "id", h->holds[i].id);

			json_object_update(named, e);
			json_decref(e);
			e = named;
		}
		json_array_append_new(arr, e);
	}
	return arr;
}

int
hostports_holds_restore(struct hostports *h, const json_t *arr, uint64_t now, char *err,
			size_t errlen)
{
	size_t i;
	json_t *e;

	if (!json_is_array(arr)) {
		snprintf(err, errlen, "hostPortHolds: not an array");
		return -EINVAL;
	}
	json_array_foreach(arr, i, e) {
		const char *id;
		json_int_t cp, hp, until;

		if (json_unpack(e, "{s:s, s:I, s:I, s:I}", "id", &id, "containerPort", &cp,
				"hostPort", &hp, "until", &until) ||
		    !*id || strlen(id) > 64 || cp < 1 || cp > 65535 || hp < h->pa.lo ||
		    hp > h->pa.hi || until < 0) {
			snprintf(err, errlen, "hostPortHolds[%zu]: bad entry", i);
			return -EINVAL;
		}
		/* A shorter --host-port-hold since the file was written applies at once. */
		if ((uint64_t)until > now + h->hold_s)
			until = (json_int_t)(now + h->hold_s);
		/* Run out, or taken by a restored registration (the record wins): no hold. */
		if ((uint64_t)until <= now || portalloc_take(&h->pa, (uint32_t)hp))
			continue;
		if (hp_hold_add(h, id, (uint16_t)cp, (uint16_t)hp, (uint64_t)until)) {
			portalloc_put(&h->pa, (uint32_t)hp);
			snprintf(err, errlen, "hostPortHolds: out of memory");
			return -ENOMEM;
		}
	}
	return 0;
}
