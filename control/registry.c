/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "config.h"
#include "registry.h"

json_t *
reg_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	json_t *j;
	char *c;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	j = json_pack("{s:s}", "error", buf);
	if (j)
		return j;
	/*
	 * The message quotes what the client sent (an id, a path), which may be invalid UTF-8 or
	 * cut in the middle of a character; jansson refuses such strings, and the answer would
	 * go out without its body. Keep the ASCII and mark the rest.
	 */
	for (c = buf; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	return json_pack("{s:s}", "error", buf);
}

int
reg_init(struct registry *r, uint32_t max_sandboxes, uint16_t hp_lo, uint16_t hp_hi,
	 uint32_t net, uint8_t prefix, uint32_t node_ip, const struct reg_ops *ops, void *ctx)
{
	uint32_t base = ntohl(net), size = 1u << (32 - prefix);
	int ret;

	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->lock, NULL);
	r->max_sandboxes = max_sandboxes;
	r->node_ip = node_ip;
	r->ops = ops;
	r->ctx = ctx;
	r->by_slot = calloc(max_sandboxes, sizeof(*r->by_slot));
	if (!r->by_slot)
		return -ENOMEM;
	/* Network address, .1 (the host side, cube-dev) and broadcast are never handed out. */
	ret = portalloc_init(&r->hostports, hp_lo, hp_hi);
	if (!ret)
		ret = portalloc_init(&r->ips, base + 2, base + size - 2);
	if (!ret)
		ret = portalloc_init(&r->slots, 0, max_sandboxes - 1);
	if (ret)
		reg_fini(r);
	return ret;
}

void
reg_fini(struct registry *r)
{
	portalloc_fini(&r->hostports);
	portalloc_fini(&r->ips);
	portalloc_fini(&r->slots);
	free(r->by_slot);
	r->by_slot = NULL;
	pthread_mutex_destroy(&r->lock);
}

bool
reg_id_valid(const char *id)
{
	size_t n = strlen(id), i;

	if (n == 0 || n > CVS_ID_MAX || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}

static struct sandbox *
reg_find(struct registry *r, const char *id)
{
	uint32_t i;

	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i] && !strcmp(r->by_slot[i]->id, id))
			return r->by_slot[i];
	return NULL;
}

static struct sandbox *
reg_find_iface(struct registry *r, const char *iface)
{
	uint32_t i;

	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i] && !strcmp(r->by_slot[i]->iface, iface))
			return r->by_slot[i];
	return NULL;
}

static void
ip_str(uint32_t ip, char *buf)
{
	inet_ntop(AF_INET, &ip, buf, INET_ADDRSTRLEN);
}

static json_t *
reg_render(const struct registry *r, const struct sandbox *sb)
{
	char ip[INET_ADDRSTRLEN], node[INET_ADDRSTRLEN], ep[INET_ADDRSTRLEN + 8];
	json_t *ports = json_array(), *j;
	uint32_t i;

	ip_str(sb->ip, ip);
	ip_str(r->node_ip, node);
	for (i = 0; i < sb->nports; i++) {
		snprintf(ep, sizeof(ep), "%s:%u", node, sb->ports[i].hport);
		json_array_append_new(ports, json_pack("{s:i,s:i,s:s}",
			"containerPort", sb->ports[i].cport, "hostPort", sb->ports[i].hport,
			"endpoint", ep));
	}
	j = json_pack("{s:s,s:s,s:s,s:o,s:b}", "sandboxID", sb->id, "iface", sb->iface,
		      "sandboxIP", ip, "exposedPorts", ports, "attached", sb->dp != NULL);
	if (!sb->dp && sb->why[0])
		json_object_set_new(j, "attachError", json_string(sb->why));
	if (sb->policy.set)
		json_object_set_new(j, "policy", policy_render(&sb->policy));
	return j;
}

/* The parsed, validated body of a PUT. */
struct reg_req {
	const char *iface;
	uint32_t ip;	/* 0 = allocate */
	uint32_t nports;
	uint16_t cports[CVS_MAX_EXPOSED];
	struct reg_policy policy;	/* .set when the body had one */
};

