/*
 * props.c — the registry of table properties (props.h). Defaults are Java
 * Iceberg's (TableProperties) unless the doc says floe chose otherwise.
 */
#include "iceberg/props.h"

#include <string.h>
#include <strings.h>

#include "util/str.h"

#define KiB ((int64_t)1 << 10)
#define MiB ((int64_t)1 << 20)
#define I64_MAX INT64_MAX

#define H FLOE_PROP_HONOURED

static const floe_prop_def DEFS[] = {
	/* ---- creation ---- */
	{"format-version", FLOE_PROP_INT, "2", 1, 3, NULL, NULL, NULL, H | FLOE_PROP_RESERVED,
	 "format version at creation (reserved: not stored in the properties)"},
	/* ---- data files ---- */
	{"write.format.default", FLOE_PROP_CHOICE, "parquet", 0, 0, "parquet|orc|avro", "orc|avro",
	 "floe writes Parquet data files (it reads Avro ones)", H, "file format of new data files"},
	{"write.delete.format.default", FLOE_PROP_CHOICE, "parquet", 0, 0, "parquet|orc|avro",
	 "orc|avro", "floe writes Parquet delete files (and Puffin deletion vectors in v3)", H,
	 "file format of new delete files"},
	{"write.target-file-size-bytes", FLOE_PROP_INT, "536870912", 1, I64_MAX, NULL, NULL, NULL, H,
	 "rolling size of data files; compaction's target"},
	{"write.delete.target-file-size-bytes", FLOE_PROP_INT, "67108864", 1, I64_MAX, NULL, NULL,
	 NULL, H, "rolling size of delete files"},
	{"write.parquet.compression-codec", FLOE_PROP_CHOICE, "zstd", 0, 0,
	 "zstd|snappy|gzip|brotli|lz4|lz4_raw|uncompressed|none", NULL, NULL, H | FLOE_PROP_CREATE,
	 "Parquet page codec (lz4 writes LZ4_RAW, as pyarrow does); written at creation, as Java "
	 "1.10 does (its writers fall back to gzip without it)"},
	{"write.parquet.compression-level", FLOE_PROP_INT, NULL, -131072, 22, NULL, NULL, NULL, H,
	 "codec level (zstd 1..22 and negative fast levels, gzip 1..9); unset: the codec's default"},
	{"write.parquet.row-group-size-bytes", FLOE_PROP_INT, "134217728", 1, I64_MAX, NULL, NULL,
	 NULL, H, "row group size"},
	{"write.parquet.row-group-limit", FLOE_PROP_INT, "0", 0, I64_MAX, NULL, NULL, NULL, H,
	 "floe: at most this many rows per row group (0: no limit)"},
	{"write.parquet.page-size-bytes", FLOE_PROP_INT, "1048576", 1, I64_MAX, NULL, NULL, NULL, H,
	 "page size"},
	{"write.parquet.page-row-limit", FLOE_PROP_INT, "20000", 1, I64_MAX, NULL, NULL, NULL, H,
	 "rows per page"},
	{"write.parquet.dict-size-bytes", FLOE_PROP_INT, "2097152", 0, I64_MAX, NULL, NULL, NULL, H,
	 "dictionary page limit per column chunk (0: no dictionaries)"},
	{"write.parquet.page-version", FLOE_PROP_CHOICE, "v1", 0, 0, "v1|v2|1|2", NULL, NULL, H,
	 "floe: Parquet data page version"},
	/* delete files: each defaults to its write.parquet.* value (Java) */
	{"write.delete.parquet.compression-codec", FLOE_PROP_CHOICE, NULL, 0, 0,
	 "zstd|snappy|gzip|brotli|lz4|lz4_raw|uncompressed|none", NULL, NULL, H,
	 "delete files' page codec (unset: write.parquet.compression-codec)"},
	{"write.delete.parquet.compression-level", FLOE_PROP_INT, NULL, -131072, 22, NULL, NULL, NULL,
	 H, "delete files' codec level (unset: write.parquet.compression-level)"},
	{"write.delete.parquet.row-group-size-bytes", FLOE_PROP_INT, NULL, 1, I64_MAX, NULL, NULL,
	 NULL, H, "delete files' row group size (unset: write.parquet.row-group-size-bytes)"},
	{"write.delete.parquet.page-size-bytes", FLOE_PROP_INT, NULL, 1, I64_MAX, NULL, NULL, NULL, H,
	 "delete files' page size (unset: write.parquet.page-size-bytes)"},
	{"write.delete.parquet.page-row-limit", FLOE_PROP_INT, NULL, 1, I64_MAX, NULL, NULL, NULL, H,
	 "delete files' rows per page (unset: write.parquet.page-row-limit)"},
	{"write.delete.parquet.dict-size-bytes", FLOE_PROP_INT, NULL, 0, I64_MAX, NULL, NULL, NULL, H,
	 "delete files' dictionary limit (unset: write.parquet.dict-size-bytes)"},
	{"write.delete.parquet.page-version", FLOE_PROP_CHOICE, NULL, 0, 0, "v1|v2|1|2", NULL, NULL, H,
	 "floe: delete files' page version (unset: write.parquet.page-version)"},
	{"write.distribution-mode", FLOE_PROP_CHOICE, NULL, 0, 0, "none|hash|range", NULL, NULL, H,
	 "how rows reach writer tasks (a pipeline's default when it sets none)"},
	{"write.upsert.enabled", FLOE_PROP_BOOL, "false", 0, 0, NULL, NULL, NULL, H,
	 "pipelines write upserts on the equality fields (Flink's upsert mode; a pipeline's "
	 "upsert-enabled overrides it)"},
	{"write.upsert.mode", FLOE_PROP_CHOICE, "equality", 0, 0, "equality|index", NULL, NULL, H,
	 "upserts delete a key's old row by equality deletes (Flink's way; the default: no index "
	 "to build or hold) or, with index, by a DV / position delete found through a key index "
	 "(readers pay no equality deletes)"},
	{"write.upsert.index.memory", FLOE_PROP_INT, "268435456", 65536, I64_MAX, NULL, NULL, NULL,
	 H, "index mode: the key index's memory (bytes, all writer tasks); beyond it the index "
	 "spills to local disk"},
	{"write.upsert.index.persist", FLOE_PROP_BOOL, "true", 0, 0, NULL, NULL, NULL, H,
	 "index mode: persist the key index as a `floe-key-index-v1` Puffin blob named by the "
	 "commit's summary (`floe.key-index`), so a restart loads it (validated against the "
	 "snapshot it describes) instead of reading every key of the table"},
	{"write.upsert.index.persist-interval", FLOE_PROP_INT, "10", 1, I64_MAX, NULL, NULL, NULL, H,
	 "index mode: persist the key index every this many DV commits (also on the first after a "
	 "rebuild and on a one-shot load's last commit)"},
	{"write.delete.mode", FLOE_PROP_CHOICE, "copy-on-write", 0, 0, "copy-on-write|merge-on-read",
	 NULL, NULL, H,
	 "floe delete: rewrite the affected data files, or add position deletes (v2) / DVs (v3)"},
	{"write.update.mode", FLOE_PROP_CHOICE, "copy-on-write", 0, 0, "copy-on-write|merge-on-read",
	 NULL, NULL, H,
	 "floe update: rewrite the affected data files, or add deletes and the new rows"},
	{"write.merge.mode", FLOE_PROP_CHOICE, "copy-on-write", 0, 0, "copy-on-write|merge-on-read",
	 NULL, NULL, H,
	 "floe merge: rewrite the affected data files, or add deletes and the new rows"},
	{"write.delete.isolation-level", FLOE_PROP_CHOICE, "serializable", 0, 0,
	 "serializable|snapshot", NULL, NULL, H,
	 "floe delete: serializable also fails on data files added meanwhile that may hold "
	 "matching rows"},
	{"write.update.isolation-level", FLOE_PROP_CHOICE, "serializable", 0, 0,
	 "serializable|snapshot", NULL, NULL, H,
	 "floe update: as write.delete.isolation-level"},
	{"write.merge.isolation-level", FLOE_PROP_CHOICE, "serializable", 0, 0,
	 "serializable|snapshot", NULL, NULL, H,
	 "floe merge: serializable fails on any data file added meanwhile (the join is the "
	 "condition)"},
	{"write.object-storage.enabled", FLOE_PROP_BOOL, "false", 0, 0, NULL, NULL, NULL, H,
	 "hash-prefixed data file paths (Java's ObjectStoreLocationProvider)"},
	{"write.object-storage.partitioned-paths", FLOE_PROP_BOOL, "true", 0, 0, NULL, NULL, NULL, H,
	 "object storage: keep the partition path after the hash"},
	{"write.data.path", FLOE_PROP_STRING, NULL, 0, 0, NULL, NULL, NULL, H,
	 "where data files go (default <location>/data)"},
	{"write.object-storage.path", FLOE_PROP_STRING, NULL, 0, 0, NULL, NULL, NULL, H,
	 "deprecated: data path with object storage"},
	{"write.folder-storage.path", FLOE_PROP_STRING, NULL, 0, 0, NULL, NULL, NULL, H,
	 "deprecated: data path"},
	/* ---- metadata ---- */
	{"write.metadata.path", FLOE_PROP_STRING, NULL, 0, 0, NULL, NULL, NULL, H,
	 "where metadata files go (default <location>/metadata)"},
	{"write.metadata.compression-codec", FLOE_PROP_CHOICE, "none", 0, 0, "none|gzip", NULL, NULL,
	 H, "gzip writes *.gz.metadata.json"},
	{"write.metadata.previous-versions-max", FLOE_PROP_INT, "100", 0, I64_MAX, NULL, NULL, NULL,
	 H, "entries kept in metadata-log"},
	{"write.metadata.delete-after-commit.enabled", FLOE_PROP_BOOL, "false", 0, 0, NULL, NULL,
	 NULL, H, "delete metadata files that leave the metadata log"},
	{"write.metadata.metrics.default", FLOE_PROP_METRICS, "truncate(16)", 0, 0, NULL, NULL, NULL,
	 H, "column metrics: none, counts, truncate(N), full"},
	{"write.metadata.metrics.column.", FLOE_PROP_METRICS, NULL, 0, 0, NULL, NULL, NULL,
	 H | FLOE_PROP_PREFIX, "per-column metrics mode (write.metadata.metrics.column.<name>)"},
	{"write.metadata.metrics.max-inferred-column-defaults", FLOE_PROP_INT, "100", 0, I64_MAX,
	 NULL, NULL, NULL, H, "beyond this many columns only the first get metrics by default"},
	{"write.manifest.compression-codec", FLOE_PROP_CHOICE, "gzip", 0, 0,
	 "gzip|deflate|zstd|snappy|uncompressed|none", NULL, NULL, H,
	 "floe: Avro codec of manifests and manifest lists"},
	{"schema.name-mapping.default", FLOE_PROP_STRING, NULL, 0, 0, NULL, NULL, NULL, H,
	 "name mapping (JSON) for files without field ids; set by add-files when absent"},
	/* ---- commits ---- */
	{"commit.retry.num-retries", FLOE_PROP_INT, "10", 0, 1000, NULL, NULL, NULL, H,
	 "attempts after a lost commit race (Java: 4; streaming writers commit often)"},
	{"commit.retry.min-wait-ms", FLOE_PROP_INT, "100", 0, I64_MAX, NULL, NULL, NULL, H,
	 "first backoff (with jitter)"},
	{"commit.retry.max-wait-ms", FLOE_PROP_INT, "60000", 0, I64_MAX, NULL, NULL, NULL, H,
	 "largest backoff"},
	{"commit.retry.total-timeout-ms", FLOE_PROP_INT, "1800000", 0, I64_MAX, NULL, NULL, NULL, H,
	 "give up retrying after this long"},
	{"commit.status-check.num-retries", FLOE_PROP_INT, "3", 1, 1000, NULL, NULL, NULL, H,
	 "catalog reads that decide a commit whose answer was lost"},
	{"commit.status-check.min-wait-ms", FLOE_PROP_INT, "1000", 0, I64_MAX, NULL, NULL, NULL, H,
	 "wait before the second read (doubling after)"},
	{"commit.manifest.target-size-bytes", FLOE_PROP_INT, "8388608", 1, I64_MAX, NULL, NULL, NULL,
	 H, "manifest rewrite's target"},
	{"commit.manifest.min-count-to-merge", FLOE_PROP_INT, "100", 0, I64_MAX, NULL, NULL, NULL, H,
	 "a commit merges a spec's manifests once this many would be listed"},
	{"commit.manifest-merge.enabled", FLOE_PROP_BOOL, "true", 0, 0, NULL, NULL, NULL, H,
	 "merge manifests on commit (every commit but a manifest rewrite), as Java does"},
	/* ---- history ---- */
	{"history.expire.max-snapshot-age-ms", FLOE_PROP_INT, "432000000", 0, I64_MAX, NULL, NULL,
	 NULL, H, "snapshots older than this expire (5 days)"},
	{"history.expire.min-snapshots-to-keep", FLOE_PROP_INT, "1", 1, I64_MAX, NULL, NULL, NULL, H,
	 "per branch, kept whatever their age"},
	{"history.expire.max-ref-age-ms", FLOE_PROP_INT, NULL, 0, I64_MAX, NULL, NULL, NULL, H,
	 "tags and branches (not main) older than this are removed (unset: forever)"},
	{"history.expire.keep-pipeline-state-for", FLOE_PROP_DURATION, "7d", 0, 0, NULL, NULL, NULL,
	 H,
	 "floe: a completed one-shot load's last snapshot (its offsets) is held this long after "
	 "it, so a re-run within it adds nothing; after it the snapshot may expire (a running "
	 "pipeline's state is held until `floe pipelines forget`)"},
	{"gc.enabled", FLOE_PROP_BOOL, "true", 0, 0, NULL, NULL, NULL, 0,
	 "Java: whether maintenance may delete files"},
};

