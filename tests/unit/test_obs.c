/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The observability renderers on made-up snapshots, without EAL: every counter of every list
 * comes out of /metrics and /stats with its name and its value (a round trip through a
 * Prometheus parser and through the JSON), families are valid Prometheus names with one HELP
 * and one TYPE each and contiguous samples, counters end in _total, label values are escaped,
 * session entries name their ports and states.
 */
#include <ctype.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include "t.h"
#include "cvs_version.h"
#include "obs_render.h"

#define MAX_SAMPLES	4096

/* A parsed sample line: name{label="value"} number. */
struct sample {
	char name[128];
	char label[32];
	char lvalue[128];	/* unescaped */
	double v;
};

static struct sample samples[MAX_SAMPLES];
static int nsamples;

static int
prom_name_ok(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_' || *s == ':'))
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '_' || *s == ':'))
			return 0;
	return 1;
}

/* The label value of a sample line, undoing the exposition format's escapes. */
static const char *
prom_unescape(const char *p, char *out, size_t len)
{
	size_t n = 0;

	for (; *p && *p != '"'; p++) {
		if (*p == '\\') {
			p++;
			if (*p == 'n')
				out[n++] = '\n';
			else if (*p == '\\' || *p == '"')
				out[n++] = *p;
			else
				return NULL;	/* an escape the format does not have */
		} else {
			out[n++] = *p;
		}
		if (n == len)
			return NULL;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

/* Parse the whole text; checks HELP/TYPE pairing, names and grouping on the way. */
static void
prom_parse(char *text)
{
	char family[128] = "", type[16] = "", *line, *save = NULL;
	char done[256][128];
	int ndone = 0, i;

	nsamples = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct sample *s = &samples[nsamples];
		char name[128], *p;

		if (!strncmp(line, "# HELP ", 7)) {
			CHECK(sscanf(line + 7, "%127s", family) == 1);
			CHECK(prom_name_ok(family));
			/* The samples of a family are together: no family comes twice. */
			for (i = 0; i < ndone; i++)
				CHECK(strcmp(done[i], family));
			if (ndone < 256)
				strcpy(done[ndone++], family);
			type[0] = '\0';
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			CHECK(sscanf(line + 7, "%127s %15s", name, type) == 2);
			CHECK(!strcmp(name, family));
			CHECK(!strcmp(type, "counter") || !strcmp(type, "gauge"));
			continue;
		}
		CHECK(line[0] != '#');
		CHECK(type[0] != '\0');
		CHECK_EQ(strncmp(line, family, strlen(family)), 0);
		p = line + strlen(family);
		snprintf(s->name, sizeof(s->name), "%s", family);
		s->label[0] = s->lvalue[0] = '\0';
		if (*p == '{') {
			char *eq = strchr(p, '=');

			CHECK(eq && eq[1] == '"');
			if (!eq)
				continue;
			snprintf(s->label, sizeof(s->label), "%.*s", (int)(eq - p - 1), p + 1);
			p = (char *)prom_unescape(eq + 2, s->lvalue, sizeof(s->lvalue));
			CHECK(p && *p == '}');
			if (!p)
				continue;
			p++;
		}
		CHECK(*p == ' ');
		s->v = strtod(p, &p);
		CHECK(*p == '\0');
		/* A counter's name ends in _total, a gauge's does not. */
		CHECK_EQ(!strcmp(type, "counter"),
			 strlen(family) > 6 && !strcmp(family + strlen(family) - 6, "_total"));
		CHECK_EQ(strncmp(family, "cubevs_", 7), 0);
		if (nsamples < MAX_SAMPLES - 1)
			nsamples++;
	}
}

static double
prom_get(const char *name, const char *lvalue)
{
	int i;

	for (i = 0; i < nsamples; i++)
		if (!strcmp(samples[i].name, name) &&
		    !strcmp(samples[i].lvalue, lvalue ? lvalue : ""))
			return samples[i].v;
	fprintf(stderr, "no sample %s{%s}\n", name, lvalue ? lvalue : "");
	return -1;
}

/* A snapshot where every counter has its own value. */
static void
snap_fill(struct obs_snap *s, const char *const *ids, uint32_t nsbx)
{
	uint32_t i, k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < CVS_DROP_MAX; i++)
		s->st.drop[i] = 1000 + i;
	for (i = 0; i < CVS_WC_MAX; i++)
		s->st.c[i] = 2000 + i;
	for (i = 0; i < CVS_XDP_MAX; i++) {
		s->xdp_steer[i] = 3000 + i;
		s->xdp_sbx[i] = 7;
	}
	for (i = 0; i < CT_C_MAX; i++)
		s->cls[i] = 4000 + i;
	for (k = 0; k < OBS_ETH_MAX; k++)
		s->eth[OBS_PORT_WORLD][k] = 5000 + k;
	s->have_port[OBS_PORT_WORLD] = true;	/* no cube-dev: its counters must not appear */
	s->wxsk_n = 2;				/* world queues 0 and 3 */
	s->wxsk_queue[1] = 3;
	for (k = 0; k < OBS_XSK_MAX; k++) {
		s->wxsk[0][k] = 9000 + k;
		s->wxsk[1][k] = 9100 + k;
	}
	s->wxsk_alarms = 19;
	s->sessions = 300;
	s->capacity = 1200;
	s->mbufs_in_use = 11;
	s->umem_frames = 12;
	s->umem_free = 13;
	s->parked = 14;
	s->loops = 15;
	s->tsc_hz = 16;
	s->state_writes = 17;
	s->state_write_errors = 18;
	s->uptime = 2.5;
	s->ready = true;
	s->nsbx = nsbx;
	s->sbx = calloc(nsbx ? nsbx : 1, sizeof(*s->sbx));
	for (i = 0; i < nsbx; i++) {
		snprintf(s->sbx[i].id, sizeof(s->sbx[i].id), "%s", ids[i]);
		s->sbx[i].attached = true;
		for (k = 0; k < CVS_PC_MAX; k++)
			s->sbx[i].port[k] = 6000 + 100 * i + k;
	}
	/* Two workers' funnels. */
	s->fun_n = 2;
	for (i = 0; i < 2; i++)
		for (k = 0; k < OBS_XSK_MAX; k++)
			s->fun_xsk[i][k] = 8000 + 100 * i + k;
}