static int
reg_parse_body(struct registry *r, const char *body, size_t len, struct reg_req *q,
	       json_t **root, json_t **out)
{
	json_error_t jerr;
	const char *key;
	json_t *v;
	size_t i, j;

	memset(q, 0, sizeof(*q));
	*root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!*root) {
		*out = reg_error("invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
				 jerr.text);
		return 400;
	}
	if (!json_is_object(*root)) {
		*out = reg_error("body must be a JSON object");
		return 400;
	}
	json_object_foreach(*root, key, v) {
		if (!strcmp(key, "iface")) {
			if (!json_is_string(v) || !json_string_length(v) ||
			    json_string_length(v) >= IF_NAMESIZE) {
				*out = reg_error("\"iface\" must be an interface name");
				return 400;
			}
			q->iface = json_string_value(v);
		} else if (!strcmp(key, "exposedPorts")) {
			if (!json_is_array(v) || json_array_size(v) > CVS_MAX_EXPOSED) {
				*out = reg_error("\"exposedPorts\" must be an array of at most %d "
						 "ports", CVS_MAX_EXPOSED);
				return 400;
			}
			for (i = 0; i < json_array_size(v); i++) {
				json_t *p = json_array_get(v, i);
				json_int_t n = json_is_integer(p) ? json_integer_value(p) : 0;

				if (n < 1 || n > 65535) {
					*out = reg_error("\"exposedPorts\"[%zu] must be an integer "
							 "1..65535", i);
					return 400;
				}
				for (j = 0; j < q->nports; j++)
					if (q->cports[j] == n) {
						*out = reg_error("port %d listed twice in "
								 "\"exposedPorts\"", (int)n);
						return 400;
					}
				q->cports[q->nports++] = (uint16_t)n;
			}
		} else if (!strcmp(key, "sandboxIP")) {
			uint32_t h;

			if (!json_is_string(v) || cvs_parse_ipv4(json_string_value(v), &q->ip)) {
				*out = reg_error("\"sandboxIP\" must be an IPv4 address");
				return 400;
			}
			h = ntohl(q->ip);
			if (h < r->ips.lo || h > r->ips.hi) {
				*out = reg_error("\"sandboxIP\" %s is outside the usable sandbox "
						 "addresses", json_string_value(v));
				return 400;
			}
		} else if (!strcmp(key, "policy")) {
			char err[256];

			if (policy_parse(v, &q->policy, err, sizeof(err))) {
				*out = reg_error("%s", err);
				return 400;
			}
		} else {
			*out = reg_error("unknown field \"%s\"", key);
			return 400;
		}
	}
	if (!q->iface) {
		*out = reg_error("\"iface\" is required");
		return 400;
	}
	return 0;
}

static bool
reg_has_cport(const uint16_t *cports, uint32_t n, uint16_t p)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (cports[i] == p)
			return true;
	return false;
}

/*
 * Bring sb's exposed ports to the requested set: keep the host ports of ports that stay,
 * allocate new ones, free the rest. All or nothing.
 */
static int
reg_set_ports(struct registry *r, struct sandbox *sb, const struct reg_req *q, json_t **out)
{
	struct exposed_port next[CVS_MAX_EXPOSED];
	bool fresh[CVS_MAX_EXPOSED] = { false };
	uint32_t i, j, n = 0;
	uint32_t hp;

	for (i = 0; i < q->nports; i++) {
		next[n].cport = q->cports[i];
		next[n].hport = 0;
		for (j = 0; j < sb->nports; j++)
			if (sb->ports[j].cport == q->cports[i])
				next[n].hport = sb->ports[j].hport;
		n++;
	}
	for (i = 0; i < n; i++) {
		if (next[i].hport)
			continue;
		if (portalloc_get(&r->hostports, &hp)) {
			for (j = 0; j < i; j++)
				if (fresh[j])
					portalloc_put(&r->hostports, next[j].hport);
			*out = reg_error("host ports exhausted: %u of %u in use",
					 r->hostports.used, r->hostports.hi - r->hostports.lo + 1);
			return 503;
		}
		next[i].hport = (uint16_t)hp;
		fresh[i] = true;
	}
	/* Commit: remove dropped ports, add new ones. */
	for (j = 0; j < sb->nports; j++)
		if (!reg_has_cport(q->cports, q->nports, sb->ports[j].cport)) {
			if (sb->dp)
				r->ops->hostport(r->ctx, sb, &sb->ports[j], false);
			portalloc_put(&r->hostports, sb->ports[j].hport);
		}
	for (i = 0; i < n; i++) {
		bool had = false;

		for (j = 0; j < sb->nports; j++)
			had |= sb->ports[j].cport == next[i].cport;
		if (!had && sb->dp)
			r->ops->hostport(r->ctx, sb, &next[i], true);
	}
	memcpy(sb->ports, next, sizeof(next[0]) * n);
	sb->nports = n;
	return 0;
}

