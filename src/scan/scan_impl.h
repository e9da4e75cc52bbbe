/*
 * scan_impl.h — internals of the scan component shared by its files: the
 * plan (files to read with the deletes that apply to each), columns, and
 * the state of a running scan. Not for other components: they use
 * include/floe/scan.h.
 *
 * A scan goes: resolve the snapshot and the read schema (scan_plan.c), bind
 * the filter, plan (manifest lists, manifests in parallel, pruning, delete
 * matching), then read files one after another (scan_read.c) applying
 * deletes (scan_deletes.c) and the residual filter, and hand out Arrow
 * batches of the projected columns; scan_out.c renders them; metadata
 * tables (scan_inspect.c) are in-memory batches behind the same interface.
 */
#ifndef FLOE_SCAN_IMPL_H
#define FLOE_SCAN_IMPL_H

#include <stdatomic.h>

#include "floe/scan.h"
#include "iceberg/manifest_scan.h"
#include "scan/scan_arrow.h"
#include "scan/scan_expr.h"
#include "table/table_impl.h"
#include "util/hmap.h"

/* Reserved field ids of metadata columns (spec: "Reserved Field IDs"). */
#define FLOE_ID_FILE 2147483646
#define FLOE_ID_POS 2147483645
#define FLOE_ID_SPEC_ID 2147483643
#define FLOE_ID_DELETE_FILE_PATH 2147483546
#define FLOE_ID_DELETE_POS 2147483545
#define FLOE_ID_ROW_ID 2147483540
#define FLOE_ID_LAST_UPDATED_SEQ 2147483539

/* One data or delete file of the plan (arena memory of the scan). */
typedef struct scan_file scan_file;
struct scan_file {
	const char *path;     /* relocated, to open */
	const char *raw_path; /* as recorded, to match deletes against */
	const char *format;   /* "PARQUET", "PUFFIN", ... */
	const floe_partition_spec *spec;
	floe_partition partition; /* values may be shared by files of one worker (read-only) */
	int64_t record_count, file_size;
	int64_t data_seq, file_seq, snapshot_id;
	int64_t first_row_id; /* -1 */
	/* data files, after matching */
	scan_file **deletes;
	size_t n_deletes;
	floe_expr *residual;
	int content; /* FLOE_CONTENT_* */
	int32_t spec_id;
	uint32_t job, ord; /* manifest job and entry position: plan order */
	/* delete files (fields packed: a plan may hold millions of data files) */
	uint32_t n_equality_ids;
	uint32_t path_lo_n, path_hi_n; /* position delete files: bounds of file_path */
	bool is_dv;
	bool used; /* a planned data file uses this delete file */
	bool has_bound_lo; /* data files of an ordered scan: bound_lo is set */
	int64_t bound_lo;  /* the lower bound of floe_scan.bound_id (8-byte value) */
	int32_t *equality_ids;
	const char *referenced; /* referenced_data_file, relocated like path */
	int64_t content_offset, content_size;
	const uint8_t *path_lo, *path_hi;
	/* delete files: loaded state (scan_deletes.c) */
	void *loaded;
};

/* An output column. */
typedef enum scan_col_kind {
	COL_FIELD = 0,
	COL_FILE,
	COL_POS,
	COL_SPEC_ID,
	COL_ROW_ID,
	COL_LAST_UPDATED_SEQ,
} scan_col_kind;

#define SCAN_MAX_DEPTH 32

typedef struct scan_col {
	scan_col_kind kind;
	const char *name;
	int32_t id;
	const floe_field *field; /* COL_FIELD: the schema field (nested ones too) */
	const floe_type *type;
	bool required;
	int32_t path[SCAN_MAX_DEPTH]; /* struct child indexes below the top-level field */
	size_t depth;
	int32_t top_id;
} scan_col;

/* One batch source: in-memory batches (metadata tables) or the file reader. */
typedef struct mem_batches {
	struct ArrowArray *batches;
	size_t n, next;
} mem_batches;

/* scan_avro.c: Avro data files read into table-typed columns. src[i]: the
 * file's field of fields[i], -1 when absent. next fills cols[i] (table
 * typed, n rows) for each field in the file. */
