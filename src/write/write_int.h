/*
 * write_int.h — semi-private to src/write: the per-schema file format shared
 * by the files of a task writer, Arrow columns read as Iceberg values, and
 * the vectorised partitioner.
 */
#ifndef FLOE_WRITE_WRITE_INT_H
#define FLOE_WRITE_WRITE_INT_H

#include "arrow/arrow_view.h"
#include "iceberg/metrics.h"
#include "iceberg/spec.h"
#include "util/hmap.h"
#include "write/write.h"

/* ---- the file format of a table schema ------------------------------------------ */

/*
 * Built once per (metadata, schema): the Parquet schema with ids, the
 * "iceberg.schema" footer value, which batch fields are written (unknown
 * ones are not), and per Parquet leaf its field id, Iceberg type and
 * metrics mode. Immutable once built; borrowed by the data writers made
 * from it, which it must outlive.
 */
typedef struct floe_write__format floe_write__format;

int floe_write__format_new(floe_write__format **out, const floe_metadata *m,
			   const floe_schema *schema, floe_error *err) FLOE_WUR;

/* What the files of a format are, beyond data files of the table schema. */
typedef struct floe_write__format_opts {
	const floe_schema *metrics_schema; /* modes are looked up in (NULL = the file's) */
	const floe_metrics_mode *mode;     /* one mode for every column (NULL = the table's) */
	int content;                       /* FLOE_CONTENT_* recorded on the entries */
	const int32_t *equality_ids;       /* content 2: equality_ids, "delete-field-ids" */
	size_t n_equality_ids;
	bool has_sort_order_id;
	int32_t sort_order_id;
	const char *delete_type;           /* footer "delete-type" (NULL = none) */
} floe_write__format_opts;

/*
 * A format for the file schema `schema` with o's settings. Position deletes
 * (content 1): the first column is file_path; each file follows the data
 * files its rows target (referenced_data_file, Java's metrics rule).
 */
int floe_write__format_new_opts(floe_write__format **out, const floe_metadata *m,
				const floe_schema *schema, const floe_write__format_opts *o,
				floe_error *err) FLOE_WUR;
void floe_write__format_free(floe_write__format *f);

/* Open a data file with a shared format (floe_data_writer_open builds its
 * own). opts is copied. */
int floe_write__data_writer_open(floe_data_writer **out, floe_fileio *io, const char *path,
				 const floe_write__format *fmt, int32_t spec_id,
				 const floe_partition *partition,
				 const floe_parquet_writer_opts *opts, floe_error *err) FLOE_WUR;

/* ---- Arrow columns as Iceberg values ----------------------------------------------- */

enum {
	FLOE_WCONV_BOOL = 1,
	FLOE_WCONV_I32,    /* int from any integer that fits, date from date32 */
	FLOE_WCONV_I64,    /* long, time, timestamps (same unit) */
	FLOE_WCONV_I64_MUL, /* coarser time unit: times factor */
	FLOE_WCONV_DATE64, /* ms -> days (floor) */
	FLOE_WCONV_F32,
	FLOE_WCONV_F64,
	FLOE_WCONV_DEC128, /* 16 bytes little-endian unscaled */
	FLOE_WCONV_BYTES,  /* string, binary, fixed, uuid */
};

/* One Arrow column bound to an Iceberg primitive type. */
typedef struct floe_write__source {
	floe_arrow_view view;
	const floe_type *type;
	int conv;
	int64_t factor;
} floe_write__source;

/*
 * Bind a column view to Iceberg type t: FLOE_EINVAL, naming the column,
 * when the Arrow type cannot hold values of t (or only lossily: a finer
 * time unit, a decimal of another scale).
 */
int floe_write__source_bind(floe_write__source *src, const floe_type *t, const char *name,
			    floe_error *err) FLOE_WUR;

/* The value of row i (null when the row or an enclosing struct is null).
 * Strings and binaries point into the batch. */