/* Publish a new policy; the old one stays in force when that fails. */
static int
reg_apply_policy(struct registry *r, struct sandbox *sb, const struct reg_policy *p,
		 json_t **out)
{
	struct reg_policy old = sb->policy;
	int ret;

	sb->policy = *p;
	ret = sb->dp ? r->ops->policy(r->ctx, sb) : 0;
	if (ret) {
		sb->policy = old;
		*out = reg_error("cannot apply the policy: %s", strerror(-ret));
		return 500;
	}
	return 0;
}

static bool
reg_same_ports(const struct sandbox *sb, const struct reg_req *q)
{
	uint32_t i;

	if (sb->nports != q->nports)
		return false;
	for (i = 0; i < q->nports; i++)
		if (!reg_has_cport(q->cports, q->nports, sb->ports[i].cport))
			return false;
	return true;
}

static int reg_attach_one(struct registry *r, struct sandbox *sb);

int
reg_put(struct registry *r, const char *id, const char *body, size_t len, json_t **out)
{
	struct sandbox *sb, *other;
	struct reg_req q;
	json_t *root = NULL;
	char err[256];
	uint32_t v;
	int status, ret;

	if (!reg_id_valid(id)) {
		*out = reg_error("invalid sandbox id: 1-%d characters of A-Z a-z 0-9 . _ -",
				 CVS_ID_MAX);
		return 400;
	}
	status = reg_parse_body(r, body, len, &q, &root, out);
	if (status)
		goto done;
	pthread_mutex_lock(&r->lock);
	sb = reg_find(r, id);
	if (sb) {
		if (strcmp(sb->iface, q.iface)) {
			*out = reg_error("sandbox %s is registered on interface %s, not %s", id,
					 sb->iface, q.iface);
			status = 409;
		} else if (q.ip && q.ip != sb->ip) {
			*out = reg_error("sandbox %s already has another sandboxIP", id);
			status = 409;
		} else if (!reg_same_ports(sb, &q) && (status = reg_set_ports(r, sb, &q, out))) {
			/* *out set */
		} else if (q.policy.set && (status = reg_apply_policy(r, sb, &q.policy, out))) {
			/* *out set */
		} else {
			/* A restored sandbox whose interface was missing: try again now. */
			if (!sb->dp)
				reg_attach_one(r, sb);
			*out = reg_render(r, sb);
			status = 200;
		}
		goto unlock;
	}
	other = reg_find_iface(r, q.iface);
	if (other) {
		*out = reg_error("interface %s is used by sandbox %s", q.iface, other->id);
		status = 409;
		goto unlock;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		*out = reg_error("out of memory");
		status = 500;
		goto unlock;
	}
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	snprintf(sb->iface, sizeof(sb->iface), "%s", q.iface);
	sb->ifindex = r->ops->ifindex(r->ctx, q.iface);
	if (!sb->ifindex) {
		*out = reg_error("unknown interface %s", q.iface);
		status = 400;
		goto free_sb;
	}
	if (portalloc_get(&r->slots, &sb->slot)) {
		*out = reg_error("sandbox limit reached (%u)", r->max_sandboxes);
		status = 503;
		goto free_sb;
	}
	if (q.ip) {
		ret = portalloc_take(&r->ips, ntohl(q.ip));
		if (ret) {
			*out = reg_error("sandboxIP is already in use");
			status = 409;
			goto put_slot;
		}
		sb->ip = q.ip;
	} else {
		if (portalloc_get(&r->ips, &v)) {
			*out = reg_error("sandbox addresses exhausted");
			status = 503;
			goto put_slot;
		}
		sb->ip = htonl(v);
	}
	status = reg_set_ports(r, sb, &q, out);
	if (status)
		goto put_ip;
	sb->policy = q.policy;
	ret = r->ops->attach(r->ctx, sb, err, sizeof(err));
	if (ret) {
		struct reg_req none = { 0 };

		*out = reg_error("%s", err);
		status = ret == -EBUSY ? 409 : 500;
		reg_set_ports(r, sb, &none, out);
		goto put_ip;
	}
	for (v = 0; v < sb->nports; v++)
		r->ops->hostport(r->ctx, sb, &sb->ports[v], true);
	r->by_slot[sb->slot] = sb;
	r->count++;
	*out = reg_render(r, sb);
	status = 201;
	goto unlock;
put_ip:
	portalloc_put(&r->ips, ntohl(sb->ip));
put_slot:
	portalloc_put(&r->slots, sb->slot);
free_sb:
	free(sb);
unlock:
	pthread_mutex_unlock(&r->lock);
done:
	json_decref(root);
	return status;
}

