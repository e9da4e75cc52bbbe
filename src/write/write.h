/*
 * write.h — writing table files: data files (Parquet) with their Iceberg
 * metrics, partition fan-out with rolling at the target size, and the
 * delete writers (equality deletes, v2 position deletes, v3 deletion
 * vectors). This header is the contract between the write layer and its
 * users (the streaming runtime, add/compaction commands, tests).
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
 * Then: floe_write_config gained delete_parquet (write.delete.parquet.*);
 * file names come from a floe_file_namer that a task's writers may share
 * (floe_task_writer_opts.namer); the delete writers were added.
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
	floe_parquet_writer_opts delete_parquet; /* write.delete.parquet.*, each defaulting
						    to its write.parquet.* value (Java) */
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

/* ---- file names shared by the writers of a task --------------------------------- */

/*
 * Java's OutputFileFactory: names %05d-%d-<operation id>-%05d<ext> (partition
 * id, task id, operation id, a counter from 1). Writers of one task that are
 * given the same namer — its data task writer, delete writers and DV writer,
 * as one Java task shares one factory — draw from one counter, so their
 * files never collide. Not thread-safe: it belongs to the task's thread.
 */
typedef struct floe_file_namer floe_file_namer;

/* operation_id NULL or "" = a random UUID. FLOE_EINVAL when it is too long. */
int floe_file_namer_new(floe_file_namer **out, int partition_id, int64_t task_id,
			const char *operation_id, floe_error *err) FLOE_WUR;
/* The next name (ext e.g. ".parquet") into out[0..cap). FLOE_EINVAL when
 * the counter is exhausted or cap is too small. */
int floe_file_namer_next(floe_file_namer *nm, char *out, size_t cap, const char *ext,
			 floe_error *err) FLOE_WUR;
const char *floe_file_namer_operation_id(const floe_file_namer *nm);
/* Names handed out so far. */
int32_t floe_file_namer_count(const floe_file_namer *nm);
void floe_file_namer_free(floe_file_namer *nm); /* NULL ok */

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
	floe_file_namer *namer;      /* shared with the task's other writers (then
					partition_id, task_id and operation_id are
					its); NULL = one of its own */
} floe_task_writer_opts;
#define FLOE_TASK_WRITER_OPTS_INIT {1, 0, 0, NULL, NULL, 1000, 0, 0, NULL}

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
 * The same, and for row i of the batch the data file it went to
 * (file_idx[i], see floe_task_writer_file) and its position in that file
 * (pos[i], counted from 0), as Java's RollingFileWriter currentPath() /
 * currentRows() give an upsert writer. Both arrays hold batch->length
 * values. Indexes are valid until the next complete().
 */
int floe_task_writer_write_pos(floe_task_writer *tw, const struct ArrowArray *batch,
			       const struct ArrowSchema *schema, int32_t *file_idx, int64_t *pos,
			       floe_error *err) FLOE_WUR;
/* A data file named by write_pos: its path, spec and partition (owned by the
 * writer, valid until the next complete()). */
typedef struct floe_written_file {
	const char *path;
	int32_t spec_id;
	const floe_partition *partition;
} floe_written_file;
/* FLOE_EINVAL for an index never handed out since the last complete(). */
int floe_task_writer_file(const floe_task_writer *tw, int32_t idx,
			  floe_written_file *out) FLOE_WUR;
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

/* ---- delete files ----------------------------------------------------------------- */

/*
 * Three writers, as Java's (and Flink's upsert sink's) delete writers write
 * them; src/write/README.md states their invariants. Each collects or writes
 * the deletes of one task between two complete() calls (a checkpoint); what
 * complete() hands out is the caller's to commit (a row delta) or delete.
 * Files are named and placed like data files (Java's OutputFileFactory: the
 * partition path of the delete's partition; DV Puffin files at the data
 * path without one), Parquet delete files use write.delete.parquet.* and roll
 * at write.delete.target-file-size-bytes, and their Parquet writers draw on
 * the same floe_parquet_budget as the task's data files when given it.
 *
 * Errors: FLOE_EINVAL for misuse (a kind the table's format version does not
 * allow, unknown equality fields, negative positions, a data file given two
 * partitions), FLOE_EIO/FLOE_EEXISTS from the FileIO, FLOE_ENOMEM, and
 * FLOE_ECORRUPT for a previous deletion vector that does not decode. After
 * an error from a writer the only valid calls are abort()/free(), which
 * delete every file not handed out. Thread-safety: as the task writer.
 */

