/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the adoption of a session region (control/restart/region.c, ct_region.c). A valid
 * region of two workers with live sessions of every zone is made once; each input either
 * mutates a copy of it or replaces it with raw bytes:
 *
 *   input[0] even: mutations, each off:3 (big endian, modulo the file size) len:1 (1-8) bytes;
 *                  bit 1 set: the header checksum is recomputed after them
 *   input[0] odd:  the file is input[1..] as it is (random, short, truncated regions)
 *
 * The region has an IPv6 table per worker too (region6.c). The file is adopted through
 * region_open(). Whatever the verdict, the node must get usable tables of both families:
 * every table is then used as the worker would (lookups of every tuple ever inserted,
 * inserts, expiry, a flush of every zone, a dump) under the sanitizers, and its counts must
 * stay within its capacity. A refusal must name a reason and leave the file moved aside.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ct6_region.h"
#include "fail.h"
#include "pkt.h"
#include "region.h"

#define CAP	64
#define ZONES	4

static char dir[64], path[128];
static uint8_t *tmpl;
static size_t tmpl_len;

static const struct region_want want = {
	.nworkers = 2, .capacity = CAP, .nzones = ZONES, .node_ip = 0x010212c6,
	.snat_lo = 30000, .snat_hi = 65535, .capacity6 = CAP,
	.node_ip6 = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0x01, [15] = 1 },
};

static struct ct_tuple
tup(uint32_t i, int dir_)
{
	struct ct_tuple t = { 0 };

	if (dir_)
		ct_tuple_set(&t, 0x08080808, 0x010212c6, 80, (uint16_t)(30000 + i), 0,
			     IPPROTO_TCP_);
	else
		ct_tuple_set(&t, 0x0a000001 + i, 0x08080808, (uint16_t)(1000 + i), 80,
			     (uint16_t)(i % (ZONES + 1)), IPPROTO_TCP_);
	return t;
}

static void
exercise(struct ct_table *ct)
{
	struct ct_dump_entry out[16];
	struct ct_dump_req rq = { .cursor = 0, .budget = CAP, .max = 16, .out = out };
	enum ct_refuse why;
	uint32_t i, z;
	int d;

	for (i = 0; i < 2 * CAP; i++) {
		struct ct_tuple o = tup(i, 0), r = tup(i, 1);
		struct ct_session *s = ct_lookup(ct, &o, &d);

		if (s)
			ct_touch(ct, s, CT_TCP_ESTABLISHED, 20);
		else
			ct_insert(ct, &o, &r, CT_TCP_SYN_SENT, 20, &why);
		ct_lookup(ct, &r, &d);
	}
	ct_dump(ct, 20, &rq);
	ct_expire(ct, 100, 16);
	for (z = 1; z <= ZONES; z++)
		ct_flush_zone(ct, (uint16_t)z);
	ct_expire(ct, 100000, 4 * CAP);
	if (ct->used > ct->capacity || ct->hiwater > ct->capacity)
		fuzz_fail_at("fuzz_adopt", "table counts beyond capacity", NULL);
}

static struct ct6_tuple
tup6(uint32_t i, int dir_)
{
	uint8_t g[16] = { 0xfd, [14] = (uint8_t)(i >> 8), [15] = (uint8_t)i };
	uint8_t w[16] = { 0x20, 0x01, 0x00, 0x02, 0, 0, 0, 0x02, [15] = 8 };
	struct ct6_tuple t;

	if (dir_)
		ct6_tuple_set(&t, w, want.node_ip6, 80, (uint16_t)(30000 + i), 0, IPPROTO_TCP_);
	else
		ct6_tuple_set(&t, g, w, (uint16_t)(1000 + i), 80, (uint16_t)(i % (ZONES + 1)),
			      IPPROTO_TCP_);
	return t;
}

static void
exercise6(struct ct6_table *ct)
{
	struct ct6_dump_entry out[16];
	struct ct_dump_req rq = { .cursor = 0, .budget = CAP, .max = 16 };
	enum ct_refuse why;
	uint32_t i, z;
	int d;

	for (i = 0; i < 2 * CAP; i++) {
		struct ct6_tuple o = tup6(i, 0), r = tup6(i, 1);
		struct ct6_session *s = ct6_lookup(ct, &o, &d);

		if (s)
			ct6_touch(ct, s, CT_TCP_ESTABLISHED, 20);
		else
			ct6_insert(ct, &o, &r, CT_TCP_SYN_SENT, 20, &why);
		ct6_lookup(ct, &r, &d);
	}
	ct6_dump(ct, 20, &rq, out);
	ct6_expire(ct, 100, 16);
	for (z = 1; z <= ZONES; z++)
		ct6_flush_zone(ct, (uint16_t)z);
	ct6_expire(ct, 100000, 4 * CAP);
	if (ct->used > ct->capacity || ct->hiwater > ct->capacity)
		fuzz_fail_at("fuzz_adopt", "IPv6 table counts beyond capacity", NULL);
}

