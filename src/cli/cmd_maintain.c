/*
 * cmd_maintain.c — floe maintain <table>: compact, expire snapshots,
 * delete orphan files, rewrite manifests — in that order, under the
 * table's maintenance lock — and floe maintain --break-lock.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* Orphan cleanup under this age needs --force (Spark's procedure: 24 hours). */
#define CLI_ORPHAN_SAFE_AGE_MS INT64_C(86400000)

typedef struct progress_state {
	bool tty;
	bool line_open;
} progress_state;

static const char *step_name(floe_maintain_step s)
{
	switch (s) {
	case FLOE_STEP_COMPACT: return "compact";
	case FLOE_STEP_EXPIRE: return "expire";
	case FLOE_STEP_ORPHANS: return "orphans";
	case FLOE_STEP_REWRITE_MANIFESTS: return "manifests";
	case FLOE_STEP_CONVERT_DELETES: return "convert-deletes";
	default: return "?";
	}
}

static void on_progress(floe_maintain_step step, const char *what, int64_t done, int64_t total,
			void *payload)
{
	progress_state *p = payload;
	if (!p->tty)
		return;
	if (total > 0) {
		int width = 30, fill = (int)(done * width / total);
		char bar[64];
		for (int i = 0; i < width; i++)
			bar[i] = i < fill ? '#' : '.';
		bar[width] = 0;
		fprintf(stderr, "\r\033[K%-9s [%s] %3d%% %s", step_name(step), bar,
			(int)(done * 100 / total), what);
	} else {
		fprintf(stderr, "\r\033[K%-9s %s", step_name(step), what);
	}
	p->line_open = true;
	fflush(stderr);
}

static void human_bytes(char *out, size_t cap, int64_t b)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int i = 0;
	while (v >= 1024 && i < 4) {
		v /= 1024;
		i++;
	}
	snprintf(out, cap, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* The orphans a dry run found: listed in the summary (JSON: an array), not
 * printed as they are found, so --format json stays one object. */
typedef struct orphan_list {
	progress_state ps; /* first: the progress callback shares the payload */
	char **paths;
	int64_t *sizes;
	size_t n, cap;
	bool oom;
} orphan_list;

static int orphan_collect(const char *path, uint64_t size, int64_t mtime_ms, void *payload)
{
	orphan_list *l = payload;
	(void)mtime_ms;
	if (l->oom)
		return 0;
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 64;
		char **np = floe_realloc(l->paths, nc * sizeof(char *));
		if (np)
			l->paths = np;
		int64_t *ns = np ? floe_realloc(l->sizes, nc * sizeof(int64_t)) : NULL;
		if (ns)
			l->sizes = ns;
		if (!np || !ns) {
			l->oom = true;
			return 0;
		}
		l->cap = nc;
	}
	if (!(l->paths[l->n] = floe_strdup(path))) {
		l->oom = true;
		return 0;
	}
	l->sizes[l->n++] = (int64_t)size;
	return 0;
}

static void orphan_list_free(orphan_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		floe_free(l->paths[i]);
	floe_free(l->paths);
	floe_free(l->sizes);
}

/* "; 3 held as pipeline state (floe pipelines list)" */
static const char *held_note(const floe_expire_result *e)
{
	static char buf[128];
	if (!e->snapshots_held_for_pipelines)
		return "";
	snprintf(buf, sizeof(buf), "; %zu held as pipeline state (floe pipelines list says which)",
		 e->snapshots_held_for_pipelines);
	return buf;
}