static int emitted;

static void
count_visit(void *arg, const struct obs_metric *m)
{
	emitted++;
}

/* Every list, by its own names, against the parsed Prometheus text. */
static void
test_prometheus(void)
{
	static const char *const ids[] = { "s1", "s2" };
	const char *xsk[] = {
#define XSK_NAME(f, s, h) "cubevs_funnel_" s "_total",
		OBS_XSK_COUNTERS(XSK_NAME)
#undef XSK_NAME
	};
	const char *wxsk[] = {
#define WXSK_NAME(f, s, h) "cubevs_world_" s "_total",
		OBS_XSK_COUNTERS(WXSK_NAME)
#undef WXSK_NAME
	};
	const char *eth[] = {
#define ETH_NAME(f, s, h) "cubevs_port_" s "_total",
		OBS_ETH_COUNTERS(ETH_NAME)
#undef ETH_NAME
	};
	const char *xdp[] = {
#define XDP_NAME(e, s, h) s,
		CVS_XDP_COUNTERS(XDP_NAME)
#undef XDP_NAME
	};
	struct obs_snap s;
	char name[160], *text;
	size_t len = 0;
	uint32_t i, k;

	snap_fill(&s, ids, 2);
	text = obs_prometheus(&s, &len);
	CHECK(text != NULL);
	if (!text)
		return;
	CHECK_EQ(strlen(text), len);
	emitted = 0;
	obs_enumerate(&s, count_visit, NULL);
	prom_parse(text);
	CHECK_EQ(nsamples, emitted);
	for (i = 0; i < CVS_DROP_MAX; i++)
		CHECK_EQ(prom_get("cubevs_drops_total", cvs_drop_names[i]), 1000 + i);
	for (i = 0; i < CVS_WC_MAX; i++) {
		snprintf(name, sizeof(name), "cubevs_%s_total", cvs_wcounter_names[i]);
		CHECK_EQ(prom_get(name, NULL), 2000 + i);
	}
	for (i = 0; i < CVS_XDP_MAX; i++)
		CHECK_EQ(prom_get("cubevs_xdp_verdicts_total", xdp[i]), 3000 + i + 7);
	for (i = 0; i < CT_C_MAX; i++)
		CHECK_EQ(prom_get("cubevs_sessions", ct_class_names[i]), 4000 + i);
	for (k = 0; k < OBS_ETH_MAX; k++) {
		CHECK_EQ(prom_get(eth[k], "world"), 5000 + k);
		for (i = 0; i < (uint32_t)nsamples; i++)
			CHECK(strcmp(samples[i].lvalue, "host"));
	}
	/* The world sockets by queue id, their count and the alarms. */
	for (k = 0; k < OBS_XSK_MAX; k++) {
		CHECK_EQ(prom_get(wxsk[k], "0"), 9000 + k);
		CHECK_EQ(prom_get(wxsk[k], "3"), 9100 + k);
	}
	for (i = 0; i < (uint32_t)nsamples; i++)
		if (!strcmp(samples[i].label, "queue"))
			CHECK(!strcmp(samples[i].lvalue, "0") || !strcmp(samples[i].lvalue, "3"));
	CHECK_EQ(prom_get("cubevs_world_xsk_sockets", NULL), 2);
	CHECK_EQ(prom_get("cubevs_world_xsk_invalid_alarms_total", NULL), 19);
	for (i = 0; i < 2; i++) {
		for (k = 0; k < CVS_PC_MAX; k++) {
			snprintf(name, sizeof(name), "cubevs_sandbox_port_%s_total",
				 cvs_pcounter_names[k]);
			CHECK_EQ(prom_get(name, ids[i]), 6000 + 100 * i + k);
		}
		for (k = 0; k < OBS_XSK_MAX; k++)
			CHECK_EQ(prom_get(xsk[k], i ? "1" : "0"), 8000 + 100 * i + k);
	}
	CHECK_EQ(prom_get("cubevs_session_table_used", NULL), 300);
	CHECK_EQ(prom_get("cubevs_session_table_fill_ratio", NULL), 0.25);
	CHECK_EQ(prom_get("cubevs_uptime_seconds", NULL) * 10, 25);
	CHECK_EQ(prom_get("cubevs_state_write_errors_total", NULL), 18);
	CHECK_EQ(prom_get("cubevs_sandboxes", NULL), 2);
	CHECK_EQ(prom_get("cubevs_ready", NULL), 1);
	CHECK_EQ(prom_get("cubevs_build_info", CVS_VERSION), 1);
	free(text);
	obs_snap_free(&s);
	CHECK(s.sbx == NULL);
}

