/*
 * datum.c — Avro binary primitives, skipping, the generic value encoder and
 * JSON default values.
 *
 * spec: Avro 1.12 "Binary Encoding": int and long are zig-zag varints,
 * float/double little-endian IEEE 754, bytes/string a long length then the
 * bytes, unions a long branch index, arrays and maps a series of blocks (a
 * long count, negative when followed by the block's byte size) ended by a
 * zero count.
 */
#include "avro/avro_datum.h"

#include <string.h>

#include "avro/avro_int.h"
#include "util/str.h"

/* ---- encoders ----------------------------------------------------------------- */

int floe_avro_enc_long(floe_buf *b, int64_t v)
{
	return floe_buf_put_zigzag(b, v);
}

int floe_avro_enc_int(floe_buf *b, int32_t v)
{
	return floe_buf_put_zigzag(b, v);
}

int floe_avro_enc_bool(floe_buf *b, bool v)
{
	return floe_buf_putc(b, v ? 1 : 0);
}

int floe_avro_enc_float(floe_buf *b, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	return floe_buf_put_u32le(b, u);
}

int floe_avro_enc_double(floe_buf *b, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	return floe_buf_put_u64le(b, u);
}

int floe_avro_enc_bytes(floe_buf *b, const void *p, size_t n)
{
	int rc;
	if (n > INT64_MAX)
		return FLOE_EINVAL;
	if ((rc = floe_buf_put_zigzag(b, (int64_t)n)))
		return rc;
	return n ? floe_buf_append(b, p, n) : FLOE_OK;
}

int floe_avro_enc_string(floe_buf *b, const char *s, size_t n)
{
	return floe_avro_enc_bytes(b, s, n);
}

int floe_avro_enc_fixed(floe_buf *b, const void *p, size_t n)
{
	return n ? floe_buf_append(b, p, n) : FLOE_OK;
}

int floe_avro_enc_union(floe_buf *b, size_t branch)
{
	return floe_buf_put_zigzag(b, (int64_t)branch);
}

int floe_avro_enc_enum(floe_buf *b, size_t index)
{
	return floe_buf_put_zigzag(b, (int64_t)index);
}

int floe_avro_enc_block_count(floe_buf *b, size_t n)
{
	return floe_buf_put_zigzag(b, (int64_t)n);
}

/* ---- decoders ---------------------------------------------------------------- */

bool floe_avro_dec_long(floe_cursor *c, int64_t *v)
{
	return avro_dec_long(c, v);
}

bool floe_avro_dec_int(floe_cursor *c, int32_t *v)
{
	return avro_dec_int(c, v);
}

bool floe_avro_dec_bool(floe_cursor *c, bool *v)
{
	if (c->off >= c->n || c->p[c->off] > 1)
		return false;
	*v = c->p[c->off++] != 0;
	return true;
}

bool floe_avro_dec_float(floe_cursor *c, float *v)
{
	uint32_t u;
	if (!floe_cursor_u32le(c, &u))
		return false;
	memcpy(v, &u, 4);
	return true;
}

bool floe_avro_dec_double(floe_cursor *c, double *v)
{
	uint64_t u;
	if (!floe_cursor_u64le(c, &u))
		return false;
	memcpy(v, &u, 8);
	return true;
}

bool floe_avro_dec_bytes(floe_cursor *c, const uint8_t **p, size_t *n)
{
	return avro_dec_bytes(c, p, n);
}

bool floe_avro_dec_fixed(floe_cursor *c, size_t size, const uint8_t **p)
{
	return floe_cursor_bytes(c, size, p);
}

bool floe_avro_dec_union(floe_cursor *c, size_t n_branches, size_t *branch)
{
	size_t save = c->off;
	int64_t v;
	if (!avro_dec_long(c, &v))
		return false;
	if (v < 0 || (uint64_t)v >= n_branches) {
		c->off = save;
		return false;
	}
	*branch = (size_t)v;
	return true;
}

bool floe_avro_dec_block(floe_cursor *c, int64_t *count, int64_t *block_bytes)
{
	return avro_dec_block(c, count, block_bytes);
}

/* ---- skip ----------------------------------------------------------------------- */

