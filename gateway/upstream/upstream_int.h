/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the inside of one upstream, shared by its files, each calling only those
 * below it: upstream_start.c (an upstream made and freed, install, start-up, the lists),
 * upstream_rpc.c (the messages: the handshake, requests in flight, relaying, server
 * requests and notifications; the reader calls it back through struct up_reader_ops),
 * upstream.c (the child process: spawn, reader thread, shutdown), install.c (install
 * commands and clones), answer.c (below them all: answers relayed as text, answer.h).
 * struct upstream holds two parts, each made and freed by its file:
 * struct up_child (upstream.c) and struct up_proto (upstream_rpc.c).
 */
#ifndef GW_UPSTREAM_INT_H
#define GW_UPSTREAM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/frame.h"
#include "base/loop.h"
#include "base/str.h"
#include "upstream/upstream.h"

struct pending {
	int64_t id;
	json_t *msg;
	char *err;
	bool done;
	const struct up_link *link;	/* a relayed request: answers go there, not to msg */
	struct pending *next;
};

/*
 * The child's life, as the reader thread sees it. Only a RUNNING child takes requests; a
 * request for one in any other state restarts it first.
 */
enum up_state {
	UP_NONE,	/* no child: not started yet, or stopped and its reader joined */
	UP_RUNNING,	/* the child runs and the reader reads its output */
	UP_EXITING,	/* the reader saw EOF: it fails the calls and stops the child */
	UP_EXITED,	/* the reader is done; its thread waits to be joined */
};

/* What the reader thread hands the messages side; both run on the reader, no lock held. */
struct up_reader_ops {
	/* One line of the child's output. */
	void (*line)(struct upstream *u, const char *line, size_t len);
	/* The output ended: u->state is UP_EXITING and u->gone says why. */
	void (*eof)(struct upstream *u);
};

/*
 * Who reads a child's output. The reader thread does until the handshake is done; then, with
 * an event loop, it lends the pipe to the loop, so that an answer is read and sent on by
 * the loop's thread, and waits until the loop reports the end (or gives the pipe back).
 */
enum up_reading {
	UP_READ_THREAD,	/* the reader thread */
	UP_READ_LOOP,	/* the loop */
	UP_READ_ENDED,	/* the loop saw the end: child.ended says why */
	UP_READ_BACK,	/* the loop stopped: the reader thread reads again */
};

/* The child process, upstream.c's: spawn, the reader thread, shutdown, restarts. */
struct up_child {
	pthread_mutex_t start_lock;	/* one (re)start at a time */
	pthread_mutex_t wlock;		/* whole lines on stdin; guards in_fd and held */
	/* Under the upstream's lock, except in_fd. */
	enum up_state state;
	char gone[512];			/* why the reader stopped, with the exit status */
	/* Not states of the child: facts about its process and the gateway around it. */
	bool reaped;			/* waitpid() has collected the current child */
	bool closing;			/* shutting down: never start another child */
	bool was_ready;		/* a start completed: later exits are crashes to restart */
	pid_t pid;
	int in_fd;
	/*
	 * Lines the loop's thread sent in this turn, written in one go at its end (flush): a
	 * turn's requests to one server cost one write and at most one wake-up of it.
	 */
	struct strbuf held;
	struct loop_task flush;
	int out_fd;
	pthread_t reader;
	const struct up_reader_ops *reader_ops;
	struct pump *errp;		/* the child's stderr into the log */
	/* The output, read by one side at a time (enum up_reading, under the lock). */
	struct line_framer fr;		/* the unfinished line */
	struct loop *loop;		/* where a ready child's output is read (NULL: here) */
	struct loop_watch watch;
	int hand_fd;			/* eventfd: the reader thread looks at lend again */
	bool lend;			/* the handshake is done: the loop may read */
	bool connected;			/* the handshake of this child is done */
	bool pumping;			/* the loop is inside the framer (loop thread only) */
	enum up_reading reading;
	const char *ended;
};

/*
 * The protocol, upstream_rpc.c's (upstream_start.c fills the lists): requests in flight,
 * what initialize and the lists said, where messages of no request go. Under the
 * upstream's lock.
 */
struct up_proto {
	int64_t next_id;
	struct pending *pending;
	json_t *tools;
	json_t *lists[UP_LIST_COUNT];	/* prompts, resources, templates from start-up */
	json_t *caps;			/* the server's capabilities from initialize */
	up_event_fn on_event;		/* messages that belong to no request */
	bool roots_asked;		/* it sent roots/list: it hears roots/list_changed */
	void *event_ctx;
};

struct upstream {
	const struct server_spec *spec;
	const char *version;
	pthread_mutex_t lock;		/* child and proto, as each says */
	pthread_cond_t cond;
	struct up_child child;
	struct up_proto proto;
};

/* install.c: a command with its output in the log; the clone of a GitHub server. */
int install_run_logged(struct upstream *u, char *const *argv, const char *cwd, char **err);
int install_repo_clone(struct upstream *u, char **err);

/* upstream_rpc.c: the messages. */
/* Empty lists and capabilities before the first start; freed with the upstream. */
void up_proto_init(struct up_proto *p);
void up_proto_fini(struct up_proto *p);
/* A request of the gateway's own: waits for the answer (a message with result or error). */
int upstream_request(struct upstream *u, const char *method, json_t *params, json_t **msg,
		     char **err);
/* The child spawned and initialized; on failure it is gone again. Callers hold start_lock. */
int upstream_connect(struct upstream *u, char **err);

/* upstream.c: the child. */
/* No child yet (fds -1), its locks made; fini destroys the locks. */
void up_child_init(struct up_child *c);
void up_child_fini(struct up_child *c);
/* Writes one message as one line on the child's stdin. */
int upstream_send(struct upstream *u, json_t *msg);
/* A request was written: its answer is due soon (the loop's busy polling, loop.h). */
void upstream_expect_answer(struct upstream *u);
/* Writes a line that is one message and ends with its newline. */
int upstream_send_line(struct upstream *u, const char *line, size_t len);
/* Spawns the child with its reader thread (state UP_RUNNING). Callers hold start_lock. */
int upstream_child_start(struct upstream *u, const struct up_reader_ops *ops, char **err);
/* Stops the child; graceful follows the stdio shutdown sequence, else SIGKILL. */
void upstream_child_stop(struct upstream *u, bool graceful);
/* Joins the reader of a child that exited (state UP_NONE after). Callers hold start_lock. */
void upstream_child_join(struct upstream *u);
/* The handshake of the current child is done: its output may go to the loop. */
void upstream_child_lend(struct upstream *u);
/* Whether the caller is the loop's thread, which must never wait for a start. */
bool upstream_child_on_loop(struct upstream *u);

#endif /* GW_UPSTREAM_INT_H */
