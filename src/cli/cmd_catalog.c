/*
 * cmd_catalog.c — floe namespace ..., floe table ..., floe add-files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* --property k=v collected into an array (argv strings are split in place). */
typedef struct prop_list {
	floe_prop items[256];
	size_t n;
} prop_list;

static bool add_prop(prop_list *p, char *kv)
{
	char *eq = strchr(kv, '=');
	if (!eq || eq == kv || p->n == 256) {
		cli_usage_error("expected key=value, got '%s'", kv);
		return false;
	}
	*eq = 0;
	p->items[p->n].key = kv;
	p->items[p->n].value = eq + 1;
	p->n++;
	return true;
}

static int print_name(const char *ns, const char *name, void *payload)
{
	(void)payload;
	if (name)
		printf("%s.%s\n", ns, name);
	else
		printf("%s\n", ns);
	return 0;
}

typedef struct ns_list {
	char *items[1024];
	size_t n;
} ns_list;

static int print_prop(const char *k, const char *v, void *payload)
{
	(void)payload;
	printf("%s=%s\n", k, v);
	return 0;
}

/* "set 2 properties and removed 1 of db.t" */
static void outcome_set(const char *what, const char *name, size_t n_set, size_t n_removed)
{
	char removed[64] = "";
	cli_outcome_str(what, name);
	cli_outcome_i64("properties_set", (long long)n_set);
	cli_outcome_i64("properties_removed", (long long)n_removed);
	if (n_removed)
		snprintf(removed, sizeof(removed), "%sremoved %zu", n_set ? " and " : "", n_removed);
	if (n_set)
		cli_outcome("set %zu %s%s of %s %s", n_set, cli_plural((long long)n_set, "property",
								      "properties"),
			    removed, what, name);
	else
		cli_outcome("%s %s of %s %s", removed,
			    cli_plural((long long)n_removed, "property", "properties"), what, name);
}

int cmd_namespace(int argc, char **argv)
{
	floe_error err = {0};
	floe_catalog *cat;
	int rc;
	if (argc < 2)
		return cli_usage_error("usage: floe namespace create|list|show|drop|set ...");
	const char *sub = argv[1];
	bool read_only = !strcmp(sub, "list") || !strcmp(sub, "show");
	if (!(cat = read_only ? cli_open_catalog_read_only() : cli_open_catalog()))
		return 1;
	if (!strcmp(sub, "create")) {
		prop_list props = {.n = 0};
		const char *ns = NULL;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--property") && i + 1 < argc) {
				if (!add_prop(&props, argv[++i])) {
					floe_catalog_free(cat);
					return 2;
				}
			} else if (!ns && argv[i][0] != '-') {
				ns = argv[i];
			} else {
				floe_catalog_free(cat);
				return cli_usage_error("usage: floe namespace create <ns> [--property k=v]...");
			}
		}
		if (!ns) {
			floe_catalog_free(cat);
			return cli_usage_error("usage: floe namespace create <ns> [--property k=v]...");
		}
		rc = floe_catalog_create_namespace(cat, ns, props.items, props.n, &err);
		if (!rc) {
			cli_outcome_str("namespace", ns);
			cli_outcome("created namespace %s%s", ns, props.n ? " with properties" : "");
		}
	} else if (!strcmp(sub, "list")) {
		rc = floe_catalog_list_namespaces(cat, argc > 2 ? argv[2] : NULL, print_name, NULL, &err);
	} else if (!strcmp(sub, "show") && argc == 3) {
		rc = floe_catalog_namespace_properties(cat, argv[2], print_prop, NULL, &err);
	} else if (!strcmp(sub, "drop") && argc == 3) {
		rc = floe_catalog_drop_namespace(cat, argv[2], &err);
		if (!rc) {
			cli_outcome_str("namespace", argv[2]);
			cli_outcome("dropped namespace %s", argv[2]);
		}
	} else if (!strcmp(sub, "set") && argc >= 4) {
		prop_list props = {.n = 0};
		const char *remove[256];
		size_t n_remove = 0;
		for (int i = 3; i < argc; i++) {
			if (!strcmp(argv[i], "--unset") && i + 1 < argc && n_remove < 256)
				remove[n_remove++] = argv[++i];
			else if (!add_prop(&props, argv[i])) {
				floe_catalog_free(cat);
				return 2;
			}
		}
		rc = floe_catalog_set_namespace_properties(cat, argv[2], props.items, props.n, remove,
							   n_remove, &err);
		if (!rc)
			outcome_set("namespace", argv[2], props.n, n_remove);
	} else {
		floe_catalog_free(cat);
		return cli_usage_error("usage: floe namespace create|list [parent]|show <ns>|drop "
				       "<ns>|set <ns> k=v... [--unset k]");
	}
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}