static int skip_fail(floe_cursor *c, floe_error *err, const char *what)
{
	return floe_error_corrupt(err, "at offset %zu: %s", c->off, what);
}

static int skip_rec(floe_cursor *c, const floe_avro_schema *s, floe_error *err, int depth)
{
	int64_t v, count, bytes;
	const uint8_t *p;
	size_t n, br;
	int rc;
	if (depth > 512)
		return skip_fail(c, err, "values nested too deeply");
	switch (s->type) {
	case FLOE_AVRO_NULL: return FLOE_OK;
	case FLOE_AVRO_BOOLEAN:
		if (!floe_cursor_skip(c, 1))
			return skip_fail(c, err, "truncated boolean");
		return FLOE_OK;
	case FLOE_AVRO_INT:
	case FLOE_AVRO_LONG:
	case FLOE_AVRO_ENUM:
		if (!avro_dec_long(c, &v))
			return skip_fail(c, err, "truncated or over-long varint");
		if (s->type == FLOE_AVRO_ENUM && (v < 0 || (uint64_t)v >= s->n_symbols))
			return skip_fail(c, err, "enum index out of range");
		return FLOE_OK;
	case FLOE_AVRO_FLOAT:
		if (!floe_cursor_skip(c, 4))
			return skip_fail(c, err, "truncated float");
		return FLOE_OK;
	case FLOE_AVRO_DOUBLE:
		if (!floe_cursor_skip(c, 8))
			return skip_fail(c, err, "truncated double");
		return FLOE_OK;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
		if (!avro_dec_bytes(c, &p, &n))
			return skip_fail(c, err, "bad length or truncated bytes");
		return FLOE_OK;
	case FLOE_AVRO_FIXED:
		if (!floe_cursor_skip(c, s->size))
			return skip_fail(c, err, "truncated fixed");
		return FLOE_OK;
	case FLOE_AVRO_UNION:
		if (!floe_avro_dec_union(c, s->n_branches, &br))
			return skip_fail(c, err, "bad union branch index");
		return skip_rec(c, s->branches[br], err, depth + 1);
	case FLOE_AVRO_RECORD:
		for (size_t i = 0; i < s->n_fields; i++)
			if ((rc = skip_rec(c, s->fields[i].type, err, depth + 1)))
				return rc;
		return FLOE_OK;
	case FLOE_AVRO_ARRAY:
	case FLOE_AVRO_MAP: {
		size_t item_min = floe_avro_min_size(s->items);
		if (s->type == FLOE_AVRO_MAP)
			item_min++;
		for (;;) {
			if (!avro_dec_block(c, &count, &bytes))
				return skip_fail(c, err, "bad array/map block header");
			if (count == 0)
				return FLOE_OK;
			if (bytes >= 0) {
				if (!floe_cursor_skip(c, (size_t)bytes))
					return skip_fail(c, err, "block size exceeds the data");
				continue;
			}
			if (item_min && (uint64_t)count > floe_cursor_left(c) / item_min)
				return skip_fail(c, err, "block count exceeds the data");
			if (item_min == 0)
				continue; /* items of an always-empty type: nothing to read */
			for (int64_t i = 0; i < count; i++) {
				if (s->type == FLOE_AVRO_MAP && !avro_dec_bytes(c, &p, &n))
					return skip_fail(c, err, "bad map key");
				if ((rc = skip_rec(c, s->items, err, depth + 1)))
					return rc;
			}
		}
	}
	}
	return skip_fail(c, err, "unknown schema type");
}

int floe_avro_skip(floe_cursor *c, const floe_avro_schema *s, floe_error *err)
{
	return skip_rec(c, s, err, 0);
}

size_t floe_avro_min_size(const floe_avro_schema *s)
{
	size_t n = 0;
	switch (s->type) {
	case FLOE_AVRO_NULL: return 0;
	case FLOE_AVRO_FLOAT: return 4;
	case FLOE_AVRO_DOUBLE: return 8;
	case FLOE_AVRO_FIXED: return s->size;
	case FLOE_AVRO_RECORD:
		for (size_t i = 0; i < s->n_fields; i++) {
			size_t m = floe_avro_min_size(s->fields[i].type);
			if (!floe_size_add(&n, n, m))
				return SIZE_MAX;
		}
		return n;
	default: return 1;
	}
}