/* Reserved field ids (spec "Reserved Field IDs"). */
#define FLOE_FIELD_ID_DELETE_FILE_PATH 2147483546
#define FLOE_FIELD_ID_DELETE_POS 2147483545
#define FLOE_FIELD_ID_DELETE_ROW 2147483544

typedef struct floe_delete_writer_opts {
	int version;                 /* 1 */
	int partition_id;            /* file names, as for the task writer */
	int64_t task_id;
	const char *operation_id;    /* NULL = random */
	floe_file_namer *namer;      /* shared with the task's data writer: NULL = own */
	floe_parquet_budget *budget; /* shared; NULL = a private one */
	uint64_t budget_bytes;       /* limit of the private budget (0 = 256 MiB) */
	size_t max_open_files;       /* Parquet delete files open at once (1000) */
	int64_t target_file_size;    /* 0 = write.delete.target-file-size-bytes */
	/* equality deletes */
	const int32_t *equality_ids; /* the equality field ids (copied) */
	size_t n_equality_ids;
	bool full_rows;              /* the delete rows are whole table rows (Flink
					without upsert); false: only the equality
					columns (Flink's upsert mode) */
	int32_t sort_order_id;       /* recorded on equality delete files (Java: 0,
					unsorted, unless the writer sorts) */
	/* position deletes */
	bool file_scoped;            /* one delete file per data file (Java's
					DeleteGranularity.FILE); else per partition */
	size_t max_buffered_bytes;   /* positions held before they are written out
					(0 = 64 MiB); position deletes only */
} floe_delete_writer_opts;
#define FLOE_DELETE_WRITER_OPTS_INIT {1, 0, 0, NULL, NULL, NULL, 0, 1000, 0, NULL, 0, false, 0, false, 0}

/* Counters of a delete writer (since creation). */
typedef struct floe_delete_writer_stats {
	int64_t deletes;        /* rows / positions given */
	int64_t files_finished; /* delete files (for DVs: blobs) handed out or held */
	size_t open_files;
	int64_t budget_flushes;
	int64_t spills;         /* position deletes written early (max_buffered_bytes) */
} floe_delete_writer_stats;

/* ---- equality deletes ---- */

typedef struct floe_eq_delete_writer floe_eq_delete_writer;

/*
 * Equality delete files (content 2, equality_ids, sort_order_id) of the
 * table's current schema and default spec: Parquet files whose schema is
 * the table schema projected to the equality fields (Java's
 * TypeUtil.select; ids, names, types, requiredness kept) — or the whole
 * schema with full_rows — with "iceberg.schema", "delete-type" = "equality"
 * and "delete-field-ids" in the footer and the data files' metrics (the
 * table's metrics modes). Equality fields must be top-level primitive
 * columns; FLOE_EINVAL names one that is not, FLOE_EINVAL for v1 tables.
 */
int floe_eq_delete_writer_new(floe_eq_delete_writer **out, floe_fileio *io,
			      const floe_metadata *m, const floe_write_config *cfg,
			      const floe_delete_writer_opts *opts, floe_error *err) FLOE_WUR;
/* The delete files' schema (owned by the writer). */
const floe_schema *floe_eq_delete_writer_schema(const floe_eq_delete_writer *w);
/*
 * Delete rows: batch is a struct of either the table's top-level fields
 * (rows of the table: the delete columns are taken from them) or of the
 * delete schema's. Each row goes to the file of its partition (computed
 * with the default spec; with delete-schema rows every partition source
 * must be among the equality fields, else FLOE_EINVAL).
 */