typedef struct scan_avro_file scan_avro_file;
int floe_scan__avro_open(scan_avro_file **out, floe_input *in, const char *path,
			 const floe_field *const *fields, size_t n_fields, int64_t *src,
			 floe_error *err) FLOE_WUR;
int floe_scan__avro_next(scan_avro_file *af, int64_t max_rows, struct ArrowArray *cols,
			 int64_t *n, floe_error *err) FLOE_WUR;
void floe_scan__avro_free(scan_avro_file *af);

typedef struct scan_reader scan_reader; /* scan_read.c */
typedef struct delete_cache delete_cache; /* scan_deletes.c */

typedef struct scan_stats_int {
	_Atomic uint64_t manifests, manifests_skipped, entries, data_files, data_files_skipped;
	_Atomic uint64_t delete_files, delete_files_skipped, manifests_corrupt;
	uint64_t plan_ns;
	uint64_t files_read, rows_read, rows_deleted, rows_filtered, rows_out;
	uint64_t row_groups, row_groups_skipped, files_deleted;
} scan_stats_int;

struct floe_scan {
	floe_table *t; /* borrowed */
	/* metadata tables: timestamptz ends in Z and string maps are JSON
	 * objects, as floe snapshots prints them (one output style) */
	bool meta_style;
	const floe_metadata *m;
	floe_arena a; /* plan, columns, bound expressions */
	floe_scan_opts o;
	const floe_snapshot *snap;   /* NULL: no rows */
	const floe_schema *schema;   /* read schema */
	floe_expr *filter;           /* bound; TRUE when none */
	scan_col *cols;
	size_t n_cols;
	struct ArrowSchema out_schema; /* of the batches handed out */
	/* a projected column whose type has no Arrow form yet (variant): reading
	 * rows fails naming it; counting reads no column and succeeds */
	const char *unsupported_col;
	/* plan */
	scan_file **files; /* data files in plan order */
	size_t n_files;
	scan_file **deletes; /* every delete file of the plan */
	size_t n_deletes;
	bool planned;
	bool incremental;
	int64_t from_exclusive; /* incremental: the start (exclusive), -1 none */
	int32_t bound_id;       /* > 0: an ordered scan (floe_scan__open_ordered) */
	/* reading */
	size_t next_file;
	scan_reader *rd;
	delete_cache *dc;
	int64_t emitted;
	bool done;
	/* metadata tables */
	mem_batches *mem;
	scan_stats_int st;
	floe_path_map map;
	floe_name_mapping *mapping; /* schema.name-mapping.default, parsed on first use */
	size_t n_mapping;
	bool mapping_parsed;
	floe_arena *warenas; /* planning workers' arenas (the plan lives in them) */
	size_t n_warenas;
};

/* scan_out.c: every row of batch b (from floe_scan_next) as a JSON line, as
 * floe_scan_write renders it, appended to dst. FLOE_ENOMEM. */
int floe_scan__batch_json(floe_buf *dst, const floe_scan *s, const struct ArrowArray *b) FLOE_WUR;
/* scan_out.c: row i of column array a (type t) as CSV output's text; *null
 * for a NULL (b untouched). */
int floe_scan__cell_text(floe_buf *b, const struct ArrowArray *a, const floe_type *t, int64_t i,
			 bool meta, bool *null) FLOE_WUR;
/* scan_api.c */
/* A planned scan of every column of snapshot_id read with the table's
 * current schema (changelog reads compare two snapshots row for row). */
int floe_scan__open_snapshot(floe_scan **out, floe_table *t, int64_t snapshot_id, int threads,
			     floe_error *err) FLOE_WUR;
/*
 * floe_scan_open, with the data files in the order of their lower bound of
 * field bound_id (a long or timestamp column: its 8-byte bound), then of
 * path — Flink's split order for watermarks (IcebergSource with
 * watermark-column); f->bound_lo holds each file's bound. A data file whose
 * manifest entry has no such bound fails with FLOE_EINVAL naming it, as
 * Flink's ColumnStatsWatermarkExtractor does.
 */
int floe_scan__open_ordered(floe_scan **out, floe_table *t, const floe_scan_opts *opts,
			    int32_t bound_id, floe_error *err) FLOE_WUR;
