/*
 * write_config.c — the write settings of a table (Iceberg's property names
 * and Java's defaults) and the location of new files, including the
 * object-storage layout of Java's and PyIceberg's ObjectStoreLocationProvider.
 */
#include <stdio.h>
#include <string.h>

#include "iceberg/props.h"
#include "util/hash.h"
#include "util/str.h"
#include "write/write.h"


/* An integer property checked and defaulted by the registry
 * (iceberg/props.c): a stored bad value is FLOE_EINVAL. */
static int size_prop(int64_t *out, const floe_metadata *m, const char *key, floe_error *err)
{
	const char *v = floe_metadata_property(m, key);
	int rc = v ? floe_prop_check(key, v, err) : FLOE_OK;
	*out = floe_prop_i64(m, key);
	return rc;
}

/* The same with the default dflt (a delete setting falls back to the data
 * setting's value, not to a fixed default). */
static int size_prop_or(int64_t *out, const floe_metadata *m, const char *key, int64_t dflt,
			floe_error *err)
{
	const char *v = floe_metadata_property(m, key);
	int rc = v ? floe_prop_check(key, v, err) : FLOE_OK;
	*out = floe_metadata_property_i64(m, key, dflt);
	return rc;
}

static int bool_prop(bool *out, const floe_metadata *m, const char *key, floe_error *err)
{
	const char *v = floe_metadata_property(m, key);
	int rc = v ? floe_prop_check(key, v, err) : FLOE_OK;
	*out = floe_prop_bool(m, key);
	return rc;
}

