/*
 * catalog.h — the catalog vtable: namespaces, and a table's pointer to its
 * current metadata file, swapped by compare-and-swap on commit.
 *
 * A catalog writes the new metadata file itself (each catalog has its own
 * naming: "NNNNN-<uuid>.metadata.json" for SQL catalogs, "vN.metadata.json"
 * for the file-system catalog; a REST server writes it on its side) and then
 * swaps the pointer. A lost race is a retryable FLOE_ECONFLICT: the caller
 * reloads, re-applies its change and tries again. A swap whose outcome is
 * unknown (sent, no answer) is FLOE_ECOMMITUNKNOWN: the catalog deletes
 * nothing and hands back the metadata file's location, and the commit path
 * (table/commit_path.c) reads the catalog again to learn the outcome.
 *
 * Namespaces are dotted strings ("db", "a.b"); table identifiers are a
 * namespace plus a name.
 *
 * Thread-safety: a catalog object may be used from one thread at a time;
 * open one per thread (they are cheap) when needed.
 */
#ifndef FLOE_CATALOG_CATALOG_H
#define FLOE_CATALOG_CATALOG_H

#include "floe/catalog.h"
#include "floe/common.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"
#include "util/str.h"


/* One table's part of a multi-table commit (floe_catalog_commit_tables). */
typedef struct floe_catalog_change {
	const char *ns, *name;
	const floe_metadata *base, *next;
	char *location; /* out (caller frees) */
} floe_catalog_change;

typedef struct floe_catalog_ops {
	int (*create_namespace)(floe_catalog *cat, const char *ns, const floe_strmap *props,
				floe_error *err);
	/* Direct children of parent (NULL or "" = top level): fn(ns, NULL). */
	int (*list_namespaces)(floe_catalog *cat, const char *parent, floe_name_fn fn,
			       void *payload, floe_error *err);
	int (*drop_namespace)(floe_catalog *cat, const char *ns, floe_error *err);
	int (*namespace_exists)(floe_catalog *cat, const char *ns, bool *exists, floe_error *err);
	int (*load_namespace_properties)(floe_catalog *cat, const char *ns, floe_strmap *out,
					 floe_error *err);
	int (*update_namespace_properties)(floe_catalog *cat, const char *ns,
					   const floe_strmap *set, const char *const *remove,
					   size_t n_remove, floe_error *err);
	int (*list_tables)(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			   floe_error *err);
	/* Load the current metadata (caller owns it; metadata_location is set). */
	int (*load_table)(floe_catalog *cat, const char *ns, const char *name, floe_metadata **out,
			  floe_error *err);
	/*
	 * Write `next` as the table's new metadata and swap the pointer from
	 * `base` (NULL: create the table; FLOE_EEXISTS if it exists). On success
	 * *location receives the new metadata location (caller frees with
	 * floe_free); on FLOE_ECOMMITUNKNOWN it receives the metadata file that
	 * may have become current. An implementation honours
	 * floe_catalog__fault_lose_swap (tests).
	 */
	int (*commit_table)(floe_catalog *cat, const char *ns, const char *name,
			    const floe_metadata *base, const floe_metadata *next, char **location,
			    floe_error *err);
	int (*drop_table)(floe_catalog *cat, const char *ns, const char *name, floe_error *err);
	int (*rename_table)(floe_catalog *cat, const char *from_ns, const char *from_name,
			    const char *to_ns, const char *to_name, floe_error *err);
	/* Where a new table's files go by default (caller frees). */
	int (*default_location)(floe_catalog *cat, const char *ns, const char *name, char **out,
				floe_error *err);
	void (*free)(floe_catalog *cat);
	/*
	 * Swap several tables in one transaction, all or nothing (optional:
	 * NULL when the catalog cannot). Each change has a base (no creates).
	 * On success every ch[i].location receives the new metadata location
	 * (NULL when the catalog does not tell: the caller reloads); a lost race
	 * on any table is a retryable FLOE_ECONFLICT and nothing changed; on
	 * FLOE_ECOMMITUNKNOWN the locations that may have become current are
	 * set. The caller frees the locations with floe_free.
	 */
	int (*commit_tables)(floe_catalog *cat, floe_catalog_change *ch, size_t n,
			     floe_error *err);
} floe_catalog_ops;

