/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state journal (control/reg/durable/journal.c) and the store on top of it
 * (control/reg/durable/store.c), without
 * EAL or root: changes replayed over the snapshot as the next start reads them, a torn last
 * record left out, a bad record in the middle or a foreign journal refused with the files left
 * alone, compaction (and a crash between its two writes), sequence numbers across restarts,
 * a journal that cannot be written, host-port holds, and concurrent writers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "t.h"
#include "fake_dp.h"
#include "journal.h"
#include "reg_api.h"
#include "registry.h"
#include "state.h"
#include "store.h"
#include "store_ops.h"

static struct fake_dp fdp = { .prefix = "tap" };
static char dir[] = "/tmp/cvs-journal-XXXXXX";
static char path[256], jpath[300];

static void
reg_new(struct registry *r)
{
	uint32_t net, node;

	inet_pton(AF_INET, "192.168.0.0", &net);
	inet_pton(AF_INET, "198.18.0.1", &node);
	CHECK_EQ(reg_init(r, 1024, 20000, 20999, net, 18, node, &fake_dp_ops, &fdp), 0);
	reg_hostports_configure(r, NULL, 0, 600);
}

static void
reg_done(struct registry *r)
{
	reg_clear(r);
	reg_fini(r);
}

/* A PUT as the API makes it: the change, then the commit before the answer. */
static int
put(struct registry *r, const char *id, const char *body)
{
	struct reg_req q;
	json_t *out = NULL;
	char err[512];
	int st;

	if (reg_req_parse(r, body, strlen(body), &q, err, sizeof(err)))
		return REG_E_INVALID;
	st = reg_put(r, id, &q, &out, err, sizeof(err));
	json_decref(out);
	if (st >= 0 && reg_persist(r, err, sizeof(err)))
		return REG_E_FAILED;
	return st;
}

static int
del(struct registry *r, const char *id)
{
	char err[512];
	int st = reg_delete(r, id, err, sizeof(err));

	if (st >= 0 && reg_persist(r, err, sizeof(err)))
		return REG_E_FAILED;
	return st;
}

static int
vput(struct registry *r, int i, const char *ports)
{
	char id[32], body[200];

	snprintf(id, sizeof(id), "v%d", i);
	snprintf(body, sizeof(body), "{\"vhostUser\":{\"socket\":\"/run/v%d.sock\"},"
		 "\"exposedPorts\":%s}", i, ports);
	return put(r, id, body);
}

/* A registry with the store on: what the node does after its start. */
static void
live(struct registry *r, struct store *s, uint64_t seq)
{
	char err[512];

	reg_new(r);
	CHECK_EQ(store_open(s, path, r, seq, err, sizeof(err)), 0);
	reg_set_store(r, &store_reg_ops, s);
}

/* A crash: the files stay as they are, the memory goes. */
static void
crash(struct registry *r, struct store *s)
{
	reg_set_store(r, NULL, NULL);
	s->open = false;
	journal_fini(&s->j);
	pthread_mutex_destroy(&s->compact_lock);
}

/*
 * What the next start reads, restored into a fresh registry, must list exactly what 'a'
 * lists. Returns the load's info.
 */
static struct store_loaded
restores_same(struct registry *a)
{
	struct store_loaded li;
	json_t *arr = NULL, *holds = NULL, *la, *lb;
	struct registry b;
	char err[512];

	memset(&li, 0, sizeof(li));
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), 0);
	reg_new(&b);
	CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), 0);
	if (holds)
		CHECK_EQ(reg_holds_restore(&b, holds, err, sizeof(err)), 0);
	reg_attach_pending(&b);
	la = reg_list(a);
	lb = reg_list(&b);
	CHECK(json_equal(la, lb));
	json_decref(la);
	json_decref(lb);
	json_decref(arr);
	json_decref(holds);
	reg_done(&b);
	return li;
}

static char *
slurp(const char *p, size_t *len)
{
	static char buf[1 << 20];
	int fd = open(p, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (len)
		*len = n > 0 ? (size_t)n : 0;
	return buf;
}

static void
spit(const char *p, const char *data, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0 && write(fd, data, len) == (ssize_t)len);
	close(fd);
}

static void
spit_s(const char *p, const char *text)
{
	spit(p, text, strlen(text));
}

static void
reset_files(void)
{
	unlink(path);
	unlink(jpath);
}