static void
reg_remove(struct registry *r, struct sandbox *sb)
{
	uint32_t i;

	for (i = 0; i < sb->nports; i++) {
		r->ops->hostport(r->ctx, sb, &sb->ports[i], false);
		portalloc_put(&r->hostports, sb->ports[i].hport);
	}
	r->ops->detach(r->ctx, sb);
	portalloc_put(&r->ips, ntohl(sb->ip));
	portalloc_put(&r->slots, sb->slot);
	r->by_slot[sb->slot] = NULL;
	r->count--;
	free(sb);
}

int
reg_delete(struct registry *r, const char *id, json_t **out)
{
	struct sandbox *sb;
	int status = 204;

	*out = NULL;
	pthread_mutex_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (!sb) {
		*out = reg_error("sandbox %s not found", id);
		status = 404;
	} else {
		reg_remove(r, sb);
	}
	pthread_mutex_unlock(&r->lock);
	return status;
}

void
reg_clear(struct registry *r)
{
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i])
			reg_remove(r, r->by_slot[i]);
	pthread_mutex_unlock(&r->lock);
}

/* Answer with render(sb) for a known sandbox, 404 otherwise. */
static int
reg_show(struct registry *r, const char *id,
	 json_t *(*render)(const struct registry *r, const struct sandbox *sb), json_t **out)
{
	struct sandbox *sb;
	int status = 200;

	pthread_mutex_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (sb) {
		*out = render(r, sb);
	} else {
		*out = reg_error("sandbox %s not found", id);
		status = 404;
	}
	pthread_mutex_unlock(&r->lock);
	return status;
}

int
reg_get(struct registry *r, const char *id, json_t **out)
{
	return reg_show(r, id, reg_render, out);
}

int
reg_list(struct registry *r, json_t **out)
{
	json_t *arr = json_array();
	uint32_t i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i])
			json_array_append_new(arr, reg_render(r, r->by_slot[i]));
	pthread_mutex_unlock(&r->lock);
	*out = json_pack("{s:o}", "sandboxes", arr);
	return 200;
}

int
reg_exposed(struct registry *r, const char *id, const char *port, json_t **out)
{
	char node[INET_ADDRSTRLEN], ep[INET_ADDRSTRLEN + 8];
	struct sandbox *sb;
	uint32_t p, i;
	int status = 404;

	if (cvs_parse_u32(port, 1, 65535, &p)) {
		*out = reg_error("port must be an integer 1..65535, got \"%s\"", port);
		return 400;
	}
	pthread_mutex_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (!sb) {
		*out = reg_error("sandbox %s not found", id);
		goto out;
	}
	for (i = 0; i < sb->nports; i++) {
		if (sb->ports[i].cport != p)
			continue;
		ip_str(r->node_ip, node);
		snprintf(ep, sizeof(ep), "%s:%u", node, sb->ports[i].hport);
		*out = json_pack("{s:s,s:i,s:s,s:s,s:s,s:i}", "sandboxID", sb->id,
				 "containerPort", (int)p, "mode", "host_port", "endpoint", ep,
				 "hostIP", node, "hostPort", sb->ports[i].hport);
		status = 200;
		goto out;
	}
	*out = reg_error("port %u of sandbox %s is not exposed", p, id);
out:
	pthread_mutex_unlock(&r->lock);
	return status;
}

static json_t *
reg_render_policy(const struct registry *r, const struct sandbox *sb)
{
	return policy_render(&sb->policy);
}

int
reg_policy_get(struct registry *r, const char *id, json_t **out)
{
	return reg_show(r, id, reg_render_policy, out);
}

