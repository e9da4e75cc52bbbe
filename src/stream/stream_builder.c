/*
 * stream_builder.c — Arrow column builders with rollback (see
 * stream_builder.h).
 */
#include "stream/stream_builder.h"

#include "arrow/arrow_build.h"
#include "util/hash.h"

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static int build_index(stream_col *c)
{
	uint32_t size = 8;
	while (size < 2 * c->n_kids)
		size <<= 1;
	c->slots = floe_calloc(size, sizeof(uint32_t));
	if (!c->slots)
		return FLOE_ENOMEM;
	c->slot_mask = size - 1;
	for (size_t i = 0; i < c->n_kids; i++) {
		uint32_t h = name_hash(c->kids[i].name, c->kids[i].name_len) & c->slot_mask;
		while (c->slots[h])
			h = (h + 1) & c->slot_mask;
		c->slots[h] = (uint32_t)i + 1;
	}
	return FLOE_OK;
}

int stream_col_init(stream_col *c, const floe_type *t, const char *name, int32_t id, bool nullable,
		    floe_error *err)
{
	int rc;
	memset(c, 0, sizeof(*c));
	c->type = t;
	c->name = name;
	c->name_len = name ? strlen(name) : 0;
	memcpy(c->name8, name ? name : "", c->name_len < 16 ? c->name_len : 16);
	c->id = id;
	c->nullable = nullable;
	c->hint_rows = 1024;
	switch (t->id) {
	case FLOE_T_BOOLEAN:
		c->kind = SB_BOOL;
		break;
	case FLOE_T_INT:
	case FLOE_T_DATE:
		c->kind = SB_I32;
		c->width = 4;
		break;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		c->kind = SB_I64;
		c->width = 8;
		break;
	case FLOE_T_FLOAT:
		c->kind = SB_F32;
		c->width = 4;
		break;
	case FLOE_T_DOUBLE:
		c->kind = SB_F64;
		c->width = 8;
		break;
	case FLOE_T_DECIMAL:
		c->kind = SB_DEC;
		c->width = 16;
		break;
	case FLOE_T_UUID:
		c->kind = SB_FIXED;
		c->width = 16;
		break;
	case FLOE_T_FIXED:
		c->kind = SB_FIXED;
		c->width = t->length > 0 ? (uint32_t)t->length : 1;
		break;
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
		c->kind = SB_BIN;
		c->hint_data = 16384;
		break;
	case FLOE_T_STRUCT:
		c->kind = SB_STRUCT;
		c->n_kids = t->n_fields;
		c->kids = floe_calloc(t->n_fields ? t->n_fields : 1, sizeof(stream_col));
		if (!c->kids)
			return floe_error_oom(err);
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			if ((rc = stream_col_init(&c->kids[i], f->type, f->name, f->id, !f->required,
						  err)))
				return rc;
		}
		if (build_index(c))
			return floe_error_oom(err);
		break;
	case FLOE_T_LIST:
		c->kind = SB_LIST;
		c->n_kids = 1;
		c->kids = floe_calloc(1, sizeof(stream_col));
		if (!c->kids)
			return floe_error_oom(err);
		if ((rc = stream_col_init(&c->kids[0], t->element, "element", t->element_id,
					  !t->element_required, err)))
			return rc;
		break;
	case FLOE_T_MAP:
		c->kind = SB_MAP;
		c->n_kids = 2;
		c->kids = floe_calloc(2, sizeof(stream_col));
		if (!c->kids)
			return floe_error_oom(err);
		if ((rc = stream_col_init(&c->kids[0], t->key, "key", t->key_id, false, err)) ||
		    (rc = stream_col_init(&c->kids[1], t->value, "value", t->value_id,
					  !t->value_required, err)))
			return rc;
		break;
	default:
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "column '%s': floe does not ingest this type yet",
				      name ? name : "?");
	}
	return FLOE_OK;
}