/* Changes go to the journal, not the snapshot; the next start has them all. */
static void
test_replay(void)
{
	struct registry a;
	struct store s;
	struct store_loaded li;
	size_t snap_len;

	reset_files();
	live(&a, &s, 0);
	slurp(path, &snap_len);
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[80,443]}"), REG_CREATED);
	CHECK_EQ(put(&a, "s2", "{\"iface\":\"tap2\",\"exposedPorts\":[8080],"
		     "\"guestMAC\":\"02:00:00:00:00:07\"}"), REG_CREATED);
	CHECK_EQ(vput(&a, 1, "[81]"), REG_CREATED);
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[443,9000],\"limits\":"
		     "{\"maxSessions\":10}}"), REG_OK);
	{
		struct reg_policy p;
		json_t *pj = json_loads("{\"allowInternetAccess\":false}", 0, NULL);
		char err[256];

		CHECK_EQ(policy_parse(pj, &p, err, sizeof(err)), 0);
		CHECK_EQ(reg_policy_set(&a, "s2", &p, NULL, err, sizeof(err)), REG_OK);
		CHECK_EQ(reg_persist(&a, err, sizeof(err)), 0);
		json_decref(pj);
	}
	CHECK_EQ(del(&a, "v1"), REG_OK);
	CHECK_EQ(put(&a, "s3", "{\"iface\":\"tap3\"}"), REG_CREATED);
	/* Refused requests write nothing. */
	CHECK_EQ(put(&a, "s4", "{\"iface\":\"nosuch0\"}"), REG_E_INVALID);
	CHECK_EQ(del(&a, "nope"), REG_E_NOT_FOUND);
	CHECK_EQ(journal_last(&s.j), 7);
	CHECK_EQ(journal_durable(&s.j), 7);
	/* The snapshot was not rewritten: a change costs one record. */
	{
		size_t now_len;

		slurp(path, &now_len);
		CHECK_EQ(now_len, snap_len);
	}
	CHECK(strstr(slurp(jpath, NULL), "\"seq\":7,\"op\":\"put\"") != NULL);
	crash(&a, &s);
	li = restores_same(&a);
	CHECK_EQ(li.replayed, 7);
	CHECK_EQ(li.last, 7);
	CHECK(!li.torn);
	/* The ports v1 held are its holds, in the journal too. */
	CHECK(strstr(slurp(jpath, NULL), "\"op\":\"delete\",\"sandboxID\":\"v1\",\"holds\":"
		     "[{\"containerPort\":81") != NULL);
	reg_done(&a);
}

/* A crash in the middle of an append: the torn last record is left out and said so. */
static void
test_torn(void)
{
	static const char *const tails[] = {
		"{\"seq\":4,\"op\":\"put\",\"sandbox\":{\"sandb",	/* no end of line */
		"{\"seq\":4,\"op\":\"delete\",\"sandboxID\":\"x\",\"crc\":\"00000000\"}\n",
		"\0\0\0\0\0\0\0\0",	/* the data never came */
	};
	struct registry a;
	struct store s;
	size_t len, k, end;
	char *good;

	reset_files();
	live(&a, &s, 0);
	CHECK_EQ(put(&a, "s1", "{\"iface\":\"tap1\",\"exposedPorts\":[80]}"), REG_CREATED);
	CHECK_EQ(vput(&a, 2, "[]"), REG_CREATED);
	CHECK_EQ(vput(&a, 3, "[1,2]"), REG_CREATED);
	crash(&a, &s);
	slurp(jpath, &len);
	good = malloc(len);
	memcpy(good, slurp(jpath, NULL), len);
	/* The records end where the zeroes written ahead of them begin. */
	end = strlen(good);
	CHECK(end < len);
	for (k = 0; k < 3; k++) {
		size_t tl = k == 2 ? 8 : strlen(tails[k]);
		char *torn = malloc(len + tl);
		struct store_loaded li;

		memcpy(torn, good, len);
		memcpy(torn + end, tails[k], tl);
		spit(jpath, torn, end + tl > len ? end + tl : len);
		li = restores_same(&a);
		/* Zeroes where a record would go are the room itself: nothing was torn. */
		CHECK(li.torn == (k != 2));
		if (k != 2)
			CHECK(strstr(li.torn_why, "after sequence 3") != NULL);
		CHECK_EQ(li.replayed, 3);
		CHECK_EQ(li.last, 3);
		free(torn);
	}
	/* A journal of appends, from before the room, reads the same. */
	spit(jpath, good, end);
	CHECK_EQ(restores_same(&a).replayed, 3);
	/* The next start numbers on from the last good record and the torn one is gone. */
	{
		struct registry b;
		struct store s2;
		json_t *arr, *holds;
		struct store_loaded li;
		char err[512];

		CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), 0);
		reg_new(&b);
		CHECK_EQ(reg_restore(&b, arr, err, sizeof(err)), 0);
		json_decref(arr);
		json_decref(holds);
		CHECK_EQ(store_open(&s2, path, &b, li.last, err, sizeof(err)), 0);
		reg_set_store(&b, &store_reg_ops, &s2);
		CHECK_EQ(vput(&b, 4, "[]"), REG_CREATED);
		CHECK(strstr(slurp(jpath, NULL), "{\"seq\":4,") != NULL);
		CHECK(strstr(slurp(path, NULL), "\"journalSeq\": 3") != NULL);
		store_close(&s2);
		CHECK(strstr(slurp(path, NULL), "\"journalSeq\": 4") != NULL);
		reg_done(&b);
	}
	free(good);
	reg_done(&a);
}