/* ---- values ------------------------------------------------------------------------ */

bool floe_avro_value_get_long(const floe_avro_value *v, int64_t *out)
{
	if (!v)
		return false;
	if (v->type == FLOE_AVRO_LONG) {
		*out = v->u.l;
		return true;
	}
	if (v->type == FLOE_AVRO_INT) {
		*out = v->u.i;
		return true;
	}
	return false;
}

char *floe_avro_value_strdup(floe_arena *a, const floe_avro_value *v)
{
	if (!v || (v->type != FLOE_AVRO_STRING && v->type != FLOE_AVRO_BYTES &&
		   v->type != FLOE_AVRO_FIXED))
		return NULL;
	return floe_arena_strndup(a, (const char *)v->u.bytes.p, v->u.bytes.len);
}

/* ---- generic encoder ------------------------------------------------------------------ */

static int enc_mismatch(floe_error *err, const floe_avro_schema *s, const floe_avro_value *v)
{
	return floe_error_set(err, FLOE_EINVAL, "a %s value does not match schema type %s",
			      floe_avro_type_name(v->type),
			      s->fullname ? s->fullname : floe_avro_type_name(s->type));
}

static int enc_rec(floe_buf *b, const floe_avro_schema *s, const floe_avro_value *v,
		   floe_error *err, int depth)
{
	int rc = FLOE_OK;
	if (depth > 512)
		return floe_error_set(err, FLOE_EINVAL, "value nested too deeply");
	if (s->type == FLOE_AVRO_UNION) {
		size_t br = SIZE_MAX;
		if (v->branch >= 0 && (size_t)v->branch < s->n_branches &&
		    s->branches[v->branch]->type == v->type)
			br = (size_t)v->branch;
		for (size_t i = 0; br == SIZE_MAX && i < s->n_branches; i++)
			if (s->branches[i]->type == v->type)
				br = i;
		if (br == SIZE_MAX)
			return enc_mismatch(err, s, v);
		if ((rc = floe_avro_enc_union(b, br)))
			goto nomem;
		return enc_rec(b, s->branches[br], v, err, depth + 1);
	}
	if (s->type != v->type)
		return enc_mismatch(err, s, v);
	switch (s->type) {
	case FLOE_AVRO_NULL: return FLOE_OK;
	case FLOE_AVRO_BOOLEAN: rc = floe_avro_enc_bool(b, v->u.b); break;
	case FLOE_AVRO_INT: rc = floe_avro_enc_int(b, v->u.i); break;
	case FLOE_AVRO_LONG: rc = floe_avro_enc_long(b, v->u.l); break;
	case FLOE_AVRO_FLOAT: rc = floe_avro_enc_float(b, v->u.f); break;
	case FLOE_AVRO_DOUBLE: rc = floe_avro_enc_double(b, v->u.d); break;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING: rc = floe_avro_enc_bytes(b, v->u.bytes.p, v->u.bytes.len); break;
	case FLOE_AVRO_FIXED:
		if (v->u.bytes.len != s->size)
			return floe_error_set(err, FLOE_EINVAL,
					      "fixed '%s' needs %zu bytes, the value has %zu",
					      s->fullname, s->size, v->u.bytes.len);
		rc = floe_avro_enc_fixed(b, v->u.bytes.p, v->u.bytes.len);
		break;
	case FLOE_AVRO_ENUM:
		if (v->u.i < 0 || (size_t)v->u.i >= s->n_symbols)
			return floe_error_set(err, FLOE_EINVAL, "enum '%s': index %d out of range",
					      s->fullname, (int)v->u.i);
		rc = floe_avro_enc_enum(b, (size_t)v->u.i);
		break;
	case FLOE_AVRO_RECORD:
		if (v->u.list.n != s->n_fields)
			return floe_error_set(err, FLOE_EINVAL,
					      "record '%s' has %zu fields, the value %zu",
					      s->fullname, s->n_fields, v->u.list.n);
		for (size_t i = 0; i < s->n_fields; i++)
			if ((rc = enc_rec(b, s->fields[i].type, &v->u.list.items[i], err,
					  depth + 1)))
				return AVRO_PREFIX(rc, err, "field '%s': ", s->fields[i].name);
		return FLOE_OK;
	case FLOE_AVRO_ARRAY:
		if (v->u.list.n && (rc = floe_avro_enc_block_count(b, v->u.list.n)))
			goto nomem;
		for (size_t i = 0; i < v->u.list.n; i++)
			if ((rc = enc_rec(b, s->items, &v->u.list.items[i], err, depth + 1)))
				return AVRO_PREFIX(rc, err, "item %zu: ", i);
		rc = floe_avro_enc_block_count(b, 0);
		break;
	case FLOE_AVRO_MAP:
		if (v->u.map.n && (rc = floe_avro_enc_block_count(b, v->u.map.n)))
			goto nomem;
		for (size_t i = 0; i < v->u.map.n; i++) {
			const floe_avro_map_entry *e = &v->u.map.entries[i];
			if ((rc = floe_avro_enc_bytes(b, e->key, e->key_len)))
				goto nomem;
			if ((rc = enc_rec(b, s->items, &e->value, err, depth + 1)))
				return AVRO_PREFIX(rc, err, "map value %zu: ", i);
		}
		rc = floe_avro_enc_block_count(b, 0);
		break;
	default: return enc_mismatch(err, s, v);
	}
	if (!rc)
		return FLOE_OK;
nomem:
	return floe_error_set(err, rc, "out of buffer space encoding a value");
}

