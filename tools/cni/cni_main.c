/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fp-cni (CNI spec 1.1), chained after the plugin that makes the pod's interface (ptp,
 * or a bridge-less veth): ADD registers the pod with cubevs-fp as a sandbox (its host-side
 * interface, the address, gateway and MAC the previous result gives, the portMappings as host
 * ports asked for by number) and passes the result on; DEL removes the registration (gone is
 * done); CHECK compares it with the result; STATUS asks /readyz; GC removes this network's
 * registrations of attachments the runtime no longer has; VERSION. Errors are the spec's
 * error object on stdout and exit status 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cni.h"
#include "cvs_version.h"

static const char *const cni_versions[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };

static void
cni_print(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	if (s)
		printf("%s\n", s);
	free(s);
}

/* The API's answer to a registration, as a CNI error when it refused. */
static int
cni_refused(const struct cni_reply *r, const char *what, struct cni_err *e)
{
	const char *why = cni_api_error(r);

	if (r->status == 400)
		return cni_fail(e, CNI_E_CONFIG, why, "cubevs-fp refused %s: %s", what, why);
	if (r->status == 503)
		return cni_fail(e, CNI_E_AGAIN, why, "cubevs-fp cannot %s now: %s", what, why);
	return cni_fail(e, CNI_E_REFUSED, why, "cubevs-fp refused %s (%ld): %s", what, r->status,
			why);
}

static json_t *
cni_body(const struct cni_conf *c, const struct cni_pod *p)
{
	json_t *ports = json_array(), *b;
	uint32_t i;

	for (i = 0; i < c->nports; i++)
		json_array_append_new(ports, json_pack("{s:i,s:i}", "containerPort",
						       c->ports[i].container, "hostPort",
						       c->ports[i].host));
	b = json_pack("{s:s,s:s,s:o}", "iface", p->host_if, "guestIP", p->ip, "exposedPorts",
		      ports);
	if (b && p->pod_mac[0])
		json_object_set_new(b, "guestMAC", json_string(p->pod_mac));
	if (b && p->gw[0])
		json_object_set_new(b, "gatewayIP", json_string(p->gw));
	if (b && p->host_mac[0])
		json_object_set_new(b, "gatewayMAC", json_string(p->host_mac));
	return b;
}