static void print_summary(const floe_maintain_result *r, bool dry, cli_format fmt,
			  const orphan_list *orphans)
{
	const floe_compact_result *c = &r->compact;
	const floe_expire_result *e = &r->expire;
	const floe_orphan_result *o = &r->orphans;
	const floe_rewrite_manifests_result *m = &r->manifests;
	if (fmt == OUT_JSON) {
		printf("{\"dry_run\":%s,\"duration_ms\":%" PRId64 ",", dry ? "true" : "false",
		       r->duration_ms);
		printf("\"convert_deletes\":{\"run\":%s,\"data_files_read\":%" PRId64
		       ",\"bytes_read\":%" PRId64 ",\"data_files_touched\":%" PRId64
		       ",\"rows_converted\":%" PRId64 ",\"delete_files_written\":%" PRId64
		       ",\"equality_delete_files_removed\":%" PRId64 ",\"snapshot_id\":%" PRId64
		       ",\"duration_ms\":%" PRId64 "},",
		       (r->steps_run & FLOE_STEP_CONVERT_DELETES) ? "true" : "false",
		       r->convert.data_files_read, r->convert.bytes_read, r->convert.data_files_touched,
		       r->convert.rows_converted, r->convert.delete_files_written,
		       r->convert.equality_delete_files_removed, r->convert.snapshot_id,
		       r->convert.duration_ms);
		printf("\"compact\":{\"run\":%s,\"groups\":%zu,\"commits\":%zu,"
		       "\"data_files_rewritten\":%zu,\"data_files_added\":%zu,"
		       "\"delete_files_removed\":%zu,\"bytes_rewritten\":%" PRId64
		       ",\"bytes_added\":%" PRId64 ",\"records\":%" PRId64 "},",
		       (r->steps_run & FLOE_STEP_COMPACT) ? "true" : "false", c->groups, c->commits,
		       c->data_files_rewritten, c->data_files_added, c->delete_files_removed,
		       c->bytes_rewritten, c->bytes_added, c->records_rewritten);
		printf("\"expire\":{\"run\":%s,\"snapshots_expired\":%zu,\"data_files_deleted\":%zu,"
		       "\"delete_files_deleted\":%zu,\"manifests_deleted\":%zu,"
		       "\"manifest_lists_deleted\":%zu,\"bytes_deleted\":%" PRId64
		       ",\"snapshots_held_for_pipelines\":%zu},",
		       (r->steps_run & FLOE_STEP_EXPIRE) ? "true" : "false", e->snapshots_expired,
		       e->data_files_deleted, e->delete_files_deleted, e->manifests_deleted,
		       e->manifest_lists_deleted, e->bytes_deleted, e->snapshots_held_for_pipelines);
		printf("\"orphans\":{\"run\":%s,\"files_scanned\":%zu,\"orphans\":%zu,"
		       "\"files_deleted\":%zu,\"bytes\":%" PRId64 ",\"too_young\":%zu",
		       (r->steps_run & FLOE_STEP_ORPHANS) ? "true" : "false", o->files_scanned,
		       o->files_found, o->files_deleted, o->bytes, o->files_too_young);
		if (orphans) {
			printf(",\"files\":[");
			for (size_t i = 0; i < orphans->n; i++) {
				printf("%s{\"path\":", i ? "," : "");
				cli_json_str(stdout, orphans->paths[i]);
				printf(",\"size\":%" PRId64 "}", orphans->sizes[i]);
			}
			printf("]");
		}
		printf("},");
		printf("\"manifests\":{\"run\":%s,\"before\":%zu,\"after\":%zu,\"entries\":%zu,"
		       "\"snapshot_id\":%" PRId64 "}}\n",
		       (r->steps_run & FLOE_STEP_REWRITE_MANIFESTS) ? "true" : "false",
		       m->manifests_before, m->manifests_after, m->entries, m->snapshot_id);
		return;
	}
	char b1[32], b2[32];
	if (dry) {
		printf("dry run: nothing was changed; this is what maintain would do\n");
		if (r->steps_run & FLOE_STEP_COMPACT) {
			human_bytes(b1, sizeof(b1), c->bytes_rewritten);
			if (c->groups)
				printf("compact:   would rewrite %zu data %s (%s) in %zu %s%s\n",
				       c->data_files_rewritten,
				       cli_plural((long long)c->data_files_rewritten, "file", "files"), b1,
				       c->groups, cli_plural((long long)c->groups, "group", "groups"),
				       c->delete_files_removed ? " and drop the delete files they carry" : "");
			else
				printf("compact:   nothing to rewrite\n");
		}
		if (r->steps_run & FLOE_STEP_EXPIRE)
			printf("expire:    would expire %zu %s%s\n", e->snapshots_expired,
			       cli_plural((long long)e->snapshots_expired, "snapshot", "snapshots"),
			       held_note(e));
		if (r->steps_run & FLOE_STEP_ORPHANS) {
			human_bytes(b1, sizeof(b1), o->bytes);
			printf("orphans:   would delete %zu orphan %s (%s) of %zu listed; %zu too young to "
			       "judge\n",
			       o->files_found, cli_plural((long long)o->files_found, "file", "files"), b1,
			       o->files_scanned, o->files_too_young);
			for (size_t i = 0; orphans && i < orphans->n; i++)
				printf("  orphan: %s\n", orphans->paths[i]);
		}
		if (r->steps_run & FLOE_STEP_REWRITE_MANIFESTS) {
			if (m->manifests_before > m->manifests_after)
				printf("manifests: would rewrite %zu manifests into %zu\n",
				       m->manifests_before, m->manifests_after);
			else
				printf("manifests: nothing to rewrite (%zu %s)\n", m->manifests_before,
				       cli_plural((long long)m->manifests_before, "manifest", "manifests"));
		}
		printf("planned in %.1f s\n", (double)r->duration_ms / 1000.0);
		return;
	}
	if (r->steps_run & FLOE_STEP_CONVERT_DELETES)
		printf("convert:   %" PRId64 " rows of %" PRId64 " data files into %" PRId64
		       " delete files; %" PRId64 " equality delete files removed\n",
		       r->convert.rows_converted, r->convert.data_files_touched,
		       r->convert.delete_files_written, r->convert.equality_delete_files_removed);
	if (r->steps_run & FLOE_STEP_COMPACT) {
		human_bytes(b1, sizeof(b1), c->bytes_rewritten);
		human_bytes(b2, sizeof(b2), c->bytes_added);
		printf("compact:   %zu %s, %zu data %s (%s) -> %zu %s (%s), %zu delete %s removed, "
		       "%zu %s%s\n",
		       c->groups, cli_plural((long long)c->groups, "group", "groups"),
		       c->data_files_rewritten,
		       cli_plural((long long)c->data_files_rewritten, "file", "files"), b1,
		       c->data_files_added, cli_plural((long long)c->data_files_added, "file", "files"),
		       b2, c->delete_files_removed,
		       cli_plural((long long)c->delete_files_removed, "file", "files"), c->commits,
		       cli_plural((long long)c->commits, "commit", "commits"),
		       c->groups_failed ? " (some groups failed)" : "");
	}
	if (r->steps_run & FLOE_STEP_EXPIRE) {
		human_bytes(b1, sizeof(b1), e->bytes_deleted);
		printf("expire:    %zu %s expired; deleted %zu data, %zu delete files, %zu manifests, "
		       "%zu manifest lists (%s)%s\n",
		       e->snapshots_expired,
		       cli_plural((long long)e->snapshots_expired, "snapshot", "snapshots"),
		       e->data_files_deleted, e->delete_files_deleted, e->manifests_deleted,
		       e->manifest_lists_deleted, b1, held_note(e));
	}
	if (r->steps_run & FLOE_STEP_ORPHANS) {
		human_bytes(b1, sizeof(b1), o->bytes);
		printf("orphans:   %zu files listed, %zu orphans (%s), %zu deleted, %zu too young to "
		       "judge\n",
		       o->files_scanned, o->files_found, b1, o->files_deleted, o->files_too_young);
	}
	if (r->steps_run & FLOE_STEP_REWRITE_MANIFESTS)
		printf("manifests: %zu -> %zu manifests (%zu entries)\n", m->manifests_before,
		       m->manifests_after, m->entries);
	printf("done in %.1f s\n", (double)r->duration_ms / 1000.0);
}

