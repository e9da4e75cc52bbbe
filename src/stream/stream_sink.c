/*
 * stream_sink.c — the tasks' file sink: the write layer's task writers
 * (partition fan-out, rolling at write.target-file-size-bytes, the shared
 * memory budget). Tests substitute their own stream_sink_ops.
 */
#include "stream/stream_runtime.h"

static int tw_open(void **out, floe_fileio *io, const floe_metadata *m, const floe_write_config *cfg,
		   const floe_task_writer_opts *o, floe_error *err)
{
	floe_task_writer *tw = NULL;
	int rc = floe_task_writer_new(&tw, io, m, cfg, o, err);
	*out = tw;
	return rc;
}

static int tw_write(void *w, const struct ArrowArray *batch, const struct ArrowSchema *schema,
		    floe_error *err)
{
	return floe_task_writer_write(w, batch, schema, err);
}

static int tw_complete(void *w, floe_data_file **files, size_t *n, floe_arena *a, floe_error *err)
{
	return floe_task_writer_complete(w, files, n, a, err);
}

static void tw_abort(void *w)
{
	floe_task_writer_abort(w);
}

static void tw_free(void *w)
{
	floe_task_writer_free(w);
}

const stream_sink_ops stream_sink_task_writers = {
	tw_open, tw_write, tw_complete, tw_abort, tw_free,
};
