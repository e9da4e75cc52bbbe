/*
 * stream.c — helpers over floe_input/floe_output, and the memory backends.
 */
#include "util/stream.h"

#include <string.h>

#include "util/alloc.h"

int floe_input_read_exact(floe_input *in, uint64_t off, void *buf, size_t n, floe_error *err)
{
	size_t got = 0;
	int rc;
	if (off > in->size || n > in->size - off)
		return floe_error_corrupt(err, "%s: read of %zu bytes at offset %llu is past the end (size %llu)",
				      in->name ? in->name : "input", n, (unsigned long long)off,
				      (unsigned long long)in->size);
	while (n > 0) {
		rc = in->ops->read_at(in, off, buf, n, &got, err);
		if (rc)
			return rc;
		if (got == 0)
			return floe_error_corrupt(err, "%s: unexpected end of file at %llu",
					      in->name ? in->name : "input",
					      (unsigned long long)off);
		buf = (char *)buf + got;
		off += got;
		n -= got;
	}
	return FLOE_OK;
}

int floe_input_read_all(floe_input *in, floe_buf *out, size_t max, floe_error *err)
{
	uint8_t *p;
	if (in->size > max)
		return floe_error_corrupt(err, "%s: %llu bytes exceeds the limit of %zu",
				      in->name ? in->name : "input", (unsigned long long)in->size,
				      max);
	p = floe_buf_extend(out, (size_t)in->size);
	if (!p)
		return floe_error_oomf(err, "out of memory reading %s", in->name);
	return floe_input_read_exact(in, 0, p, (size_t)in->size, err);
}

void floe_input_close(floe_input *in)
{
	if (in)
		in->ops->close(in);
}

typedef struct mem_input {
	floe_input base;
	const uint8_t *data;
	char *name;
} mem_input;

static int mem_read_at(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got,
		       floe_error *err)
{
	mem_input *m = (mem_input *)in;
	(void)err;
	if (off >= in->size) {
		*got = 0;
		return FLOE_OK;
	}
	if (n > in->size - off)
		n = (size_t)(in->size - off);
	memcpy(buf, m->data + off, n);
	*got = n;
	return FLOE_OK;
}

static void mem_close(floe_input *in)
{
	mem_input *m = (mem_input *)in;
	floe_free(m->name);
	floe_free(m);
}

static const floe_input_ops mem_input_ops = {mem_read_at, mem_close, NULL};

floe_input *floe_input_memory(const void *data, size_t n, const char *name)
{
	mem_input *m = floe_calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->name = floe_strdup(name ? name : "memory");
	if (!m->name) {
		floe_free(m);
		return NULL;
	}
	m->base.ops = &mem_input_ops;
	m->base.size = n;
	m->base.name = m->name;
	m->data = data;
	return &m->base;
}

int floe_output_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	int rc = out->ops->write(out, p, n, err);
	if (rc == 0)
		out->pos += n;
	return rc;
}

int floe_output_close(floe_output *out, floe_error *err)
{
	return out->ops->close(out, err);
}

void floe_output_abort(floe_output *out)
{
	if (out)
		out->ops->abort(out);
}

typedef struct buf_output {
	floe_output base;
	floe_buf *target;
	char *name;
} buf_output;

static int buf_write(floe_output *out, const void *p, size_t n, floe_error *err)
{
	buf_output *b = (buf_output *)out;
	if (floe_buf_append(b->target, p, n))
		return floe_error_oomf(err, "%s: buffer limit reached", b->name);
	return FLOE_OK;
}

static void buf_free(floe_output *out)
{
	buf_output *b = (buf_output *)out;
	floe_free(b->name);
	floe_free(b);
}

static int buf_close(floe_output *out, floe_error *err)
{
	(void)err;
	buf_free(out);
	return FLOE_OK;
}

static const floe_output_ops buf_output_ops = {buf_write, buf_close, buf_free};

floe_output *floe_output_buffer(floe_buf *target, const char *name)
{
	buf_output *b = floe_calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->name = floe_strdup(name ? name : "buffer");
	if (!b->name) {
		floe_free(b);
		return NULL;
	}
	b->base.ops = &buf_output_ops;
	b->base.name = b->name;
	b->target = target;
	return &b->base;
}

void floe_input_prefetch(floe_input *in, const floe_range *r, size_t n)
{
	if (in && in->ops->prefetch && n)
		in->ops->prefetch(in, r, n);
}
