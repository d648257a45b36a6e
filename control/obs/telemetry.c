/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_telemetry.h>

#include "log.h"
#include "telemetry.h"

/* Telemetry output is bounded (16 KiB in DPDK 22.11): keep session pages small. */
#define TEL_SESSIONS_MAX	50u

static struct obs *_Atomic tel_obs;
static atomic_int tel_busy;

/* Callbacks run on DPDK's telemetry thread; telemetry_stop() waits for them to leave. */
static struct obs *
tel_enter(void)
{
	struct obs *o;

	atomic_fetch_add(&tel_busy, 1);
	o = atomic_load(&tel_obs);
	if (!o)
		atomic_fetch_sub(&tel_busy, 1);
	return o;
}

static void
tel_leave(void)
{
	atomic_fetch_sub(&tel_busy, 1);
}

/*
 * DPDK rejects dict keys outside [A-Za-z0-9_/], silently for the caller: a labelled metric is
 * "family/label-value" (drops/no_session), anything else becomes '_'.
 */
static void
tel_key(char *buf, size_t len, const char *a, const char *b)
{
	char *p;

	snprintf(buf, len, "%s%s%s", a, b ? "/" : "", b ? b : "");
	for (p = buf; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '/'))
			*p = '_';
}

struct tel_visit {
	struct rte_tel_data *d;
	const char *sandbox;	/* only this sandbox's per-sandbox metrics, NULL for none */
};

static void
tel_visit(void *arg, const struct obs_metric *m)
{
	struct tel_visit *v = arg;
	char key[RTE_TEL_MAX_STRING_LEN], val[32];

	if (m->per_sandbox) {
		if (!v->sandbox || strcmp(v->sandbox, m->lvalue))
			return;
		tel_key(key, sizeof(key), m->key, NULL);
	} else if (v->sandbox) {
		return;
	} else if (m->label && !strcmp(m->label, "version")) {
		rte_tel_data_add_dict_string(v->d, "version", m->lvalue);
		return;
	} else {
		tel_key(key, sizeof(key), m->family, m->label ? m->lvalue : NULL);
	}
	if (m->is_float) {
		snprintf(val, sizeof(val), "%.3f", m->d);
		rte_tel_data_add_dict_string(v->d, key, val);
	} else {
		rte_tel_data_add_dict_u64(v->d, key, m->u);
	}
}

static int
tel_stats_do(struct obs *o, const char *params, struct rte_tel_data *d)
{
	struct tel_visit v = { .d = d, .sandbox = NULL };
	struct obs_snap s;

	rte_tel_data_start_dict(d);
	obs_snapshot(o, &s);
	obs_enumerate(&s, tel_visit, &v);
	obs_snap_free(&s);
	return 0;
}

/* A scalar JSON value as telemetry; containers become their compact JSON text. */
static void
tel_add_json(struct rte_tel_data *d, const char *key, json_t *v)
{
	char *text;

	if (json_is_string(v)) {
		rte_tel_data_add_dict_string(d, key, json_string_value(v));
	} else if (json_is_integer(v)) {
		rte_tel_data_add_dict_u64(d, key, (uint64_t)json_integer_value(v));
	} else if (json_is_boolean(v)) {
		rte_tel_data_add_dict_int(d, key, json_is_true(v));
	} else {
		text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (text) {
			if (strlen(text) >= RTE_TEL_MAX_STRING_LEN)
				text[RTE_TEL_MAX_STRING_LEN - 1] = '\0';
			rte_tel_data_add_dict_string(d, key, text);
			free(text);
		}
	}
}

/* An error as the API words it (what the client sent, made valid UTF-8). */
static void
tel_add_error(struct rte_tel_data *d, const char *err)
{
	json_t *e = api_error("%s", err);

	tel_add_json(d, "error", json_object_get(e, "error"));
	json_decref(e);
}

static int
tel_sandboxes_do(struct obs *o, const char *params, struct rte_tel_data *d)
{
	uint32_t total, unattached, i;
	struct rte_tel_data *ids;
	json_t *j, *v;
	const char *key;

	rte_tel_data_start_dict(d);
	if (params && *params) {
		struct tel_visit tv = { .d = d, .sandbox = params };
		struct obs_snap s;
		char err[512];

		if (reg_get(o->reg, params, &j, err, sizeof(err)) != REG_OK) {
			tel_add_error(d, err);
			return 0;
		}
		json_object_foreach(j, key, v) {
			if (!strcmp(key, "exposedPorts")) {
				struct rte_tel_data *c = rte_tel_data_alloc();
				size_t k;

				if (!c)
					continue;
				rte_tel_data_start_array(c, RTE_TEL_STRING_VAL);
				for (k = 0; k < json_array_size(v); k++) {
					json_t *p = json_array_get(v, k);
					char s[64];

					json_int_t cp = json_integer_value(
						json_object_get(p, "containerPort"));

					snprintf(s, sizeof(s), "%lld->%s", (long long)cp,
						 json_string_value(json_object_get(p, "endpoint")));
					rte_tel_data_add_array_string(c, s);
				}
				rte_tel_data_add_dict_container(d, key, c, 0);
			} else {
				tel_add_json(d, key, v);
			}
		}
		json_decref(j);
		obs_snapshot(o, &s);
		obs_enumerate(&s, tel_visit, &tv);
		obs_snap_free(&s);
		return 0;
	}
	reg_counts(o->reg, &total, &unattached);
	rte_tel_data_add_dict_u64(d, "count", total);
	rte_tel_data_add_dict_u64(d, "unattached", unattached);
	j = reg_list(o->reg);
	ids = rte_tel_data_alloc();
	if (ids) {
		json_t *list = json_object_get(j, "sandboxes");

		rte_tel_data_start_array(ids, RTE_TEL_STRING_VAL);
		for (i = 0; i < json_array_size(list) && i < RTE_TEL_MAX_ARRAY_ENTRIES; i++)
			rte_tel_data_add_array_string(ids, json_string_value(
				json_object_get(json_array_get(list, i), "sandboxID")));
		rte_tel_data_add_dict_container(d, "ids", ids, 0);
	}
	json_decref(j);
	return 0;
}

