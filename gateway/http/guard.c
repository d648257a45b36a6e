/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: who may talk to /mcp. The bearer token (compared in constant time), and the
 * Host and Origin checks that keep a web page from reaching the gateway through DNS
 * rebinding.
 */

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http/guard.h"
#include "session/http_conf.h"

bool
guard_token_equal(const char *header, const char *token)
{
	static const char scheme[] = "Bearer ";
	size_t hl, tl, i;
	unsigned char diff = 0;

	if (header == NULL || token == NULL || *token == '\0')
		return false;
	hl = strlen(header);
	tl = strlen(token);
	/* Constant time in the secret: every byte of the token is compared whatever matches. */
	diff |= hl != tl + sizeof(scheme) - 1;
	for (i = 0; i < sizeof(scheme) - 1; i++)
		diff |= (unsigned char)(i < hl ? header[i] : 0) ^ (unsigned char)scheme[i];
	for (i = 0; i < tl; i++) {
		size_t hi = i + sizeof(scheme) - 1;

		diff |= (unsigned char)(hi < hl ? header[hi] : 0) ^ (unsigned char)token[i];
	}
	return diff == 0;
}

/* ---- Host and Origin (DNS rebinding) ------------------------------------------------------ */

/* The host part of "host[:port]" or "[v6]:port", lower-cased, in buf. */
static const char *
host_only(const char *hostport, char *buf, size_t len)
{
	const char *end;
	size_t n, i;

	if (*hostport == '[') {
		end = strchr(hostport, ']');
		if (end == NULL)
			return NULL;
		hostport++;
	} else {
		end = strchr(hostport, ':');
		if (end == NULL)
			end = hostport + strlen(hostport);
	}
	n = (size_t)(end - hostport);
	if (n == 0 || n >= len)
		return NULL;
	for (i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)hostport[i]);
	buf[n] = '\0';
	return buf;
}

/*
 * What the platform sends by default: CubeProxy routes "<port>-<sandbox>.<domain>" with that
 * Host, local clients use localhost or a loopback address.
 */
static bool
host_default(const struct http_conf *conf, const char *host)
{
	char prefix[16];
	size_t n = strlen(host);

	if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
	    (n > 10 && strcmp(host + n - 10, ".localhost") == 0))
		return true;
	if (strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == n)
		return true;
	snprintf(prefix, sizeof(prefix), "%d-", conf->port);
	return strncmp(host, prefix, strlen(prefix)) == 0 && strchr(host, '.') != NULL &&
	       host[strlen(prefix)] != '.';
}

/* A list entry: "*" (anything), "*.example.com" (any subdomain) or an exact name. */
static bool
list_match(char **list, const char *value)
{
	size_t i;

	for (i = 0; list && list[i]; i++) {
		const char *e = list[i];
		size_t el = strlen(e), vl = strlen(value);

		if (strcmp(e, "*") == 0 || strcasecmp(e, value) == 0)
			return true;
		if (e[0] == '*' && e[1] == '.' && vl > el - 1 &&
		    strcasecmp(value + vl - (el - 1), e + 1) == 0)
			return true;
	}
	return false;
}

bool
guard_host_allowed(const struct http_conf *conf, const char *hostport)
{
	char buf[256];
	const char *host;

	if (hostport == NULL)
		return true;	/* HTTP/1.0 without Host: nothing a browser would send */
	host = host_only(hostport, buf, sizeof(buf));
	if (host == NULL)
		return false;
	return host_default(conf, host) || list_match(conf->allowed_hosts, host) ||
	       list_match(conf->allowed_hosts, hostport);
}

bool
guard_origin_allowed(const struct http_conf *conf, const char *origin)
{
	const char *p = strstr(origin, "://");
	char buf[256];
	const char *host;

	if (list_match(conf->allowed_origins, origin))
		return true;
	if (p == NULL)
		return false;	/* "null" and the like: an opaque origin */
	host = host_only(p + 3, buf, sizeof(buf));
	return host && host_default(conf, host);
}
