/*
 * write.h — writing table files: data files (Parquet) with their Iceberg
 * metrics, partition fan-out with rolling at the target size, and (next) the
 * delete writers. This header is the contract between the write layer and
 * its users (the streaming runtime, add/compaction commands, tests).
 *
 * Batches are Arrow C Data Interface struct arrays whose children map
 * positionally to the table schema's top-level fields, with the Arrow types
 * floe_iceberg_arrow_schema() gives (see iceberg/arrow_schema.h):
 *   boolean "b", int "i", long "l", float "f", double "g", decimal(P,S)
 *   "d:P,S" (128-bit), date "tdD", time "ttu", timestamp "tsu:", timestamptz
 *   "tsu:UTC", timestamp_ns "tsn:", timestamptz_ns "tsn:UTC", string "u",
 *   uuid "w:16" (arrow.uuid extension metadata), fixed[L] "w:L", binary "z",
 *   struct "+s", list "+l", map "+m".
 *
 * Memory: every open Parquet writer of a task writer (and of all task
 * writers sharing one budget) draws on one floe_parquet_budget; when the
 * total passes the limit the largest open file flushes a row group first.
 *
 * Thread-safety: a task writer belongs to one thread; several task writers
 * on different threads may share a budget and a FileIO.
 */
#ifndef FLOE_WRITE_WRITE_H
#define FLOE_WRITE_WRITE_H

#include "floe/arrow.h"
#include "iceberg/manifest.h"
#include "iceberg/metadata.h"
#include "io/fileio.h"
#include "parquet/writer.h"

/* Settings from table properties (Iceberg's names and defaults). */
typedef struct floe_write_config {
	int64_t target_file_size;   /* write.target-file-size-bytes (512 MiB) */
	floe_parquet_writer_opts parquet; /* write.parquet.* (codec zstd, level, sizes) */
	const char *data_path;      /* write.data.path or <location>/data (owned) */
	bool object_storage;        /* write.object-storage.enabled (false) */
	int format_version;
} floe_write_config;

/* Read the config from a table's properties (strings are copied into a). */
int floe_write_config_from(floe_write_config *out, floe_arena *a, const floe_metadata *m,
			   floe_error *err) FLOE_WUR;

/* ---- one data file ------------------------------------------------------------ */

typedef struct floe_data_writer floe_data_writer;

/*
 * Open a Parquet data file at path for rows of one partition (partition may
 * be NULL for unpartitioned specs). The file's schema is the table schema
 * with Iceberg field ids on every node; the footer carries "iceberg.schema".
 */
int floe_data_writer_open(floe_data_writer **out, floe_fileio *io, const char *path,
			  const floe_metadata *m, const floe_schema *schema,
			  const floe_partition_spec *spec, const floe_partition *partition,
			  const floe_write_config *cfg, floe_parquet_budget *budget,
			  floe_error *err) FLOE_WUR;
/* Append rows (all of this file's partition). */
int floe_data_writer_write(floe_data_writer *w, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/* Estimated size of the finished file so far (bytes flushed + buffered). */
int64_t floe_data_writer_size(const floe_data_writer *w);
int64_t floe_data_writer_rows(const floe_data_writer *w);
/*
 * Finish the file: *out (strings and arrays in arena a) is its manifest
 * entry with exact size, record count, split offsets and the column metrics
 * the table's metrics modes ask for (value/null/NaN counts, sizes, bounds
 * truncated per mode; none inside lists and maps). The writer is freed.
 */
int floe_data_writer_close(floe_data_writer *w, floe_data_file *out, floe_arena *a,
			   floe_error *err) FLOE_WUR;
/* Discard: the file is deleted (it was never published). Accepts NULL. */
void floe_data_writer_abort(floe_data_writer *w);

/* ---- a task writer: partition fan-out and rolling ------------------------------- */

typedef struct floe_task_writer floe_task_writer;

typedef struct floe_task_writer_opts {
	int version;                 /* 1 */
	int partition_id;            /* Java's file name: %05d-%d-%s-%05d */
	int64_t task_id;
	const char *operation_id;    /* a UUID string; NULL = random */
	floe_parquet_budget *budget; /* shared; NULL = a private one of 256 MiB */
	size_t max_open_files;       /* close the largest beyond this (default 1000) */
} floe_task_writer_opts;
#define FLOE_TASK_WRITER_OPTS_INIT {1, 0, 0, NULL, NULL, 1000}

/*
 * A writer for one task: rows of any partition come in, are routed to one
 * open file per partition (the table's default spec, transforms applied per
 * row), and files roll over at the target size. Paths follow Java's
 * convention: <data path>/<partition path>/<%05d-%d-<op>-%05d>.parquet.
 */
int floe_task_writer_new(floe_task_writer **out, floe_fileio *io, const floe_metadata *m,
			 const floe_write_config *cfg, const floe_task_writer_opts *opts,
			 floe_error *err) FLOE_WUR;
int floe_task_writer_write(floe_task_writer *tw, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/*
 * Close every open file (a checkpoint): appends the finished files' entries
 * (in arena a) to *files/*n (a growable array the caller frees with
 * floe_free). The task writer stays usable for the next checkpoint.
 */
int floe_task_writer_complete(floe_task_writer *tw, floe_data_file **files, size_t *n,
			      floe_arena *a, floe_error *err) FLOE_WUR;
/* Bytes buffered by this task writer's open files. */
size_t floe_task_writer_buffered(const floe_task_writer *tw);
/* Abort every open file; the writer is freed. Finished files returned by
 * complete() are the caller's (delete them if they are never committed). */
void floe_task_writer_abort(floe_task_writer *tw);
void floe_task_writer_free(floe_task_writer *tw); /* after complete(): frees */

#endif