/* The work directory goes when the run ends (libFuzzer exits through exit()). */
static void
cleanup(void)
{
	char lock[160];

	snprintf(lock, sizeof(lock), "%s.lock", path);
	unlink(path);
	unlink(lock);
	rmdir(dir);
}

static void
setup(void)
{
	struct region rg;
	char err[256];
	struct stat st;
	uint32_t w, i;
	enum ct_refuse why;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/cvs-fuzz-adopt-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/r.region", dir);
	if (region_open(&rg, dir, "r.region", &want, err, sizeof(err)))
		fuzz_fail_at("fuzz_adopt", "cannot make the template", err);
	atexit(cleanup);
	for (w = 0; w < 2; w++)
		for (i = 0; i < CAP - 8; i++) {
			struct ct_tuple o = tup(i + w * 7, 0), r = tup(i + w * 7, 1);
			struct ct_session *s = ct_insert(rg.ct[w], &o, &r, CT_TCP_ESTABLISHED, 5,
							 &why);

			if (s && i % 6 == 5)
				ct_delete(rg.ct[w], s);
		}
	for (w = 0; w < 2; w++)
		for (i = 0; i < CAP - 8; i++) {
			struct ct6_tuple o = tup6(i + w * 7, 0), r = tup6(i + w * 7, 1);
			struct ct6_session *s = ct6_insert(rg.ct6[w], &o, &r, CT_TCP_ESTABLISHED,
							   5, &why);

			if (s && i % 6 == 5)
				ct6_delete(rg.ct6[w], s);
		}
	region_close(&rg);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st))
		fuzz_fail_at("fuzz_adopt", "template", path);
	tmpl_len = (size_t)st.st_size;
	tmpl = malloc(tmpl_len);
	if (!tmpl || read(fd, tmpl, tmpl_len) != (ssize_t)tmpl_len)
		fuzz_fail_at("fuzz_adopt", "template read", path);
	close(fd);
}

static void
write_file(const uint8_t *b, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || (n && write(fd, b, n) != (ssize_t)n))
		fuzz_fail_at("fuzz_adopt", "cannot write the input region", path);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t *buf;
	struct region rg;
	char err[256];
	size_t i = 1;
	uint32_t w;

	if (!tmpl)
		setup();
	if (size && (data[0] & 1)) {
		write_file(data + 1, size - 1);
	} else {
		if (!buf && !(buf = malloc(tmpl_len)))
			return 0;
		memcpy(buf, tmpl, tmpl_len);
		while (i + 4 <= size) {
			size_t off = ((size_t)data[i] << 16 | (size_t)data[i + 1] << 8 |
				      data[i + 2]) % tmpl_len;
			size_t len = (data[i + 3] & 7) + 1, k;

			i += 4;
			for (k = 0; k < len && i < size; k++, i++)
				buf[(off + k) % tmpl_len] = data[i];
		}
		/* Bit 1: the header checksum made right again, so later checks are reached. */
		if (size && (data[0] & 2))
			region_seal_header(buf);
		write_file(buf, tmpl_len);
	}
	if (region_open(&rg, dir, "r.region", &want, err, sizeof(err)))
		fuzz_fail_at("fuzz_adopt", "no region at all", err);
	if (rg.info.refused && !rg.info.why[0])
		fuzz_fail_at("fuzz_adopt", "refused without a reason", NULL);
	if (rg.info.refused6 && !rg.info.why6[0])
		fuzz_fail_at("fuzz_adopt", "IPv6 tables refused without a reason", NULL);
	for (w = 0; w < 2; w++) {
		if (!rg.ct[w] || !rg.ct6[w])
			fuzz_fail_at("fuzz_adopt", "a worker without a table", rg.info.why);
		exercise(rg.ct[w]);
		exercise6(rg.ct6[w]);
	}
	region_close(&rg);
	/* Refused regions pile up as asides: keep the directory small. */
	if (rg.info.refused)
		unlink(rg.info.aside);
	return 0;
}