/* Label values: quote, backslash and newline are escaped, nothing else is. */
static void
test_escaping(void)
{
	static const char *const ids[] = { "a\"b\\c\nd", "plain-id_1.x" };
	struct obs_snap s;
	size_t len;
	char *text;

	snap_fill(&s, ids, 2);
	text = obs_prometheus(&s, &len);
	CHECK(text && strstr(text, "{sandbox=\"a\\\"b\\\\c\\nd\"} "));
	CHECK(text && strstr(text, "{sandbox=\"plain-id_1.x\"} "));
	if (text) {
		prom_parse(text);
		CHECK_EQ(prom_get("cubevs_sandbox_port_rx_packets_total", ids[0]), 6000);
	}
	free(text);
	obs_snap_free(&s);
}

static int64_t
json_at(json_t *root, const char *a, const char *b, const char *c)
{
	json_t *v = json_object_get(root, a);

	if (b)
		v = json_object_get(v, b);
	if (c)
		v = json_object_get(v, c);
	if (!json_is_integer(v)) {
		fprintf(stderr, "/stats has no integer at %s/%s/%s\n", a, b ? b : "", c ? c : "");
		return -1;
	}
	return json_integer_value(v);
}

/* The same counters in /stats, grouped as the API documents. */
static void
test_stats_json(void)
{
	static const char *const ids[] = { "s1" };
	struct obs_snap s;
	json_t *j;
	uint32_t i;

	snap_fill(&s, ids, 1);
	j = obs_stats_json(&s);
	CHECK(json_is_string(json_object_get(j, "version")));
	for (i = 0; i < CVS_DROP_MAX; i++)
		CHECK_EQ(json_at(j, "drops", cvs_drop_names[i], NULL), 1000 + i);
	for (i = 0; i < CVS_WC_MAX; i++)
		CHECK_EQ(json_at(j, "worker", cvs_wcounter_names[i], NULL), 2000 + i);
	for (i = 0; i < CT_C_MAX; i++)
		CHECK_EQ(json_at(j, "sessionsByClass", ct_class_names[i], NULL), 4000 + i);
	CHECK_EQ(json_at(j, "ports", "world", "rx_packets"), 5000);
	CHECK(!json_object_get(json_object_get(j, "ports"), "host"));
	for (i = 0; i < CVS_PC_MAX; i++)
		CHECK_EQ(json_at(j, "sandboxPorts", "s1", cvs_pcounter_names[i]), 6000 + i);
	CHECK_EQ(json_at(j, "funnelXsk", "0", "xsk_rx_dropped"), 8000);
	CHECK_EQ(json_at(j, "funnelXsk", "1", "xsk_tx_invalid"), 8100 + OBS_XSK_tx_invalid_descs);
	CHECK_EQ(json_at(j, "worldXsk", "sockets", NULL), 2);
	CHECK_EQ(json_at(j, "worldXsk", "invalidAlarms", NULL), 19);
	CHECK_EQ(json_at(j, "worldXsk", "0", "xsk_tx_invalid"), 9000 + OBS_XSK_tx_invalid_descs);
	CHECK_EQ(json_at(j, "worldXsk", "3", "xsk_tx_ring_empty"),
		 9100 + OBS_XSK_tx_ring_empty_descs);
	CHECK_EQ(json_object_size(json_object_get(j, "worldXsk")), 4);
	CHECK_EQ(json_at(j, "registry", "sandboxes", NULL), 1);
	CHECK_EQ(json_at(j, "state", "writes", NULL), 17);
	CHECK_EQ(json_at(j, "sessions", NULL, NULL), 300);
	CHECK(json_real_value(json_object_get(j, "sessionFill")) == 0.25);
	CHECK(json_is_real(json_object_get(j, "uptimeSeconds")));
	json_decref(j);
	obs_snap_free(&s);

	/* No sandboxes: the group is still there, empty. */
	snap_fill(&s, NULL, 0);
	j = obs_stats_json(&s);
	CHECK(json_is_object(json_object_get(j, "sandboxPorts")));
	CHECK_EQ(json_object_size(json_object_get(j, "sandboxPorts")), 0);
	json_decref(j);
	obs_snap_free(&s);
}