static int codec_prop(int *out, const char *key, const char *v, floe_error *err)
{
	static const struct {
		const char *name;
		int codec;
	} names[] = {
		{"zstd", FLOE_PARQUET_ZSTD},	       {"snappy", FLOE_PARQUET_SNAPPY},
		{"gzip", FLOE_PARQUET_GZIP},	       {"brotli", FLOE_PARQUET_BROTLI},
		/* pyarrow's "lz4" writes LZ4_RAW; the Hadoop-framed LZ4 is deprecated */
		{"lz4", FLOE_PARQUET_LZ4_RAW},	       {"lz4_raw", FLOE_PARQUET_LZ4_RAW},
		{"uncompressed", FLOE_PARQUET_UNCOMPRESSED}, {"none", FLOE_PARQUET_UNCOMPRESSED},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (floe_str_ieq(v, names[i].name)) {
			*out = names[i].codec;
			return FLOE_OK;
		}
	return floe_error_set(err, FLOE_EINVAL,
			      "table property %s = '%s': expected zstd, snappy, gzip, brotli, "
			      "lz4, lz4_raw or uncompressed",
			      key, v);
}

static char *strip_slash(floe_arena *a, const char *s)
{
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		n--;
	return floe_arena_strndup(a, s, n);
}

static int page_version_prop(int *out, const floe_metadata *m, const char *key, int dflt,
			     floe_error *err)
{
	const char *v = floe_metadata_property(m, key);
	*out = dflt;
	if (!v)
		return FLOE_OK;
	if (floe_str_ieq(v, "v1") || strcmp(v, "1") == 0)
		*out = 1;
	else if (floe_str_ieq(v, "v2") || strcmp(v, "2") == 0)
		*out = 2;
	else
		return floe_error_set(err, FLOE_EINVAL, "table property %s = '%s': expected v1 or v2",
				      key, v);
	return FLOE_OK;
}

/*
 * The delete files' Parquet settings: write.delete.parquet.*, each
 * defaulting to its write.parquet.* value (Java's Parquet deleteContext).
 */
static int delete_parquet_props(floe_parquet_writer_opts *o, const floe_metadata *m,
				const floe_parquet_writer_opts *data, floe_error *err)
{
	const char *v;
	int64_t level;
	int rc;
	*o = *data;
	if ((rc = size_prop_or(&o->row_group_bytes, m, "write.delete.parquet.row-group-size-bytes",
			       data->row_group_bytes, err)) ||
	    (rc = size_prop_or(&o->page_bytes, m, "write.delete.parquet.page-size-bytes",
			       data->page_bytes, err)) ||
	    (rc = size_prop_or(&o->page_rows, m, "write.delete.parquet.page-row-limit",
			       data->page_rows, err)) ||
	    (rc = size_prop_or(&o->dict_bytes, m, "write.delete.parquet.dict-size-bytes",
			       data->dict_bytes, err)) ||
	    (rc = size_prop_or(&level, m, "write.delete.parquet.compression-level", data->level,
			       err)))
		return rc;
	o->level = (int)level;
	if ((v = floe_metadata_property(m, "write.delete.parquet.compression-codec")) &&
	    (rc = codec_prop(&o->codec, "write.delete.parquet.compression-codec", v, err)))
		return rc;
	return page_version_prop(&o->page_version, m, "write.delete.parquet.page-version",
				 data->page_version, err);
}

int floe_write_config_from(floe_write_config *out, floe_arena *a, const floe_metadata *m,
			   floe_error *err)
{
	static const floe_parquet_writer_opts dflt = FLOE_PARQUET_WRITER_OPTS_INIT;
	const char *v;
	int64_t level;
	int rc;

	memset(out, 0, sizeof(*out));
	out->parquet = dflt;
	out->format_version = m->format_version;
	if ((rc = size_prop(&out->target_file_size, m, "write.target-file-size-bytes", err)) ||
	    (rc = size_prop(&out->delete_target_file_size, m, "write.delete.target-file-size-bytes",
			    err)) ||
	    (rc = size_prop(&out->parquet.row_group_bytes, m, "write.parquet.row-group-size-bytes",
			    err)) ||
	    (rc = size_prop(&out->parquet.row_group_rows, m, "write.parquet.row-group-limit", err)) ||
	    (rc = size_prop(&out->parquet.page_bytes, m, "write.parquet.page-size-bytes", err)) ||
	    (rc = size_prop(&out->parquet.page_rows, m, "write.parquet.page-row-limit", err)) ||
	    (rc = size_prop(&out->parquet.dict_bytes, m, "write.parquet.dict-size-bytes", err)) ||
	    (rc = size_prop(&level, m, "write.parquet.compression-level", err)))
		return rc;
	out->parquet.level = (int)level;
	/* the only data file format floe writes */
	if ((v = floe_metadata_property(m, "write.format.default")) &&
	    (rc = floe_prop_check("write.format.default", v, err)))
		return rc;
	if ((v = floe_metadata_property(m, "write.delete.format.default")) &&
	    (rc = floe_prop_check("write.delete.format.default", v, err)))
		return rc;
	if ((v = floe_metadata_property(m, "write.parquet.compression-codec")) &&
	    (rc = codec_prop(&out->parquet.codec, "write.parquet.compression-codec", v, err)))
		return rc;
	if ((rc = page_version_prop(&out->parquet.page_version, m, "write.parquet.page-version", 1,
				    err)) ||
	    (rc = delete_parquet_props(&out->delete_parquet, m, &out->parquet, err)))
		return rc;
	if ((rc = bool_prop(&out->object_storage, m, "write.object-storage.enabled", err)) ||
	    (rc = bool_prop(&out->object_storage_partitioned_paths, m,
			    "write.object-storage.partitioned-paths", err)))
		return rc;

	/* Java LocationProviders: write.data.path, then (object storage only) the
	 * deprecated write.object-storage.path, then write.folder-storage.path */
	v = floe_metadata_property(m, "write.data.path");
	if (!v && out->object_storage)
		v = floe_metadata_property(m, "write.object-storage.path");
	if (!v)
		v = floe_metadata_property(m, "write.folder-storage.path");
	if (v && *v) {
		out->data_path = strip_slash(a, v);
	} else {
		char *loc;
		if (!m->location || !*m->location)
			return floe_error_set(err, FLOE_EINVAL, "the table has no location");
		loc = strip_slash(a, m->location);
		out->data_path = loc ? floe_arena_sprintf(a, "%s/data", loc) : NULL;
	}
	if (!out->data_path)
		return floe_error_oom(err);
	return FLOE_OK;
}

int floe_write_location(floe_buf *out, const floe_write_config *cfg, const char *partition_path,
			const char *name)
{
	bool has_part = partition_path && *partition_path;
	if (!cfg->object_storage) {
		if (has_part)
			return floe_buf_printf(out, "%s/%s/%s", cfg->data_path, partition_path, name);
		return floe_buf_printf(out, "%s/%s", cfg->data_path, name);
	}
	/* ObjectStoreLocationProvider: hash the name (with the partition path in
	 * front when partitioned paths are on), keep the low 20 bits as binary
	 * digits, split as 4/4/4/8 */
	floe_buf key;
	char bits[21], dirs[32];
	uint32_t h;
	int rc;
	floe_buf_init(&key, 0);
	rc = cfg->object_storage_partitioned_paths && has_part
		     ? floe_buf_printf(&key, "%s/%s", partition_path, name)
		     : floe_buf_puts(&key, name);
	if (rc) {
		floe_buf_reset(&key);
		return rc;
	}
	h = floe_murmur3_32(key.data, key.len, 0) & 0xfffffu;
	for (int i = 0; i < 20; i++)
		bits[i] = (char)('0' + ((h >> (19 - i)) & 1));
	bits[20] = 0;
	snprintf(dirs, sizeof(dirs), "%.4s/%.4s/%.4s/%.8s", bits, bits + 4, bits + 8, bits + 12);
	if (cfg->object_storage_partitioned_paths)
		rc = floe_buf_printf(out, "%s/%s/%s", cfg->data_path, dirs,
				     floe_buf_cstr(&key));
	else
		rc = floe_buf_printf(out, "%s/%s-%s", cfg->data_path, dirs, name);
	floe_buf_reset(&key);
	return rc;
}