static void free_buffers(stream_col *c)
{
	floe_free(c->valid);
	floe_free(c->vals);
	floe_free(c->offs);
	floe_free(c->data);
	c->valid = c->vals = c->data = NULL;
	c->offs = NULL;
	c->len = c->cap = 0;
	c->data_len = c->data_cap = 0;
}

void stream_col_reset(stream_col *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_kids && c->kids; i++)
		stream_col_reset(&c->kids[i]);
	floe_free(c->kids);
	floe_free(c->slots);
	free_buffers(c);
	c->kids = NULL;
	c->n_kids = 0;
	c->slots = NULL;
}

static int grow_to(void **p, size_t old_bytes, size_t new_bytes)
{
	void *n = floe_realloc(*p, new_bytes);
	if (!n)
		return FLOE_ENOMEM;
	if (new_bytes > old_bytes)
		memset((uint8_t *)n + old_bytes, 0, new_bytes - old_bytes);
	*p = n;
	return FLOE_OK;
}

int stream_col__grow(stream_col *c)
{
	int64_t ncap = c->cap ? c->cap * 2 : (c->hint_rows > 64 ? c->hint_rows : 64);
	size_t ob = (size_t)(c->cap + 7) / 8, nb = (size_t)(ncap + 7) / 8;
	if (ncap > (int64_t)1 << 40)
		return FLOE_ENOMEM;
	if (c->nullable && grow_to((void **)&c->valid, ob, nb))
		return FLOE_ENOMEM;
	switch (c->kind) {
	case SB_BOOL:
		if (grow_to((void **)&c->vals, ob, nb))
			return FLOE_ENOMEM;
		break;
	case SB_I32:
	case SB_I64:
	case SB_F32:
	case SB_F64:
	case SB_DEC:
	case SB_FIXED:
		if (grow_to((void **)&c->vals, (size_t)c->cap * c->width, (size_t)ncap * c->width))
			return FLOE_ENOMEM;
		break;
	case SB_BIN:
	case SB_LIST:
	case SB_MAP:
		if (grow_to((void **)&c->offs, c->cap ? (size_t)(c->cap + 1) * 4 : 0,
			    (size_t)(ncap + 1) * 4))
			return FLOE_ENOMEM;
		break;
	case SB_STRUCT:
		break;
	}
	c->cap = ncap;
	return FLOE_OK;
}

int stream_col__grow_data(stream_col *c, size_t extra)
{
	size_t need, ncap;
	if (!floe_size_add(&need, c->data_len, extra) || need > STREAM_COL_MAX_DATA)
		return FLOE_ENOMEM;
	ncap = c->data_cap ? c->data_cap : (c->hint_data > 256 ? c->hint_data : 256);
	while (ncap < need)
		ncap = ncap > STREAM_COL_MAX_DATA / 2 ? STREAM_COL_MAX_DATA : ncap * 2;
	uint8_t *d = floe_realloc(c->data, ncap);
	if (!d)
		return FLOE_ENOMEM;
	c->data = d;
	c->data_cap = ncap;
	return FLOE_OK;
}

int stream_col_put_null(stream_col *c)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	switch (c->kind) {
	case SB_BOOL:
		c->vals[c->len >> 3] &= (uint8_t) ~(1u << (c->len & 7));
		break;
	case SB_I32:
	case SB_I64:
	case SB_F32:
	case SB_F64:
	case SB_DEC:
	case SB_FIXED:
		memset(c->vals + (size_t)c->len * c->width, 0, c->width);
		break;
	case SB_BIN:
	case SB_LIST:
	case SB_MAP:
		c->offs[c->len + 1] = c->offs[c->len];
		break;
	case SB_STRUCT:
		for (size_t i = 0; i < c->n_kids; i++)
			if (stream_col_put_null(&c->kids[i]))
				return FLOE_ENOMEM;
		break;
	}
	stream_col__set_valid(c, c->len, false);
	c->len++;
	return FLOE_OK;
}

int stream_col_struct_begin(stream_col *c)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return FLOE_OK;
}

