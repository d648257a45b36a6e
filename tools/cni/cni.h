/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cubevs-fp-cni: a chained CNI plugin (spec 1.1) that hands a pod's host-side interface, its
 * address and its port mappings to cubevs-fp through the local API socket. The files:
 * cni_main.c (the commands), cni_api.c (HTTP over the unix socket with libcurl), cni_conf.c
 * (the configuration and the previous plugin's result).
 */
#ifndef CVS_CNI_H
#define CVS_CNI_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

#define CNI_VERSION		"1.1.0"
#define CNI_DEFAULT_SOCKET	"/run/cubevs-fp/api.sock"
#define CNI_MAX_PORTS		64

/* The spec's error codes, and ours (100 and up). */
enum cni_code {
	CNI_E_VERSION = 1,	/* incompatible CNI version */
	CNI_E_FIELD = 2,	/* unsupported field in the network configuration */
	CNI_E_UNKNOWN = 3,	/* container unknown or does not exist */
	CNI_E_ENV = 4,		/* invalid necessary environment variables */
	CNI_E_IO = 5,		/* I/O failure */
	CNI_E_DECODE = 6,	/* failed to decode content */
	CNI_E_CONFIG = 7,	/* invalid network configuration */
	CNI_E_AGAIN = 11,	/* try again later */
	CNI_E_NOT_READY = 50,	/* the plugin is not available */
	CNI_E_REFUSED = 101,	/* cubevs-fp refused the registration (its message says why) */
	CNI_E_CHECK = 102,	/* CHECK found the registration otherwise than the result says */
};

/* What went wrong, for the error object on stdout. */
struct cni_err {
	int code;
	char msg[256];
	char details[512];
};

int cni_fail(struct cni_err *e, int code, const char *details, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* One port mapping the runtime asks for (the portMappings capability). */
struct cni_port {
	uint16_t host;
	uint16_t container;
};

/* The network configuration, the previous result and the environment of one call. */
struct cni_conf {
	json_t *root;			/* the configuration as read */
	const char *version;		/* its cniVersion */
	const char *name;		/* the network's name */
	char sock[108];			/* apiSocket */
	long timeout_s;			/* apiTimeoutSeconds */
	const json_t *prev;		/* prevResult, NULL when none */
	struct cni_port ports[CNI_MAX_PORTS];
	uint32_t nports;
	const char *command, *container, *netns, *ifname;
};

/* What the previous plugin's result says of the pod on CNI_IFNAME. */
struct cni_pod {
	char host_if[16];	/* the host-side interface (not in the sandbox) */
	char host_mac[18];
	char pod_mac[18];
	char ip[16];		/* the pod's IPv4 address, without the prefix */
	char gw[16];		/* its gateway */
};

/* Read stdin and the environment; 0 or -1 with e. */
int cni_conf_read(struct cni_conf *c, struct cni_err *e);
void cni_conf_free(struct cni_conf *c);
/* The pod from c->prev; 0 or -1 with e. */
int cni_pod_of(const struct cni_conf *c, struct cni_pod *p, struct cni_err *e);
/* The sandbox id of (container, ifname) in network name: cni.<16 hex>.<name>, at most 64. */
void cni_sandbox_id(const char *name, const char *container, const char *ifname, char *out,
		    size_t len);
/* Whether id is one cni_sandbox_id() gives for network name (for GC). */
bool cni_id_of_network(const char *id, const char *name);

/* An answer of the API: its status (0 when none came) and body (NULL when none). */
struct cni_reply {
	long status;
	json_t *body;
};

/*
 * One request over the API socket; body NULL for none. 0 with the answer, or -1 with e
 * (CNI_E_AGAIN: nothing answered on the socket in time).
 */
int cni_api(const struct cni_conf *c, const char *method, const char *path, json_t *body,
	    struct cni_reply *r, struct cni_err *e);
/* The API's error message of an answer, or "" */
const char *cni_api_error(const struct cni_reply *r);

#endif /* CVS_CNI_H */