/* Zone 3 is sandbox "sb-two"; every other sandbox zone is gone. */
static bool
zone_name(void *arg, uint16_t zone, char *buf, size_t len)
{
	(*(int *)arg)++;
	if (zone != 3)
		return false;
	snprintf(buf, len, "sb-two");
	return true;
}

static const char *
jstr(json_t *j, const char *a, const char *b)
{
	json_t *v = json_object_get(j, a);

	return json_string_value(b ? json_object_get(v, b) : v);
}

static void
test_sessions(void)
{
	struct ct_dump_entry e;
	int calls = 0;
	json_t *j;

	memset(&e, 0, sizeof(e));
	inet_pton(AF_INET, "198.18.0.2", &e.t[0].saddr);
	inet_pton(AF_INET, "198.18.0.1", &e.t[0].daddr);
	e.t[0].sport = htons(40312);
	e.t[0].dport = htons(20000);
	e.t[0].proto = 6;
	e.t[0].zone = 0;
	e.t[1] = e.t[0];
	e.t[1].zone = 3;
	e.state = CT_TCP_ESTABLISHED;
	e.cls = 0;
	e.idle = 3;
	e.expires = 10797;
	j = obs_session_json(&e, zone_name, &calls);
	CHECK(!strcmp(jstr(j, "proto", NULL), "tcp"));
	CHECK(!strcmp(jstr(j, "state", NULL), "ESTABLISHED"));
	CHECK(!strcmp(jstr(j, "class", NULL), ct_class_names[0]));
	CHECK(!strcmp(jstr(j, "original", "src"), "198.18.0.2:40312"));
	CHECK(!strcmp(jstr(j, "original", "dst"), "198.18.0.1:20000"));
	CHECK(!strcmp(jstr(j, "original", "port"), "world"));
	CHECK(!strcmp(jstr(j, "reply", "port"), "sb-two"));
	CHECK(!strcmp(jstr(j, "sandboxID", NULL), "sb-two"));
	CHECK_EQ(json_integer_value(json_object_get(j, "idleSeconds")), 3);
	CHECK_EQ(json_integer_value(json_object_get(j, "expiresInSeconds")), 10797);
	CHECK(calls >= 1);
	json_decref(j);

	/* The host port, a sandbox being removed, UDP and an out-of-range TCP state. */
	e.t[0].zone = CVS_ZONE_HOST;
	e.t[1].zone = 5;
	e.t[0].proto = e.t[1].proto = 17;
	e.state = CT_REPLIED;
	j = obs_session_json(&e, zone_name, &calls);
	CHECK(!strcmp(jstr(j, "proto", NULL), "udp"));
	CHECK(!strcmp(jstr(j, "state", NULL), "REPLIED"));
	CHECK(!strcmp(jstr(j, "original", "port"), "host"));
	CHECK(!strcmp(jstr(j, "reply", "port"), "gone"));
	CHECK(!strcmp(jstr(j, "sandboxID", NULL), "gone"));
	json_decref(j);
	e.t[1].zone = 0;
	e.t[0].proto = 6;
	e.state = 200;
	j = obs_session_json(&e, zone_name, &calls);
	CHECK(!strcmp(jstr(j, "state", NULL), "INVALID"));
	CHECK(json_is_null(json_object_get(j, "sandboxID")));
	json_decref(j);
}

int
main(void)
{
	test_prometheus();
	test_escaping();
	test_stats_json();
	test_sessions();
	return t_done("test_obs");
}
