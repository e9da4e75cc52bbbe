/*
 * stream_project.h — a table's computed projection: records decode into
 * the source's columns and the projection turns each batch of them into
 * the table's columns (floe sql's INSERT ... SELECT with expressions,
 * evaluated by src/sql/sql_vec.c).
 *
 * DESIGN: the runtime knows only this hook. A table whose configuration
 * carries one (stream_table_cfg.project, set by the caller between parsing
 * the YAML and opening the pipeline) decodes records into `input` — its
 * routing filter reads those columns — and, when its decoded rows are
 * handed to the writers (stream_task__emit), projects them into a builder
 * of the table's schema. A row the projection cannot make (a failed CAST,
 * a value past the column's precision, a NULL for a required column) is
 * its record's dead letter, like a record that does not decode; the other
 * rows go on in order. Every task calls apply concurrently on its own
 * rows: apply keeps no state between calls.
 */
#ifndef FLOE_STREAM_STREAM_PROJECT_H
#define FLOE_STREAM_STREAM_PROJECT_H

#include "stream/stream_builder.h"

/* A row (index into the input) that did not project, and why (NULL: the
 * projection's WHERE left it out — neither written nor a dead letter). */
typedef int (*stream_project_bad_fn)(void *payload, int64_t row, const char *why);

typedef struct stream_project {
	const floe_type *input; /* the struct records decode into */
	/*
	 * Append one row to out (a builder of the table's root) for each row
	 * of in [0, in->len) that projects, in order; for each that does not,
	 * call bad (and append nothing). apply may take in's column buffers
	 * (stream_col_swap_rows): the caller empties in afterwards. FLOE_ENOMEM
	 * (err set) fails the job.
	 */
	int (*apply)(void *ctx, stream_col *in, stream_col *out, stream_project_bad_fn bad,
		     void *payload, floe_error *err);
	void *ctx;
} stream_project;

#endif
