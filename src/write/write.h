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
 * Also accepted: narrower integers, large strings/binaries/lists ("U", "Z",
 * "+L"), coarser time units (converted up; a finer unit than the column's is
 * FLOE_EINVAL). Columns of type unknown (and structs of only unknown fields)
 * are present in the batch (any format, normally "n") and are not written.
 * The batch stays the caller's: writers never release it.
 *
 * Memory: every open Parquet writer of a task writer (and of all task
 * writers sharing one budget) draws on one floe_parquet_budget; when the
 * total passes the limit the largest open file flushes a row group first.
 * See src/write/README.md for the memory model and the invariants.
 *
 * Errors: FLOE_EINVAL for batches that do not fit the schema (the message
 * names the column), FLOE_EIO/FLOE_EEXISTS from the FileIO, FLOE_ENOMEM.
 * After an error from a writer's write or close, the only valid call is its
 * abort (a data writer's close frees it either way).
 *
 * Thread-safety: a task writer belongs to one thread; several task writers
 * on different threads may share a budget and a FileIO. Table metadata is
 * only read and must outlive the writers made from it.
 *
 * Changes from the first draft of this contract: floe_write_config gained
 * object_storage_partitioned_paths and delete_target_file_size;
 * floe_write_location computes file locations (also for the delete writers
 * to come); data writers expose flush/buffered for budget owners; the task
 * writer opts gained target_file_size and budget_bytes; task writer abort
 * also deletes files rolled since the last complete() (never handed out).
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
	int64_t delete_target_file_size; /* write.delete.target-file-size-bytes (64 MiB) */
	floe_parquet_writer_opts parquet; /* write.parquet.* (codec zstd, level, sizes) */
	const char *data_path;      /* write.data.path, write.object-storage.path (object
				       storage only), write.folder-storage.path, or
				       <location>/data; no trailing '/' (owned by the arena) */
	bool object_storage;        /* write.object-storage.enabled (false) */
	bool object_storage_partitioned_paths; /* write.object-storage.partitioned-paths (true) */
	int format_version;
} floe_write_config;

/*
 * Read the config from a table's properties (strings are copied into a):
 *   write.target-file-size-bytes, write.delete.target-file-size-bytes,
 *   write.parquet.compression-codec (zstd; snappy, gzip, brotli, lz4 = LZ4_RAW
 *   as pyarrow writes it, lz4_raw, uncompressed/none), .compression-level,
 *   .row-group-size-bytes, .row-group-limit (rows; 0 = none), .page-size-bytes,
 *   .page-row-limit, .dict-size-bytes, .page-version (v1/v2);
 *   write.data.path (& the deprecated path properties), write.object-storage.*.
 * FLOE_EINVAL names the property whose value is bad.
 */
int floe_write_config_from(floe_write_config *out, floe_arena *a, const floe_metadata *m,
			   floe_error *err) FLOE_WUR;

/*
 * The location of a new file (appended to out): with the default layout
 * <data>/<partition path>/<name> (no partition path when NULL or ""); with
 * object storage, as Java's and PyIceberg's ObjectStoreLocationProvider:
 * the low 20 bits of murmur3_32 of "<partition path>/<name>" (or of <name>)
 * as binary digits in dirs of 4/4/4/8, <data>/<dirs>/<partition path>/<name>,
 * or <data>/<dirs>-<name> when partitioned paths are off.
 */
int floe_write_location(floe_buf *out, const floe_write_config *cfg, const char *partition_path,
			const char *name) FLOE_WUR;

/* ---- one data file ------------------------------------------------------------ */

typedef struct floe_data_writer floe_data_writer;

/*
 * Open a Parquet data file at path for rows of one partition (partition may
 * be NULL for unpartitioned specs; it is copied). The file's schema is the
 * table schema with Iceberg field ids on every node; the footer carries
 * "iceberg.schema". m gives the metrics modes (write.metadata.metrics.*).
 * budget may be NULL (then cfg->parquet.budget is used, which may be NULL).
 * A file never replaces another: FLOE_EEXISTS from open or close (the
 * FileIO publishes on close; some backends refuse at create already).
 */
