/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concurrent clients of the sandbox API, for scalebench: PUT or DELETE every sandbox of a
 * file ('ID IFACE PORT[,PORT...]' per line) from C threads, each with its own keep-alive
 * connection, each request timed from its first byte sent to its last byte read.
 *
 * Why not the Python client that the sequential figures use: twenty Python threads share one
 * interpreter lock, and on a 2-core node (the worker polls one core) the request a thread has
 * back waits for the others' turns. Its "latency" at 20 clients was mostly that queue (the
 * server's own wait + work + fsync was under 1 ms of a 4 ms p50, measured by timing inside
 * the handlers). A client should measure the server, so this one costs a few microseconds of
 * CPU per request.
 *
 *   apibench put|delete FILE --api HOST:PORT [--clients C] [--max-seconds S] [--samples OUT]
 * prints one JSON object: n, p50_ms, p99_ms, max_ms, mean_ms, op, clients, total_s, status
 * (count per HTTP status), errors (the first few), done, asked; exit 1 unless all succeeded.
 * --samples writes every request as 'START_MS MS STATUS' (start from the run's start, whose
 * CLOCK_MONOTONIC time heads the file, as perf record -k CLOCK_MONOTONIC stamps its samples),
 * to see where in a run the slow ones fall and what ran then.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#define AB_MAX_CLIENTS	256
#define AB_MAX_ERRORS	5

struct ab_spec {
	char id[72];
	char body[160];
};

struct ab_run {
	const char *op, *api;
	struct ab_spec *specs;
	size_t nspecs;
	double *ms;			/* per request, by spec index; < 0: not done */
	double *start;			/* its start, seconds from t0 */
	double t0;
	long *status;
	atomic_size_t next;
	double deadline;
	pthread_mutex_t lock;		/* errors only */
	char errors[AB_MAX_ERRORS][256];
	int nerrors;
};

static double
ab_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static size_t
ab_sink(char *p, size_t sz, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return sz * n;
}

static int
ab_read(const char *path, struct ab_run *r)
{
	char line[512], id[72], iface[32], ports[96];
	size_t cap = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int k = sscanf(line, "%71s %31s %95s", id, iface, ports);

		if (k < 1)
			continue;
		if (r->nspecs == cap) {
			struct ab_spec *n = realloc(r->specs, (cap = cap ? cap * 2 : 256) * sizeof(*n));

			if (!n) {
				fclose(f);
				return -ENOMEM;
			}
			r->specs = n;
		}
		snprintf(r->specs[r->nspecs].id, sizeof(r->specs[0].id), "%s", id);
		snprintf(r->specs[r->nspecs].body, sizeof(r->specs[0].body),
			 "{\"iface\":\"%s\",\"exposedPorts\":[%s]}", k >= 2 ? iface : "",
			 k >= 3 ? ports : "");
		r->nspecs++;
	}
	fclose(f);
	return 0;
}

static void
ab_error(struct ab_run *r, const char *id, long status, const char *what)
{
	pthread_mutex_lock(&r->lock);
	if (r->nerrors < AB_MAX_ERRORS)
		snprintf(r->errors[r->nerrors++], sizeof(r->errors[0]), "%s %s: %ld %s", r->op, id,
			 status, what);
	pthread_mutex_unlock(&r->lock);
}

static void *
ab_client(void *arg)
{
	struct ab_run *r = arg;
	struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
	CURL *c = curl_easy_init();
	bool put = !strcmp(r->op, "put");
	char url[256];
	size_t i;

	if (!c || !hdr)
		goto out;
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, ab_sink);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, put ? "PUT" : "DELETE");
	if (put)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	while ((i = atomic_fetch_add(&r->next, 1)) < r->nspecs && ab_now() < r->deadline) {
		double t0;
		CURLcode rc;

		snprintf(url, sizeof(url), "http://%s/sandboxes/%s", r->api, r->specs[i].id);
		curl_easy_setopt(c, CURLOPT_URL, url);
		if (put)
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->specs[i].body);
		t0 = ab_now();
		r->start[i] = t0 - r->t0;
		rc = curl_easy_perform(c);
		r->ms[i] = (ab_now() - t0) * 1e3;
		r->status[i] = 0;
		if (rc == CURLE_OK)
			curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status[i]);
		if (rc != CURLE_OK)
			ab_error(r, r->specs[i].id, 0, curl_easy_strerror(rc));
		else if (r->status[i] != 200 && r->status[i] != 201 && r->status[i] != 204)
			ab_error(r, r->specs[i].id, r->status[i], "");
	}
out:
	curl_slist_free_all(hdr);
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