/* "sandbox=ID,proto=tcp,limit=N,cursor=C" (',', '&' or ' ' between them), or a bare ID. */
static int
tel_parse_params(const char *params, char *buf, size_t len, const char **kv)
{
	char *p, *save = NULL;

	snprintf(buf, len, "%s", params ? params : "");
	for (p = strtok_r(buf, ",& ", &save); p; p = strtok_r(NULL, ",& ", &save)) {
		char *eq = strchr(p, '=');

		if (!eq) {
			kv[0] = p;
			continue;
		}
		*eq = '\0';
		if (!strcmp(p, "sandbox"))
			kv[0] = eq + 1;
		else if (!strcmp(p, "proto"))
			kv[1] = eq + 1;
		else if (!strcmp(p, "limit"))
			kv[2] = eq + 1;
		else if (!strcmp(p, "cursor"))
			kv[3] = eq + 1;
		else
			return -EINVAL;
	}
	return 0;
}

static int
tel_sessions_do(struct obs *o, const char *params, struct rte_tel_data *d)
{
	const char *kv[4] = { NULL, NULL, NULL, NULL };
	struct rte_tel_data *arr;
	char buf[256];
	json_t *j, *list;
	char err[512];
	size_t i;

	rte_tel_data_start_dict(d);
	if (tel_parse_params(params, buf, sizeof(buf), kv)) {
		rte_tel_data_add_dict_string(d, "error", "parameters: sandbox=ID,proto=tcp|udp|"
					     "icmp,limit=N,cursor=C");
		return 0;
	}
	if (obs_sessions(o, kv[0], kv[1], kv[2], kv[3], TEL_SESSIONS_MAX, &j, err,
			 sizeof(err))) {
		tel_add_error(d, err);
		return 0;
	}
	tel_add_json(d, "total", json_object_get(j, "total"));
	tel_add_json(d, "count", json_object_get(j, "count"));
	tel_add_json(d, "next_cursor", json_object_get(j, "nextCursor"));
	arr = rte_tel_data_alloc();
	list = json_object_get(j, "sessions");
	if (arr) {
		rte_tel_data_start_array(arr, RTE_TEL_STRING_VAL);
		for (i = 0; i < json_array_size(list); i++) {
			json_t *e = json_array_get(list, i), *or = json_object_get(e, "original");
			json_t *re = json_object_get(e, "reply");
			char s[RTE_TEL_MAX_STRING_LEN];

			snprintf(s, sizeof(s), "%s %s %s>%s %s>%s %s idle=%llds",
				 json_string_value(json_object_get(e, "proto")),
				 json_string_value(json_object_get(e, "state")),
				 json_string_value(json_object_get(or, "src")),
				 json_string_value(json_object_get(or, "dst")),
				 json_string_value(json_object_get(re, "src")),
				 json_string_value(json_object_get(re, "dst")),
				 json_is_string(json_object_get(e, "sandboxID")) ?
				 json_string_value(json_object_get(e, "sandboxID")) : "-",
				 (long long)json_integer_value(json_object_get(e, "idleSeconds")));
			rte_tel_data_add_array_string(arr, s);
		}
		rte_tel_data_add_dict_container(d, "sessions", arr, 0);
	}
	json_decref(j);
	return 0;
}

#define TEL_WRAP(name) \
static int \
tel_##name(const char *cmd, const char *params, struct rte_tel_data *d) \
{ \
	struct obs *o = tel_enter(); \
	int ret; \
\
	if (!o) \
		return -EAGAIN; \
	ret = tel_##name##_do(o, params, d); \
	tel_leave(); \
	return ret; \
}

TEL_WRAP(stats)
TEL_WRAP(sandboxes)
TEL_WRAP(sessions)

int
telemetry_start(struct obs *o)
{
	int ret;

	atomic_store(&tel_obs, o);
	ret = rte_telemetry_register_cmd("/cubevs/stats", tel_stats,
					 "Every counter of cubevs-fp (the /metrics names). No "
					 "parameters");
	if (!ret)
		ret = rte_telemetry_register_cmd("/cubevs/sandboxes", tel_sandboxes,
						 "Registered sandboxes; with a sandbox id as "
						 "parameter, that sandbox and its counters");
	if (!ret)
		ret = rte_telemetry_register_cmd("/cubevs/sessions", tel_sessions,
						 "A page of sessions. Parameters: sandbox=ID,"
						 "proto=tcp|udp|icmp,limit=N(<=50),cursor=C");
	if (ret)
		CVS_LOG(WARNING, main, "cannot register telemetry commands: %s", strerror(-ret));
	return ret;
}

void
telemetry_stop(void)
{
	atomic_store(&tel_obs, NULL);
	while (atomic_load(&tel_busy))
		usleep(1000);
}
