/*
 * scan_avro.c — Avro data files (Iceberg's `file_format: AVRO`) read into
 * table-typed Arrow columns.
 *
 * Columns are matched to the file's top-level record fields by "field-id"
 * (every Iceberg writer sets it), else by name. Each record is decoded with
 * the file's own schema and its values go straight into builders of the
 * table type (int->long, float->double and millisecond/microsecond
 * timestamps widened; decimals with the table's scale; uuids from fixed[16]
 * or their text). Columns of nested types are refused by name: Avro data
 * files with structs, lists or maps are not read yet.
 */
#include <string.h>

#include "arrow/arrow_build.h"
#include "avro/avro_reader.h"
#include "iceberg/value.h"
#include "scan/scan_impl.h"
#include "util/rand.h"

typedef struct acol {
	const floe_field *field;
	int64_t src;   /* index of the file's record field, -1: not in the file */
	floe_buf data, offs, valid;
	int64_t nulls;
} acol;

struct scan_avro_file {
	floe_avro_reader *r;
	const char *path;
	acol *cols;
	size_t n_cols;
};

static bool is_flat(const floe_type *t)
{
	return floe_type_is_primitive(t) && t->id != FLOE_T_VARIANT && t->id != FLOE_T_UNKNOWN &&
	       t->id != FLOE_T_GEOMETRY && t->id != FLOE_T_GEOGRAPHY;
}

/* The non-null branch of an optional union, else s itself. */
static const floe_avro_schema *base_schema(const floe_avro_schema *s)
{
	if (s->type != FLOE_AVRO_UNION)
		return s;
	for (size_t i = 0; i < s->n_branches; i++)
		if (s->branches[i]->type != FLOE_AVRO_NULL)
			return s->branches[i];
	return s;
}

int floe_scan__avro_open(scan_avro_file **out, floe_input *in, const char *path,
			 const floe_field *const *fields, size_t n_fields, int64_t *src,
			 floe_error *err)
{
	floe_avro_reader_opts ro = FLOE_AVRO_READER_OPTS_INIT;
	scan_avro_file *af = floe_calloc(1, sizeof(*af));
	int rc;
	*out = NULL;
	if (!af || !(af->cols = floe_calloc(n_fields ? n_fields : 1, sizeof(acol)))) {
		floe_free(af);
		return floe_error_oom(err);
	}
	af->path = path;
	af->n_cols = n_fields;
	if ((rc = floe_avro_reader_open(&af->r, in, &ro, err))) {
		floe_scan__avro_free(af);
		return floe_error_prefix(err, rc, "'%s': ", path);
	}
	const floe_avro_schema *s = floe_avro_reader_schema(af->r);
	if (s->type != FLOE_AVRO_RECORD) {
		floe_scan__avro_free(af);
		return floe_error_corrupt(err, "'%s': the file's schema is not a record",
				      path);
	}
	bool ids = false;
	for (size_t k = 0; k < s->n_fields; k++)
		ids |= s->fields[k].field_id != FLOE_AVRO_ID_NONE;
	for (size_t i = 0; i < n_fields; i++) {
		acol *c = &af->cols[i];
		c->field = fields[i];
		c->src = -1;
		for (size_t k = 0; k < s->n_fields && c->src < 0; k++)
			if (ids ? s->fields[k].field_id == fields[i]->id
				: !strcmp(s->fields[k].name, fields[i]->name))
				c->src = (int64_t)k;
		if (c->src >= 0 && !is_flat(fields[i]->type)) {
			floe_scan__avro_free(af);
			return floe_error_set(err, FLOE_EUNSUPPORTED,
					      "'%s': column '%s': nested columns of Avro data files "
					      "are not read yet",
					      path, fields[i]->name);
		}
		src[i] = c->src;
		floe_buf_init(&c->data, 0);
		floe_buf_init(&c->offs, 0);
		floe_buf_init(&c->valid, 0);
	}
	*out = af;
	return FLOE_OK;
}

void floe_scan__avro_free(scan_avro_file *af)
{
	if (!af)
		return;
	for (size_t i = 0; af->cols && i < af->n_cols; i++) {
		floe_buf_reset(&af->cols[i].data);
		floe_buf_reset(&af->cols[i].offs);
		floe_buf_reset(&af->cols[i].valid);
	}
	floe_free(af->cols);
	floe_avro_reader_free(af->r);
	floe_free(af);
}

static int bad_value(const scan_avro_file *af, const acol *c, floe_error *err)
{
	return floe_error_corrupt(err, "'%s': column '%s': a value of the file's type does not convert to "
			      "the table's",
			      af->path, c->field->name);
}