static inline void floe_write__source_value(floe_value *out, const floe_write__source *src,
					    int64_t i)
{
	const floe_arrow_view *v = &src->view;
	out->type = src->type->id;
	out->is_null = !floe_arrow_view_valid(v, i);
	if (out->is_null)
		return;
	switch (src->conv) {
	case FLOE_WCONV_BOOL: out->v.b = floe_arrow_view_int(v, i) != 0; break;
	case FLOE_WCONV_I32: out->v.i32 = (int32_t)floe_arrow_view_int(v, i); break;
	case FLOE_WCONV_I64: out->v.i64 = floe_arrow_view_int(v, i); break;
	case FLOE_WCONV_I64_MUL:
		out->v.i64 = (int64_t)((uint64_t)floe_arrow_view_int(v, i) * (uint64_t)src->factor);
		break;
	case FLOE_WCONV_DATE64: {
		int64_t ms = floe_arrow_view_int(v, i), d = ms / 86400000;
		if (ms % 86400000 != 0 && ms < 0)
			d--;
		out->v.i32 = (int32_t)d;
		break;
	}
	case FLOE_WCONV_F32: out->v.f32 = (float)floe_arrow_view_real(v, i); break;
	case FLOE_WCONV_F64: out->v.f64 = floe_arrow_view_real(v, i); break;
	case FLOE_WCONV_DEC128: {
		size_t n;
		const uint8_t *p = floe_arrow_view_bytes(v, i, &n);
		floe_u128 u = 0;
		for (int k = 15; k >= 0; k--)
			u = (u << 8) | p[k];
		out->v.dec = (floe_i128)u;
		break;
	}
	default: out->v.bin.p = floe_arrow_view_bytes(v, i, &out->v.bin.n); break;
	}
}

/* ---- the partitioner ------------------------------------------------------------ */

typedef struct floe_write__partitioner floe_write__partitioner;

/* Rows of a batch grouped by partition; valid until the next call. */
typedef struct floe_write__groups {
	size_t n;                 /* groups, in order of first appearance */
	size_t n_fields;
	const floe_value *values; /* n * n_fields: each group's partition tuple
				     (strings point into the batch) */
	const int64_t *rows;      /* row indices grouped: group g is
				     rows[start[g] .. start[g + 1]) in row order */
	const int64_t *start;     /* n + 1 */
} floe_write__groups;

/* FLOE_EUNSUPPORTED for transforms floe cannot apply (unknown, v3
 * multi-argument) and sources inside lists or maps. */
int floe_write__partitioner_new(floe_write__partitioner **out, const floe_schema *schema,
				const floe_partition_spec *spec, floe_error *err) FLOE_WUR;
void floe_write__partitioner_free(floe_write__partitioner *p);

/* Compute every row's partition and group the rows. The batch must have
 * passed floe_arrow_check. */
int floe_write__partition(floe_write__partitioner *p, floe_write__groups *out,
			  const struct ArrowArray *batch, const struct ArrowSchema *bs,
			  floe_error *err) FLOE_WUR;

/* ---- rolling files fanned out by partition ---------------------------------------- */

/*
 * What the fan-out needs from one kind of file: data files now; position-
 * and equality-delete files next (same Parquet machinery, another schema
 * and content), each behind these operations. `factory` is the kind's
 * context (FileIO, format, options).
 */
typedef struct floe_write__file_ops {
	const char *ext; /* ".parquet" */
	int (*open)(void **out, void *factory, const char *path, const floe_partition *partition,
		    floe_error *err);
	int (*write)(void *f, const struct ArrowArray *batch, const struct ArrowSchema *schema,
		     floe_error *err);
	int64_t (*size)(const void *f);    /* estimated finished size */
	/* the same in a known part and an uncompressed open part */
	void (*size_parts)(const void *f, int64_t *exact, int64_t *open);
	int64_t (*written)(const void *f); /* bytes already in the output */
	int64_t (*rows)(const void *f);
	size_t (*buffered)(const void *f);
	int (*flush)(void *f, floe_error *err); /* end the row group now */
	const void *(*budget_key)(const void *f); /* what a budget callback names */
	int (*close)(void *f, floe_data_file *out, floe_arena *a, floe_error *err);
	void (*abort)(void *f);
	const char *(*path)(const void *f);
} floe_write__file_ops;

/* The data files of floe_data_writer as file ops; factory is a
 * floe_write__data_factory. */
typedef struct floe_write__data_factory {
	floe_fileio *io;
	const floe_write__format *fmt;
	int32_t spec_id;
	floe_parquet_writer_opts opts;
} floe_write__data_factory;
extern const floe_write__file_ops floe_write__data_file_ops;

typedef struct floe_write__fanout floe_write__fanout;

/* A file of the fan-out, named by the row positions it hands out. */
typedef struct floe_write__opened {
	const char *path;
	const floe_partition *partition;
} floe_write__opened;

