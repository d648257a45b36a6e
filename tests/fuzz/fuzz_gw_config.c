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

#include "gw.h"

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
			abort();
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	rc = config_parse_text(text, &cfg, &err);
	if (rc) {
		if (!err || rc >= 0)
			abort();
		free(err);
		err = NULL;
	} else {
		memset(&list, 0, sizeof(list));
		rc = config_resolve(cfg, catalog, "/srv", "https://github.com", &list, &err);
		if (rc) {
			if (!err || rc >= 0)
				abort();
			free(err);
			err = NULL;
		} else {
			for (i = 0; i < list.n; i++)
				if (!list.v[i].name || !list.v[i].argv || !list.v[i].argv[0])
					abort();
		}
		server_list_free(&list);
		json_decref(cfg);
	}

	rc = catalog_parse(text, "fuzz: ", &cat, &err);
	if (rc) {
		if (!err)
			abort();
		free(err);
	} else {
		json_decref(cat);
	}
	free(text);
	return 0;
}