const floe_prop_def *floe_prop_all(size_t *n)
{
	*n = sizeof(DEFS) / sizeof(DEFS[0]);
	return DEFS;
}

const floe_prop_def *floe_prop_find(const char *key)
{
	const floe_prop_def *best = NULL;
	for (size_t i = 0; i < sizeof(DEFS) / sizeof(DEFS[0]); i++) {
		const floe_prop_def *d = &DEFS[i];
		if (d->flags & FLOE_PROP_PREFIX) {
			size_t n = strlen(d->key);
			if (!strncmp(key, d->key, n) && key[n] && (!best || strlen(best->key) < n))
				best = d;
		} else if (!strcmp(key, d->key)) {
			return d;
		}
	}
	return best;
}

/* Is v (case-insensitive) one of "a|b|c"? */
static bool in_list(const char *list, const char *v)
{
	size_t vl = strlen(v);
	for (const char *p = list; p && *p;) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);
		if (n == vl && !strncasecmp(p, v, n))
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

static bool metrics_mode_ok(const char *v)
{
	if (floe_str_ieq(v, "none") || floe_str_ieq(v, "counts") || floe_str_ieq(v, "full"))
		return true;
	if (strncasecmp(v, "truncate(", 9) != 0)
		return false;
	const char *num = v + 9;
	const char *close = strchr(num, ')');
	int64_t x;
	return close && close[1] == '\0' && floe_parse_i64(num, (size_t)(close - num), &x) && x > 0 &&
	       x <= 1 << 20;
}