int stream_col_list_begin(stream_col *c)
{
	if (stream_col_reserve(c))
		return FLOE_ENOMEM;
	c->offs[c->len + 1] = c->offs[c->len];
	stream_col__set_valid(c, c->len, true);
	c->len++;
	return FLOE_OK;
}

int stream_col_list_end(stream_col *c)
{
	int64_t n = c->kids[0].len;
	if (n > INT32_MAX)
		return FLOE_ENOMEM;
	c->offs[c->len] = (int32_t)n;
	return FLOE_OK;
}

void stream_col_truncate(stream_col *c, int64_t n)
{
	if (n >= c->len)
		return;
	c->len = n;
	switch (c->kind) {
	case SB_BIN:
		c->data_len = (size_t)c->offs[n];
		break;
	case SB_LIST:
	case SB_MAP:
		for (size_t i = 0; i < c->n_kids; i++)
			stream_col_truncate(&c->kids[i], c->offs[n]);
		break;
	case SB_STRUCT:
		for (size_t i = 0; i < c->n_kids; i++)
			stream_col_truncate(&c->kids[i], n);
		break;
	default:
		break;
	}
}

int stream_col_struct_rows(stream_col *c, int64_t n)
{
	while (c->cap - c->len < n)
		if (stream_col__grow(c))
			return FLOE_ENOMEM;
	for (int64_t i = 0; i < n; i++)
		stream_col__set_valid(c, c->len + i, true);
	c->len += n;
	return FLOE_OK;
}

bool stream_col_swap_rows(stream_col *a, stream_col *b)
{
	if (a->kind != b->kind || a->width != b->width || a->nullable != b->nullable ||
	    a->kind == SB_STRUCT || a->kind == SB_LIST || a->kind == SB_MAP)
		return false;
	stream_col t = *a;
	a->len = b->len;
	a->cap = b->cap;
	a->valid = b->valid;
	a->vals = b->vals;
	a->offs = b->offs;
	a->data = b->data;
	a->data_len = b->data_len;
	a->data_cap = b->data_cap;
	b->len = t.len;
	b->cap = t.cap;
	b->valid = t.valid;
	b->vals = t.vals;
	b->offs = t.offs;
	b->data = t.data;
	b->data_len = t.data_len;
	b->data_cap = t.data_cap;
	return true;
}

int stream_col_copy_row(stream_col *dst, const stream_col *src, int64_t r)
{
	if (stream_col_is_null(src, r))
		return stream_col_put_null(dst);
	switch (src->kind) {
	case SB_BOOL:
		return stream_col_put_bool(dst, (src->vals[r >> 3] >> (r & 7)) & 1);
	case SB_I32:
	case SB_I64:
	case SB_F32:
	case SB_F64:
	case SB_DEC:
	case SB_FIXED:
		return stream_col_put_fixed(dst, src->vals + (size_t)r * src->width);
	case SB_BIN:
		return stream_col_put_bin(dst, src->data + src->offs[r],
					  (size_t)(src->offs[r + 1] - src->offs[r]));
	case SB_STRUCT:
		if (stream_col_struct_begin(dst))
			return FLOE_ENOMEM;
		for (size_t i = 0; i < src->n_kids; i++)
			if (stream_col_copy_row(&dst->kids[i], &src->kids[i], r))
				return FLOE_ENOMEM;
		return FLOE_OK;
	case SB_LIST:
	case SB_MAP:
		if (stream_col_list_begin(dst))
			return FLOE_ENOMEM;
		for (int64_t e = src->offs[r]; e < src->offs[r + 1]; e++)
			for (size_t i = 0; i < src->n_kids; i++)
				if (stream_col_copy_row(&dst->kids[i], &src->kids[i], e))
					return FLOE_ENOMEM;
		return stream_col_list_end(dst);
	}
	return FLOE_EINVAL;
}