int floe_avro_encode_value(floe_buf *b, const floe_avro_schema *s, const floe_avro_value *v,
			   floe_error *err)
{
	size_t start = b->len;
	int rc = enc_rec(b, s, v, err, 0);
	if (rc) {
		b->len = start;
		if (b->data)
			b->data[start] = 0;
	}
	return rc;
}

/* ---- JSON defaults -------------------------------------------------------------------- */

static int json_bytes(floe_avro_value *out, floe_arena *a, const floe_json *j)
{
	uint8_t *p = floe_arena_alloc(a, j->len + 1);
	size_t n = 0;
	if (!p)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < j->len;) {
		unsigned char c = (unsigned char)j->s[i];
		if (c < 0x80) {
			p[n++] = c;
			i++;
		} else if ((c == 0xc2 || c == 0xc3) && i + 1 < j->len) {
			p[n++] = (uint8_t)((c & 0x03) << 6 | ((unsigned char)j->s[i + 1] & 0x3f));
			i += 2;
		} else {
			return FLOE_EINVAL;
		}
	}
	out->u.bytes.p = p;
	out->u.bytes.len = n;
	return FLOE_OK;
}

static int from_json(floe_avro_value *out, floe_arena *a, const floe_avro_schema *s,
		     const floe_json *j, int depth)
{
	int rc;
	if (depth > 128 || !j)
		return FLOE_EINVAL;
	memset(out, 0, sizeof(*out));
	out->branch = -1;
	out->type = s->type;
	switch (s->type) {
	case FLOE_AVRO_NULL: return j->type == FLOE_JSON_NULL ? FLOE_OK : FLOE_EINVAL;
	case FLOE_AVRO_BOOLEAN:
		if (j->type != FLOE_JSON_BOOL)
			return FLOE_EINVAL;
		out->u.b = j->b;
		return FLOE_OK;
	case FLOE_AVRO_INT:
		if (j->type != FLOE_JSON_NUMBER || !j->is_int || j->i < INT32_MIN || j->i > INT32_MAX)
			return FLOE_EINVAL;
		out->u.i = (int32_t)j->i;
		return FLOE_OK;
	case FLOE_AVRO_LONG:
		if (j->type != FLOE_JSON_NUMBER || !j->is_int)
			return FLOE_EINVAL;
		out->u.l = j->i;
		return FLOE_OK;
	case FLOE_AVRO_FLOAT:
	case FLOE_AVRO_DOUBLE: {
		double d;
		if (j->type == FLOE_JSON_NUMBER)
			d = j->d;
		else if (j->type == FLOE_JSON_STRING && floe_slice_eq(j->s, j->len, "NaN"))
			d = __builtin_nan("");
		else if (j->type == FLOE_JSON_STRING && floe_slice_eq(j->s, j->len, "Infinity"))
			d = __builtin_inf();
		else if (j->type == FLOE_JSON_STRING && floe_slice_eq(j->s, j->len, "-Infinity"))
			d = -__builtin_inf();
		else
			return FLOE_EINVAL;
		if (s->type == FLOE_AVRO_FLOAT)
			out->u.f = (float)d;
		else
			out->u.d = d;
		return FLOE_OK;
	}
	case FLOE_AVRO_STRING:
		if (j->type != FLOE_JSON_STRING)
			return FLOE_EINVAL;
		out->u.bytes.p = (const uint8_t *)j->s;
		out->u.bytes.len = j->len;
		return FLOE_OK;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_FIXED:
		if (j->type != FLOE_JSON_STRING)
			return FLOE_EINVAL;
		if ((rc = json_bytes(out, a, j)))
			return rc;
		return s->type == FLOE_AVRO_FIXED && out->u.bytes.len != s->size ? FLOE_EINVAL
										 : FLOE_OK;
	case FLOE_AVRO_ENUM:
		if (j->type != FLOE_JSON_STRING)
			return FLOE_EINVAL;
		for (size_t i = 0; i < s->n_symbols; i++)
			if (floe_slice_eq(j->s, j->len, s->symbols[i])) {
				out->u.i = (int32_t)i;
				return FLOE_OK;
			}
		return FLOE_EINVAL;
	case FLOE_AVRO_ARRAY: {
		size_t i = 0;
		if (j->type != FLOE_JSON_ARRAY)
			return FLOE_EINVAL;
		out->u.list.items = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_avro_value));
		if (!out->u.list.items)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next, i++)
			if ((rc = from_json(&out->u.list.items[i], a, s->items, c, depth + 1)))
				return rc;
		out->u.list.n = i;
		return FLOE_OK;
	}
	case FLOE_AVRO_MAP: {
		size_t i = 0;
		if (j->type != FLOE_JSON_OBJECT)
			return FLOE_EINVAL;
		out->u.map.entries =
			floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_avro_map_entry));
		if (!out->u.map.entries)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next, i++) {
			out->u.map.entries[i].key = (const uint8_t *)c->key;
			out->u.map.entries[i].key_len = c->key_len;
			if ((rc = from_json(&out->u.map.entries[i].value, a, s->items, c,
					    depth + 1)))
				return rc;
		}
		out->u.map.n = i;
		return FLOE_OK;
	}
	case FLOE_AVRO_RECORD:
		if (j->type != FLOE_JSON_OBJECT)
			return FLOE_EINVAL;
		out->u.list.items =
			floe_arena_calloc(a, s->n_fields ? s->n_fields : 1, sizeof(floe_avro_value));
		if (!out->u.list.items)
			return FLOE_ENOMEM;
		out->u.list.n = s->n_fields;
		for (size_t i = 0; i < s->n_fields; i++) {
			const floe_json *v = floe_json_get(j, s->fields[i].name);
			if (!v)
				v = s->fields[i].default_value;
			if (!v)
				return FLOE_EINVAL;
			if ((rc = from_json(&out->u.list.items[i], a, s->fields[i].type, v,
					    depth + 1)))
				return rc;
		}
		return FLOE_OK;
	case FLOE_AVRO_UNION:
		for (size_t i = 0; i < s->n_branches; i++) {
			rc = from_json(out, a, s->branches[i], j, depth + 1);
			if (rc == FLOE_ENOMEM)
				return rc;
			if (rc == FLOE_OK) {
				out->branch = (int32_t)i;
				return FLOE_OK;
			}
		}
		return FLOE_EINVAL;
	}
	return FLOE_EINVAL;
}

int floe_avro_value_from_json(floe_avro_value *out, floe_arena *a, const floe_avro_schema *s,
			      const floe_json *j, floe_error *err)
{
	int rc = from_json(out, a, s, j, 0);
	if (rc == FLOE_ENOMEM)
		return floe_error_set(err, rc, "out of memory");
	if (rc)
		return floe_error_set(err, rc, "default value does not match type %s",
				      s->fullname ? s->fullname : floe_avro_type_name(s->type));
	return FLOE_OK;
}
