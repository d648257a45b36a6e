/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one option parser of cubevs-fpctl: every command, the global options included, is a
 * table of options (struct ctl_opt) that this turns into getopt_long's, taking each value as
 * its kind says. Numbers are whole and in range, or the command stops with exit status 2.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

#define CTL_KEY_BASE	256	/* getopt values of options without a short form */

static int
opt_number(const struct ctl_opt *o, const char *arg, uint32_t *n)
{
	if (!cvs_parse_u32(arg, o->lo, o->hi, n))
		return 0;
	ctl_err("--%s wants a whole number%s%s %u..%u, got '%s'", o->name, o->unit ? " of " : "",
		o->unit ? o->unit : "", o->lo, o->hi, arg);
	return -1;
}

static int
opt_take(const struct ctl_opt *o, struct ctl_val *v, const char *arg)
{
	uint32_t n = 0;

	if ((o->kind == CTL_NUM || o->kind == CTL_NUMS) && opt_number(o, arg, &n))
		return -1;
	if ((o->kind == CTL_STRS || o->kind == CTL_NUMS) && !v->list)
		v->list = json_array();
	switch (o->kind) {
	case CTL_FLAG:
		break;
	case CTL_STR:
		v->str = arg;
		break;
	case CTL_NUM:
		v->num = n;
		break;
	case CTL_STRS:
		json_array_append_new(v->list, json_string(arg));
		break;
	case CTL_NUMS:
		json_array_append_new(v->list, json_integer(n));
		break;
	}
	v->set = true;
	return 0;
}

/* The getopt_long tables for CMD: its own options, then --help and --json. */
static void
opt_tables(const struct ctl_cmd *cmd, struct option *lo, char *shorts)
{
	const struct ctl_opt *o;
	int i, n = 0, s = 0;

	if (cmd->stop_at_arg)
		shorts[s++] = '+';
	shorts[s++] = 'h';
	shorts[s++] = 'j';
	for (i = 0; cmd->opts && cmd->opts[i].name; i++) {
		o = &cmd->opts[i];
		lo[n++] = (struct option){ o->name,
			o->kind == CTL_FLAG ? no_argument : required_argument, NULL,
			o->key ? o->key : CTL_KEY_BASE + i };
		if (o->key) {
			shorts[s++] = o->key;
			if (o->kind != CTL_FLAG)
				shorts[s++] = ':';
		}
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n++] = (struct option){ "json", no_argument, NULL, 'j' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	shorts[s] = '\0';
}

/* Which entry of CMD's table getopt's value KEY stands for, or -1. */
static int
opt_index(const struct ctl_cmd *cmd, int key)
{
	int i;

	if (key >= CTL_KEY_BASE)
		return key - CTL_KEY_BASE;
	for (i = 0; cmd->opts && cmd->opts[i].name; i++)
		if (cmd->opts[i].key == key)
			return i;
	return -1;
}

static int
usage_error(const struct ctl_cmd *cmd)
{
	fputs(cmd->usage, stderr);
	return EXIT_USAGE;
}

int
ctl_parse(struct ctl *c, const struct ctl_cmd *cmd, int argc, char **argv,
	  struct ctl_args *a)
{
	struct option lo[CTL_MAX_OPTS + 3];
	char shorts[2 * CTL_MAX_OPTS + 4];
	int i, key;

	memset(a, 0, sizeof(*a));
	for (i = 0; cmd->opts && cmd->opts[i].name; i++)
		;
	if (i > CTL_MAX_OPTS) {
		ctl_err("internal error: %s has more than %d options", cmd->name, CTL_MAX_OPTS);
		abort();
	}
	a->opts = cmd->opts;
	opt_tables(cmd, lo, shorts);
	optind = 0;
	while ((key = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (key == 'h') {
			fputs(cmd->usage, stdout);
			return EXIT_OK;
		}
		if (key == 'j') {
			c->json = true;
			continue;
		}
		i = opt_index(cmd, key);
		if (i < 0)
			return usage_error(cmd);
		if (opt_take(&cmd->opts[i], &a->val[i], optarg))
			return EXIT_USAGE;
	}
	for (i = 0; cmd->opts && cmd->opts[i].name; i++)
		if (cmd->opts[i].required && !a->val[i].set)
			return usage_error(cmd);
	a->pos = argv + optind;
	a->npos = argc - optind;
	if (a->npos < cmd->min_args || a->npos > cmd->max_args)
		return usage_error(cmd);
	return -1;
}

void
ctl_args_free(struct ctl_args *a)
{
	int i;

	for (i = 0; i < CTL_MAX_OPTS; i++)
		json_decref(a->val[i].list);
	memset(a, 0, sizeof(*a));
}

static const struct ctl_val *
val_of(const struct ctl_args *a, const char *name)
{
	int i;

	for (i = 0; a->opts && a->opts[i].name; i++)
		if (!strcmp(a->opts[i].name, name))
			return &a->val[i];
	/* A command asking for an option its table lacks: a bug the first run of it shows. */
	ctl_err("internal error: no option --%s", name);
	abort();
}

bool
ctl_flag(const struct ctl_args *a, const char *name)
{
	return val_of(a, name)->set;
}

const char *
ctl_str(const struct ctl_args *a, const char *name)
{
	return val_of(a, name)->str;
}

uint32_t
ctl_num(const struct ctl_args *a, const char *name, uint32_t def)
{
	const struct ctl_val *v = val_of(a, name);

	return v->set ? v->num : def;
}

json_t *
ctl_list(const struct ctl_args *a, const char *name)
{
	return val_of(a, name)->list;
}
