/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the control API's route table and the registry's handlers (api_dispatch:
 * method, path, body) on a
 * registry holding two sandboxes, with data-path callbacks that only record. An input is up
 * to four requests:
 *
 *   request = method:1 path:NUL-terminated body_len:2 (big endian) body:body_len
 *
 * Checks besides the sanitizers: every answer has a JSON body with "error" when the status
 * is >= 400; a refused request (4xx) leaves the registry exactly as it was; the allocators'
 * counts always match the registrations; the data path saw a host port for each exposed one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "api.h"
#include "fail.h"
#include "fake_dp.h"
#include "reg_api.h"
#include "registry.h"

#define FUZZ_SANDBOXES	8
#define PRELOAD_A	"{\"iface\":\"sb1\",\"exposedPorts\":[8080,9090]}"
#define PRELOAD_B	"{\"iface\":\"sb2\",\"exposedPorts\":[80],\"policy\":" \
			"{\"allowInternetAccess\":false,\"allowOut\":[\"198.18.0.0/15\"]}}"

/* sb0 .. sb9 exist; sb9 refuses to attach. */
static struct fake_dp fdp = { .prefix = "sb", .busy = "sb9" };

static char *
state_of(struct registry *r)
{
	json_t *j = reg_list(r);
	char *s;

	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	return s;
}

static void
fuzz_fail(const char *what)
{
	fuzz_fail_at("fuzz_api", what, NULL);
}

static void
counts_check(struct registry *r)
{
	uint32_t i, n = 0, ports = 0;

	for (i = 0; i < r->max_sandboxes; i++)
		if (r->by_slot[i]) {
			n++;
			ports += r->by_slot[i]->nports;
			if (r->by_slot[i]->slot != i)
				fuzz_fail("sandbox in the wrong slot");
		}
	if (n != r->count || r->slots.used != n || r->ips.used != n)
		fuzz_fail("slot or address count drifted");
	if (hostports_used(&r->hostports) != ports || (uint32_t)fdp.hostports != ports)
		fuzz_fail("host port count drifted");
	if ((uint32_t)fdp.attached != n)
		fuzz_fail("a registered sandbox is not attached, or a removed one still is");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "PUT", "DELETE", "POST", "PATCH", "" };
	static struct registry reg;
	static struct api_routes routes;
	struct api_reply rep;
	struct reg_req q;
	char err[512];
	int k, status;

	fdp.hostports = fdp.attached = 0;
	if (reg_init(&reg, FUZZ_SANDBOXES, 20000, 20015, htonl(0xc0a80000), 26,
		     htonl(0xc6120001), &fake_dp_ops, &fdp))
		fuzz_fail("reg_init");
	api_routes_init(&routes);
	if (reg_api_register(&routes, &reg))
		fuzz_fail("reg_api_register");
	if (reg_req_parse(&reg, PRELOAD_A, strlen(PRELOAD_A), &q, err, sizeof(err)) ||
	    reg_put(&reg, "a", &q, NULL, err, sizeof(err)) != REG_CREATED)
		fuzz_fail("preload a");
	if (reg_req_parse(&reg, PRELOAD_B, strlen(PRELOAD_B), &q, err, sizeof(err)) ||
	    reg_put(&reg, "b", &q, NULL, err, sizeof(err)) != REG_CREATED)
		fuzz_fail("preload b");
	counts_check(&reg);

	for (k = 0; k < 4 && size > 0; k++) {
		const char *m = methods[data[0] % 6];
		const uint8_t *nul = memchr(data + 1, 0, size - 1);
		size_t plen, blen;
		char *path, *body, *before, *after;

		if (!nul)
			break;
		plen = (size_t)(nul - (data + 1));
		path = strndup((const char *)data + 1, plen);
		data = nul + 1;
		size -= plen + 2;
		blen = size >= 2 ? ((size_t)data[0] << 8 | data[1]) : 0;
		if (size >= 2) {
			data += 2;
			size -= 2;
		}
		if (blen > size)
			blen = size;
		/* Exactly the body bytes, no terminator: an over-read is caught. */
		body = malloc(blen ? blen : 1);
		memcpy(body, data, blen);
		data += blen;
		size -= blen;

		before = state_of(&reg);
		api_dispatch(&routes, m, path, blen ? body : NULL, blen, NULL, &rep);
		status = rep.status;
		after = state_of(&reg);
		if (status < 200 || status > 599)
			fuzz_fail("status out of range");
		if (status >= 400 && !json_is_string(json_object_get(rep.json, "error")))
			fuzz_fail("error answer without an error message");
		if ((status == 405) != (rep.allow[0] != '\0'))
			fuzz_fail("405 without Allow, or Allow without 405");
		if (status >= 400 && status < 500 && strcmp(before, after))
			fuzz_fail("a refused request changed the registry");
		if (status == 200 || status == 201) {
			char *text = json_dumps(rep.json, JSON_COMPACT);

			if (!text)
				fuzz_fail("answer cannot be serialised");
			free(text);
		}
		counts_check(&reg);
		api_reply_free(&rep);
		free(before);
		free(after);
		free(path);
		free(body);
	}
	reg_clear(&reg);
	counts_check(&reg);
	reg_fini(&reg);
	return 0;
}