static char *read_text_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && n < (16 << 20) &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = floe_malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			floe_free(buf);
			buf = NULL;
		} else {
			buf[n] = 0;
		}
	}
	fclose(f);
	return buf;
}

static int table_create(floe_catalog *cat, int argc, char **argv)
{
	floe_table_create_opts o = FLOE_TABLE_CREATE_OPTS_INIT;
	prop_list props = {.n = 0};
	const char *ident = NULL;
	char *schema_file = NULL, *ns = NULL, *name = NULL;
	floe_error err = {0};
	int rc;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--schema") && v) {
			o.schema = v;
			i++;
		} else if ((!strcmp(a, "--partition") || !strcmp(a, "--partition-by")) && v) {
			o.partition_by = v;
			i++;
		} else if ((!strcmp(a, "--sort") || !strcmp(a, "--sort-by")) && v) {
			o.sort_by = v;
			i++;
		} else if (!strcmp(a, "--property") && v) {
			if (!add_prop(&props, argv[++i]))
				return 2;
		} else if (!strcmp(a, "--format-version") && v) {
			char *end;
			long fv = strtol(v, &end, 10);
			o.format_version = *end || fv < 1 ? -1 : (int)fv;
			i++;
		} else if (!strcmp(a, "--location") && v) {
			o.location = v;
			i++;
		} else if (!ident && a[0] != '-') {
			ident = a;
		} else {
			return cli_usage_error("table create: unexpected '%s'", a);
		}
	}
	if (!ident || !o.schema)
		return cli_usage_error(
			"usage: floe table create <ns.table> --schema '<columns>|<json>|@file' "
			"[--partition 'bucket(16, id), day(ts)'] [--sort 'id desc'] [--property k=v]... "
			"[--format-version 1|2|3] [--location URI]");
	if (o.format_version < 0 || o.format_version > 3)
		return cli_usage_error("--format-version must be 1, 2 or 3");
	if (o.schema[0] == '@') {
		schema_file = read_text_file(o.schema + 1);
		if (!schema_file) {
			fprintf(stderr, "floe: cannot read schema file '%s'\n", o.schema + 1);
			return 1;
		}
		o.schema = schema_file;
	}
	o.properties = props.items;
	o.n_properties = props.n;
	if (!cli_split(ident, &ns, &name)) {
		floe_free(schema_file);
		return 1;
	}
	floe_table *t = NULL;
	rc = floe_table_create(&t, cat, ns, name, &o, &err);
	if (!rc) {
		cli_outcome_table(ns, name);
		cli_outcome_str("location", floe_table_location(t));
		cli_outcome("created table %s.%s at %s", ns, name, floe_table_location(t));
	}
	floe_table_free(t);
	floe_free_string(ns);
	floe_free_string(name);
	floe_free(schema_file);
	return rc ? cli_fail(&err) : 0;
}

static int table_show(floe_catalog *cat, int argc, char **argv)
{
	bool json = false;
	const char *ident = NULL;
	char *ns, *name;
	floe_error err = {0};
	floe_table *t;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "--metadata"))
			json = true;
		else if (!strcmp(argv[i], "--format") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "json") || !strcmp(argv[i + 1], "text") ||
			  !strcmp(argv[i + 1], "table")))
			json = !strcmp(argv[++i], "json");
		else if (!ident && argv[i][0] != '-')
			ident = argv[i];
		else
			return cli_usage_error("usage: floe table show <ns.table> [--format text|json]");
	}
	if (!ident)
		return cli_usage_error("usage: floe table show <ns.table> [--format text|json]");
	if (!cli_split(ident, &ns, &name))
		return 1;
	int rc = floe_table_load(&t, cat, ns, name, &err);
	if (!rc) {
		rc = json ? floe_table_metadata_json(t, 2, cli_stdout_write, NULL, &err)
			  : floe_table_describe(t, cli_stdout_write, NULL, &err);
		floe_table_free(t);
	}
	floe_free_string(ns);
	floe_free_string(name);
	return rc ? cli_fail(&err) : 0;
}

