/*
 * floe/table.h — Iceberg tables: create, load, describe, snapshots, files,
 * properties, and registering existing Parquet files (add-files).
 *
 * Thread-safety: a floe_table is used by one thread at a time.
 */
#ifndef FLOE_TABLE_H
#define FLOE_TABLE_H

#include "floe/catalog.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_table floe_table;

typedef struct floe_table_create_opts {
	int version;              /* 1 */
	const char *schema;       /* Iceberg schema JSON, or a column list:
				     "id long not null, ts timestamptz, tags list<string>" */
	const char *partition_by; /* "bucket(16, id), day(ts)" or NULL */
	const char *sort_by;      /* "id desc nulls last, ts" or NULL */
	const floe_prop *properties;
	size_t n_properties;
	int format_version;       /* 1, 2 or 3; 0 = the property, else 2 */
	const char *location;     /* NULL = the catalog's default */
} floe_table_create_opts;
#define FLOE_TABLE_CREATE_OPTS_INIT {1, NULL, NULL, NULL, NULL, 0, 0, NULL}

/* Create a table; *out (optional) receives it loaded. */
FLOE_EXPORT int floe_table_create(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		      const floe_table_create_opts *opts, floe_error *err) FLOE_WUR;
/* Load; FLOE_ENOTFOUND when it does not exist. */
FLOE_EXPORT int floe_table_load(floe_table **out, floe_catalog *cat, const char *ns, const char *name,
		    floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_table_free(floe_table *t);

/* The current metadata JSON (pretty when indent > 0). */
FLOE_EXPORT int floe_table_metadata_json(floe_table *t, int indent, floe_write_fn fn, void *payload,
			     floe_error *err) FLOE_WUR;
/* A readable description: identity, location, format version, schema,
 * partition spec, sort order, properties, current snapshot. */
FLOE_EXPORT int floe_table_describe(floe_table *t, floe_write_fn fn, void *payload, floe_error *err) FLOE_WUR;
FLOE_EXPORT const char *floe_table_location(const floe_table *t);
FLOE_EXPORT const char *floe_table_metadata_location(const floe_table *t);
FLOE_EXPORT int floe_table_format_version(const floe_table *t);

typedef struct floe_snapshot_info {
	int64_t snapshot_id;
	int64_t parent_id; /* -1 none */
	int64_t sequence_number;
	int64_t timestamp_ms;
	const char *operation;
	const char *manifest_list;
	int32_t schema_id;
	const floe_prop *summary;
	size_t n_summary;
	bool is_current;
} floe_snapshot_info;

typedef int (*floe_snapshot_fn)(const floe_snapshot_info *s, void *payload);

/* Snapshots in the order of the metadata (oldest first). */
FLOE_EXPORT int floe_table_snapshots(floe_table *t, floe_snapshot_fn fn, void *payload,
			 floe_error *err) FLOE_WUR;

typedef struct floe_table_file {
	int content; /* 0 data, 1 position deletes, 2 equality deletes */
	const char *path;
	const char *format; /* "PARQUET", "PUFFIN", ... */
	int32_t spec_id;
	const char *partition; /* "region=eu/ts_day=2024-01-01" ("" unpartitioned) */
	int64_t record_count;
	int64_t file_size_in_bytes;
	int64_t snapshot_id;     /* that added it */
	int64_t sequence_number; /* data sequence number */
	int status;              /* 0 existing, 1 added */
	/* the partition as a JSON object of the transforms' values, as the files
	 * metadata table (Java, PyIceberg) has it: {"region":"eu","ts_day":"2024-01-01"}
	 * ("{}" unpartitioned) */
	const char *partition_json;
} floe_table_file;

typedef int (*floe_table_file_fn)(const floe_table_file *f, void *payload);

/* Live files of a snapshot (-1: current), data and delete files. */
FLOE_EXPORT int floe_table_files(floe_table *t, int64_t snapshot_id, floe_table_file_fn fn, void *payload,
		     floe_error *err) FLOE_WUR;

/* Set and remove table properties in one commit. */
/*
 * Check a table property before it is stored: FLOE_EINVAL (bad value) or
 * FLOE_EUNSUPPORTED (a value floe cannot honour, e.g. write.format.default
 * = orc) with a message naming the key and what is allowed. Keys floe does
 * not know pass (Iceberg tables may hold any property).
 */
FLOE_EXPORT int floe_table_property_check(const char *key, const char *value, floe_error *err) FLOE_WUR;
/*
 * The table properties floe knows — key, default, allowed values, what floe
 * does with it — as a Markdown table (markdown) or JSON lines.
 */
FLOE_EXPORT int floe_table_properties_reference(bool markdown, floe_write_fn fn, void *payload,
				    floe_error *err) FLOE_WUR;
FLOE_EXPORT int floe_table_set_properties(floe_table *t, const floe_prop *set, size_t n_set,
			      const char *const *remove, size_t n_remove, floe_error *err) FLOE_WUR;

/*
 * Register existing Parquet files (written by another tool) in one append
 * snapshot: record counts and column metrics come from their footers, the
 * partition of each file from its column bounds (a file must hold one
 * partition) or from "name=value" path segments. Files without field ids
 * are matched by column name; the table then gets the name mapping
 * (schema.name-mapping.default) other readers need. Paths may be local
 * paths or URIs. *snapshot_id (optional) receives the new snapshot.
 * summary: extra snapshot summary properties (may be NULL).
 */
FLOE_EXPORT int floe_table_add_files(floe_table *t, const char *const *paths, size_t n,
			 const floe_prop *summary, size_t n_summary, int64_t *snapshot_id,
			 floe_error *err) FLOE_WUR;

/*
 * Branches and tags (Java's ManageSnapshots). A change is committed through
 * the catalog like any other; its rules follow Java's: a name is one ref,
 * main is a branch that is never dropped, fast-forward needs the branch's
 * head to be an ancestor of the new one, retention is per ref
 * (min-snapshots-to-keep and max-snapshot-age-ms for branches,
 * max-ref-age-ms for any ref but main; snapshot expiry honours them).
 */
typedef enum floe_ref_action {
	FLOE_REF_CREATE_BRANCH = 1, /* at snapshot_id, else from's head (main) */
	FLOE_REF_CREATE_TAG,
	FLOE_REF_DROP_BRANCH,
	FLOE_REF_DROP_TAG,
	FLOE_REF_REPLACE_BRANCH,    /* point at any snapshot (snapshot_id or from's head) */
	FLOE_REF_FAST_FORWARD,      /* to from's head (or snapshot_id), a descendant;
				       a missing branch is created there */
	FLOE_REF_SET_RETENTION,     /* only the retention fields given */
} floe_ref_action;

typedef struct floe_ref_opts {
	int version; /* 1 */
	int action;  /* floe_ref_action */
	const char *name;
	int64_t snapshot_id;           /* -1: the head of `from` */
	const char *from;              /* a ref; NULL: main */
	int64_t min_snapshots_to_keep; /* -1: unset (the table's history.expire.*) */
	int64_t max_snapshot_age_ms;   /* -1: unset */
	int64_t max_ref_age_ms;        /* -1: unset (never expires) */
} floe_ref_opts;
#define FLOE_REF_OPTS_INIT {1, 0, NULL, -1, NULL, -1, -1, -1}

/* The head of branch or tag `name` (main: the current snapshot);
 * FLOE_ENOTFOUND when there is none. */
FLOE_EXPORT int floe_table_ref(floe_table *t, const char *name, int64_t *snapshot_id, bool *is_tag);
FLOE_EXPORT int floe_table_manage_ref(floe_table *t, const floe_ref_opts *o, floe_error *err) FLOE_WUR;

/*
 * Cherry-pick snapshot_id onto `branch` (NULL: main), as Java's
 * CherryPickOperation: a snapshot whose parent is the branch's head is
 * fast-forwarded to (its id is kept); an append is applied again as a new
 * append with summary source-snapshot-id; a replace-partitions overwrite
 * whose parent is an ancestor of the head is applied again as an overwrite
 * (its added files added, its removed files removed) unless a snapshot
 * since that parent added a file to a partition it replaced (FLOE_ECONFLICT);
 * a snapshot already in the branch, or picked before, and other operations
 * on a head that moved on are refused (FLOE_EINVAL) with Java's reasons.
 * *new_snapshot (optional): the branch's new head.
 */
FLOE_EXPORT int floe_table_cherry_pick(floe_table *t, int64_t snapshot_id, const char *branch,
				       int64_t *new_snapshot, floe_error *err) FLOE_WUR;

/*
 * Schema, partition and write-order evolution (`floe table alter`). Each op
 * is one change; all of them are validated on the current metadata and
 * committed together (retried on a lost race, re-applied on the new base),
 * or none is. Columns are never dropped, renamed or narrowed.
 *   ADD_COLUMN      path ("a.b.c"; a list's struct is "xs.element") and
 *                   arg, a type ("long", "struct<lat: double>"): an
 *                   optional column with fresh ids; doc optional
 *   UPDATE_TYPE     path, arg a wider type (int -> long, float -> double,
 *                   decimal(P,S) -> decimal(P2,S) with P2 > P; v3: date ->
 *                   timestamp)
 *   MAKE_OPTIONAL   path (not an identifier field)
 *   ADD_PARTITION   arg a partition expression ("bucket(16, id)", "day(ts)")
 *   DROP_PARTITION  arg a partition field name ("id_bucket") or expression
 *   REPLACE_PARTITION  arg the field to drop, arg2 the expression to add
 *   WRITE_ORDER     arg a sort order ("id desc nulls last, day(ts)";
 *                   "unsorted")
 * FLOE_EINVAL names the field on a refused change. *summary (optional,
 * caller frees with floe_free) says what changed ("" when nothing did).
 */
typedef enum floe_alter_kind {
	FLOE_ALTER_ADD_COLUMN = 1,
	FLOE_ALTER_UPDATE_TYPE,
	FLOE_ALTER_MAKE_OPTIONAL,
	FLOE_ALTER_ADD_PARTITION,
	FLOE_ALTER_DROP_PARTITION,
	FLOE_ALTER_REPLACE_PARTITION,
	FLOE_ALTER_WRITE_ORDER,
} floe_alter_kind;

typedef struct floe_alter_op {
	floe_alter_kind kind;
	const char *path;
	const char *arg;
	const char *arg2;
	const char *doc;
} floe_alter_op;

FLOE_EXPORT int floe_table_alter(floe_table *t, const floe_alter_op *ops, size_t n, char **summary,
				 floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