/* Damage anywhere but the end, and journals that are not this state file's: refused. */
static void
test_corrupt(void)
{
	struct registry a;
	struct store s;
	struct store_loaded li;
	json_t *arr = NULL, *holds = NULL;
	char err[512], *good, *bad, *p;
	size_t len;

	reset_files();
	live(&a, &s, 0);
	CHECK_EQ(vput(&a, 1, "[]"), REG_CREATED);
	CHECK_EQ(vput(&a, 2, "[]"), REG_CREATED);
	CHECK_EQ(vput(&a, 3, "[]"), REG_CREATED);
	crash(&a, &s);
	/* The records without the zeroes written ahead: damage is put where a record goes. */
	good = strdup(slurp(jpath, &len));
	len = strlen(good);

	/* One byte of the second record changed: its CRC no longer matches, a record follows. */
	bad = calloc(1, len + 512);
	memcpy(bad, good, len);
	p = strstr(bad, "v2.sock");
	p[1] = '9';
	spit(jpath, bad, len);
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "is corrupt") && strstr(err, "CRC mismatch") && strstr(err, jpath));
	CHECK(strstr(err, "left as it is") != NULL);
	CHECK(!memcmp(slurp(jpath, NULL), bad, len));

	/* The first record removed: a gap in the sequence, with a record after it. */
	p = strstr(good, "\n{\"seq\":1,");
	{
		char *q = strstr(p + 1, "\n{\"seq\":2,");
		size_t head = (size_t)(p - good) + 1;

		memcpy(bad, good, head);
		memcpy(bad + head, q + 1, len - (size_t)(q + 1 - good));
		spit(jpath, bad, head + len - (size_t)(q + 1 - good));
	}
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "sequence 2 after 0") != NULL);

	/* A record with a good CRC and a body that is not ours. */
	{
		const char *body = "{\"seq\":4,\"op\":\"rename\",\"sandboxID\":\"x\"";
		char line[200];

		snprintf(line, sizeof(line), "%s,\"crc\":\"%08x\"}\n", body,
			 journal_crc32(body, strlen(body)));
		memcpy(bad, good, len);
		memcpy(bad + len, line, strlen(line));
		spit(jpath, bad, len + strlen(line));
		CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
		CHECK(strstr(err, "unknown op") != NULL);
	}
	/* Foreign files. */
	spit(jpath, "hello\n", strlen("hello\n"));
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not a cubevs-fp journal") != NULL);
	spit_s(jpath, "");
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	spit_s(jpath, "{\"format\":\"cubevs-fp-journal\",\"version\":9,\"base\":0}\n");
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "version 9") != NULL);
	/* A journal that follows a later snapshot than the state file (an older copy of it). */
	spit_s(jpath, "{\"format\":\"cubevs-fp-journal\",\"version\":1,\"base\":40}\n");
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "missing") != NULL);
	/* A journal without its state file: the operator moved only one of them away. */
	spit(jpath, good, len);
	rename(path, "/tmp/cvs-journal-moved.json");
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "without its state file") != NULL);
	rename("/tmp/cvs-journal-moved.json", path);
	/* And the good one still reads. */
	restores_same(&a);
	free(good);
	free(bad);
	reg_done(&a);
}

/*
 * Compaction: the snapshot holds everything and names its sequence, the journal starts over;
 * a crash between the two writes (new snapshot, old journal) reads the same.
 */