static int table_set(floe_catalog *cat, int argc, char **argv)
{
	prop_list props = {.n = 0};
	const char *remove[256];
	size_t n_remove = 0;
	char *ns, *name;
	floe_error err = {0};
	floe_table *t;
	if (argc < 2)
		return cli_usage_error("usage: floe table set <ns.table> k=v... [--unset k]...");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--unset") && i + 1 < argc && n_remove < 256)
			remove[n_remove++] = argv[++i];
		else if (!add_prop(&props, argv[i]))
			return 2;
	}
	if (!cli_split(argv[0], &ns, &name))
		return 1;
	int rc = floe_table_load(&t, cat, ns, name, &err);
	if (!rc) {
		rc = floe_table_set_properties(t, props.items, props.n, remove, n_remove, &err);
		if (!rc) {
			char full[1024];
			snprintf(full, sizeof(full), "%s.%s", ns, name);
			outcome_set("table", full, props.n, n_remove);
		}
		floe_table_free(t);
	}
	floe_free_string(ns);
	floe_free_string(name);
	return rc ? cli_fail(&err) : 0;
}

#define ALTER_USAGE                                                                              \
	"usage: floe table alter <ns.table> [--add-column PATH TYPE [--doc TEXT]] [--widen PATH "   \
	"TYPE] [--make-optional PATH] [--add-partition EXPR] [--drop-partition FIELD] "          \
	"[--replace-partition FIELD EXPR] [--write-order ORDER]..."

/* floe table alter: schema, partition and write-order evolution in one commit. */
static int table_alter(floe_catalog *cat, int argc, char **argv)
{
	floe_alter_op ops[128];
	size_t n = 0;
	char *ns, *name, *summary = NULL;
	floe_error err = {0};
	floe_table *t;
	if (argc < 2)
		return cli_usage_error(ALTER_USAGE);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int need = 0;
		floe_alter_op o = {0};
		if (!strcmp(a, "--doc") && i + 1 < argc && n &&
		    ops[n - 1].kind == FLOE_ALTER_ADD_COLUMN) {
			ops[n - 1].doc = argv[++i];
			continue;
		}
		if (!strcmp(a, "--add-column"))
			o.kind = FLOE_ALTER_ADD_COLUMN, need = 2;
		else if (!strcmp(a, "--widen") || !strcmp(a, "--update-type"))
			o.kind = FLOE_ALTER_UPDATE_TYPE, need = 2;
		else if (!strcmp(a, "--make-optional") || !strcmp(a, "--drop-not-null"))
			o.kind = FLOE_ALTER_MAKE_OPTIONAL, need = 1;
		else if (!strcmp(a, "--add-partition"))
			o.kind = FLOE_ALTER_ADD_PARTITION, need = 1;
		else if (!strcmp(a, "--drop-partition"))
			o.kind = FLOE_ALTER_DROP_PARTITION, need = 1;
		else if (!strcmp(a, "--replace-partition"))
			o.kind = FLOE_ALTER_REPLACE_PARTITION, need = 2;
		else if (!strcmp(a, "--write-order") || !strcmp(a, "--sort"))
			o.kind = FLOE_ALTER_WRITE_ORDER, need = 1;
		else
			return cli_usage_error("table alter: unexpected '%s'\n" ALTER_USAGE, a);
		if (i + need >= argc)
			return cli_usage_error("table alter: %s needs %d %s", a, need,
					       need == 1 ? "argument" : "arguments");
		if (n == sizeof(ops) / sizeof(ops[0]))
			return cli_usage_error("table alter: at most 128 changes at once");
		bool column = o.kind <= FLOE_ALTER_MAKE_OPTIONAL;
		if (column) {
			o.path = argv[i + 1];
			o.arg = need == 2 ? argv[i + 2] : NULL;
		} else {
			o.arg = argv[i + 1];
			o.arg2 = need == 2 ? argv[i + 2] : NULL;
		}
		i += need;
		ops[n++] = o;
	}
	if (!n)
		return cli_usage_error("table alter: no change given\n" ALTER_USAGE);
	if (!cli_split(argv[0], &ns, &name))
		return 1;
	int rc = floe_table_load(&t, cat, ns, name, &err);
	if (!rc) {
		rc = floe_table_alter(t, ops, n, &summary, &err);
		if (!rc)
			cli_outcome("altered table %s.%s: %s", ns, name,
				    summary && *summary ? summary : "nothing to change");
		floe_table_free(t);
	}
	floe_free(summary);
	floe_free_string(ns);
	floe_free_string(name);
	return rc ? cli_fail(&err) : 0;
}