static int
ab_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank, as tests/netns/scale.py computes it, so the two clients' figures compare. */
static double
ab_pct(const double *s, size_t n, double p)
{
	long k = (long)rint(p / 100.0 * (double)n + 0.5) - 1;	/* Python's round(): to even */

	k = k < 0 ? 0 : k >= (long)n ? (long)n - 1 : k;
	return s[k];
}

static int
ab_report(struct ab_run *r, int clients, double secs)
{
	double *done = malloc((r->nspecs + 1) * sizeof(*done)), sum = 0;
	json_t *o = json_object(), *st = json_object(), *errs = json_array();
	size_t i, n = 0;
	char key[16];
	int ok = 1;

	for (i = 0; i < r->nspecs && done; i++) {
		if (r->ms[i] < 0)
			continue;
		done[n++] = r->ms[i];
		sum += r->ms[i];
		snprintf(key, sizeof(key), "%ld", r->status[i]);
		json_object_set_new(st, key, json_integer(json_integer_value(json_object_get(st, key)) + 1));
	}
	if (done)
		qsort(done, n, sizeof(*done), ab_cmp);
	for (i = 0; i < (size_t)r->nerrors; i++)
		json_array_append_new(errs, json_string(r->errors[i]));
	json_object_set_new(o, "n", json_integer((json_int_t)n));
	json_object_set_new(o, "p50_ms", n ? json_real(ab_pct(done, n, 50)) : json_null());
	json_object_set_new(o, "p99_ms", n ? json_real(ab_pct(done, n, 99)) : json_null());
	json_object_set_new(o, "max_ms", n ? json_real(done[n - 1]) : json_null());
	json_object_set_new(o, "mean_ms", n ? json_real(sum / (double)n) : json_null());
	json_object_set_new(o, "op", json_string(r->op));
	json_object_set_new(o, "clients", json_integer(clients));
	json_object_set_new(o, "client", json_string("apibench"));
	json_object_set_new(o, "total_s", json_real(secs));
	json_object_set_new(o, "status", st);
	json_object_set_new(o, "errors", errs);
	json_object_set_new(o, "done", json_integer((json_int_t)n));
	json_object_set_new(o, "asked", json_integer((json_int_t)r->nspecs));
	ok = done && n == r->nspecs && !r->nerrors;
	json_dumpf(o, stdout, JSON_COMPACT);
	putchar('\n');
	json_decref(o);
	free(done);
	return ok ? 0 : 1;
}

static int
ab_samples(const struct ab_run *r, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "apibench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f, "# t0 %.6f (CLOCK_MONOTONIC, s)\n", r->t0);
	for (size_t i = 0; i < r->nspecs; i++)
		if (r->ms[i] >= 0)
			fprintf(f, "%.3f %.3f %ld\n", r->start[i] * 1e3, r->ms[i], r->status[i]);
	return fclose(f) ? -1 : 0;
}

static int
ab_usage(void)
{
	fprintf(stderr, "usage: apibench put|delete FILE --api HOST:PORT [--clients C] "
		"[--max-seconds S] [--samples OUT]\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct ab_run r = { .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[AB_MAX_CLIENTS];
	int clients = 1, i, n = 0, ret;
	double max_s = 600;
	const char *samples = NULL;

	if (argc < 3 || (strcmp(argv[1], "put") && strcmp(argv[1], "delete")))
		return ab_usage();
	r.op = argv[1];
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--api") && i + 1 < argc)
			r.api = argv[++i];
		else if (!strcmp(argv[i], "--clients") && i + 1 < argc)
			clients = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc)
			max_s = atof(argv[++i]);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = argv[++i];
		else
			return ab_usage();
	}
	if (!r.api || clients < 1 || clients > AB_MAX_CLIENTS)
		return ab_usage();
	ret = ab_read(argv[2], &r);
	if (ret) {
		fprintf(stderr, "apibench: %s: %s\n", argv[2], strerror(-ret));
		return 2;
	}
	r.ms = malloc((r.nspecs + 1) * sizeof(*r.ms));
	r.status = calloc(r.nspecs + 1, sizeof(*r.status));
	r.start = calloc(r.nspecs + 1, sizeof(*r.start));
	if (!r.ms || !r.status || !r.start || curl_global_init(CURL_GLOBAL_DEFAULT)) {
		fprintf(stderr, "apibench: out of memory\n");
		return 2;
	}
	for (size_t k = 0; k < r.nspecs; k++)
		r.ms[k] = -1;
	r.t0 = ab_now();
	r.deadline = r.t0 + max_s;
	for (i = 0; i < clients; i++)
		if (pthread_create(&th[n], NULL, ab_client, &r) == 0)
			n++;
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	ret = ab_report(&r, clients, ab_now() - r.t0);
	if (samples && ab_samples(&r, samples))
		ret = 2;
	curl_global_cleanup();
	free(r.specs);
	free(r.ms);
	free(r.status);
	free(r.start);
	return ret;
}