void stream_col_value(const stream_col *c, int64_t r, floe_value *out)
{
	memset(out, 0, sizeof(*out));
	out->type = c->type->id;
	if (stream_col_is_null(c, r)) {
		out->is_null = true;
		return;
	}
	switch (c->kind) {
	case SB_BOOL:
		out->v.b = (c->vals[r >> 3] >> (r & 7)) & 1;
		break;
	case SB_I32:
		memcpy(&out->v.i32, c->vals + (size_t)r * 4, 4);
		break;
	case SB_I64:
		memcpy(&out->v.i64, c->vals + (size_t)r * 8, 8);
		break;
	case SB_F32:
		memcpy(&out->v.f32, c->vals + (size_t)r * 4, 4);
		break;
	case SB_F64:
		memcpy(&out->v.f64, c->vals + (size_t)r * 8, 8);
		break;
	case SB_DEC:
		memcpy(&out->v.dec, c->vals + (size_t)r * 16, 16);
		break;
	case SB_FIXED:
		out->v.bin.p = c->vals + (size_t)r * c->width;
		out->v.bin.n = c->width;
		break;
	case SB_BIN:
		out->v.bin.p = c->data + c->offs[r];
		out->v.bin.n = (size_t)(c->offs[r + 1] - c->offs[r]);
		break;
	default:
		out->is_null = true; /* nested values are not compared */
		break;
	}
}

static int64_t count_nulls(const stream_col *c)
{
	int64_t valid = 0, full = c->len / 8;
	if (!c->valid)
		return 0;
	for (int64_t i = 0; i < full; i++)
		valid += __builtin_popcount(c->valid[i]);
	for (int64_t i = full * 8; i < c->len; i++)
		valid += (c->valid[i >> 3] >> (i & 7)) & 1;
	return c->len - valid;
}

int stream_col_finish(stream_col *c, struct ArrowArray *out)
{
	int64_t nb = 2, nk = 0;
	int rc;
	if (c->cap == 0 && stream_col__grow(c))
		return FLOE_ENOMEM;
	if (c->kind == SB_BIN && !c->data && stream_col__grow_data(c, 1))
		return FLOE_ENOMEM;
	switch (c->kind) {
	case SB_BIN:
		nb = 3;
		break;
	case SB_STRUCT:
		nb = 1;
		nk = (int64_t)c->n_kids;
		break;
	case SB_LIST:
	case SB_MAP:
		nk = 1;
		break;
	default:
		break;
	}
	if ((rc = floe_arrow_array_init(out, nb, nk)))
		return rc;
	out->length = c->len;
	out->null_count = count_nulls(c);
	switch (c->kind) {
	case SB_BIN:
		floe_arrow_array_set_buffer(out, 1, c->offs);
		floe_arrow_array_set_buffer(out, 2, c->data);
		break;
	case SB_LIST:
	case SB_MAP:
		floe_arrow_array_set_buffer(out, 1, c->offs);
		break;
	case SB_STRUCT:
		break;
	default:
		floe_arrow_array_set_buffer(out, 1, c->vals);
		break;
	}
	floe_arrow_array_set_buffer(out, 0, c->valid);
	if (c->kind == SB_STRUCT)
		floe_free(c->vals);
	if (c->kind != SB_BIN && c->kind != SB_LIST && c->kind != SB_MAP)
		floe_free(c->offs);
	if (c->kind != SB_BIN)
		floe_free(c->data);
	c->hint_rows = c->len > 64 ? c->len + c->len / 8 : 64;
	if (c->kind == SB_BIN)
		c->hint_data = c->data_len + c->data_len / 8 + 64;
	c->valid = c->vals = c->data = NULL;
	c->offs = NULL;
	c->len = c->cap = 0;
	c->data_len = c->data_cap = 0;
	if (c->kind == SB_STRUCT) {
		for (size_t i = 0; i < c->n_kids; i++)
			if ((rc = stream_col_finish(&c->kids[i], out->children[i])))
				goto fail;
	} else if (c->kind == SB_LIST) {
		if ((rc = stream_col_finish(&c->kids[0], out->children[0])))
			goto fail;
	} else if (c->kind == SB_MAP) {
		struct ArrowArray *e = out->children[0];
		if ((rc = floe_arrow_array_init(e, 1, 2)))
			goto fail;
		e->length = c->kids[0].len;
		if ((rc = stream_col_finish(&c->kids[0], e->children[0])) ||
		    (rc = stream_col_finish(&c->kids[1], e->children[1])))
			goto fail;
	}
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	return rc;
}