static int collect_ns(const char *ns, const char *name, void *payload)
{
	ns_list *l = payload;
	(void)name;
	if (l->n < sizeof(l->items) / sizeof(l->items[0]))
		l->items[l->n++] = floe_strdup(ns);
	return 0;
}

static int list_all_tables(floe_catalog *cat, const char *parent, int depth, floe_error *err)
{
	ns_list l = {.n = 0};
	int rc = floe_catalog_list_namespaces(cat, parent, collect_ns, &l, err);
	for (size_t i = 0; i < l.n && !rc; i++) {
		if (!l.items[i])
			continue;
		rc = floe_catalog_list_tables(cat, l.items[i], print_name, NULL, err);
		if (!rc && depth < 16)
			rc = list_all_tables(cat, l.items[i], depth + 1, err);
	}
	for (size_t i = 0; i < l.n; i++)
		floe_free(l.items[i]);
	return rc;
}

/* Files of any snapshot outside the table location (add-files of a user's own
 * files): counted, and the first one named. */
typedef struct external_ctx {
	const char *loc;
	size_t loc_len;
	floe_table *t;
	size_t n;
	char first[1024];
} external_ctx;

static int external_file(const floe_table_file *f, void *payload)
{
	external_ctx *c = payload;
	if (strncmp(f->path, c->loc, c->loc_len) || f->path[c->loc_len] != '/') {
		if (!c->n++)
			snprintf(c->first, sizeof(c->first), "%s", f->path);
	}
	return 0;
}

static int external_snapshot(const floe_snapshot_info *s, void *payload)
{
	external_ctx *c = payload;
	floe_error err = {0};
	return floe_table_files(c->t, s->snapshot_id, external_file, c, &err);
}

/*
 * --purge deletes every file the table references, also a user's own files
 * registered with add-files from elsewhere (Java's purge does the same).
 * Refused for those unless --purge-external-files; returns the exit code
 * (0: nothing outside, go on).
 */
static int refuse_external_purge(floe_catalog *cat, const char *ns, const char *name)
{
	floe_table *t = NULL;
	floe_error err = {0};
	if (floe_table_load(&t, cat, ns, name, &err))
		return cli_fail(&err);
	char loc[4096];
	snprintf(loc, sizeof(loc), "%s", floe_table_location(t));
	external_ctx c = {loc, strlen(loc), t, 0, ""};
	while (c.loc_len && c.loc[c.loc_len - 1] == '/')
		c.loc_len--;
	int rc = floe_table_snapshots(t, external_snapshot, &c, &err);
	floe_table_free(t);
	if (rc)
		return cli_fail(&err);
	if (!c.n)
		return 0;
	fprintf(stderr,
		"floe: not dropped: %s.%s references %zu %s outside its location (%s), e.g. %s; "
		"--purge would delete them too (as Java's purge does). Drop without --purge to keep "
		"every file, or add --purge-external-files to delete them as well\n",
		ns, name, c.n, cli_plural((long long)c.n, "file", "files"), c.loc, c.first);
	return 1;
}

