/*
 * floe/catalog.h — catalogs and namespaces.
 *
 * A catalog maps table names to their current metadata: the embedded
 * default (a SQLite catalog file inside a local warehouse folder, laid out
 * as Java's JdbcCatalog and PyIceberg's SqlCatalog lay it out), any SQL
 * catalog (SQLite, PostgreSQL), or a file-system catalog. Namespaces are
 * dotted names ("db", "sales.eu"); tables are "namespace.name".
 *
 * Thread-safety: use a catalog from one thread at a time; open one per
 * thread when needed.
 */
#ifndef FLOE_CATALOG_H
#define FLOE_CATALOG_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct floe_catalog floe_catalog;

typedef struct floe_prop {
	const char *key;
	const char *value;
} floe_prop;

typedef struct floe_catalog_config {
	int version;           /* 1 */
	const char *type;      /* "sql" (default), "filesystem" or "rest" */
	const char *name;      /* catalog name; default "default" */
	const char *uri;       /* sql: "sqlite:///path.db", a path, or "postgresql://...";
				  rest: "http(s)://host[:port][/path]" */
	const char *warehouse; /* root URI of new tables ("file:///data/wh", "s3://b/wh") */
	/* catalog properties with Iceberg's names: the REST catalog's (token,
	 * credential, rest.sigv4-enabled, ...) and the S3 FileIO's (s3.endpoint,
	 * s3.access-key-id, client.region, ...); may be NULL */
	const floe_prop *props;
	size_t n_props;
} floe_catalog_config;
#define FLOE_CATALOG_CONFIG_INIT {1, NULL, NULL, NULL, NULL, NULL, 0}

/* Open a catalog. */
FLOE_EXPORT int floe_catalog_open(floe_catalog **out, const floe_catalog_config *cfg, floe_error *err) FLOE_WUR;
/*
 * The embedded default: "<dir>/warehouse" with the SQLite catalog file
 * "<dir>/warehouse/catalog.db" (dir NULL: the working directory). Creates
 * them when missing. Catalog name "default".
 */
FLOE_EXPORT int floe_catalog_open_default(floe_catalog **out, const char *dir, floe_error *err) FLOE_WUR;
/* The embedded default when it exists (FLOE_ENOTFOUND naming the catalog
 * file otherwise): nothing is created. For commands that only read. */
FLOE_EXPORT int floe_catalog_open_default_existing(floe_catalog **out, const char *dir,
				       floe_error *err) FLOE_WUR;
FLOE_EXPORT void floe_catalog_free(floe_catalog *cat);

/* Names: fn(namespace, NULL) for namespaces, fn(namespace, table) for tables. */
typedef int (*floe_name_fn)(const char *ns, const char *name, void *payload);
typedef int (*floe_prop_fn)(const char *key, const char *value, void *payload);

/* FLOE_EEXISTS when it exists. */
FLOE_EXPORT int floe_catalog_create_namespace(floe_catalog *cat, const char *ns, const floe_prop *props,
				  size_t n_props, floe_error *err) FLOE_WUR;
/* Children of parent (NULL: top level), sorted. */
FLOE_EXPORT int floe_catalog_list_namespaces(floe_catalog *cat, const char *parent, floe_name_fn fn,
				 void *payload, floe_error *err) FLOE_WUR;
/* FLOE_ENOTFOUND, or FLOE_EINVAL when it still holds tables or namespaces. */
FLOE_EXPORT int floe_catalog_drop_namespace(floe_catalog *cat, const char *ns, floe_error *err) FLOE_WUR;
FLOE_EXPORT int floe_catalog_namespace_properties(floe_catalog *cat, const char *ns, floe_prop_fn fn,
				      void *payload, floe_error *err) FLOE_WUR;
FLOE_EXPORT int floe_catalog_set_namespace_properties(floe_catalog *cat, const char *ns,
					  const floe_prop *set, size_t n_set,
					  const char *const *remove, size_t n_remove,
					  floe_error *err) FLOE_WUR;
FLOE_EXPORT int floe_catalog_list_tables(floe_catalog *cat, const char *ns, floe_name_fn fn, void *payload,
			     floe_error *err) FLOE_WUR;
/* Remove a table from the catalog; purge also deletes its data and metadata
 * files (every file any of its snapshots references). */
FLOE_EXPORT int floe_catalog_drop_table(floe_catalog *cat, const char *ns, const char *name, bool purge,
			    floe_error *err) FLOE_WUR;
FLOE_EXPORT int floe_catalog_rename_table(floe_catalog *cat, const char *from_ns, const char *from_name,
			      const char *to_ns, const char *to_name, floe_error *err) FLOE_WUR;

/* Split "db.events" into a namespace and a name (caller frees both with
 * floe_free_string). A name without a dot uses `dflt` (NULL: error). */
FLOE_EXPORT int floe_catalog_split_ident(const char *ident, const char *dflt, char **ns, char **name,
			     floe_error *err) FLOE_WUR;

/* Free a string the library returned. */
FLOE_EXPORT void floe_free_string(char *s);

#ifdef __cplusplus
}
#endif
#endif
