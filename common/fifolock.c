/* SPDX-License-Identifier: BSD-3-Clause */
#include <stddef.h>

#include "fifolock.h"

/* On the waiting thread's stack: it leaves only once an unlock handed it the lock. */
struct fifo_waiter {
	pthread_cond_t c;
	struct fifo_waiter *next;
	bool go;
};

void
fifo_lock_init(struct fifo_lock *l)
{
	pthread_mutex_init(&l->m, NULL);
	l->held = false;
	l->head = l->tail = NULL;
}

void
fifo_lock_destroy(struct fifo_lock *l)
{
	pthread_mutex_destroy(&l->m);
}

void
fifo_lock(struct fifo_lock *l)
{
	struct fifo_waiter w = { .c = PTHREAD_COND_INITIALIZER };

	pthread_mutex_lock(&l->m);
	if (!l->held) {
		l->held = true;
		pthread_mutex_unlock(&l->m);
		return;
	}
	if (l->tail)
		l->tail->next = &w;
	else
		l->head = &w;
	l->tail = &w;
	while (!w.go)
		pthread_cond_wait(&w.c, &l->m);
	pthread_mutex_unlock(&l->m);
	pthread_cond_destroy(&w.c);
}

void
fifo_unlock(struct fifo_lock *l)
{
	struct fifo_waiter *w;

	pthread_mutex_lock(&l->m);
	w = l->head;
	if (w) {
		/* Still held: it is the first waiter's now. Signalled under m, as w is its stack. */
		l->head = w->next;
		if (!l->head)
			l->tail = NULL;
		w->go = true;
		pthread_cond_signal(&w->c);
	} else {
		l->held = false;
	}
	pthread_mutex_unlock(&l->m);
}

unsigned
fifo_lock_waiting(struct fifo_lock *l)
{
	struct fifo_waiter *w;
	unsigned n = 0;

	pthread_mutex_lock(&l->m);
	for (w = l->head; w; w = w->next)
		n++;
	pthread_mutex_unlock(&l->m);
	return n;
}
