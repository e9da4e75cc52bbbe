/*
 * stream_api.c — the public pipeline API (floe/pipeline.h) over the config
 * parser and the runtime.
 */
#include "stream/stream_runtime.h"
#include "util/opts.h"

int floe_pipeline_open(floe_pipeline **out, floe_catalog *cat, const char *yaml, size_t n,
		       const floe_pipeline_opts *opts, floe_error *err)
{
	FLOE_CHECK_OPTS(opts, "floe_pipeline_opts", "FLOE_PIPELINE_OPTS_INIT", err);
	stream_config *cfg = NULL;
	int rc;
	*out = NULL;
	if ((rc = stream_config_parse_yaml(&cfg, yaml, n, opts ? opts->base_dir : NULL, err)))
		return floe_error_prefix(err, rc, "pipeline config: ");
	/* the runtime owns cfg from here, also on failure */
	return stream_pipeline_open(out, cfg, cat, NULL, opts, err);
}

int floe_pipeline_check(const char *yaml, size_t n, floe_error *err)
{
	stream_config *cfg = NULL;
	int rc = stream_config_parse_yaml(&cfg, yaml, n, NULL, err);
	stream_config_free(cfg);
	return floe_error_prefix(err, rc, "pipeline config: ");
}

int floe_pipeline_config_reference(floe_write_fn fn, void *payload, floe_error *err)
{
	floe_buf b;
	int rc;
	floe_buf_init(&b, (size_t)1 << 20);
	if ((rc = stream_config_reference(&b)))
		rc = floe_error_set(err, rc, "out of memory");
	else if (fn((const char *)b.data, b.len, payload))
		rc = floe_error_set(err, FLOE_EIO, "output failed");
	floe_buf_reset(&b);
	return rc;
}

bool floe_pipeline_restart_wanted(const floe_pipeline *p)
{
	return p && p->restart;
}