/* Append one value (v NULL or an Avro null: a null) of row `row`. */
static int append(const scan_avro_file *af, acol *c, const floe_avro_schema *fs,
		  const floe_avro_value *v, int64_t row, floe_error *err)
{
	const floe_type *t = c->field->type;
	bool null = !v || v->type == FLOE_AVRO_NULL;
	size_t vb = (size_t)(row >> 3) + 1;
	if (c->valid.len < vb) {
		if (floe_buf_reserve(&c->valid, vb - c->valid.len + 64))
			return floe_error_oom(err);
		memset(c->valid.data + c->valid.len, 0, vb - c->valid.len);
		c->valid.len = vb;
	}
	if (!null)
		c->valid.data[row >> 3] |= (uint8_t)(1u << (row & 7));
	else
		c->nulls++;
	const char *lt = fs ? fs->logical_type : NULL;
	uint8_t buf[16];
	const void *p = buf;
	size_t n = 0;
	memset(buf, 0, sizeof(buf));
	switch (t->id) {
	case FLOE_T_BOOLEAN: {
		size_t bb = (size_t)(row >> 3) + 1;
		if (c->data.len < bb) {
			if (floe_buf_reserve(&c->data, bb - c->data.len + 64))
				return floe_error_oom(err);
			memset(c->data.data + c->data.len, 0, bb - c->data.len);
			c->data.len = bb;
		}
		if (!null && v->type != FLOE_AVRO_BOOLEAN)
			return bad_value(af, c, err);
		if (!null && v->u.b)
			c->data.data[row >> 3] |= (uint8_t)(1u << (row & 7));
		return FLOE_OK;
	}
	case FLOE_T_INT:
	case FLOE_T_DATE: {
		int32_t x = 0;
		if (!null && v->type != FLOE_AVRO_INT)
			return bad_value(af, c, err);
		if (!null)
			x = v->u.i;
		memcpy(buf, &x, 4);
		n = 4;
		break;
	}
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: {
		int64_t x = 0;
		if (!null) {
			if (v->type == FLOE_AVRO_INT)
				x = v->u.i;
			else if (v->type == FLOE_AVRO_LONG)
				x = v->u.l;
			else
				return bad_value(af, c, err);
			bool ns = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS;
			int64_t mul = 1;
			if (lt && (!strcmp(lt, "timestamp-millis") || !strcmp(lt, "time-millis") ||
				   !strcmp(lt, "local-timestamp-millis")))
				mul = ns ? 1000000 : 1000;
			else if (lt && ns && (!strcmp(lt, "timestamp-micros") ||
					      !strcmp(lt, "local-timestamp-micros")))
				mul = 1000;
			if (mul != 1 && __builtin_mul_overflow(x, mul, &x))
				return bad_value(af, c, err);
		}
		memcpy(buf, &x, 8);
		n = 8;
		break;
	}
	case FLOE_T_FLOAT: {
		float x = 0;
		if (!null && v->type != FLOE_AVRO_FLOAT)
			return bad_value(af, c, err);
		if (!null)
			x = v->u.f;
		memcpy(buf, &x, 4);
		n = 4;
		break;
	}
	case FLOE_T_DOUBLE: {
		double x = 0;
		if (!null) {
			if (v->type == FLOE_AVRO_DOUBLE)
				x = v->u.d;
			else if (v->type == FLOE_AVRO_FLOAT)
				x = v->u.f;
			else
				return bad_value(af, c, err);
		}
		memcpy(buf, &x, 8);
		n = 8;
		break;
	}
	case FLOE_T_DECIMAL: {
		floe_i128 x = 0;
		if (!null) {
			if ((v->type != FLOE_AVRO_BYTES && v->type != FLOE_AVRO_FIXED) ||
			    v->u.bytes.len < 1 || v->u.bytes.len > 16)
				return bad_value(af, c, err);
			int32_t scale = fs && fs->scale != FLOE_AVRO_ID_NONE ? fs->scale : 0;
			if (scale != t->scale)
				return bad_value(af, c, err);
			x = floe_i128_from_be(v->u.bytes.p, v->u.bytes.len);
		}
		memcpy(buf, &x, 16);
		n = 16;
		break;
	}
	case FLOE_T_UUID:
		n = 16;
		if (null)
			break;
		if (v->type == FLOE_AVRO_FIXED && v->u.bytes.len == 16)
			p = v->u.bytes.p;
		else if (v->type != FLOE_AVRO_STRING ||
			 !floe_uuid_parse((const char *)v->u.bytes.p, v->u.bytes.len, buf))
			return bad_value(af, c, err);
		break;
	case FLOE_T_FIXED:
		n = (size_t)t->length;
		if (null) {
			p = NULL;
			break;
		}
		if (v->type != FLOE_AVRO_FIXED || v->u.bytes.len != n)
			return bad_value(af, c, err);
		p = v->u.bytes.p;
		break;
	case FLOE_T_STRING:
	case FLOE_T_BINARY: {
		if (c->offs.len == 0) {
			int32_t z = 0;
			if (floe_buf_append(&c->offs, &z, 4))
				return floe_error_oom(err);
		}
		if (!null) {
			if (v->type != FLOE_AVRO_STRING && v->type != FLOE_AVRO_BYTES &&
			    v->type != FLOE_AVRO_FIXED)
				return bad_value(af, c, err);
			if (v->u.bytes.len > (size_t)INT32_MAX - c->data.len)
				return floe_error_set(err, FLOE_EUNSUPPORTED,
						      "'%s': column '%s': over 2 GiB in one batch",
						      af->path, c->field->name);
			if (floe_buf_append(&c->data, v->u.bytes.p, v->u.bytes.len))
				return floe_error_oom(err);
		}
		int32_t end = (int32_t)c->data.len;
		if (floe_buf_append(&c->offs, &end, 4))
			return floe_error_oom(err);
		return FLOE_OK;
	}
	default:
		return floe_error_set(err, FLOE_EUNSUPPORTED, "'%s': column '%s': type not read yet",
				      af->path, c->field->name);
	}
	if (p == NULL) {
		if (floe_buf_reserve(&c->data, n))
			return floe_error_oom(err);
		memset(c->data.data + c->data.len, 0, n);
		c->data.len += n;
		return FLOE_OK;
	}
	return floe_buf_append(&c->data, p, n) ? floe_error_oom(err)
					       : FLOE_OK;
}

