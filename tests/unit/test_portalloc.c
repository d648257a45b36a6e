/* SPDX-License-Identifier: BSD-3-Clause */
/* Host-port allocator: round robin, exhaustion, reuse order. */
#include <errno.h>

#include "t.h"
#include "portalloc.h"

int
main(void)
{
	struct portalloc pa;
	uint32_t v, i;

	CHECK_EQ(portalloc_init(&pa, 20000, 20004), 0);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(portalloc_get(&pa, &v), 0);
		CHECK_EQ(v, 20000 + i);
	}
	CHECK_EQ(portalloc_get(&pa, &v), -ENOSPC);
	CHECK_EQ(portalloc_free_count(&pa), 0);
	/* Released ports come back round-robin: after the cursor, not at once. */
	portalloc_put(&pa, 20001);
	portalloc_put(&pa, 20003);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 20001);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 20003);
	portalloc_put(&pa, 20000);
	portalloc_put(&pa, 20004);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 20004);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 20000);
	/* Taking a specific value. */
	portalloc_put(&pa, 20002);
	CHECK_EQ(portalloc_take(&pa, 20002), 0);
	CHECK_EQ(portalloc_take(&pa, 20002), -EEXIST);
	CHECK_EQ(portalloc_take(&pa, 19999), -ERANGE);
	portalloc_put(&pa, 12345);	/* outside: ignored */
	portalloc_put(&pa, 20002);
	portalloc_put(&pa, 20002);	/* double put: counted once */
	CHECK_EQ(portalloc_free_count(&pa), 1);
	portalloc_fini(&pa);

	/*
	 * Skipped values (reserved ports, kernel listeners) are never handed out, are not
	 * counted as free, and can still be taken explicitly (a port restored from state).
	 */
	CHECK_EQ(portalloc_init(&pa, 100, 103), 0);
	portalloc_skip(&pa, 101, true);
	portalloc_skip(&pa, 103, true);
	portalloc_skip(&pa, 99, true);		/* outside: ignored */
	CHECK(portalloc_is_skipped(&pa, 101));
	CHECK(!portalloc_is_skipped(&pa, 102));
	CHECK_EQ(portalloc_free_count(&pa), 2);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 100);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 102);
	CHECK_EQ(portalloc_get(&pa, &v), -ENOSPC);
	CHECK_EQ(portalloc_take(&pa, 103), 0);
	CHECK_EQ(portalloc_free_count(&pa), 0);
	portalloc_put(&pa, 103);
	CHECK_EQ(portalloc_free_count(&pa), 0);	/* free again, but still skipped */
	portalloc_skip(&pa, 101, false);
	CHECK_EQ(portalloc_free_count(&pa), 1);
	CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(v, 101);
	portalloc_fini(&pa);

	/* The full 16-bit range. */
	CHECK_EQ(portalloc_init(&pa, 1, 65535), 0);
	for (i = 0; i < 65535; i++)
		CHECK_EQ(portalloc_get(&pa, &v), 0);
	CHECK_EQ(portalloc_get(&pa, &v), -ENOSPC);
	portalloc_fini(&pa);
	return t_done("test_portalloc");
}
