/*
 * arrow_build.c — owned ArrowSchema/ArrowArray structures and their release
 * callbacks.
 */
#include "arrow/arrow_build.h"

#include <string.h>

#include "util/alloc.h"

/* ---- schemas -------------------------------------------------------- */

typedef struct schema_priv {
	char *format;
	char *name;
	char *metadata;
	struct ArrowSchema **child_ptrs;
	struct ArrowSchema *children;
} schema_priv;

static void schema_release(struct ArrowSchema *s)
{
	schema_priv *p;
	if (!s || !s->release)
		return;
	p = s->private_data;
	if (p) {
		for (int64_t i = 0; i < s->n_children; i++) {
			struct ArrowSchema *c = s->children[i];
			if (c && c->release)
				c->release(c);
		}
		if (s->dictionary && s->dictionary->release)
			s->dictionary->release(s->dictionary);
		floe_free(s->dictionary);
		floe_free(p->format);
		floe_free(p->name);
		floe_free(p->metadata);
		floe_free(p->child_ptrs);
		floe_free(p->children);
		floe_free(p);
	}
	s->release = NULL;
	s->private_data = NULL;
}

int floe_arrow_schema_init(struct ArrowSchema *s, const char *format, const char *name,
			   int64_t flags, int64_t n_children)
{
	schema_priv *p;
	memset(s, 0, sizeof(*s));
	if (n_children < 0)
		return FLOE_EINVAL;
	p = floe_calloc(1, sizeof(*p));
	if (!p)
		return FLOE_ENOMEM;
	s->private_data = p;
	s->release = schema_release;
	p->format = floe_strdup(format ? format : "n");
	p->name = name ? floe_strdup(name) : NULL;
	if (!p->format || (name && !p->name))
		goto fail;
	if (n_children > 0) {
		p->child_ptrs = floe_calloc((size_t)n_children, sizeof(*p->child_ptrs));
		p->children = floe_calloc((size_t)n_children, sizeof(*p->children));
		if (!p->child_ptrs || !p->children)
			goto fail;
		for (int64_t i = 0; i < n_children; i++)
			p->child_ptrs[i] = &p->children[i];
	}
	s->format = p->format;
	s->name = p->name;
	s->flags = flags;
	s->n_children = n_children;
	s->children = p->child_ptrs;
	return FLOE_OK;
fail:
	s->n_children = 0;
	schema_release(s);
	return FLOE_ENOMEM;
}

static void put_i32(uint8_t *p, int32_t v)
{
	memcpy(p, &v, 4);
}

int floe_arrow_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
				   const char *const *values, size_t n)
{
	schema_priv *p = s->private_data;
	size_t total = 4, off;
	uint8_t *m;
	if (!p || s->release != schema_release)
		return FLOE_EINVAL;
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]), vl = strlen(values[i]);
		if (kl > INT32_MAX || vl > INT32_MAX || !floe_size_add(&total, total, 8) ||
		    !floe_size_add(&total, total, kl) || !floe_size_add(&total, total, vl))
			return FLOE_ENOMEM;
	}
	if (n > INT32_MAX)
		return FLOE_EINVAL;
	m = floe_malloc(total);
	if (!m)
		return FLOE_ENOMEM;
	put_i32(m, (int32_t)n);
	off = 4;
	for (size_t i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]), vl = strlen(values[i]);
		put_i32(m + off, (int32_t)kl);
		memcpy(m + off + 4, keys[i], kl);
		off += 4 + kl;
		put_i32(m + off, (int32_t)vl);
		memcpy(m + off + 4, values[i], vl);
		off += 4 + vl;
	}
	floe_free(p->metadata);
	p->metadata = (char *)m;
	s->metadata = n ? p->metadata : NULL;
	return FLOE_OK;
}

/* Metadata is not NUL-terminated and has no stored length: the caller's
 * producer vouches for it, we only check lengths are non-negative and cap
 * the walk. */
const char *floe_arrow_metadata_get(const char *metadata, const char *key, size_t *len)
{
	int32_t n, kl, vl;
	const char *p = metadata;
	size_t klen = strlen(key);
	if (!metadata)
		return NULL;
	memcpy(&n, p, 4);
	p += 4;
	for (int32_t i = 0; i < n && i < 65536; i++) {
		memcpy(&kl, p, 4);
		if (kl < 0)
			return NULL;
		const char *k = p + 4;
		p = k + kl;
		memcpy(&vl, p, 4);
		if (vl < 0)
			return NULL;
		const char *v = p + 4;
		p = v + vl;
		if ((size_t)kl == klen && memcmp(k, key, klen) == 0) {
			if (len)
				*len = (size_t)vl;
			return v;
		}
	}
	return NULL;
}

static size_t metadata_size(const char *metadata)
{
	int32_t n, l;
	const char *p = metadata;
	if (!metadata)
		return 0;
	memcpy(&n, p, 4);
	p += 4;
	for (int32_t i = 0; i < n * 2; i++) {
		memcpy(&l, p, 4);
		p += 4 + (l > 0 ? l : 0);
	}
	return (size_t)(p - metadata);
}

