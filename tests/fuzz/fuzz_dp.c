/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: arbitrary frames through the whole pipeline (parse → classify → conntrack
 * → NAT → L2) on the world port, two sandbox ports and cube-dev, on a table preloaded with
 * live flows of every kind. An input is a run of records, so sequences (open, then abuse a
 * flow; fill the table; age it) are reachable:
 *
 *   record = hdr:1 len:2 (big endian) frame:len
 *   hdr bits 0-1: port (0 world, 1 sandbox A, 2 sandbox B, 3 cube-dev)
 *   hdr bits 2-7: clock step (< 48: that many eighths of nothing, i.e. 0-5 s; >= 48: n * 1000 s)
 *
 * Besides the sanitizers, every frame is checked against bed_verdict_check(): the table stays
 * consistent and checksums never change validity (a bad one stays bad, but for a partial one
 * that is completed). A small fragment table (frag.h) takes the fragments, and the fragments
 * their first one releases are checked the same way. The owner lookup of
 * several workers (dp_owner) runs on every frame too and must name an existing worker.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ct6.h"
#include "dpbed.h"
#include "fail.h"
#include "owner.h"

#define FUZZ_MAX_RECORDS	16
#define FUZZ_FRAME_MAX		2048

static struct dpbed bed;
static int bed_ready;
static _Atomic uint64_t iid6[BED_SLOTS];

static void
fuzz_fail(const char *what, int code)
{
	char c[16];

	snprintf(c, sizeof(c), "code %d", code);
	fuzz_fail_at("fuzz_dp", what, c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Frames live in their own buffer: the pipeline writes in place. */
	static uint8_t frame[FUZZ_FRAME_MAX] __attribute__((aligned(64)));
	struct dp_result r;
	uint32_t k;
	int n, rc;

	if (!bed_ready) {
		if (bed_init(&bed, 16))
			fuzz_fail("bed_init", 0);
		bed_ready = 1;
	}
	rc = bed_reset(&bed);
	if (rc)
		fuzz_fail("preload", rc);
	/* A fresh small table per input: its limits are reachable in 16 records. */
	frag_destroy(bed.x.frag);
	bed.x.frag = frag_create(&(struct frag_cfg){ .contexts = 16, .max_frags = 8, .held = 8,
						     .timeout = 2 }, BED_SLOTS + 2);
	if (!bed.x.frag)
		fuzz_fail("frag_create", 0);
	/*
	 * IPv6 carried (NAT66, the guests' neighbour discovery) with a small table of its own per
	 * input, as the fragments have: every frame reaches dp6.c's checks, not just its gate.
	 */
	ct6_destroy(bed.x.ct6);
	bed.x.ct6 = ct6_create(64, BED_SLOTS, NULL);
	if (!bed.x.ct6)
		fuzz_fail("ct6_create", 0);
	bed.cfg.have_ip6 = true;
	memcpy(bed.cfg.node_ip6, (const uint8_t[16]){ 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 1 }, 16);
	memcpy(bed.cfg.guest_pfx6, (const uint8_t[8]){ 0x20, 0x01, 0, 2, 0, 0, 0, 6 }, 8);
	atomic_store(&bed.sh->nh6_mac, dp_mac_pack(bed_router_mac));
	/* Guests' IPv6 addresses learnt afresh per input, so learning is fuzzed too. */
	memset(iid6, 0, sizeof(iid6));
	bed.sh->slot_iid6 = iid6;
	/* An odd input has a world link of IPv6's minimum MTU: longer packets meet it. */
	bed.cfg.world_mtu = size & 1 ? 1280 : 0;
	for (n = 0; n < FUZZ_MAX_RECORDS && size >= 3; n++) {
		uint8_t hdr = data[0], step = hdr >> 2;
		size_t len = (size_t)data[1] << 8 | data[2];
		int before;

		data += 3;
		size -= 3;
		if (len > size)
			len = size;
		if (len > FUZZ_FRAME_MAX)
			len = FUZZ_FRAME_MAX;
		memcpy(frame, data, len);
		data += len;
		size -= len;
		bed.x.now += step >= 48 ? (uint32_t)(step - 47) * 1000u : step / 8u;
		ct_expire(bed.x.ct, bed.x.now, 64);
		ct6_expire(bed.x.ct6, bed.x.now, 64);
		/* Ownership is computed before any worker sees a frame: any bytes, any count. */
		for (k = 1; k <= 4; k++)
			if (dp_owner(&bed.cfg, bed.sh, (hdr & 3) == 0 ? DP_FROM_WORLD :
				     (hdr & 3) == 3 ? DP_FROM_HOST : DP_FROM_SANDBOX,
				     (hdr & 3) == 2 ? BED_SLOT_B : BED_SLOT_A, frame, (uint32_t)len,
				     k) >= k)
				fuzz_fail("dp_owner out of range", (int)k);
		before = bed_csum_state(frame, (uint32_t)len);
		bed_rx(&bed, hdr & 3, frame, (uint32_t)len, &r);
		rc = bed_verdict_check(&bed, &r, frame, (uint32_t)len, before);
		if (rc)
			fuzz_fail("verdict check", rc);
		while (bed.x.frag_ready) {
			uint8_t *f;
			uint32_t fl = dp_frag_release(&bed.x, &f, &r);

			if (fl && (rc = bed_verdict_check(&bed, &r, f, fl, -1)))
				fuzz_fail("released fragment", rc);
		}
		frag_expire(bed.x.frag, bed.x.now, 64);
	}
	return 0;
}