int floe_prop_check(const char *key, const char *value, floe_error *err)
{
	const floe_prop_def *d = floe_prop_find(key);
	int64_t x;
	if (!d)
		return FLOE_OK;
	if (!value)
		return floe_error_set(err, FLOE_EINVAL, "table property %s needs a value", key);
	switch (d->type) {
	case FLOE_PROP_INT:
		if (!floe_parse_i64(value, strlen(value), &x))
			return floe_error_set(err, FLOE_EINVAL,
					      "table property %s = '%s': expected an integer", key,
					      value);
		if (x < d->min || x > d->max) {
			if (d->max == INT64_MAX)
				return floe_error_set(err, FLOE_EINVAL,
						      "table property %s = %s: expected an integer >= "
						      "%lld",
						      key, value, (long long)d->min);
			return floe_error_set(err, FLOE_EINVAL,
					      "table property %s = %s: expected %lld to %lld", key,
					      value, (long long)d->min, (long long)d->max);
		}
		return FLOE_OK;
	case FLOE_PROP_BOOL:
		if (floe_str_ieq(value, "true") || floe_str_ieq(value, "false"))
			return FLOE_OK;
		return floe_error_set(err, FLOE_EINVAL,
				      "table property %s = '%s': expected true or false", key, value);
	case FLOE_PROP_CHOICE:
		if (!in_list(d->choices, value)) {
			char list[256];
			size_t j = 0;
			for (const char *p = d->choices; *p && j + 3 < sizeof(list); p++) {
				if (*p == '|') {
					list[j++] = ',';
					list[j++] = ' ';
				} else {
					list[j++] = *p;
				}
			}
			list[j] = '\0';
			return floe_error_set(err, FLOE_EINVAL,
					      "table property %s = '%s': expected one of %s", key,
					      value, list);
		}
		if (d->refused && in_list(d->refused, value))
			return floe_error_set(err, FLOE_EUNSUPPORTED, "table property %s = '%s': %s",
					      key, value, d->refused_why);
		return FLOE_OK;
	case FLOE_PROP_METRICS:
		if (!metrics_mode_ok(value))
			return floe_error_set(err, FLOE_EINVAL,
					      "table property %s = '%s': expected none, counts, "
					      "truncate(N) or full",
					      key, value);
		return FLOE_OK;
	case FLOE_PROP_STRING:
		return FLOE_OK;
	case FLOE_PROP_DURATION:
		if (!floe_parse_duration_ms(value, &x))
			return floe_error_set(err, FLOE_EINVAL,
					      "table property %s = '%s': expected a duration (500ms, "
					      "10s, 5m, 12h, 7d) or milliseconds",
					      key, value);
		return FLOE_OK;
	}
	return FLOE_OK;
}

static const char *dflt_of(const char *key)
{
	const floe_prop_def *d = floe_prop_find(key);
	return d ? d->dflt : NULL;
}

int64_t floe_prop_i64(const floe_metadata *m, const char *key)
{
	const char *dv = dflt_of(key);
	int64_t d = 0;
	if (dv && !floe_parse_i64(dv, strlen(dv), &d))
		d = 0;
	return m ? floe_metadata_property_i64(m, key, d) : d;
}

bool floe_prop_bool(const floe_metadata *m, const char *key)
{
	const char *dv = dflt_of(key);
	bool d = dv && floe_str_ieq(dv, "true");
	return m ? floe_metadata_property_bool(m, key, d) : d;
}

const char *floe_prop_str(const floe_metadata *m, const char *key)
{
	const char *v = m ? floe_metadata_property(m, key) : NULL;
	return v ? v : dflt_of(key);
}
