/* SPDX-License-Identifier: BSD-3-Clause */
/* The configuration on stdin, the environment and the previous plugin's result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cni.h"

/* The portMappings capability: TCP mappings on any host address. */
static int
cni_ports_of(struct cni_conf *c, struct cni_err *e)
{
	const json_t *pm = json_object_get(json_object_get(c->root, "runtimeConfig"),
					   "portMappings");
	const json_t *m;
	size_t i;

	if (!pm)
		return 0;
	if (!json_is_array(pm) || json_array_size(pm) > CNI_MAX_PORTS)
		return cni_fail(e, CNI_E_CONFIG, NULL, "runtimeConfig.portMappings must be an "
				"array of at most %d mappings", CNI_MAX_PORTS);
	json_array_foreach(pm, i, m) {
		json_int_t hp = json_integer_value(json_object_get(m, "hostPort"));
		json_int_t cp = json_integer_value(json_object_get(m, "containerPort"));
		const char *proto = json_string_value(json_object_get(m, "protocol"));
		const char *hip = json_string_value(json_object_get(m, "hostIP"));

		if (hp < 1 || hp > 65535 || cp < 1 || cp > 65535)
			return cni_fail(e, CNI_E_CONFIG, NULL, "portMappings[%zu]: hostPort and "
					"containerPort must be 1..65535", i);
		if (proto && strcasecmp(proto, "tcp"))
			return cni_fail(e, CNI_E_CONFIG, NULL, "portMappings[%zu]: protocol %s: "
					"cubevs-fp serves TCP host ports only", i, proto);
		if (hip && hip[0] && strcmp(hip, "0.0.0.0"))
			return cni_fail(e, CNI_E_CONFIG, NULL, "portMappings[%zu]: hostIP %s: the "
					"host port answers on the node IP only", i, hip);
		c->ports[c->nports].host = (uint16_t)hp;
		c->ports[c->nports++].container = (uint16_t)cp;
	}
	return 0;
}

/* The keys of ours: where the API is and how long to wait for it. */
static int
cni_conf_ours(struct cni_conf *c, struct cni_err *e)
{
	const json_t *s = json_object_get(c->root, "apiSocket");
	const json_t *t = json_object_get(c->root, "apiTimeoutSeconds");

	if (s && (!json_is_string(s) || json_string_value(s)[0] != '/' ||
		  json_string_length(s) >= sizeof(c->sock)))
		return cni_fail(e, CNI_E_CONFIG, NULL, "apiSocket must be an absolute path of "
				"at most %zu bytes", sizeof(c->sock) - 1);
	if (t && (!json_is_integer(t) || json_integer_value(t) < 1 ||
		  json_integer_value(t) > 300))
		return cni_fail(e, CNI_E_CONFIG, NULL, "apiTimeoutSeconds must be 1..300");
	snprintf(c->sock, sizeof(c->sock), "%s", s ? json_string_value(s) : CNI_DEFAULT_SOCKET);
	c->timeout_s = t ? (long)json_integer_value(t) : 10;
	return 0;
}

static bool
cni_version_ok(const char *v)
{
	static const char *const ok[] = { "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0" };
	size_t i;

	for (i = 0; v && i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(v, ok[i]))
			return true;
	return false;
}

int
cni_conf_read(struct cni_conf *c, struct cni_err *e)
{
	json_error_t jerr;

	memset(c, 0, sizeof(*c));
	c->command = getenv("CNI_COMMAND");
	c->container = getenv("CNI_CONTAINERID");
	c->netns = getenv("CNI_NETNS");
	c->ifname = getenv("CNI_IFNAME");
	if (!c->command || !c->command[0])
		return cni_fail(e, CNI_E_ENV, NULL, "CNI_COMMAND is not set");
	c->root = json_loadf(stdin, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(c->root))
		return cni_fail(e, CNI_E_DECODE, jerr.text, "the configuration on stdin is not a "
				"JSON object");
	c->version = json_string_value(json_object_get(c->root, "cniVersion"));
	if (!cni_version_ok(c->version))
		return cni_fail(e, CNI_E_VERSION, "supported: 0.3.0 0.3.1 0.4.0 1.0.0 1.1.0",
				"cniVersion %s is not supported", c->version ? c->version : "(none)");
	if (!strcmp(c->command, "VERSION"))
		return 0;
	c->name = json_string_value(json_object_get(c->root, "name"));
	if (!c->name || !c->name[0])
		return cni_fail(e, CNI_E_CONFIG, NULL, "the configuration has no network name");
	c->prev = json_object_get(c->root, "prevResult");
	if (cni_conf_ours(c, e) || cni_ports_of(c, e))
		return -1;
	if ((!strcmp(c->command, "ADD") || !strcmp(c->command, "DEL") ||
	     !strcmp(c->command, "CHECK")) &&
	    (!c->container || !c->container[0] || !c->ifname || !c->ifname[0]))
		return cni_fail(e, CNI_E_ENV, NULL, "CNI_CONTAINERID and CNI_IFNAME are required "
				"for %s", c->command);
	return 0;
}

