/*
 * cmd_pipelines.c — floe pipelines list|forget <table>: the pipelines whose
 * state (their newest snapshot, with the committed offsets) a table holds.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"

static void iso_ms(char *out, size_t cap, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

static int pipeline_row(const floe_pipeline_state *s, void *payload)
{
	cli_rows *r = payload;
	char sid[24], ck[24], at[40], until[64];
	snprintf(sid, sizeof(sid), "%lld", (long long)s->snapshot_id);
	snprintf(ck, sizeof(ck), "%lld", (long long)s->checkpoint_id);
	iso_ms(at, sizeof(at), s->timestamp_ms);
	if (s->held_until_ms < 0)
		snprintf(until, sizeof(until), "until forgotten");
	else
		iso_ms(until, sizeof(until), s->held_until_ms);
	const char *cells[] = {s->pipeline_id,
			       s->checkpoint_id >= 0 ? ck : NULL,
			       at,
			       sid,
			       s->complete ? "complete" : "resumable",
			       s->held ? "true" : "false",
			       until,
			       s->source_offsets};
	cli_rows_add(r, cells);
	return 0;
}

int cmd_pipelines(int argc, char **argv)
{
	cli_format fmt = OUT_TABLE;
	const char *pos[3];
	int n_pos = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			if (!cli_parse_format(argv[++i], &fmt))
				return cli_usage_error("--format must be table, json or csv");
		} else if (!strcmp(argv[i], "--wide")) {
			g_cli.wide = true;
		} else if (argv[i][0] != '-' && n_pos < 3) {
			pos[n_pos++] = argv[i];
		} else {
			return cli_usage_error("unknown argument '%s' (see floe pipelines --help)",
					       argv[i]);
		}
	}
	bool list = n_pos == 2 && !strcmp(pos[0], "list");
	bool forget = n_pos == 3 && !strcmp(pos[0], "forget");
	if (!list && !forget)
		return cli_usage_error("usage: floe pipelines list <ns.table> | forget <ns.table> "
				       "<pipeline-id> (see floe pipelines --help)");
	floe_catalog *cat = list ? cli_open_catalog_read_only() : cli_open_catalog();
	floe_table *t = NULL;
	floe_error err = {0};
	char *ns = NULL, *name = NULL;
	int rc = 1;
	if (!cat)
		return 1;
	if (!cli_split(pos[1], &ns, &name))
		goto done;
	if (floe_table_load(&t, cat, ns, name, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	if (list) {
		static const char *cols[] = {"pipeline_id", "last_checkpoint", "last_commit",
					     "snapshot_id", "state",	       "held",
					     "held_until",  "source_offsets"};
		cli_rows *r = cli_rows_new(cols, 8);
		cli_rows_numeric(r, 1);
		cli_rows_numeric(r, 3);
		cli_rows_numeric(r, 5);
		cli_rows_raw_json(r, 7);
		rc = floe_table_pipelines(t, pipeline_row, r, &err);
		if (!rc)
			cli_rows_print(r, fmt, stdout);
		cli_rows_free(r);
		rc = rc ? cli_fail(&err) : 0;
	} else {
		rc = floe_table_forget_pipeline(t, pos[2], &err);
		cli_outcome_table(ns, name);
		cli_outcome_str("pipeline_id", pos[2]);
		if (!rc)
			cli_outcome("forgot pipeline %s of %s.%s: a re-run starts from nothing, and "
				    "expiry may remove its last snapshot",
				    pos[2], ns, name);
		rc = rc ? cli_fail(&err) : 0;
	}
done:
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_free_string(ns);
	floe_free_string(name);
	return rc;
}