static void
test_compact(void)
{
	struct registry a;
	struct store s;
	struct store_loaded li;
	char err[512], *old;
	size_t len;
	int i;

	reset_files();
	live(&a, &s, 0);
	for (i = 0; i < 40; i++)
		CHECK_EQ(vput(&a, i, "[80]"), REG_CREATED);
	for (i = 0; i < 40; i += 3) {
		char id[8];

		snprintf(id, sizeof(id), "v%d", i);
		CHECK_EQ(del(&a, id), REG_OK);
	}
	CHECK_EQ(journal_last(&s.j), 54);
	old = strdup(slurp(jpath, &len));
	len = strlen(old);	/* the records, without the room after them */
	CHECK_EQ(store_compact(&s, 0, err, sizeof(err)), 0);
	CHECK(strstr(slurp(path, NULL), "\"journalSeq\": 54") != NULL);
	CHECK(!strcmp(slurp(jpath, NULL),
		      "{\"format\":\"cubevs-fp-journal\",\"version\":1,\"base\":54}\n"));
	li = restores_same(&a);
	CHECK_EQ(li.replayed, 0);
	CHECK_EQ(li.snap_seq, 54);
	/* A crash after the snapshot's rename, before the journal's: its records are skipped. */
	spit(jpath, old, len);
	li = restores_same(&a);
	CHECK_EQ(li.replayed, 0);
	CHECK_EQ(li.skipped, 54);
	/* Changes after the compaction go on from 55, in the new journal. */
	CHECK_EQ(journal_start(&s.j, 54, err, sizeof(err)), 0);
	CHECK_EQ(vput(&a, 100, "[]"), REG_CREATED);
	CHECK_EQ(del(&a, "v1"), REG_OK);
	crash(&a, &s);
	li = restores_same(&a);
	CHECK_EQ(li.replayed, 2);
	CHECK_EQ(li.last, 56);
	free(old);
	reg_done(&a);
}

/* The control loop compacts once the journal outgrows the snapshot, not before. */
static void
test_tick(void)
{
	struct registry a;
	struct store s;
	char err[512];
	int i, n = 0;

	reset_files();
	live(&a, &s, 0);
	CHECK_EQ(store_tick(&s, 1000, err, sizeof(err)), 0);
	for (i = 0; i < 1200 && !n; i++) {
		CHECK_EQ(vput(&a, i % 200, i % 2 ? "[80]" : "[81,82]") >= 0, 1);
		n = store_tick(&s, 1000 + (uint64_t)i, err, sizeof(err));
	}
	CHECK_EQ(n, 1);
	/* Under 256 KiB of journal at ~200 bytes a record: hundreds of changes, not every one. */
	CHECK(i > 500);
	CHECK_EQ(s.compactions, 1);
	CHECK(journal_bytes(&s.j) < 200);
	crash(&a, &s);
	restores_same(&a);
	reg_done(&a);
}

/*
 * The journal cannot be written (a full or read-only disk): the change is in effect, the
 * answer fails, and the next successful write carries every change.
 */
static void
test_failure(void)
{
	struct registry a;
	struct store s;
	char err[512];
	int ro;

	reset_files();
	live(&a, &s, 0);
	CHECK_EQ(vput(&a, 1, "[80]"), REG_CREATED);
	/* The journal's descriptor now refuses writes, as a full disk does. */
	ro = open("/dev/null", O_RDONLY);
	dup2(ro, s.j.fd);
	close(ro);
	CHECK_EQ(vput(&a, 2, "[]"), REG_CREATED);	/* a compaction carried it */
	CHECK_EQ(s.compactions, 1);
	CHECK(strstr(slurp(path, NULL), "v2.sock") != NULL);
	CHECK(journal_good(&s.j));
	/* Neither file can be written: the answer fails and says why. */
	ro = open("/dev/null", O_RDONLY);
	dup2(ro, s.j.fd);
	close(ro);
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "chattr +i %s 2>/dev/null", dir);
		if (system(cmd) == 0) {
			struct reg_req q;
			json_t *out = NULL;
			const char *body = "{\"vhostUser\":{\"socket\":\"/run/v3.sock\"}}";

			CHECK_EQ(reg_req_parse(&a, body, strlen(body), &q, err, sizeof(err)), 0);
			CHECK_EQ(reg_put(&a, "v3", &q, &out, err, sizeof(err)), REG_CREATED);
			json_decref(out);
			err[0] = '\0';
			CHECK(reg_persist(&a, err, sizeof(err)) != 0);
			CHECK(strstr(err, "cannot") != NULL);
			CHECK_EQ(del(&a, "v1"), REG_E_FAILED);
			snprintf(cmd, sizeof(cmd), "chattr -i %s", dir);
			CHECK_EQ(system(cmd), 0);
		} else {
			fprintf(stderr, "# no chattr here: the both-fail case is covered by netns\n");
		}
	}
	/* The disk is back: the next change is answered and every change before it is kept. */
	CHECK_EQ(vput(&a, 4, "[]"), REG_CREATED);
	crash(&a, &s);
	restores_same(&a);
	reg_done(&a);
}

