/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the gateway's config validator and resolver ("mcp" object → server specs,
 * against the built-in catalog) and the catalog parser, on arbitrary text. A config either
 * resolves to servers that all have a command, or fails with a message; nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"
#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *catalog;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct server_list list;
	json_t *cfg = NULL, *cat = NULL;
	char *text, *err = NULL;
	size_t i;
	int rc;

	if (!catalog) {
		if (catalog_load(NULL, &catalog, &err))
			fuzz_fail_at("fuzz_gw_config", "built-in catalog", err);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	rc = config_parse_text(text, &cfg, &err);
	if (rc) {
		if (!err || rc >= 0)
			fuzz_fail_at("fuzz_gw_config", "parse failed without a message", NULL);
		free(err);
		err = NULL;
	} else {
		memset(&list, 0, sizeof(list));
		rc = config_resolve(cfg, catalog, "/srv", "https://github.com", &list, &err);
		if (rc) {
			if (!err || rc >= 0)
				fuzz_fail_at("fuzz_gw_config", "resolve failed without a message",
					     NULL);
			free(err);
			err = NULL;
		} else {
			for (i = 0; i < list.n; i++)
				if (!list.v[i].name || !list.v[i].argv || !list.v[i].argv[0])
					fuzz_fail_at("fuzz_gw_config", "server without a command",
						     list.v[i].name);
		}
		server_list_free(&list);
		json_decref(cfg);
	}

	rc = catalog_parse(text, "fuzz: ", &cat, &err);
	if (rc) {
		if (!err)
			fuzz_fail_at("fuzz_gw_config", "catalog error without a message", NULL);
		free(err);
	} else {
		json_decref(cat);
	}
	free(text);
	return 0;
}