int cmd_table(int argc, char **argv)
{
	floe_error err = {0};
	floe_catalog *cat;
	int rc = 0;
	if (argc < 2)
		return cli_usage_error("usage: floe table create|list|show|drop|rename|set|alter|properties ...");
	const char *sub = argv[1];
	if (!strcmp(sub, "properties")) {
		/* the properties floe knows; needs no catalog */
		bool md = !(argc == 4 && !strcmp(argv[2], "--format") && !strcmp(argv[3], "json"));
		if (argc != 2 && !(argc == 4 && !strcmp(argv[2], "--format") &&
				   (!strcmp(argv[3], "json") || !strcmp(argv[3], "markdown"))))
			return cli_usage_error("usage: floe table properties [--format markdown|json]");
		return floe_table_properties_reference(md, cli_stdout_write, NULL, &err) ? cli_fail(&err)
											  : 0;
	}
	bool read_only = !strcmp(sub, "list") || !strcmp(sub, "show");
	if (!(cat = read_only ? cli_open_catalog_read_only() : cli_open_catalog()))
		return 1;
	if (!strcmp(sub, "create")) {
		rc = table_create(cat, argc - 2, argv + 2);
	} else if (!strcmp(sub, "show") || !strcmp(sub, "describe")) {
		rc = table_show(cat, argc - 2, argv + 2);
	} else if (!strcmp(sub, "set")) {
		rc = table_set(cat, argc - 2, argv + 2);
	} else if (!strcmp(sub, "alter")) {
		rc = table_alter(cat, argc - 2, argv + 2);
	} else if (!strcmp(sub, "list")) {
		if (argc > 2) {
			rc = floe_catalog_list_tables(cat, argv[2], print_name, NULL, &err) ? cli_fail(&err)
											      : 0;
		} else {
			/* every table of every namespace, nested ones included */
			rc = list_all_tables(cat, NULL, 0, &err);
			rc = rc ? cli_fail(&err) : 0;
		}
	} else if (!strcmp(sub, "drop") && argc >= 3 && argc <= 5) {
		bool purge = false, external = false;
		char *ns, *name;
		for (int i = 3; i < argc; i++) {
			if (!strcmp(argv[i], "--purge")) {
				purge = true;
			} else if (!strcmp(argv[i], "--purge-external-files")) {
				purge = external = true;
			} else {
				floe_catalog_free(cat);
				return cli_usage_error("usage: floe table drop <ns.table> [--purge "
						       "[--purge-external-files]]");
			}
		}
		if (!cli_split(argv[2], &ns, &name)) {
			rc = 1;
		} else {
			if (!(purge && !external && (rc = refuse_external_purge(cat, ns, name)))) {
				rc = floe_catalog_drop_table(cat, ns, name, purge, &err) ? cli_fail(&err)
											: 0;
				cli_outcome_table(ns, name);
				cli_outcome_str("files", purge ? "deleted" : "kept");
				if (!rc)
					cli_outcome("dropped table %s.%s%s", ns, name,
						    purge ? " and deleted its files"
							  : " (its files are kept)");
			}
			floe_free_string(ns);
			floe_free_string(name);
		}
	} else if (!strcmp(sub, "rename") && argc == 4) {
		char *fns, *fname, *tns, *tname;
		if (cli_split(argv[2], &fns, &fname)) {
			if (cli_split(argv[3], &tns, &tname)) {
				rc = floe_catalog_rename_table(cat, fns, fname, tns, tname, &err)
					     ? cli_fail(&err)
					     : 0;
				if (!rc) {
					char from[512], to[512];
					snprintf(from, sizeof(from), "%s.%s", fns, fname);
					snprintf(to, sizeof(to), "%s.%s", tns, tname);
					cli_outcome_str("from", from);
					cli_outcome_str("to", to);
					cli_outcome("renamed %s to %s", from, to);
				}
				floe_free_string(tns);
				floe_free_string(tname);
			} else {
				rc = 1;
			}
			floe_free_string(fns);
			floe_free_string(fname);
		} else {
			rc = 1;
		}
	} else {
		rc = cli_usage_error("usage: floe table create|list [ns]|show <t> [--json]|drop <t> "
				     "[--purge]|rename <from> <to>|set <t> k=v...");
	}
	floe_catalog_free(cat);
	return rc;
}

int cmd_add_files(int argc, char **argv)
{
	floe_error err = {0};
	floe_catalog *cat;
	floe_table *t;
	char *ns, *name;
	prop_list summary = {.n = 0};
	const char *paths[4096];
	size_t n = 0;
	if (argc < 3)
		return cli_usage_error("usage: floe add-files <ns.table> <file.parquet>... "
				       "[--summary k=v]");
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--summary") && i + 1 < argc) {
			if (!add_prop(&summary, argv[++i]))
				return 2;
		} else if (n < 4096) {
			paths[n++] = argv[i];
		} else {
			return cli_usage_error("too many files (at most 4096 per call)");
		}
	}
	if (!(cat = cli_open_catalog()))
		return 1;
	if (!cli_split(argv[1], &ns, &name)) {
		floe_catalog_free(cat);
		return 1;
	}
	int64_t sid = -1;
	int rc = floe_table_load(&t, cat, ns, name, &err);
	if (!rc) {
		rc = floe_table_add_files(t, paths, n, summary.items, summary.n, &sid, &err);
		if (!rc) {
			cli_outcome_table(ns, name);
			cli_outcome_i64("files", (long long)n);
			cli_outcome_i64("snapshot_id", (long long)sid);
			cli_outcome("added %zu %s to %s.%s in snapshot %lld", n,
				    cli_plural((long long)n, "file", "files"), ns, name, (long long)sid);
		}
		floe_table_free(t);
	}
	floe_free_string(ns);
	floe_free_string(name);
	floe_catalog_free(cat);
	return rc ? cli_fail(&err) : 0;
}