/* The data file the last batch floe_scan_next handed out came from (batches
 * never span files); NULL before the first. */
const scan_file *floe_scan__batch_file(const floe_scan *s);
/* An empty scan object of t (metadata tables, changelogs fill it). */
floe_scan *floe_scan__new(floe_table *t);

/* scan_out.c */
/* Columns cols[0..n) of row r of batch as a JSON array into b (the row's
 * identity for comparisons: equal values give equal text). */
int floe_scan__row_json(floe_buf *b, const floe_scan *s, const struct ArrowArray *batch, int64_t r,
			const size_t *cols, size_t n) FLOE_WUR;

/* scan_plan.c */
int floe_scan__resolve(floe_scan *s, floe_error *err) FLOE_WUR;
int floe_scan__columns(floe_scan *s, floe_error *err) FLOE_WUR;
/* EUNSUPPORTED when rows would be read for a column without an Arrow form. */
int floe_scan__check_columns(const floe_scan *s, floe_error *err) FLOE_WUR;
int floe_scan__plan(floe_scan *s, floe_error *err) FLOE_WUR;
/* Key of a partition tuple (spec id + values) for hash maps, into b. */
int floe_scan__partition_key(floe_buf *b, int32_t spec_id, const floe_partition *p) FLOE_WUR;

/* scan_deletes.c */
/* Every (data file path, position) of position delete file or DV d, in the
 * file's order (paths as the file records them; valid during the call). */
typedef int (*floe_delete_row_fn)(const char *path, size_t n, int64_t pos, void *payload);
int floe_scan__delete_rows(floe_scan *s, const scan_file *d, floe_delete_row_fn fn, void *payload,
			   floe_error *err) FLOE_WUR;
typedef struct eq_delete_set eq_delete_set;
int floe_scan__deletes_init(floe_scan *s, floe_error *err) FLOE_WUR;
void floe_scan__deletes_free(floe_scan *s);
/* Sorted deleted positions of data file f (DV, else position delete files);
 * *pos owned by the caller (floe_free). */
int floe_scan__positions(floe_scan *s, const scan_file *f, uint64_t **pos, size_t *n,
			 floe_error *err) FLOE_WUR;
/* The loaded equality-delete set of delete file d. */
int floe_scan__eq_set(floe_scan *s, scan_file *d, const eq_delete_set **out,
		      floe_error *err) FLOE_WUR;
/* Is row r of the read batch deleted by set q? (cols: read batch children,
 * top-level ids in read order) */
bool floe_scan__eq_match(const eq_delete_set *q, const struct ArrowArray *batch,
			 const int32_t *top_ids, size_t n_top, const floe_schema *schema, int64_t r);
const int32_t *floe_scan__eq_ids(const eq_delete_set *q, size_t *n);

/* scan_read.c */
int floe_scan__next(floe_scan *s, struct ArrowArray *out, bool *eof, floe_error *err) FLOE_WUR;
void floe_scan__reader_free(floe_scan *s);
/* Read a Parquet file's columns (top-level ids) as table-typed arrays
 * (used for delete files too). */
int floe_scan__read_file_columns(floe_scan *s, const scan_file *f, const floe_schema *schema,
				 const int32_t *ids, size_t n_ids,
				 int (*fn)(const struct ArrowArray *batch, int64_t first_pos,
					   void *payload),
				 void *payload, floe_error *err) FLOE_WUR;
/* Value of column `id` (top-level or nested in structs) at row r of a read batch. */
void floe_scan__batch_value(floe_value *out, const struct ArrowArray *batch, const int32_t *top_ids,
			    size_t n_top, const floe_schema *schema, int32_t id, int64_t r);

/* scan_out.c */
int floe_scan__render(floe_scan *s, floe_output_format fmt, int64_t limit, floe_write_fn fn,
		      void *payload, floe_error *err) FLOE_WUR;
int floe_scan__write_parquet(floe_scan *s, const char *path, floe_error *err) FLOE_WUR;

/* scan_inspect.c */
int floe_scan__inspect(floe_scan *s, const char *name, int64_t snapshot_id,
		       floe_error *err) FLOE_WUR;

#endif