typedef struct floe_write__fanout_opts {
	floe_fileio *io;
	const floe_write_config *cfg; /* copied */
	const floe_schema *schema;    /* for partition paths */
	const floe_partition_spec *spec;
	const floe_write__file_ops *ops;
	void *factory;
	int64_t target_file_size;
	int partition_id;
	int64_t task_id;
	const char *operation_id; /* NULL = random */
	floe_file_namer *namer;   /* shared: then the three above are its */
	size_t max_open_files;
	floe_parquet_budget *budget; /* NULL = a private one */
	uint64_t private_budget;     /* its limit */
} floe_write__fanout_opts;

int floe_write__fanout_new(floe_write__fanout **out, const floe_write__fanout_opts *o,
			   floe_parquet_budget **budget_out, floe_error *err) FLOE_WUR;
/* Write rows that all belong to partition p (a tuple of spec->n_fields
 * values; copied when first seen) to its open file, rolling at the target
 * size. */
int floe_write__fanout_route(floe_write__fanout *fo, const floe_partition *p,
			     const struct ArrowArray *batch, const struct ArrowSchema *schema,
			     floe_error *err) FLOE_WUR;
/*
 * The same, and for row i of the batch the file it went to (file_out[i],
 * an index for floe_write__fanout_opened) and its position in that file
 * (pos_out[i]). Both arrays hold batch->length values.
 */
int floe_write__fanout_route_pos(floe_write__fanout *fo, const floe_partition *p,
				 const struct ArrowArray *batch, const struct ArrowSchema *schema,
				 int32_t *file_out, int64_t *pos_out, floe_error *err) FLOE_WUR;
/* A file opened since the last complete(): its path and partition (valid
 * until then). NULL for an index never handed out. */
const floe_write__opened *floe_write__fanout_opened(const floe_write__fanout *fo, int32_t idx);
int floe_write__fanout_complete(floe_write__fanout *fo, floe_data_file **files, size_t *n,
				floe_arena *a, floe_error *err) FLOE_WUR;
size_t floe_write__fanout_buffered(const floe_write__fanout *fo);
void floe_write__fanout_stats(const floe_write__fanout *fo, floe_task_writer_stats *out);
/* Abort open files, delete finished ones not yet returned, free. */
void floe_write__fanout_abort(floe_write__fanout *fo);

/* ---- deleted positions collected per data file (write_delete_pos.c) ------------------ */

/* The positions deleted from one data file, and that file's partition. */
typedef struct floe_write__target {
	const char *path; /* the data file (arena) */
	size_t path_len;
	int32_t spec_id;
	floe_partition partition; /* arena */
	uint64_t *pos;            /* heap; ascending and unique once normalised */
	size_t n, cap;
	bool sorted; /* pos[0..n) strictly ascending */
} floe_write__target;

typedef struct floe_write__targets {
	floe_hmap index; /* path -> position in v */
	floe_write__target **v;
	size_t n, cap;
	floe_arena arena;
	size_t bytes;    /* memory held by the position arrays */
	uint64_t max_pos; /* positions above are refused */
} floe_write__targets;

void floe_write__targets_init(floe_write__targets *ts, uint64_t max_pos);
void floe_write__targets_reset(floe_write__targets *ts); /* frees everything; reusable */
/* The target of data file path (created on first sight; spec and partition
 * copied). FLOE_EINVAL when the file was given another spec or partition. */
int floe_write__targets_get(floe_write__targets *ts, floe_write__target **out, const char *path,
			    int32_t spec_id, const floe_partition *partition,
			    floe_error *err) FLOE_WUR;
/* Add positions (int64: negative ones are FLOE_EINVAL; uint64: unchecked
 * sign). Both refuse positions above max_pos. */
int floe_write__target_add(floe_write__targets *ts, floe_write__target *t, const int64_t *pos,
			   size_t n, floe_error *err) FLOE_WUR;
int floe_write__target_add_u64(floe_write__targets *ts, floe_write__target *t,
			       const uint64_t *pos, size_t n, floe_error *err) FLOE_WUR;
/* Sort and drop repeats. */
void floe_write__target_normalize(floe_write__targets *ts, floe_write__target *t);
/* The targets ordered by path (bytes; UTF-8 order = code point order):
 * *out is a heap array of ts->n pointers the caller frees. */
int floe_write__targets_order(floe_write__targets *ts, floe_write__target ***out,
			      floe_error *err) FLOE_WUR;

#endif