struct writer {
	struct registry *r;
	int base;
};

static void *
writer_main(void *arg)
{
	const struct writer *w = arg;
	int i;

	for (i = 0; i < 30; i++) {
		char id[16];

		CHECK_EQ(vput(w->r, w->base + i, "[80]"), REG_CREATED);
		if (i % 3 == 0) {
			snprintf(id, sizeof(id), "v%d", w->base + i);
			CHECK_EQ(del(w->r, id), REG_OK);
		}
	}
	return NULL;
}

/* n writers (at most 8) at once on r, each 30 registrations and 10 deletions; until done. */
static void
run_writers(struct registry *r, int n)
{
	struct writer w[8];
	pthread_t t[8];
	int i;

	for (i = 0; i < n; i++) {
		w[i].r = r;
		w[i].base = i * 30;
		pthread_create(&t[i], NULL, writer_main, &w[i]);
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* Concurrent writers: every answered change is in the files, in the order it happened. */
static void
test_concurrent(void)
{
	struct registry a;
	struct store s;

	reset_files();
	live(&a, &s, 0);
	run_writers(&a, 6);
	CHECK_EQ(journal_last(&s.j), 6 * 40);
	CHECK_EQ(journal_durable(&s.j), 6 * 40);
	/* Fewer fdatasyncs than changes when writers overlap is fine; more would be a bug. */
	CHECK(s.j.syncs <= 6 * 40);
	crash(&a, &s);
	restores_same(&a);
	reg_done(&a);
}

struct compactor {
	struct store *s;
	volatile bool stop;
	int runs;
};

static void *
compactor_main(void *arg)
{
	struct compactor *c = arg;
	char err[512];

	while (!c->stop) {
		CHECK_EQ(store_compact(c->s, 0, err, sizeof(err)), 0);
		c->runs++;
		usleep(2000);
	}
	return NULL;
}

/*
 * Compactions while writers change the registry (the render lets the lock go between chunks
 * of slots): every snapshot plus its journal still reads back as the registry, also when a
 * crash keeps the old journal beside the new snapshot.
 */
static void
test_compact_concurrent(void)
{
	struct compactor c = { .stop = false };
	pthread_t ct;
	struct registry a;
	struct store s;
	int i;

	reset_files();
	live(&a, &s, 0);
	/* Enough registrations for several chunks of the render. */
	for (i = 0; i < 600; i++)
		CHECK_EQ(vput(&a, 1000 + i, i % 2 ? "[80]" : "[]"), REG_CREATED);
	c.s = &s;
	pthread_create(&ct, NULL, compactor_main, &c);
	run_writers(&a, 4);
	c.stop = true;
	pthread_join(ct, NULL);
	CHECK(c.runs >= 2);
	CHECK_EQ(journal_durable(&s.j), journal_last(&s.j));
	crash(&a, &s);
	restores_same(&a);
	reg_done(&a);
}

/* A state file from before the journal (no journalSeq, no journal) reads as it always did. */
static void
test_upgrade(void)
{
	static const char old[] = "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":"
		"[{\"sandboxID\":\"o\",\"iface\":\"tap5\",\"sandboxIP\":\"192.168.0.9\","
		"\"exposedPorts\":[{\"containerPort\":80,\"hostPort\":20050}],\"slot\":3}]}\n";
	struct store_loaded li;
	json_t *arr, *holds;
	char err[512];

	reset_files();
	spit(path, old, strlen(old));
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), 0);
	CHECK(li.journal_missing);
	CHECK_EQ(li.last, 0);
	CHECK_EQ(json_array_size(arr), 1);
	CHECK(holds == NULL);
	json_decref(arr);
	/* And a first start: nothing at all. */
	reset_files();
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), 0);
	CHECK_EQ(json_array_size(arr), 0);
	json_decref(arr);
	/* A snapshot with a bad journalSeq is refused like any corrupt state file. */
	spit_s(path, "{\"format\":\"cubevs-fp-state\",\"version\":1,\"sandboxes\":[],"
	     "\"journalSeq\":\"x\"}");
	CHECK_EQ(store_load(path, &arr, &holds, &li, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "journalSeq") != NULL);
}

int
main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/state.json", dir);
	store_journal_path(path, jpath, sizeof(jpath));
	test_replay();
	test_torn();
	test_corrupt();
	test_compact();
	test_tick();
	test_failure();
	test_concurrent();
	test_compact_concurrent();
	test_upgrade();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return t_done("test_journal");
}