int floe_arrow_schema_copy(struct ArrowSchema *dst, const struct ArrowSchema *src)
{
	int rc = floe_arrow_schema_init(dst, src->format, src->name, src->flags, src->n_children);
	schema_priv *p;
	if (rc)
		return rc;
	p = dst->private_data;
	if (src->metadata) {
		size_t n = metadata_size(src->metadata);
		p->metadata = floe_memdup(src->metadata, n);
		if (!p->metadata)
			goto fail;
		dst->metadata = p->metadata;
	}
	for (int64_t i = 0; i < src->n_children; i++) {
		if (floe_arrow_schema_copy(dst->children[i], src->children[i]))
			goto fail;
	}
	if (src->dictionary) {
		dst->dictionary = floe_calloc(1, sizeof(*dst->dictionary));
		if (!dst->dictionary || floe_arrow_schema_copy(dst->dictionary, src->dictionary))
			goto fail;
	}
	return FLOE_OK;
fail:
	schema_release(dst);
	return FLOE_ENOMEM;
}

void floe_arrow_schema_release(struct ArrowSchema *s)
{
	if (s && s->release)
		s->release(s);
}

void floe_arrow_schema_move(struct ArrowSchema *dst, struct ArrowSchema *src)
{
	*dst = *src;
	src->release = NULL;
	src->private_data = NULL;
}

/* ---- arrays --------------------------------------------------------- */

typedef struct array_priv {
	int64_t n_buffers;
	void **owned;
	const void **bufs;
	struct ArrowArray **child_ptrs;
	struct ArrowArray *children;
} array_priv;

static void array_release(struct ArrowArray *a)
{
	array_priv *p;
	if (!a || !a->release)
		return;
	p = a->private_data;
	if (p) {
		for (int64_t i = 0; i < a->n_children; i++) {
			struct ArrowArray *c = p->child_ptrs[i];
			if (c && c->release)
				c->release(c);
		}
		if (a->dictionary) {
			if (a->dictionary->release)
				a->dictionary->release(a->dictionary);
			floe_free(a->dictionary);
		}
		for (int64_t i = 0; i < p->n_buffers; i++)
			floe_free(p->owned[i]);
		floe_free(p);
	}
	a->release = NULL;
	a->private_data = NULL;
}

int floe_arrow_array_init(struct ArrowArray *a, int64_t n_buffers, int64_t n_children)
{
	array_priv *p;
	size_t total = sizeof(array_priv), part;
	memset(a, 0, sizeof(*a));
	if (n_buffers < 0 || n_buffers > 8 || n_children < 0 || n_children > (1 << 20))
		return FLOE_EINVAL;
	/* one block: priv | owned[] | bufs[] | child_ptrs[] | children[] */
	total += (size_t)n_buffers * 2 * sizeof(void *);
	if (!floe_size_mul(&part, (size_t)n_children,
			   sizeof(struct ArrowArray *) + sizeof(struct ArrowArray)) ||
	    !floe_size_add(&total, total, part))
		return FLOE_ENOMEM;
	p = floe_calloc(1, total);
	if (!p)
		return FLOE_ENOMEM;
	p->n_buffers = n_buffers;
	p->owned = (void **)(p + 1);
	p->bufs = (const void **)(p->owned + n_buffers);
	p->child_ptrs = (struct ArrowArray **)(p->bufs + n_buffers);
	p->children = (struct ArrowArray *)(p->child_ptrs + n_children);
	for (int64_t i = 0; i < n_children; i++)
		p->child_ptrs[i] = &p->children[i];
	a->n_buffers = n_buffers;
	a->n_children = n_children;
	a->buffers = p->bufs;
	a->children = p->child_ptrs;
	a->private_data = p;
	a->release = array_release;
	return FLOE_OK;
}

void floe_arrow_array_set_buffer(struct ArrowArray *a, int64_t i, void *buf)
{
	array_priv *p = a->private_data;
	if (!p || i < 0 || i >= p->n_buffers) {
		floe_free(buf);
		return;
	}
	floe_free(p->owned[i]);
	p->owned[i] = buf;
	p->bufs[i] = buf;
}

int floe_arrow_array_take_buf(struct ArrowArray *a, int64_t i, floe_buf *b)
{
	char *mem = floe_buf_detach(b, NULL);
	if (!mem)
		return FLOE_ENOMEM;
	floe_arrow_array_set_buffer(a, i, mem);
	return FLOE_OK;
}

void floe_arrow_array_release(struct ArrowArray *a)
{
	if (a && a->release)
		a->release(a);
}

void floe_arrow_array_move(struct ArrowArray *dst, struct ArrowArray *src)
{
	*dst = *src;
	src->release = NULL;
	src->private_data = NULL;
}