int stream_col_view(stream_col *c, struct ArrowArray *out)
{
	int64_t nb = 2, nk = 0;
	int rc;
	if (c->cap == 0 && stream_col__grow(c))
		return FLOE_ENOMEM;
	if (c->kind == SB_BIN && !c->data && stream_col__grow_data(c, 1))
		return FLOE_ENOMEM;
	switch (c->kind) {
	case SB_BIN:
		nb = 3;
		break;
	case SB_STRUCT:
		nb = 1;
		nk = (int64_t)c->n_kids;
		break;
	case SB_LIST:
	case SB_MAP:
		nk = 1;
		break;
	default:
		break;
	}
	if ((rc = floe_arrow_array_init(out, nb, nk)))
		return rc;
	out->length = c->len;
	out->null_count = count_nulls(c);
	/* borrowed: set the buffer pointers, not the owned slots */
	out->buffers[0] = out->null_count ? c->valid : NULL;
	switch (c->kind) {
	case SB_BIN:
		out->buffers[1] = c->offs;
		out->buffers[2] = c->data;
		break;
	case SB_LIST:
	case SB_MAP:
		out->buffers[1] = c->offs;
		break;
	case SB_STRUCT:
		break;
	default:
		out->buffers[1] = c->vals;
		break;
	}
	if (c->kind == SB_STRUCT) {
		for (size_t i = 0; i < c->n_kids; i++)
			if ((rc = stream_col_view(&c->kids[i], out->children[i])))
				goto fail;
	} else if (c->kind == SB_LIST) {
		if ((rc = stream_col_view(&c->kids[0], out->children[0])))
			goto fail;
	} else if (c->kind == SB_MAP) {
		struct ArrowArray *e = out->children[0];
		if ((rc = floe_arrow_array_init(e, 1, 2)))
			goto fail;
		e->length = c->kids[0].len;
		if ((rc = stream_col_view(&c->kids[0], e->children[0])) ||
		    (rc = stream_col_view(&c->kids[1], e->children[1])))
			goto fail;
	}
	return FLOE_OK;
fail:
	floe_arrow_array_release(out);
	return rc;
}

size_t stream_col_bytes(const stream_col *c)
{
	size_t n = (size_t)c->len * (c->width ? c->width : 4) + c->data_len;
	for (size_t i = 0; i < c->n_kids; i++)
		n += stream_col_bytes(&c->kids[i]);
	return n;
}

static bool ieq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

int stream_col_field(stream_col *c, const char *name, size_t n)
{
	uint32_t h;
	if (c->n_kids == 0)
		return -1;
	if (c->next_hint < c->n_kids) {
		const stream_col *k = &c->kids[c->next_hint];
		if (k->name_len == n && memcmp(k->name, name, n) == 0) {
			int i = (int)c->next_hint;
			c->next_hint = (uint32_t)(i + 1);
			return i;
		}
	}
	h = name_hash(name, n) & c->slot_mask;
	while (c->slots[h]) {
		const stream_col *k = &c->kids[c->slots[h] - 1];
		if (k->name_len == n && memcmp(k->name, name, n) == 0) {
			int i = (int)c->slots[h] - 1;
			c->next_hint = (uint32_t)(i + 1);
			return i;
		}
		h = (h + 1) & c->slot_mask;
	}
	for (size_t i = 0; i < c->n_kids; i++)
		if (c->kids[i].name_len == n && ieq(c->kids[i].name, name, n))
			return (int)i;
	return -1;
}
