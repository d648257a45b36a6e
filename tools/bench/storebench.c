/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control path's own cost of a registration (issue 20): reg_put()/reg_delete() and the
 * commit before the answer, with N sandboxes registered, on the registry of the unit tests
 * (fake data path, vhost-user records), so the figures are the registry and the state file
 * alone, without sockets or netlink. Modes:
 *   journal  the store: one journal record and a shared fdatasync per change (this build);
 *   rewrite  what every change did before the journal: render all, write, fsync, rename;
 *   none     no durability, the registry alone.
 *   storebench [--mode M] [--n 100,1000,4096,8192] [--ops 400] [--threads 20] [--dir D]
 * Prints one JSON line per N: fill time (durable in journal mode only), sequential and
 * concurrent PUT/DELETE p50/p99/max (ms).
 */
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "fake_dp.h"
#include "registry.h"
#include "reg_api.h"
#include "state.h"
#include "store.h"
#include "store_ops.h"

static struct fake_dp fdp = { .prefix = "tap" };
static pthread_mutex_t rewrite_lock = PTHREAD_MUTEX_INITIALIZER;
static char path[512];

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void
rw_change(void *ctx, const struct reg_change *c)
{
}

/* The commit of main.c before the journal: the whole registry, every time. */
static int
rw_commit(void *ctx, char *err, size_t errlen)
{
	struct registry *r = ctx;
	json_t *arr, *holds;
	int ret;

	pthread_mutex_lock(&rewrite_lock);
	arr = reg_state(r);
	holds = reg_holds_state(r);
	ret = state_save(path, arr, holds, err, errlen);
	json_decref(arr);
	json_decref(holds);
	pthread_mutex_unlock(&rewrite_lock);
	return ret;
}

static const struct reg_store_ops rewrite_ops = { .change = rw_change, .commit = rw_commit };

static int
op_put(struct registry *r, const char *id, int k, double *ms)
{
	char body[160], err[256];
	struct reg_req q;
	json_t *out = NULL;
	double t = now_ms();
	int st;

	snprintf(body, sizeof(body), "{\"vhostUser\":{\"socket\":\"/run/sb/%s.sock\"},"
		 "\"exposedPorts\":[%d]}", id, 8000 + k % 2);
	if (reg_req_parse(r, body, strlen(body), &q, err, sizeof(err)))
		return -1;
	st = reg_put(r, id, &q, &out, err, sizeof(err));
	json_decref(out);
	if (st >= 0 && reg_persist(r, err, sizeof(err)))
		st = -1;
	*ms = now_ms() - t;
	return st;
}

