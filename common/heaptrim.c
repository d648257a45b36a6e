/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deleted sandboxes leave their memory on the heaps' free lists, spread over the arenas of the
 * API threads (a thread per connection), and glibc gives back by itself only the top of each
 * heap. malloc_trim() gives back every whole free page of every arena; it takes each arena's
 * lock in turn, so it runs on the control loop once a mass deletion is over, never in a
 * request. Measured: 4,000 sandboxes registered and deleted left 1.4 KiB of anonymous memory
 * per sandbox in the process, 0.3 KiB after a trim.
 */
#include <malloc.h>

#include "cvs_common.h"

bool
cvs_trim_tick(struct cvs_trim *t, uint32_t count)
{
	t->calm = count == t->seen ? t->calm + 1 : 0;
	t->seen = count;
	if (count > t->high)
		t->high = count;
	if (t->high - count < CVS_TRIM_DROP || t->calm < CVS_TRIM_CALM)
		return false;
	malloc_trim(0);
	t->high = count;
	t->trims++;
	return true;
}