int cmd_maintain(int argc, char **argv)
{
	floe_maintain_opts o = FLOE_MAINTAIN_OPTS_INIT;
	const char *ident = NULL;
	bool break_lock = false, force = false;
	int64_t orphan_age = -1;
	cli_format fmt = OUT_TABLE;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, v64;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool has = v != NULL;
#define SIZE_OPT(name, field)                                                                 \
	else if (!strcmp(a, name) && has)                                                     \
	{                                                                                     \
		if (!floe_parse_size(v, &v64) || v64 <= 0)                                    \
			return cli_usage_error("%s: bad size '%s'", name, v);                 \
		field = v64;                                                                  \
		i++;                                                                          \
	}
#define INT_OPT(name, field)                                                                  \
	else if (!strcmp(a, name) && has)                                                     \
	{                                                                                     \
		char *end;                                                                    \
		long n_ = strtol(v, &end, 10);                                                \
		if (*end || n_ < 0)                                                           \
			return cli_usage_error("%s: bad number '%s'", name, v);               \
		field = (int)n_;                                                              \
		i++;                                                                          \
	}
		if (!strcmp(a, "--steps") && has) {
			if (!floe_maintain_parse_steps(v, &o.steps))
				return cli_usage_error("--steps: use compact, expire, orphans, manifests");
			i++;
		} else if (!strcmp(a, "--skip") && has) {
			unsigned skip;
			if (!floe_maintain_parse_steps(v, &skip))
				return cli_usage_error("--skip: use compact, expire, orphans, manifests");
			o.steps &= ~skip;
			i++;
		} else if (!strcmp(a, "--dry-run")) {
			o.dry_run = true;
		} else if (!strcmp(a, "--format") && has) {
			if (!cli_parse_format(v, &fmt) || fmt == OUT_CSV)
				return cli_usage_error("--format must be table or json");
			i++;
		}
		SIZE_OPT("--target-file-size", o.compact.target_file_size)
		SIZE_OPT("--min-file-size", o.compact.min_file_size)
		SIZE_OPT("--max-file-size", o.compact.max_file_size)
		SIZE_OPT("--max-bytes", o.compact.max_bytes)
		SIZE_OPT("--manifest-target-size", o.manifests.target_bytes)
		INT_OPT("--min-input-files", o.compact.min_input_files)
		INT_OPT("--delete-file-threshold", o.compact.delete_file_threshold)
		INT_OPT("--max-commits", o.compact.max_commits)
		INT_OPT("--retain-last", o.expire.retain_last)
		else if (!strcmp(a, "--delete-batch") && has) {
			char *end;
			long n_ = strtol(v, &end, 10);
			if (*end || n_ < 1)
				return cli_usage_error("--delete-batch: bad number '%s'", v);
			o.expire.delete_batch = (size_t)n_;
			i++;
		}
		else if (!strcmp(a, "--sort")) {
			o.compact.sort = true;
		} else if (!strcmp(a, "--branch") && has) {
			o.compact.branch = v;
			i++;
		} else if (!strcmp(a, "--older-than") && has) {
			if (!floe_parse_duration_ms(v, &v64))
				return cli_usage_error("--older-than: bad duration '%s'", v);
			o.expire.older_than_ms = now - v64;
			i++;
		} else if (!strcmp(a, "--orphan-older-than") && has) {
			if (!floe_parse_duration_ms(v, &v64))
				return cli_usage_error("--orphan-older-than: bad duration '%s'", v);
			o.orphans.older_than_ms = now - v64;
			orphan_age = v64;
			i++;
		} else if (!strcmp(a, "--force")) {
			force = true;
		} else if (!strcmp(a, "--lock-uri") && has) {
			o.lock_uri = v;
			i++;
		} else if (!strcmp(a, "--lock-id") && has) {
			o.lock_id = v;
			i++;
		} else if (!strcmp(a, "--break-lock")) {
			break_lock = true;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else {
			return cli_usage_error("unknown or incomplete option '%s' (see floe maintain --help)", a);
		}
#undef SIZE_OPT
#undef INT_OPT
	}
	if (!ident)
		return cli_usage_error("usage: floe maintain <namespace.table> [options] (see floe maintain --help)");
	if (o.steps == 0)
		return cli_usage_error("no step left to run");
	if (o.compact.min_file_size > 0 && o.compact.max_file_size > 0 &&
	    o.compact.min_file_size > o.compact.max_file_size)
		return cli_usage_error("--min-file-size (%" PRId64 " bytes) is above --max-file-size "
				       "(%" PRId64 " bytes): files between them are left alone, so "
				       "min must be at most max",
				       o.compact.min_file_size, o.compact.max_file_size);
	/* Spark's delete-orphan-files refuses under a day for the same reason:
	 * a file a writer wrote but has not committed yet looks like an orphan */
	if (orphan_age >= 0 && orphan_age < CLI_ORPHAN_SAFE_AGE_MS && (o.steps & FLOE_STEP_ORPHANS) &&
	    !force && !o.dry_run)
		return cli_usage_error("--orphan-older-than %" PRId64 "ms is under the safe minimum of "
				       "24h: files that young may belong to a commit in progress; "
				       "add --force to delete them anyway (floe writers keep a lease "
				       "that protects their files, other writers do not)",
				       orphan_age);

	floe_catalog *cat = cli_open_catalog();
	char *ns, *name;
	floe_table *t = NULL;
	floe_error err = {0};
	int rc = 1;
	if (!cat)
		return 1;
	if (!cli_split(ident, &ns, &name)) {
		floe_catalog_free(cat);
		return 1;
	}
	if (floe_table_load(&t, cat, ns, name, &err)) {
		rc = cli_fail(&err);
		goto done;
	}
	if (break_lock) {
		char *uri = NULL, *id = NULL;
		if (floe_maint_lock_target(t, &uri, &id, &err) ||
		    floe_maint_lock_break(o.lock_uri ? o.lock_uri : uri, o.lock_id ? o.lock_id : id,
					  &err)) {
			rc = cli_fail(&err);
		} else {
			printf("removed the maintenance lock of %s\n", o.lock_id ? o.lock_id : id);
			rc = 0;
		}
		floe_free_string(uri);
		floe_free_string(id);
		goto done;
	}
	orphan_list orphans = {{isatty(2) != 0, false}, NULL, NULL, 0, 0, false};
	progress_state *ps = &orphans.ps;
	o.progress = on_progress;
	o.payload = &orphans;
	if (o.dry_run)
		o.orphan_fn = orphan_collect;
	floe_maintain_result r;
	if (floe_maintain(t, &o, &r, &err)) {
		if (ps->line_open)
			fputs("\n", stderr);
		rc = cli_fail(&err);
		orphan_list_free(&orphans);
		goto done;
	}
	if (ps->line_open)
		fputs("\r\033[K", stderr);
	if (orphans.oom) {
		fprintf(stderr, "floe: out of memory listing orphans\n");
		rc = 1;
	} else {
		print_summary(&r, o.dry_run, fmt, o.dry_run ? &orphans : NULL);
		rc = 0;
	}
	orphan_list_free(&orphans);
done:
	floe_table_free(t);
	floe_catalog_free(cat);
	floe_free_string(ns);
	floe_free_string(name);
	return rc;
}