int
reg_policy_put(struct registry *r, const char *id, const char *body, size_t len,
	       json_t **out)
{
	struct reg_policy *p = malloc(sizeof(*p));
	struct sandbox *sb;
	json_error_t jerr;
	json_t *root;
	char err[256];
	int status;

	if (!p) {
		*out = reg_error("out of memory");
		return 500;
	}
	root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		*out = reg_error("invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
				 jerr.text);
		free(p);
		return 400;
	}
	if (policy_parse(root, p, err, sizeof(err))) {
		*out = reg_error("%s", err);
		json_decref(root);
		free(p);
		return 400;
	}
	json_decref(root);
	pthread_mutex_lock(&r->lock);
	sb = reg_id_valid(id) ? reg_find(r, id) : NULL;
	if (!sb) {
		*out = reg_error("sandbox %s not found", id);
		status = 404;
	} else {
		status = reg_apply_policy(r, sb, p, out);
		if (!status) {
			*out = policy_render(&sb->policy);
			status = 200;
		}
	}
	pthread_mutex_unlock(&r->lock);
	free(p);
	return status;
}

/* ---- state file support: restore with the same addresses and host ports ---- */

/* Attach an unattached sandbox and program its host ports; remembers why when it cannot. */
static int
reg_attach_one(struct registry *r, struct sandbox *sb)
{
	char err[sizeof(sb->why)];
	uint32_t i;
	int ret;

	sb->ifindex = r->ops->ifindex(r->ctx, sb->iface);
	if (!sb->ifindex) {
		snprintf(sb->why, sizeof(sb->why), "interface %s does not exist", sb->iface);
		return -ENODEV;
	}
	ret = r->ops->attach(r->ctx, sb, err, sizeof(err));
	if (ret) {
		snprintf(sb->why, sizeof(sb->why), "%s", err);
		return ret;
	}
	sb->why[0] = '\0';
	for (i = 0; i < sb->nports; i++)
		r->ops->hostport(r->ctx, sb, &sb->ports[i], true);
	return 0;
}

json_t *
reg_state(struct registry *r)
{
	json_t *arr = json_array();
	uint32_t i, k;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++) {
		const struct sandbox *sb = r->by_slot[i];
		char ip[INET_ADDRSTRLEN];
		json_t *ports, *rec;

		if (!sb)
			continue;
		ports = json_array();
		for (k = 0; k < sb->nports; k++)
			json_array_append_new(ports, json_pack("{s:i,s:i}", "containerPort",
				sb->ports[k].cport, "hostPort", sb->ports[k].hport));
		ip_str(sb->ip, ip);
		rec = json_pack("{s:s,s:s,s:s,s:o}", "sandboxID", sb->id, "iface", sb->iface,
				"sandboxIP", ip, "exposedPorts", ports);
		if (sb->policy.set)
			json_object_set_new(rec, "policy", policy_render(&sb->policy));
		json_array_append_new(arr, rec);
	}
	pthread_mutex_unlock(&r->lock);
	return arr;
}

static int
reg_restore_ports(struct registry *r, struct sandbox *sb, const json_t *ports, char *err,
		  size_t errlen)
{
	size_t i, k;

	if (!json_is_array(ports) || json_array_size(ports) > CVS_MAX_EXPOSED) {
		snprintf(err, errlen, "\"exposedPorts\" must be an array of at most %d entries",
			 CVS_MAX_EXPOSED);
		return -EINVAL;
	}
	for (i = 0; i < json_array_size(ports); i++) {
		json_int_t cp = -1, hp = -1;
		int ret;

		if (json_unpack(json_array_get(ports, i), "{s:I,s:I!}", "containerPort", &cp,
				"hostPort", &hp) || cp < 1 || cp > 65535 || hp < 1 || hp > 65535) {
			snprintf(err, errlen, "exposedPorts[%zu] must be {\"containerPort\": "
				 "1..65535, \"hostPort\": 1..65535}", i);
			return -EINVAL;
		}
		for (k = 0; k < sb->nports; k++)
			if (sb->ports[k].cport == cp) {
				snprintf(err, errlen, "container port %d listed twice", (int)cp);
				return -EINVAL;
			}
		ret = portalloc_take(&r->hostports, (uint32_t)hp);
		if (ret) {
			snprintf(err, errlen, "host port %d %s", (int)hp, ret == -ERANGE ?
				 "is outside --host-port-range" : "is used twice");
			return -EINVAL;
		}
		sb->ports[sb->nports].cport = (uint16_t)cp;
		sb->ports[sb->nports].hport = (uint16_t)hp;
		sb->nports++;
	}
	return 0;
}