int floe_eq_delete_writer_write(floe_eq_delete_writer *w, const struct ArrowArray *batch,
				const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/* Delete rows that all belong to partition p (default spec). */
int floe_eq_delete_writer_write_partition(floe_eq_delete_writer *w, const floe_partition *p,
					  const struct ArrowArray *batch,
					  const struct ArrowSchema *schema,
					  floe_error *err) FLOE_WUR;
/* Finish every file; append the entries of the files finished since the
 * last complete() to *files, *n (growable, caller frees; strings in a). */
int floe_eq_delete_writer_complete(floe_eq_delete_writer *w, floe_data_file **files, size_t *n,
				   floe_arena *a, floe_error *err) FLOE_WUR;
size_t floe_eq_delete_writer_buffered(const floe_eq_delete_writer *w);
void floe_eq_delete_writer_get_stats(const floe_eq_delete_writer *w,
				     floe_delete_writer_stats *out);
void floe_eq_delete_writer_abort(floe_eq_delete_writer *w); /* deletes what was not handed out */
void floe_eq_delete_writer_free(floe_eq_delete_writer *w);  /* the same; NULL ok */

/* ---- position deletes (v2) ---- */

typedef struct floe_pos_delete_writer floe_pos_delete_writer;

/*
 * Position delete files for format v2 (content 1): Parquet with file_path
 * (2147483546, string) and pos (2147483545, long), both required, no `row`;
 * rows sorted by (file_path, pos) without duplicates; "delete-type" =
 * "position" in the footer. Positions are collected per data file and
 * written at complete() (or earlier, sorted, when they pass
 * max_buffered_bytes), one file per partition of the data files (or per
 * data file with file_scoped), rolling at the delete target size. Metrics as
 * Java's PositionDeleteWriter: column sizes, full (untruncated) bounds on
 * file_path and pos only when every row targets one data file, no counts;
 * referenced_data_file is set when every row targets one data file.
 * FLOE_EINVAL on v1 (no deletes) and v3 tables (deletion vectors only:
 * spec "v3 writers must not add new position delete files").
 */
int floe_pos_delete_writer_new(floe_pos_delete_writer **out, floe_fileio *io,
			       const floe_metadata *m, const floe_write_config *cfg,
			       const floe_delete_writer_opts *opts, floe_error *err) FLOE_WUR;
/*
 * Delete rows pos[0..n) (any order, repeats allowed) of the data file at
 * data_path, whose spec and partition are spec_id and partition (copied;
 * the delete file gets them).
 */
int floe_pos_delete_writer_delete(floe_pos_delete_writer *w, const char *data_path,
				  int32_t spec_id, const floe_partition *partition,
				  const int64_t *pos, size_t n, floe_error *err) FLOE_WUR;
int floe_pos_delete_writer_complete(floe_pos_delete_writer *w, floe_data_file **files, size_t *n,
				    floe_arena *a, floe_error *err) FLOE_WUR;
/* Positions held plus the open files' Parquet buffers. */
size_t floe_pos_delete_writer_buffered(const floe_pos_delete_writer *w);
void floe_pos_delete_writer_get_stats(const floe_pos_delete_writer *w,
				      floe_delete_writer_stats *out);
void floe_pos_delete_writer_abort(floe_pos_delete_writer *w);
void floe_pos_delete_writer_free(floe_pos_delete_writer *w);

/* ---- deletion vectors (v3) ---- */

typedef struct floe_dv_writer floe_dv_writer;

/*
 * Deletion vectors for format v3: positions are collected per data file and
 * complete() writes one Puffin file (<data path>/<name>.puffin) holding one
 * deletion-vector-v1 blob per data file, in path order, as Java's
 * BaseDVFileWriter: blob fields [2147483645], snapshot-id and
 * sequence-number -1 (inherited), properties referenced-data-file and
 * cardinality, footer property created-by. Each DV's entry: content 1,
 * file_format PUFFIN, the Puffin file's path and size, the data file's spec
 * and partition, record_count = cardinality, referenced_data_file,
 * content_offset and content_size_in_bytes of its blob; no metrics.
 * FLOE_EINVAL below format v3.
 *
 * spec: at most one DV per data file per snapshot. A data file that already
 * has a DV must have it merged (floe_dv_writer_merge_previous): the new DV
 * then holds the old positions too, and complete() hands the old entry out
 * as replaced, to be removed in the same commit.
 */
int floe_dv_writer_new(floe_dv_writer **out, floe_fileio *io, const floe_metadata *m,
		       const floe_write_config *cfg, const floe_delete_writer_opts *opts,
		       floe_error *err) FLOE_WUR;
/* Delete rows pos[0..n) of a data file (as floe_pos_delete_writer_delete). */
int floe_dv_writer_delete(floe_dv_writer *w, const char *data_path, int32_t spec_id,
			  const floe_partition *partition, const int64_t *pos, size_t n,
			  floe_error *err) FLOE_WUR;
/*
 * Merge a live DV (its manifest entry: content 1, format PUFFIN,
 * referenced_data_file, content_offset, content_size_in_bytes, record_count
 * = cardinality) into the DV of its data file: the blob is read through the
 * FileIO and decoded (CRC and cardinality checked: FLOE_ECORRUPT), its
 * positions join the new DV, and the entry is replaced. The same entry
 * twice is merged once. The data file's spec and partition are the entry's.
 */
int floe_dv_writer_merge_previous(floe_dv_writer *w, const floe_data_file *dv,
				  floe_error *err) FLOE_WUR;
/*
 * The same with positions the caller read (a file-scoped position delete
 * file being folded into the DV): pos[0..n) join the data file's DV and
 * `replaced` (optional) is handed out as replaced.
 */
int floe_dv_writer_merge(floe_dv_writer *w, const char *data_path, int32_t spec_id,
			 const floe_partition *partition, const uint64_t *pos, size_t n,
			 const floe_data_file *replaced, floe_error *err) FLOE_WUR;
/*
 * Write the Puffin file (none when nothing was deleted) and append the new
 * DVs' entries to *dvs, *n and the entries they replace to
 * *replaced, *n_replaced (growable arrays the caller frees; strings in a).
 */
int floe_dv_writer_complete(floe_dv_writer *w, floe_data_file **dvs, size_t *n,
			    floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			    floe_error *err) FLOE_WUR;
/* Positions held (bytes). */
size_t floe_dv_writer_buffered(const floe_dv_writer *w);
void floe_dv_writer_get_stats(const floe_dv_writer *w, floe_delete_writer_stats *out);
void floe_dv_writer_abort(floe_dv_writer *w);
void floe_dv_writer_free(floe_dv_writer *w);

/* ---- upserts and CDC: the delta writer ------------------------------------------ */

/* The change kind of a row: Flink's RowKind (+I, -U, +U, -D). */
typedef enum floe_row_kind {
	FLOE_ROW_INSERT = 0,
	FLOE_ROW_UPDATE_BEFORE = 1,
	FLOE_ROW_UPDATE_AFTER = 2,
	FLOE_ROW_DELETE = 3,
} floe_row_kind;

/*
 * The equality field ids of a table: the columns named in `names`
 * ("id, region"; exact names first, then ASCII case-insensitive), or the
 * schema's identifier fields when names is NULL or empty. FLOE_EINVAL for
 * an unknown or repeated name, or more than cap.
 */
int floe_delta_equality_ids(const floe_schema *s, const char *names, int32_t *ids, size_t cap,
			    size_t *n, floe_error *err) FLOE_WUR;
/*
 * The rules an upsert or CDC write must keep, checked before anything is
 * written (FLOE_EINVAL, the message naming the rule and the fix): format
 * version 2 or later; at least one equality field, each a top-level
 * primitive column; in upsert mode every partition source column among the
 * equality fields (Flink's rule: an upsert's delete holds only the key).
 */
int floe_delta_check(const floe_schema *s, const floe_partition_spec *spec, int format_version,
		     const int32_t *ids, size_t n, bool upsert, floe_error *err) FLOE_WUR;

typedef struct floe_delta_writer floe_delta_writer;

typedef struct floe_delta_writer_opts {
	int version;                 /* 1 */
	int partition_id;            /* file names, as for the task writer */
	int64_t task_id;
	const char *operation_id;    /* NULL = random */
	floe_parquet_budget *budget; /* shared; NULL = a private one */
	uint64_t budget_bytes;       /* limit of the private budget (0 = 256 MiB) */
	size_t max_open_files;       /* per kind of file (1000) */
	int64_t target_file_size;    /* data files; 0 = write.target-file-size-bytes */
	int64_t delete_target_file_size; /* 0 = write.delete.target-file-size-bytes */
	const int32_t *equality_ids; /* the key (copied) */
	size_t n_equality_ids;
	bool upsert;                 /* every insert replaces its key (Flink's upsert
					mode); false: CDC, deletes carry whole rows */
	struct floe_delta_index *index; /* index mode (below); NULL = equality mode */
} floe_delta_writer_opts;
#define FLOE_DELTA_WRITER_OPTS_INIT {1, 0, 0, NULL, NULL, 0, 1000, 0, 0, NULL, 0, true, NULL}

typedef struct floe_delta_writer_stats {
	int64_t rows;             /* rows written to data files */
	int64_t equality_deletes; /* equality delete rows */
	int64_t position_deletes; /* positions deleted (position delete rows or DV bits) */
	int64_t keys;             /* keys mapped (since creation) */
	size_t key_bytes;         /* memory of the current key map */
} floe_delta_writer_stats;

/*
 * Iceberg Flink's upsert / CDC task writer (BaseEqualityDeltaWriter): rows
 * of the table with a change kind each (kinds[i], NULL = all inserts)
 * become data files, equality delete files (the key columns in upsert mode,
 * whole rows otherwise) and position deletes of rows this writer inserted
 * in the same checkpoint — position delete files (v2, one per data file as
 * Flink's DeleteGranularity.FILE) or deletion vectors (v3). Per checkpoint a
 * key map remembers where each key's row went (src/write/README.md: the
 * rules, the memory per key). floe_delta_check's rules are checked at
 * creation. Data and delete files share one file namer (one counter) and
 * the budget. Thread-safety and lifetimes as the task writer's.
 */
int floe_delta_writer_new(floe_delta_writer **out, floe_fileio *io, const floe_metadata *m,
			  const floe_write_config *cfg, const floe_delta_writer_opts *opts,
			  floe_error *err) FLOE_WUR;
/* Changes, in order: the batch is a struct of the table's top-level fields.
 * Only the key columns of a delete matter in upsert mode (others may be
 * null). FLOE_EINVAL for an unknown kind. */
int floe_delta_writer_write(floe_delta_writer *w, const struct ArrowArray *batch,
			    const struct ArrowSchema *schema, const uint8_t *kinds,
			    floe_error *err) FLOE_WUR;
/*
 * A checkpoint: finish every file and append the entries of data files,
 * equality delete files, position delete files / DVs to *files, *n, and the
 * DVs they replace (none: this writer only deletes rows of its own files) to
 * *replaced, *n_replaced (growable arrays the caller frees; strings in a).
 * The key map starts empty again.
 */
int floe_delta_writer_complete(floe_delta_writer *w, floe_data_file **files, size_t *n,
			       floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			       floe_error *err) FLOE_WUR;
/* Memory of the key map (slots and key bytes). */
size_t floe_delta_writer_key_bytes(const floe_delta_writer *w);
/* Open files' buffers, positions held and the key map. */
size_t floe_delta_writer_buffered(const floe_delta_writer *w);
void floe_delta_writer_get_stats(const floe_delta_writer *w, floe_delta_writer_stats *out);
void floe_delta_writer_abort(floe_delta_writer *w); /* deletes what was not handed out; NULL ok */
void floe_delta_writer_free(floe_delta_writer *w);

/*
 * Index mode (write.upsert.mode=index): a table's key index, shared by the
 * delta writers of its tasks (thread-safe; one key index partition per task,
 * chosen by a hash of the key). Built from the current snapshot's key
 * columns (floe_delta_index_add_file for every live data file with its DV,
 * then floe_delta_index_load for the rows), it maps each key to the data
 * file and position of its live row. A delta writer given it writes, for
 * every key whose equality delete it writes, also the DV bit / position
 * delete of the row the index knows — through the index's own DV / position
 * delete writer, so one DV per data file per snapshot holds across tasks —
 * and at complete() records where its keys' rows are now. Its outputs are
 * tagged in absent_metrics (cleared before committing):
 *   FLOE_DELTA_TAG_FALLBACK: equality delete files, committed only when the
 *                            index cannot be trusted (another commit landed);
 *   FLOE_DELTA_TAG_INDEX:    the index's DVs / position deletes, committed
 *                            only when it can;
 *   FLOE_DELTA_TAG_REMOVE:   DVs those replace (removed in the same commit).
 */
#define FLOE_DELTA_TAG_FALLBACK 0x10000u
#define FLOE_DELTA_TAG_INDEX 0x20000u
#define FLOE_DELTA_TAG_REMOVE 0x40000u
#define FLOE_DELTA_TAGS (FLOE_DELTA_TAG_FALLBACK | FLOE_DELTA_TAG_INDEX | FLOE_DELTA_TAG_REMOVE)

typedef struct floe_delta_index floe_delta_index;
typedef struct floe_delta_index_opts {
	const int32_t *equality_ids;
	size_t n_equality_ids;
	size_t n_parts;       /* partitions (writer tasks) */
	size_t memory;        /* budget in bytes, all partitions (0 = unbounded) */
	const char *spill_dir; /* NULL = $TMPDIR or /tmp */
	int partition_id;     /* names of its delete files */
	int64_t task_id;
	const char *operation_id;
} floe_delta_index_opts;
typedef struct floe_delta_index_stats {
	size_t memory, entries, files;
	uint64_t spills, disk_reads, lookups;
	int64_t hits;
} floe_delta_index_stats;
int floe_delta_index_new(floe_delta_index **out, floe_fileio *io, const floe_metadata *m,
			 const floe_write_config *cfg, const floe_delta_index_opts *o,
			 floe_error *err) FLOE_WUR;
int floe_delta_index_add_file(floe_delta_index *ix, const char *path, int32_t spec_id,
			      const floe_partition *partition, const floe_data_file *dv,
			      floe_error *err) FLOE_WUR;
/* Room for about rows keys before loading them (a hint within the budget). */
void floe_delta_index_reserve(floe_delta_index *ix, size_t rows);
/* Rows of a scan: the key columns in equality order, then _file, _pos. */
int floe_delta_index_load(floe_delta_index *ix, const struct ArrowArray *batch,
			  const struct ArrowSchema *schema, floe_error *err) FLOE_WUR;
/* The checkpoint's index DVs / position deletes (tagged), after every task's
 * complete(). */
int floe_delta_index_complete(floe_delta_index *ix, floe_data_file **files, size_t *n,
			      floe_data_file **replaced, size_t *n_replaced, floe_arena *a,
			      floe_error *err) FLOE_WUR;
/*
 * Lazy fallback (a one-column int/long/date/time/timestamp key): the delta
 * writers write no equality deletes; each keeps, at complete(), the keys
 * whose equality delete it would have written, and floe_delta_index_complete
 * seals them as that checkpoint's. A commit that cannot take the index's DVs
 * (another commit landed) calls floe_delta_index_fallback, which writes the
 * sealed keys' equality delete files (tagged FLOE_DELTA_TAG_FALLBACK,
 * appended to *files) and forgets them; a commit that took the DVs calls
 * floe_delta_index_forget. The next floe_delta_index_complete drops sealed
 * keys neither consumed (a checkpoint that was not committed).
 */
int floe_delta_index_fallback(floe_delta_index *ix, floe_data_file **files, size_t *n,
			      floe_arena *a, floe_error *err) FLOE_WUR;
void floe_delta_index_forget(floe_delta_index *ix);
/* Forget every key and file (a rebuild follows); the writers keep it. */
int floe_delta_index_clear(floe_delta_index *ix, floe_error *err) FLOE_WUR;
void floe_delta_index_get_stats(floe_delta_index *ix, floe_delta_index_stats *out);
void floe_delta_index_free(floe_delta_index *ix);

/* ---- persist hooks (helper-idxpersist: write_index_persist.c, stream_index_persist.c) ----
 * Semi-private: what persisting, loading and refreshing the index needs of
 * its internals. Files have ids in registration order; a file marked gone
 * is no longer in the table, and an entry that names it is a row that left
 * with it (a lookup does not find it). */
bool floe_delta_index__exact(const floe_delta_index *ix, bool *wide);
typedef int (*floe_delta_index_entry_fn)(void *payload, const uint8_t *key, size_t klen,
					 uint32_t file_id, uint64_t pos);
/* every entry of a file not gone, under the index's lock (keys as written) */
int floe_delta_index__foreach(floe_delta_index *ix, floe_delta_index_entry_fn fn, void *payload,
			      floe_error *err) FLOE_WUR;
size_t floe_delta_index__n_files(floe_delta_index *ix);
const char *floe_delta_index__file(floe_delta_index *ix, size_t id, bool *gone);
/* keys with more than one live row (another writer's append) */
bool floe_delta_index__has_dups(floe_delta_index *ix);
int floe_delta_index__put(floe_delta_index *ix, const uint8_t *key, size_t klen, uint32_t file_id,
			  uint64_t pos, floe_error *err) FLOE_WUR;
void floe_delta_index__mark_gone(floe_delta_index *ix);
/* Register the file (or find it: *known), not gone, with exactly this DV (NULL: none). */
int floe_delta_index__sync_file(floe_delta_index *ix, const char *path, int32_t spec_id,
				const floe_partition *partition, const floe_data_file *dv,
				bool *known, floe_error *err) FLOE_WUR;
/* floe_delta_index_load replaces a key's entry instead of noting a second row. */
void floe_delta_index__load_replace(floe_delta_index *ix, bool on);

#endif
