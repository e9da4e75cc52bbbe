/*
 * stream.h — the byte-level input and output interfaces every codec uses.
 *
 * floe_input is random-access read (a file, an S3 object, a memory block);
 * floe_output is append-only write that becomes visible only when closed
 * successfully (an aborted output leaves nothing behind, where the backend
 * can promise that). The io layer (src/io) implements them for local files,
 * memory and S3; codecs (avro, parquet, puffin) only see these vtables, which
 * keeps them below io in the layer order.
 */
#ifndef FLOE_UTIL_STREAM_H
#define FLOE_UTIL_STREAM_H

#include "floe/common.h"
#include "util/buf.h"

typedef struct floe_input floe_input;

/* A byte range of an input. */
typedef struct floe_range {
	uint64_t off, len;
} floe_range;

typedef struct floe_input_ops {
	/* Read up to n bytes at off into buf; *got receives the count (short only
	 * at end of input). */
	int (*read_at)(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		       floe_error *err);
	void (*close)(floe_input *in);
	/* Optional (NULL: nothing to do): the reader reads these ranges next (a
	 * Parquet row group's column chunks). An input whose requests cost (S3)
	 * may fetch them in fewer, merged requests and serve the reads from
	 * memory. Best effort: if it fails, the reads go as they would have and
	 * report what fails then. */
	void (*prefetch)(floe_input *in, const floe_range *r, size_t n);
} floe_input_ops;

struct floe_input {
	const floe_input_ops *ops;
	uint64_t size;    /* total size in bytes */
	const char *name; /* for error messages (owned by the implementation) */
};

/* Read exactly n bytes at off; a short read is FLOE_ECORRUPT naming the input. */
int floe_input_read_exact(floe_input *in, uint64_t off, void *buf, size_t n, floe_error *err)
	FLOE_WUR;
/* Read the whole input into out (fails past max bytes). */
int floe_input_read_all(floe_input *in, floe_buf *out, size_t max, floe_error *err) FLOE_WUR;
void floe_input_close(floe_input *in); /* accepts NULL */
/* Announce the ranges read next (floe_input_ops.prefetch); a no-op for inputs without it. */
void floe_input_prefetch(floe_input *in, const floe_range *r, size_t n);

/* An input over caller memory (not copied; must outlive the input). */
floe_input *floe_input_memory(const void *data, size_t n, const char *name);

typedef struct floe_output floe_output;
typedef struct floe_output_ops {
	int (*write)(floe_output *out, const void *p, size_t n, floe_error *err);
	/* Make the data durable and visible; the output is freed either way. */
	int (*close)(floe_output *out, floe_error *err);
	/* Discard what was written; the output is freed. */
	void (*abort)(floe_output *out);
} floe_output_ops;

struct floe_output {
	const floe_output_ops *ops;
	uint64_t pos;     /* bytes written so far (maintained by floe_output_write) */
	const char *name; /* for error messages */
};

int floe_output_write(floe_output *out, const void *p, size_t n, floe_error *err) FLOE_WUR;
int floe_output_close(floe_output *out, floe_error *err) FLOE_WUR;
void floe_output_abort(floe_output *out); /* accepts NULL */

/* An output that appends to a caller-owned buffer (closing does nothing more). */
floe_output *floe_output_buffer(floe_buf *target, const char *name);

#endif