static int
cni_add(const struct cni_conf *c, struct cni_err *e)
{
	struct cni_reply r;
	struct cni_pod p;
	char id[80], path[128];
	json_t *body, *out;
	int ret;

	if (cni_pod_of(c, &p, e))
		return -1;
	cni_sandbox_id(c->name, c->container, c->ifname, id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	body = cni_body(c, &p);
	ret = body ? cni_api(c, "PUT", path, body, &r, e) :
	      cni_fail(e, CNI_E_IO, NULL, "out of memory");
	json_decref(body);
	if (ret)
		return -1;
	if (r.status != 200 && r.status != 201) {
		ret = cni_refused(&r, "the registration of the pod", e);
		json_decref(r.body);
		return ret;
	}
	json_decref(r.body);
	/* A chained plugin passes the result on, in the configuration's version. */
	out = json_deep_copy(c->prev);
	json_object_set_new(out, "cniVersion", json_string(c->version));
	cni_print(out);
	json_decref(out);
	return 0;
}

static int
cni_del(const struct cni_conf *c, struct cni_err *e)
{
	struct cni_reply r;
	char id[80], path[128];
	int ret = 0;

	cni_sandbox_id(c->name, c->container, c->ifname, id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	/* Unreachable is an error: the runtime asks again, and no registration is left over. */
	if (cni_api(c, "DELETE", path, NULL, &r, e))
		return -1;
	if (r.status != 204 && r.status != 404)
		ret = cni_refused(&r, "the removal of the pod", e);
	json_decref(r.body);
	return ret;
}

/* Whether the registration has every port mapping the runtime asked for. */
static bool
cni_has_ports(const struct cni_conf *c, const json_t *sb)
{
	const json_t *eps = json_object_get(sb, "exposedPorts"), *p;
	uint32_t i, found = 0;
	size_t k;

	for (i = 0; i < c->nports; i++)
		json_array_foreach(eps, k, p)
			if (json_integer_value(json_object_get(p, "containerPort")) ==
			    c->ports[i].container &&
			    json_integer_value(json_object_get(p, "hostPort")) == c->ports[i].host) {
				found++;
				break;
			}
	return found == c->nports;
}

static int
cni_check(const struct cni_conf *c, struct cni_err *e)
{
	const char *s;
	struct cni_reply r;
	struct cni_pod p;
	char id[80], path[128];
	int ret = 0;

	if (cni_pod_of(c, &p, e))
		return -1;
	cni_sandbox_id(c->name, c->container, c->ifname, id, sizeof(id));
	snprintf(path, sizeof(path), "/sandboxes/%s", id);
	if (cni_api(c, "GET", path, NULL, &r, e))
		return -1;
	s = json_string_value(json_object_get(r.body, "iface"));
	if (r.status == 404)
		ret = cni_fail(e, CNI_E_CHECK, id, "the pod is not registered with cubevs-fp");
	else if (r.status != 200)
		ret = cni_refused(&r, "the check", e);
	else if (!s || strcmp(s, p.host_if))
		ret = cni_fail(e, CNI_E_CHECK, s, "registered on %s, the result says %s",
			       s ? s : "no interface", p.host_if);
	else if (!(s = json_string_value(json_object_get(r.body, "guestIP"))) || strcmp(s, p.ip))
		ret = cni_fail(e, CNI_E_CHECK, s, "registered with guestIP %s, the result says %s",
			       s ? s : "(none)", p.ip);
	else if (!json_is_true(json_object_get(r.body, "attached")))
		ret = cni_fail(e, CNI_E_CHECK, json_string_value(json_object_get(r.body,
			       "attachError")), "the pod's interface %s is not attached",
			       p.host_if);
	else if (!cni_has_ports(c, r.body))
		ret = cni_fail(e, CNI_E_CHECK, NULL, "the registration lacks a port mapping the "
			       "runtime asked for");
	json_decref(r.body);
	return ret;
}

static int
cni_status(const struct cni_conf *c, struct cni_err *e)
{
	struct cni_reply r;
	char *d;
	int ret = 0;

	if (cni_api(c, "GET", "/readyz", NULL, &r, e)) {
		e->code = CNI_E_NOT_READY;
		return -1;
	}
	if (r.status != 200) {
		d = r.body ? json_dumps(r.body, JSON_COMPACT) : NULL;
		ret = cni_fail(e, CNI_E_NOT_READY, d, "cubevs-fp is not ready (/readyz %ld)",
			       r.status);
		free(d);
	}
	json_decref(r.body);
	return ret;
}

/* Whether id is the sandbox of one of the attachments the runtime still has. */
static bool
cni_valid(const struct cni_conf *c, const json_t *valid, const char *id)
{
	const json_t *a;
	char want[80];
	size_t i;

	json_array_foreach(valid, i, a) {
		const char *cid = json_string_value(json_object_get(a, "containerID"));
		const char *ifn = json_string_value(json_object_get(a, "ifname"));

		cni_sandbox_id(c->name, cid ? cid : "", ifn ? ifn : "", want, sizeof(want));
		if (!strcmp(want, id))
			return true;
	}
	return false;
}

static int
cni_gc(const struct cni_conf *c, struct cni_err *e)
{
	const json_t *valid = json_object_get(c->root, "cni.dev/valid-attachments"), *sb;
	struct cni_reply r, d;
	char path[128];
	size_t i;
	int ret = 0;

	if (valid && !json_is_array(valid))
		return cni_fail(e, CNI_E_CONFIG, NULL, "cni.dev/valid-attachments must be an array");
	if (cni_api(c, "GET", "/sandboxes", NULL, &r, e))
		return -1;
	json_array_foreach(json_object_get(r.body, "sandboxes"), i, sb) {
		const char *id = json_string_value(json_object_get(sb, "sandboxID"));

		if (!id || !cni_id_of_network(id, c->name) || cni_valid(c, valid, id))
			continue;
		snprintf(path, sizeof(path), "/sandboxes/%s", id);
		if (cni_api(c, "DELETE", path, NULL, &d, e)) {
			ret = -1;
			break;
		}
		if (d.status != 204 && d.status != 404 && !ret)
			ret = cni_refused(&d, "a stale registration's removal", e);
		json_decref(d.body);
	}
	json_decref(r.body);
	return ret;
}

static void
cni_version(void)
{
	json_t *v = json_array();
	size_t i;

	for (i = 0; i < sizeof(cni_versions) / sizeof(cni_versions[0]); i++)
		json_array_append_new(v, json_string(cni_versions[i]));
	cni_print(json_pack("{s:s,s:o}", "cniVersion", CNI_VERSION, "supportedVersions", v));
}

static int
cni_run(const struct cni_conf *c, struct cni_err *e)
{
	static const struct {
		const char *name;
		int (*fn)(const struct cni_conf *, struct cni_err *);
	} cmds[] = {
		{ "ADD", cni_add }, { "DEL", cni_del }, { "CHECK", cni_check },
		{ "STATUS", cni_status }, { "GC", cni_gc },
	};
	size_t i;

	if (!strcmp(c->command, "VERSION")) {
		cni_version();
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(c->command, cmds[i].name))
			return cmds[i].fn(c, e);
	return cni_fail(e, CNI_E_ENV, NULL, "CNI_COMMAND %s is not one of ADD, DEL, CHECK, "
			"STATUS, GC, VERSION", c->command);
}

int
main(int argc, char **argv)
{
	struct cni_conf c;
	struct cni_err e = { 0, "", "" };
	json_t *err;

	if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))) {
		printf("cubevs-fp-cni %s, CNI %s\n", CVS_VERSION, CNI_VERSION);
		return 0;
	}
	if (!cni_conf_read(&c, &e) && !cni_run(&c, &e)) {
		cni_conf_free(&c);
		return 0;
	}
	err = json_pack("{s:s,s:i,s:s}", "cniVersion", c.version ? c.version : CNI_VERSION,
			"code", e.code, "msg", e.msg);
	if (e.details[0])
		json_object_set_new(err, "details", json_string(e.details));
	cni_print(err);
	json_decref(err);
	cni_conf_free(&c);
	return 1;
}