struct floe_catalog {
	const floe_catalog_ops *ops;
	const char *name; /* catalog name (the JDBC catalog_name column) */
	const char *kind; /* "sql", "filesystem", "rest" */
	floe_fileio *io;  /* owned by the catalog */
	/* Catalogs whose server maintains tables itself (detected or
	 * configured): floe refuses to run maintenance there. */
	bool managed_maintenance;
	/* Why a catalog with commit_tables cannot use it here (a REST server
	 * that does not offer transactions), or NULL. Static text. */
	const char *no_transactions;
	/* SQL database holding maintenance locks (flink_maintenance_lock): the
	 * catalog's own database, or <warehouse>/floe-locks.db for a local
	 * file-system catalog; NULL when there is none. Owned by the catalog. */
	char *lock_uri;
	/* how it was opened, for floe_catalog_reopen (owned; uri NULL for
	 * file-system catalogs, warehouse may be NULL for SQL ones) */
	char *open_uri, *open_warehouse;
	floe_strmap open_props; /* the REST catalog's properties as given */
	/* FLOE_TEST_CATALOG_FAULT state (catalog.c) */
	int64_t n_commits;
	bool fault_lose_swap;
};

/* Test hook for implementations of commit_table: true when this swap must
 * be written but never performed (then return FLOE_ECOMMITUNKNOWN with the
 * metadata location). */
bool floe_catalog__fault_lose_swap(floe_catalog *cat);

/*
 * A new catalog object on the same catalog (same kind, uri, warehouse and
 * name) with the default FileIO: for another thread (a catalog object is
 * used by one thread at a time).
 */
int floe_catalog_reopen(const floe_catalog *cat, floe_catalog **out, floe_error *err) FLOE_WUR;

/* Dispatchers (the public floe/catalog.h functions with the same names are
 * the rest of this interface). */
int floe_catalog__create_namespace(floe_catalog *cat, const char *ns, const floe_strmap *props,
				   floe_error *err) FLOE_WUR;
int floe_catalog_namespace_exists(floe_catalog *cat, const char *ns, bool *exists,
				  floe_error *err) FLOE_WUR;
int floe_catalog_load_namespace_properties(floe_catalog *cat, const char *ns, floe_strmap *out,
					   floe_error *err) FLOE_WUR;
int floe_catalog_update_namespace_properties(floe_catalog *cat, const char *ns,
					     const floe_strmap *set, const char *const *remove,
					     size_t n_remove, floe_error *err) FLOE_WUR;
int floe_catalog_load_table(floe_catalog *cat, const char *ns, const char *name,
			    floe_metadata **out, floe_error *err) FLOE_WUR;
int floe_catalog_commit_table(floe_catalog *cat, const char *ns, const char *name,
			      const floe_metadata *base, const floe_metadata *next, char **location,
			      floe_error *err) FLOE_WUR;
/*
 * Commit every change in one catalog transaction: all swaps happen or none
 * does (pipeline.atomic-commit). FLOE_EUNSUPPORTED when the catalog has no
 * multi-table transaction (file system, Glue). Errors as commit_table's;
 * honours FLOE_TEST_CATALOG_FAULT once per transaction.
 */
int floe_catalog_commit_tables(floe_catalog *cat, floe_catalog_change *ch, size_t n,
			       floe_error *err) FLOE_WUR;
/* Whether the catalog can commit several tables atomically. */
bool floe_catalog_has_transactions(const floe_catalog *cat);

/* Remove the catalog entry only (the public floe_catalog_drop_table can purge). */
int floe_catalog__drop_table(floe_catalog *cat, const char *ns, const char *name,
			     floe_error *err) FLOE_WUR;