/* Move a builder into an Arrow array of n rows. */
static int finish(acol *c, struct ArrowArray *out, int64_t n, floe_error *err)
{
	bool varbin = c->field->type->id == FLOE_T_STRING || c->field->type->id == FLOE_T_BINARY;
	if (floe_arrow_array_init(out, varbin ? 3 : 2, 0))
		return floe_error_oom(err);
	out->length = n;
	out->null_count = c->nulls;
	int rc = 0;
	if (c->nulls)
		rc = floe_arrow_array_take_buf(out, 0, &c->valid);
	if (!rc && varbin)
		rc = floe_arrow_array_take_buf(out, 1, &c->offs);
	if (!rc)
		rc = floe_arrow_array_take_buf(out, varbin ? 2 : 1, &c->data);
	floe_buf_reset(&c->valid);
	floe_buf_reset(&c->offs);
	floe_buf_reset(&c->data);
	c->nulls = 0;
	if (rc) {
		floe_arrow_array_release(out);
		return floe_error_oom(err);
	}
	return FLOE_OK;
}

int floe_scan__avro_next(scan_avro_file *af, int64_t max_rows, struct ArrowArray *cols,
			 int64_t *n_out, floe_error *err)
{
	const floe_avro_schema *s = floe_avro_reader_schema(af->r);
	int64_t n = 0;
	int rc = FLOE_OK;
	*n_out = 0;
	while (n < max_rows) {
		floe_avro_value v;
		bool eof;
		if ((rc = floe_avro_reader_next(&v, &eof, af->r, err)))
			return floe_error_prefix(err, rc, "'%s': ", af->path);
		if (eof)
			break;
		if (v.type != FLOE_AVRO_RECORD || v.u.list.n != s->n_fields)
			return floe_error_corrupt(err, "'%s': record %lld is malformed",
					      af->path, (long long)n);
		for (size_t i = 0; i < af->n_cols && !rc; i++) {
			acol *c = &af->cols[i];
			if (c->src < 0)
				continue;
			const floe_avro_schema *fs = base_schema(s->fields[c->src].type);
			rc = append(af, c, fs, &v.u.list.items[c->src], n, err);
		}
		if (rc)
			return rc;
		n++;
	}
	for (size_t i = 0; i < af->n_cols && !rc; i++) {
		acol *c = &af->cols[i];
		if (c->src < 0 || n == 0)
			continue;
		rc = finish(c, &cols[i], n, err);
	}
	if (!rc)
		*n_out = n;
	return rc;
}