/* One record → an unattached sandbox holding its slot, address and host ports. */
static int
reg_restore_one(struct registry *r, const json_t *rec, char *err, size_t errlen)
{
	const char *id = NULL, *iface = NULL, *ip = NULL;
	json_t *ports = NULL, *pol = NULL;
	struct sandbox *sb;
	uint32_t addr, k;
	char why[160];
	int ret;

	if (json_unpack((json_t *)rec, "{s:s,s:s,s:s,s:o,s?o!}", "sandboxID", &id, "iface",
			&iface, "sandboxIP", &ip, "exposedPorts", &ports, "policy", &pol)) {
		snprintf(err, errlen, "a record must have sandboxID, iface, sandboxIP, "
			 "exposedPorts and optionally policy, nothing else");
		return -EINVAL;
	}
	if (!reg_id_valid(id) || reg_find(r, id)) {
		snprintf(err, errlen, "sandbox id '%.64s' is invalid or used twice", id);
		return -EINVAL;
	}
	if (!*iface || strlen(iface) >= IF_NAMESIZE || reg_find_iface(r, iface)) {
		snprintf(err, errlen, "sandbox %s: interface '%.32s' is invalid or used twice", id,
			 iface);
		return -EINVAL;
	}
	sb = calloc(1, sizeof(*sb));
	if (!sb) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	snprintf(sb->id, sizeof(sb->id), "%s", id);
	snprintf(sb->iface, sizeof(sb->iface), "%s", iface);
	if (cvs_parse_ipv4(ip, &sb->ip) || portalloc_take(&r->ips, ntohl(sb->ip))) {
		snprintf(err, errlen, "sandbox %s: sandboxIP '%.32s' is invalid, outside "
			 "--sandbox-cidr or used twice", id, ip);
		free(sb);
		return -EINVAL;
	}
	addr = ntohl(sb->ip);
	if (portalloc_get(&r->slots, &sb->slot)) {
		snprintf(err, errlen, "more sandboxes than --max-sandboxes %u", r->max_sandboxes);
		ret = -EINVAL;
		goto put_ip;
	}
	ret = reg_restore_ports(r, sb, ports, why, sizeof(why));
	if (!ret && pol)
		ret = policy_parse(pol, &sb->policy, why, sizeof(why));
	if (ret) {
		snprintf(err, errlen, "sandbox %s: %s", id, why);
		for (k = 0; k < sb->nports; k++)
			portalloc_put(&r->hostports, sb->ports[k].hport);
		portalloc_put(&r->slots, sb->slot);
		goto put_ip;
	}
	snprintf(sb->why, sizeof(sb->why), "restored, not attached yet");
	r->by_slot[sb->slot] = sb;
	r->count++;
	return 0;
put_ip:
	portalloc_put(&r->ips, addr);
	free(sb);
	return ret;
}

int
reg_restore(struct registry *r, const json_t *sandboxes, char *err, size_t errlen)
{
	size_t i;
	int ret = 0;

	if (!json_is_array(sandboxes)) {
		snprintf(err, errlen, "\"sandboxes\" must be an array");
		return -EINVAL;
	}
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < json_array_size(sandboxes) && !ret; i++) {
		char why[384];

		ret = reg_restore_one(r, json_array_get(sandboxes, i), why, sizeof(why));
		if (ret)
			snprintf(err, errlen, "record %zu: %s", i, why);
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

uint32_t
reg_attach_pending(struct registry *r)
{
	uint32_t i, left = 0;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++) {
		struct sandbox *sb = r->by_slot[i];

		if (sb && !sb->dp && reg_attach_one(r, sb))
			left++;
	}
	pthread_mutex_unlock(&r->lock);
	return left;
}

void
reg_counts(struct registry *r, uint32_t *total, uint32_t *unattached)
{
	uint32_t i, u = 0;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i] && !r->by_slot[i]->dp)
			u++;
	*total = r->count;
	pthread_mutex_unlock(&r->lock);
	*unattached = u;
}