int floe_catalog_default_location(floe_catalog *cat, const char *ns, const char *name, char **out,
				  floe_error *err) FLOE_WUR;

/* ---- implementations ---- */

typedef struct floe_sql_catalog_opts {
	int version;
	const char *name;      /* catalog_name; default "default" */
	const char *uri;       /* "sqlite:///path/catalog.db", "/path/catalog.db",
				  or "postgresql://..." */
	const char *warehouse; /* root URI for new tables */
	floe_fileio *io;       /* taken over by the catalog (NULL: default router) */
	int busy_timeout_ms;   /* SQLite: wait for locks (default 30000) */
} floe_sql_catalog_opts;
#define FLOE_SQL_CATALOG_OPTS_INIT {1, NULL, NULL, NULL, NULL, 0}

int floe_sql_catalog_open(floe_catalog **out, const floe_sql_catalog_opts *opts,
			  floe_error *err) FLOE_WUR;

typedef struct floe_fs_catalog_opts {
	int version;
	const char *name;
	const char *warehouse; /* root URI */
	floe_fileio *io;       /* taken over (NULL: default router) */
} floe_fs_catalog_opts;
#define FLOE_FS_CATALOG_OPTS_INIT {1, NULL, NULL, NULL}

int floe_fs_catalog_open(floe_catalog **out, const floe_fs_catalog_opts *opts,
			 floe_error *err) FLOE_WUR;

/* Load a path-based table directly (the file-system catalog's layout, also
 * what DuckDB's iceberg_scan reads): a table directory or a metadata file. */
int floe_fs_load_path(floe_fileio *io, const char *path, floe_metadata **out,
		      floe_error *err) FLOE_WUR;

/* ---- helpers shared by catalogs ---- */

/*
 * A paginated listing (list_pages.c): page() fetches and parses the page
 * after `token` (NULL: the first) into *doc, allocated in a (the arena of
 * this page, reset after items() has seen it); items() hands the page's
 * items on. The page's string field token_field names the next page; a
 * page without one ends the listing. The first non-zero return of page()
 * or items() stops it and is returned.
 */
struct floe_json;
typedef int (*floe_list_page_fn)(void *payload, const char *token, floe_arena *a,
				 const struct floe_json **doc, floe_error *err);
typedef int (*floe_list_items_fn)(void *payload, const struct floe_json *doc, floe_arena *a,
				  floe_error *err);
int floe_catalog__list_pages(const char *token_field, floe_list_page_fn page,
			     floe_list_items_fn items, void *payload, floe_error *err) FLOE_WUR;

/* naming.c */

/* Version number in "<dir>/00042-<uuid>.metadata.json" (42) or
 * "v42.metadata.json" (42); -1 when none. */
int64_t floe_metadata_file_version(const char *location);
/* Directory for metadata files: write.metadata.path or <location>/metadata. */
char *floe_metadata_dir(const floe_metadata *m);
/* ".metadata.json" or ".gz.metadata.json" per write.metadata.compression-codec. */
const char *floe_metadata_file_suffix(const floe_metadata *m);
/* Serialise (and gzip when configured) metadata into out. */
int floe_metadata_encode(floe_buf *out, const floe_metadata *m, floe_error *err) FLOE_WUR;
/* Encode m and write it at location, never replacing a file (FLOE_EEXISTS);
 * an object-store file is remembered for floe_metadata_read. */
int floe_metadata_write_file(floe_fileio *io, const char *location, const floe_metadata *m,
			     floe_error *err) FLOE_WUR;
/* Read and parse a metadata file (gzip/zstd detected); sets metadata_location.
 * Metadata files on object stores this process wrote or read lately are not
 * read again (they never change: see naming.c). */
int floe_metadata_read(floe_fileio *io, const char *location, floe_metadata **out,
		       floe_error *err) FLOE_WUR;

#endif
