/*
 * cmd_refs.c — floe branch create|drop|fast-forward|replace, floe tag
 * create|drop and floe cherry-pick: write-audit-publish on the public ref
 * API (floe_table_manage_ref, floe_table_cherry_pick).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static bool parse_i64(const char *v, int64_t min, int64_t *out)
{
	char *end = NULL;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (errno || !end || *end || end == v || x < min)
		return false;
	*out = x;
	return true;
}

static int with_table(const char *ident, floe_catalog **cat, floe_table **t)
{
	floe_error err = {0};
	char *ns = NULL, *name = NULL;
	*t = NULL;
	if (!(*cat = cli_open_catalog()))
		return 1;
	if (!cli_split(ident, &ns, &name)) {
		floe_catalog_free(*cat);
		*cat = NULL;
		return 1;
	}
	int rc = floe_table_load(t, *cat, ns, name, &err);
	floe_free_string(ns);
	floe_free_string(name);
	if (rc) {
		floe_catalog_free(*cat);
		*cat = NULL;
		return cli_fail(&err);
	}
	return 0;
}

/* floe branch|tag <verb> <table> <name> [<to>] [options] */
static int refs_cmd(int argc, char **argv, bool tag)
{
	const char *what = tag ? "tag" : "branch";
	const char *pos[4];
	int n_pos = 0;
	floe_ref_opts o = FLOE_REF_OPTS_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int64_t *num = !strcmp(a, "--snapshot")		     ? &o.snapshot_id
			       : !strcmp(a, "--min-snapshots-to-keep") ? &o.min_snapshots_to_keep
			       : !strcmp(a, "--max-snapshot-age-ms")   ? &o.max_snapshot_age_ms
			       : !strcmp(a, "--max-ref-age-ms")	     ? &o.max_ref_age_ms
								     : NULL;
		if (num) {
			if (!v || !parse_i64(v, num == &o.snapshot_id ? 0 : 1, num))
				return cli_usage_error("%s needs a %s", a,
						       num == &o.snapshot_id ? "snapshot id"
									     : "positive number");
			i++;
		} else if (!strcmp(a, "--from")) {
			if (!v)
				return cli_usage_error("--from needs a branch or tag");
			o.from = v;
			i++;
		} else if (a[0] != '-' && n_pos < 4) {
			pos[n_pos++] = a;
		} else {
			return cli_usage_error("unknown argument '%s' (see floe %s --help)", a, what);
		}
	}
	const char *verb = n_pos ? pos[0] : "";
	int want = 3;
	if (!strcmp(verb, "create"))
		o.action = tag ? FLOE_REF_CREATE_TAG : FLOE_REF_CREATE_BRANCH;
	else if (!strcmp(verb, "drop"))
		o.action = tag ? FLOE_REF_DROP_TAG : FLOE_REF_DROP_BRANCH;
	else if (!tag && !strcmp(verb, "replace"))
		o.action = FLOE_REF_REPLACE_BRANCH;
	else if (!tag && !strcmp(verb, "fast-forward")) {
		o.action = FLOE_REF_FAST_FORWARD;
		want = 4;
	} else
		return cli_usage_error(tag ? "usage: floe tag create|drop <ns.table> <name> (see floe "
					     "tag --help)"
					   : "usage: floe branch create|drop|replace|fast-forward "
					     "<ns.table> <name> ... (see floe branch --help)");
	if (n_pos != want)
		return cli_usage_error("floe %s %s: %s", what, verb,
				       want == 4 ? "needs <ns.table> <branch> <to-ref>"
						 : "needs <ns.table> <name>");
	if (want == 4) {
		if (o.from || o.snapshot_id >= 0)
			return cli_usage_error("fast-forward takes the ref to move to as its third "
					       "argument");
		o.from = pos[3];
	}
	if (o.action == FLOE_REF_REPLACE_BRANCH && !o.from && o.snapshot_id < 0)
		return cli_usage_error("floe branch replace needs --snapshot ID or --from REF");
	if ((o.action == FLOE_REF_DROP_TAG || o.action == FLOE_REF_DROP_BRANCH) &&
	    (o.from || o.snapshot_id >= 0 || o.min_snapshots_to_keep > 0 ||
	     o.max_snapshot_age_ms > 0 || o.max_ref_age_ms > 0))
		return cli_usage_error("floe %s drop takes no options", what);
	o.name = pos[2];
	floe_catalog *cat = NULL;
	floe_table *t = NULL;
	floe_error err = {0};
	int rc = with_table(pos[1], &cat, &t);
	if (rc)
		return rc;
	rc = floe_table_manage_ref(t, &o, &err);
	if (rc) {
		rc = cli_fail(&err);
	} else if (o.action == FLOE_REF_DROP_TAG || o.action == FLOE_REF_DROP_BRANCH) {
		cli_outcome("dropped %s %s of %s", what, o.name, pos[1]);
	} else {
		int64_t id = -1;
		bool is_tag = false;
		(void)floe_table_ref(t, o.name, &id, &is_tag); /* the ref's new head */
		cli_outcome("%s %s %s of %s: at snapshot %lld",
			    !strcmp(verb, "create")    ? "created"
			    : !strcmp(verb, "replace") ? "replaced"
						       : "fast-forwarded",
			    what, o.name, pos[1], (long long)id);
	}
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc;
}

int cmd_branch(int argc, char **argv)
{
	return refs_cmd(argc, argv, false);
}

int cmd_tag(int argc, char **argv)
{
	return refs_cmd(argc, argv, true);
}

int cmd_cherry_pick(int argc, char **argv)
{
	const char *pos[2];
	int n_pos = 0;
	const char *branch = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--branch") && i + 1 < argc)
			branch = argv[++i];
		else if (argv[i][0] != '-' && n_pos < 2)
			pos[n_pos++] = argv[i];
		else
			return cli_usage_error("unknown argument '%s' (see floe cherry-pick --help)",
					       argv[i]);
	}
	int64_t id;
	if (n_pos != 2 || !parse_i64(pos[1], 0, &id))
		return cli_usage_error("usage: floe cherry-pick <ns.table> <snapshot-id> [--branch B]");
	floe_catalog *cat = NULL;
	floe_table *t = NULL;
	floe_error err = {0};
	int64_t head = -1;
	int rc = with_table(pos[0], &cat, &t);
	if (rc)
		return rc;
	rc = floe_table_cherry_pick(t, id, branch, &head, &err);
	if (rc)
		rc = cli_fail(&err);
	else if (head == id)
		cli_outcome("%s of %s fast-forwarded to snapshot %lld", branch ? branch : "main",
			    pos[0], (long long)id);
	else
		cli_outcome("picked snapshot %lld into %s of %s as snapshot %lld", (long long)id,
			    branch ? branch : "main", pos[0], (long long)head);
	floe_table_free(t);
	floe_catalog_free(cat);
	return rc;
}