static int
op_del(struct registry *r, const char *id, double *ms)
{
	char err[256];
	double t = now_ms();
	int st = reg_delete(r, id, err, sizeof(err));

	if (st >= 0 && reg_persist(r, err, sizeof(err)))
		st = -1;
	*ms = now_ms() - t;
	return st;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
print_stats(const char *name, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	printf("\"%s\":{\"n\":%d,\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f}", name, n, v[n / 2],
	       v[(int)(n * 0.99)], v[n - 1]);
}

struct worker {
	struct registry *r;
	int id, ops;
	double *put, *del;
	int errors;
};

static void *
worker_main(void *arg)
{
	struct worker *w = arg;
	char id[32];
	int i;

	for (i = 0; i < w->ops; i++) {
		snprintf(id, sizeof(id), "m%d-%d", w->id, i % 5);
		w->errors += op_put(w->r, id, i, &w->put[i]) != REG_CREATED;
		w->errors += op_del(w->r, id, &w->del[i]) != REG_OK;
	}
	return NULL;
}

static void
run_n(const char *mode, uint32_t n, int ops, int threads)
{
	struct registry r;
	struct store s;
	uint32_t net, node, i;
	char err[512], id[32];
	double t0, ms, *put, *del;
	int errors = 0, k;
	struct worker *w;
	pthread_t *t;

	unlink(path);
	store_journal_path(path, err, sizeof(err));
	unlink(err);
	inet_pton(AF_INET, "192.168.0.0", &net);
	inet_pton(AF_INET, "198.18.0.1", &node);
	if (reg_init(&r, 8192 + 256, 20000, 29999, net, 18, node, &fake_dp_ops, &fdp))
		exit(1);
	reg_hostports_configure(&r, NULL, 0, 600);
	if (!strcmp(mode, "journal")) {
		if (store_open(&s, path, &r, 0, err, sizeof(err)))
			exit(2);
		reg_set_store(&r, &store_reg_ops, &s);
	}
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "i%u", i);
		errors += op_put(&r, id, (int)i, &ms) != REG_CREATED;
		/* The compaction the control loop would run. */
		if (!strcmp(mode, "journal") && i % 64 == 0)
			store_tick(&s, 0, err, sizeof(err));
	}
	/* Filling through rewrites is quadratic (gigabytes at 8,192): only the measured part. */
	if (!strcmp(mode, "rewrite"))
		reg_set_store(&r, &rewrite_ops, &r);
	printf("{\"mode\":\"%s\",\"N\":%u,\"fill_s\":%.3f,", mode, n, (now_ms() - t0) / 1e3);
	put = calloc((size_t)ops * threads, sizeof(*put));
	del = calloc((size_t)ops * threads, sizeof(*del));
	for (k = 0; k < ops; k++) {
		snprintf(id, sizeof(id), "m%d", k % 50);
		errors += op_put(&r, id, k, &put[k]) != REG_CREATED;
		errors += op_del(&r, id, &del[k]) != REG_OK;
	}
	print_stats("seq_put", put, ops);
	printf(",");
	print_stats("seq_delete", del, ops);
	w = calloc((size_t)threads, sizeof(*w));
	t = calloc((size_t)threads, sizeof(*t));
	for (k = 0; k < threads; k++) {
		w[k] = (struct worker){ &r, k, ops / 4, put + k * (ops / 4), del + k * (ops / 4), 0 };
		pthread_create(&t[k], NULL, worker_main, &w[k]);
	}
	for (k = 0; k < threads; k++) {
		pthread_join(t[k], NULL);
		errors += w[k].errors;
	}
	printf(",");
	print_stats("conc_put", put, threads * (ops / 4));
	printf(",");
	print_stats("conc_delete", del, threads * (ops / 4));
	printf(",\"errors\":%d", errors);
	/* What a compaction costs: the render (it holds the registry lock 256 slots at a time). */
	if (!strcmp(mode, "journal")) {
		json_t *holds = NULL, *arr;

		t0 = now_ms();
		arr = reg_state_at(&r, &holds, NULL, NULL);
		ms = now_ms() - t0;
		json_decref(arr);
		json_decref(holds);
		t0 = now_ms();
		store_compact(&s, 0, err, sizeof(err));
		printf(",\"render_ms\":%.3f,\"compact_ms\":%.3f,\"snapshot_bytes\":%zu", ms,
		       now_ms() - t0, s.snap_bytes);
	}
	printf("}\n");
	fflush(stdout);
	if (!strcmp(mode, "journal")) {
		reg_set_store(&r, NULL, NULL);
		store_close(&s);
	}
	reg_clear(&r);
	reg_fini(&r);
	free(put);
	free(del);
	free(w);
	free(t);
}

int
main(int argc, char **argv)
{
	const char *mode = "journal", *list = "100,1000,4096,8192", *dir = "/tmp";
	int ops = 400, threads = 20, c;
	char *copy, *tok, *save = NULL;

	while ((c = getopt_long(argc, argv, "", (const struct option[]){
			{ "mode", required_argument, NULL, 'm' },
			{ "n", required_argument, NULL, 'n' },
			{ "ops", required_argument, NULL, 'o' },
			{ "threads", required_argument, NULL, 't' },
			{ "dir", required_argument, NULL, 'd' },
			{ NULL, 0, NULL, 0 } }, NULL)) != -1) {
		if (c == 'm')
			mode = optarg;
		else if (c == 'n')
			list = optarg;
		else if (c == 'o')
			ops = atoi(optarg);
		else if (c == 't')
			threads = atoi(optarg);
		else if (c == 'd')
			dir = optarg;
		else
			return 2;
	}
	snprintf(path, sizeof(path), "%s/storebench-%d.json", dir, (int)getpid());
	copy = strdup(list);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		run_n(mode, (uint32_t)atoi(tok), ops < 8 ? 8 : ops, threads < 1 ? 1 : threads);
	free(copy);
	unlink(path);
	{
		char j[600];

		store_journal_path(path, j, sizeof(j));
		unlink(j);
		snprintf(j, sizeof(j), "%s.lock", path);
		unlink(j);
	}
	return 0;
}
