/*
 * floe/files.h — tools over single files, for operators and tests: the
 * content and metadata of Avro container files (manifests, manifest lists)
 * as JSON. Output goes to a floe_write_fn.
 */
#ifndef FLOE_FILES_H
#define FLOE_FILES_H

#include "floe/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Header, codec, block and record counts, metadata (JSON values shown as
 * JSON) of an Avro container file, as one pretty JSON object. */
FLOE_EXPORT int floe_avro_file_meta(const char *path, floe_write_fn fn, void *payload,
			floe_error *err) FLOE_WUR;
/* Every record as a JSON line. */
FLOE_EXPORT int floe_avro_file_cat(const char *path, floe_write_fn fn, void *payload,
		       floe_error *err) FLOE_WUR;

typedef struct floe_avro_file_write_opts {
	int version;              /* 1 */
	const char *codec;        /* "null", "deflate" (default), "snappy", "zstandard" */
	int level;                /* 0 = codec default */
	size_t block_bytes;       /* 0 = default */
	const char *const *meta;  /* "key=value" header entries */
	size_t n_meta;
} floe_avro_file_write_opts;
#define FLOE_AVRO_FILE_WRITE_OPTS_INIT {1, NULL, 0, 0, NULL, 0}

/* Write records given as JSON lines (in Avro's JSON conventions) against a
 * schema (JSON text) into an Avro container file; *bytes receives its size. */
FLOE_EXPORT int floe_avro_file_write(const char *out_path, const char *schema_json, size_t schema_len,
			 const char *jsonl, size_t jsonl_len, const floe_avro_file_write_opts *opts,
			 uint64_t *bytes, floe_error *err) FLOE_WUR;

#ifdef __cplusplus
}
#endif
#endif