void
cni_conf_free(struct cni_conf *c)
{
	json_decref(c->root);
	c->root = NULL;
}

/* The MAC of a node interface, from sysfs (the plugin runs in the node's namespace). */
static void
cni_if_mac(const char *ifname, char *out, size_t len)
{
	char path[96], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f))
		buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
	snprintf(out, len, "%s", buf);
}

/*
 * A bridge of the node (the bridge plugin lists it before the pod's veth): not the pod's
 * interface, whose frames are what cubevs-fp takes.
 */
static bool
cni_is_bridge(const char *ifname)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/net/%s/bridge", ifname);
	return access(path, F_OK) == 0;
}

/* The pod's IPv4 address on interface index want (and its gateway). */
static bool
cni_pod_ip(const json_t *ips, json_int_t want, struct cni_pod *p)
{
	const json_t *a;
	size_t i;

	json_array_foreach(ips, i, a) {
		const char *addr = json_string_value(json_object_get(a, "address"));
		const char *gw = json_string_value(json_object_get(a, "gateway"));
		const json_t *idx = json_object_get(a, "interface");
		size_t n = addr ? strcspn(addr, "/") : 0;
		struct in_addr tmp;

		if (!addr || (idx && json_integer_value(idx) != want) || n >= sizeof(p->ip))
			continue;
		memcpy(p->ip, addr, n);
		p->ip[n] = '\0';
		if (inet_pton(AF_INET, p->ip, &tmp) != 1)
			continue;	/* IPv6: not carried yet */
		if (gw && strlen(gw) < sizeof(p->gw) && inet_pton(AF_INET, gw, &tmp) == 1)
			memcpy(p->gw, gw, strlen(gw) + 1);
		return true;
	}
	return false;
}

int
cni_pod_of(const struct cni_conf *c, struct cni_pod *p, struct cni_err *e)
{
	const json_t *ifs = json_object_get(c->prev, "interfaces"), *i;
	json_int_t pod = -1;
	size_t k;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(c->prev) || !json_is_array(ifs))
		return cni_fail(e, CNI_E_CONFIG, NULL, "no prevResult with interfaces: "
				"cubevs-fp-cni is chained after an interface plugin (ptp, veth)");
	json_array_foreach(ifs, k, i) {
		const char *name = json_string_value(json_object_get(i, "name"));
		const char *mac = json_string_value(json_object_get(i, "mac"));
		const char *sbx = json_string_value(json_object_get(i, "sandbox"));

		if (!name)
			continue;
		if (sbx && sbx[0] && !strcmp(name, c->ifname)) {
			pod = (json_int_t)k;
			snprintf(p->pod_mac, sizeof(p->pod_mac), "%s", mac ? mac : "");
		} else if ((!sbx || !sbx[0]) && !p->host_if[0] && strlen(name) < sizeof(p->host_if) &&
			   !cni_is_bridge(name)) {
			snprintf(p->host_if, sizeof(p->host_if), "%s", name);
			snprintf(p->host_mac, sizeof(p->host_mac), "%s", mac ? mac : "");
		}
	}
	if (pod < 0 || !p->host_if[0])
		return cni_fail(e, CNI_E_CONFIG, NULL, "prevResult has no %s in the sandbox and "
				"a host-side interface", c->ifname);
	if (!p->host_mac[0])
		cni_if_mac(p->host_if, p->host_mac, sizeof(p->host_mac));
	if (!cni_pod_ip(json_object_get(c->prev, "ips"), pod, p))
		return cni_fail(e, CNI_E_CONFIG, NULL, "prevResult has no IPv4 address on %s",
				c->ifname);
	return 0;
}

/* FNV-1a, 64 bits: the container's attachment in a short, stable token. */
static uint64_t
cni_fnv64(const char *s, uint64_t h)
{
	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h;
}

void
cni_sandbox_id(const char *name, const char *container, const char *ifname, char *out,
	       size_t len)
{
	uint64_t h = cni_fnv64(ifname, cni_fnv64("/", cni_fnv64(container,
						  14695981039346656037ull)));
	char net[44];
	size_t i;

	/* The registry's ids are A-Z a-z 0-9 . _ -: anything else in the name becomes '_'. */
	snprintf(net, sizeof(net), "%s", name);
	for (i = 0; net[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			    net[i]))
			net[i] = '_';
	snprintf(out, len, "cni.%016llx.%s", (unsigned long long)h, net);
}

bool
cni_id_of_network(const char *id, const char *name)
{
	char want[80];

	cni_sandbox_id(name, "", "", want, sizeof(want));
	/* cni. + 16 hex + . : the same length for every attachment; the rest is the name. */
	return strlen(id) == strlen(want) && !strncmp(id, "cni.", 4) &&
	       !strcmp(id + 20, want + 20) && id[20] == '.';
}
