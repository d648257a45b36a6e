/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: entry point. "serve", "pull", "catalog" and "version" are subcommands only
 * as the exact first argument; anything else is the launcher, which is how the SDKs call us.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/flags.h"
#include "base/log.h"
#include "base/str.h"
#include "cmd/cmd.h"
#include "config/config.h"
#include "cvs_version.h"
#include "isolate/isolate.h"
#include "isolate/proc.h"

/* Runs one install command with HOME set to the server's; 0 or the exit status to use. */
static int
pull_cmd(const char *name, json_t *cmd, const char *home)
{
	struct proc_opts o = {0};
	char **argv = NULL, **env, *line, *err = NULL, *h, sbuf[64], *extra[2] = {NULL, NULL};
	int status, rc;
	size_t j;
	json_t *a;
	pid_t pid;

	json_array_foreach(cmd, j, a)
		strv_push(&argv, json_string_value(a));
	line = strv_join(argv, " ");
	printf("%s: %s\n", name, line);
	fflush(stdout);
	free(line);
	h = str_printf("HOME=%s", home);
	extra[0] = h;
	env = env_build(extra);
	free(h);
	o.argv = argv;
	o.envp = env;
	o.stdin_fd = 0;
	o.stdout_fd = 1;
	o.stderr_fd = 2;
	rc = proc_spawn(&o, &pid, &err);
	strv_free(env);
	strv_free(argv);
	if (rc) {
		fprintf(stderr, "mcp-gateway: pull %s: %s\n", name, err ? err : "failed");
		free(err);
		return 1;
	}
	proc_wait(pid, &status);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		status_format(status, sbuf, sizeof(sbuf));
		fprintf(stderr, "mcp-gateway: pull %s: %s\n", name, sbuf);
		return 1;
	}
	return 0;
}

static int
pull_one(const char *name, json_t *entry, const struct iso_opts *iso)
{
	json_t *inst = json_object_get(entry, "install"), *cmd;
	char *home = NULL, *err = NULL;
	int rc = 0;
	uid_t uid;
	size_t i;

	if (json_array_size(inst) == 0) {
		printf("%s: nothing to pull\n", name);
		fflush(stdout);
		return 0;
	}
	if (iso_pull_home(iso, name, &home, &uid, &err)) {
		fprintf(stderr, "mcp-gateway: pull %s: %s\n", name, err ? err : "failed");
		free(err);
		return 1;
	}
	json_array_foreach(inst, i, cmd) {
		rc = pull_cmd(name, cmd, home);
		if (rc)
			break;
	}
	if (rc == 0 && iso_pull_done(home, uid) < 0) {
		fprintf(stderr, "mcp-gateway: pull %s: chown %s: %s\n", name, home,
			strerror(errno));
		rc = 1;
	}
	free(home);
	return rc;
}

int
cmd_pull(int argc, char **argv)
{
	char *catalog_file = strdup(GW_CATALOG_FILE), *err = NULL;
	struct iso_opts iso;
	struct flag fl[] = {
		{"catalog-file", FLAG_STRING, &catalog_file, "catalog override file (default "
		 GW_CATALOG_FILE ")", false},
		ISO_FLAGS(iso),
	};
	json_t *cat = NULL;
	int next = 0, rc, i;

	iso_opts_init(&iso);
	rc = flags_parse(fl, sizeof(fl) / sizeof(fl[0]), argc, argv,
			 "mcp-gateway pull [flags] <server>...", &next);
	if (rc)
		goto out;
	if (next >= argc) {
		die_msg("usage: mcp-gateway pull <server>...");
		rc = 1;
		goto out;
	}
	if (catalog_load(catalog_file, &cat, &err)) {
		die_msg(err);
		rc = 1;
		goto out;
	}
	for (i = next; i < argc && rc == 0; i++) {
		json_t *e = json_object_get(cat, argv[i]);

		if (e == NULL) {
			char *names = catalog_names(cat), *q = str_quote(argv[i]);

			fprintf(stderr, "mcp-gateway: unknown MCP server %s; supported "
				"servers: %s\n", q, names ? names : "");
			free(names);
			free(q);
			rc = 1;
			break;
		}
		rc = pull_one(argv[i], e, &iso);
	}
out:
	json_decref(cat);
	iso_opts_fini(&iso);
	free(catalog_file);
	free(err);
	return rc;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
cmd_catalog(int argc, char **argv)
{
	char *catalog_file = strdup(GW_CATALOG_FILE), *err = NULL;
	struct flag fl[] = {
		{"catalog-file", FLAG_STRING, &catalog_file, "catalog override file (default "
		 GW_CATALOG_FILE ")", false},
	};
	const char **names = NULL;
	json_t *cat = NULL, *e;
	const char *k;
	size_t n = 0, i;
	int rc;

	rc = flags_parse(fl, 1, argc, argv, "mcp-gateway catalog [flags]", NULL);
	if (rc)
		goto out;
	if (catalog_load(catalog_file, &cat, &err)) {
		die_msg(err);
		rc = 1;
		goto out;
	}
	names = calloc(json_object_size(cat) + 1, sizeof(*names));
	json_object_foreach(cat, k, e)
		names[n++] = k;
	qsort(names, n, sizeof(*names), str_cmp);
	for (i = 0; i < n; i++) {
		const char *d = json_string_value(json_object_get(json_object_get(cat, names[i]),
								  "description"));

		printf("%-20s %s\n", names[i], d ? d : "");
	}
out:
	free(names);
	json_decref(cat);
	free(catalog_file);
	free(err);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : "";

	if (strcmp(sub, "serve") == 0)
		return cmd_serve(argc - 2, argv + 2);
	if (strcmp(sub, "pull") == 0)
		return cmd_pull(argc - 2, argv + 2);
	if (strcmp(sub, "catalog") == 0)
		return cmd_catalog(argc - 2, argv + 2);
	if (strcmp(sub, "version") == 0) {
		printf("%s\n", CVS_VERSION);
		return 0;
	}
	return cmd_launch(argc - 1, argv + 1);
}