int floe_data_writer_open(floe_data_writer **out, floe_fileio *io, const char *path,
			  const floe_metadata *m, const floe_schema *schema,
			  const floe_partition_spec *spec, const floe_partition *partition,
			  const floe_write_config *cfg, floe_parquet_budget *budget,
			  floe_error *err) FLOE_WUR;
/* Append rows (all of this file's partition: not checked). */
int floe_data_writer_write(floe_data_writer *w, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/* Estimated size of the finished file so far (bytes written + the open row
 * group's compressed pages and open pages). */
int64_t floe_data_writer_size(const floe_data_writer *w);
/* The size in an exact part and an uncompressed open part
 * (floe_parquet_writer_size_parts). */
void floe_data_writer_size_parts(const floe_data_writer *w, int64_t *exact, int64_t *open);
int64_t floe_data_writer_rows(const floe_data_writer *w);
/* Memory the file's Parquet writer holds, and ending its row group now. */
size_t floe_data_writer_buffered(const floe_data_writer *w);
int floe_data_writer_flush(floe_data_writer *w, floe_error *err) FLOE_WUR;
/* The Parquet writer inside (to match a budget callback's "largest"). */
const floe_parquet_writer *floe_data_writer_parquet(const floe_data_writer *w);
const char *floe_data_writer_path(const floe_data_writer *w);
/*
 * Finish the file: *out (strings and arrays in arena a) is its manifest
 * entry with exact size, record count, split offsets and the column metrics
 * the table's metrics modes ask for (value/null/NaN counts, sizes, bounds
 * truncated per mode; none inside lists and maps). The writer is freed,
 * also on error (then nothing is published).
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
	int64_t target_file_size;    /* 0 = the config's */
	uint64_t budget_bytes;       /* limit of the private budget (0 = 256 MiB) */
} floe_task_writer_opts;
#define FLOE_TASK_WRITER_OPTS_INIT {1, 0, 0, NULL, NULL, 1000, 0, 0}

/*
 * A writer for one task: rows of any partition come in, are routed to one
 * open file per partition (the table's default spec and current schema,
 * transforms applied per row), and files roll over at the target size.
 * Paths follow Java's convention: <data path>/<partition path>/<%05d-%d-<op>-%05d>.parquet
 * (floe_write_location). cfg is copied; m must outlive the writer — a
 * floe_table's metadata is replaced (freed) by commits through that table,
 * so commit through another handle or keep the metadata alive.
 * FLOE_EUNSUPPORTED for specs with transforms floe cannot apply.
 */
int floe_task_writer_new(floe_task_writer **out, floe_fileio *io, const floe_metadata *m,
			 const floe_write_config *cfg, const floe_task_writer_opts *opts,
			 floe_error *err) FLOE_WUR;
int floe_task_writer_write(floe_task_writer *tw, const struct ArrowArray *batch,
			   const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/*
 * Close every open file (a checkpoint): appends the entries of the files
 * finished since the last complete() — rolled ones and the ones closed now —
 * (strings in arena a) to *files and *n (a growable array the caller frees with
 * floe_free). The task writer stays usable for the next checkpoint; its file
 * counter continues.
 */
int floe_task_writer_complete(floe_task_writer *tw, floe_data_file **files, size_t *n,
			      floe_arena *a, floe_error *err) FLOE_WUR;
/* Bytes buffered by this task writer's open files. */
size_t floe_task_writer_buffered(const floe_task_writer *tw);

/* Counters (for tests, metrics and logs). */
typedef struct floe_task_writer_stats {
	int64_t rows;           /* written since creation */
	int64_t files_finished; /* since creation */
	size_t open_files;
	int64_t budget_flushes; /* row groups ended early for the memory budget */
	int64_t evictions;      /* files closed early for max_open_files */
} floe_task_writer_stats;
void floe_task_writer_get_stats(const floe_task_writer *tw, floe_task_writer_stats *out);

/* Abort every open file and delete files finished since the last complete()
 * (never handed out); the writer is freed. Finished files returned by
 * complete() are the caller's (delete them if they are never committed).
 * Accepts NULL. */
void floe_task_writer_abort(floe_task_writer *tw);
void floe_task_writer_free(floe_task_writer *tw); /* after complete(): frees; NULL ok */

#endif
