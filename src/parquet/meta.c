/*
 * meta.c — parsing the Parquet footer and page headers (Thrift compact).
 *
 * One function per Thrift struct. Each loops over the struct's fields,
 * reads the ones it knows, skips the rest (any type), and checks that the
 * required ones were present. Strings and binaries are copied into the
 * arena when one is given, borrowed from the input otherwise.
 */
#include "parquet/meta.h"

#include <stdio.h>
#include <string.h>

#include "parquet/thrift.h"

typedef struct pctx {
	floe_thrift_reader r;
	floe_arena *arena; /* NULL: borrow bytes from the input */
} pctx;

#define REQ(bit) (1u << (bit))

static int nomem(pctx *c)
{
	return floe_error_oomf(c->r.err, "%s: out of memory", c->r.what);
}

static int missing(pctx *c, const char *st, const char *field)
{
	return floe_thrift_corrupt(&c->r, "%s is missing required field %s", st, field);
}

static int read_str(pctx *c, int t, const char **out, bool *present)
{
	const uint8_t *p;
	size_t n;
	bool pr = false;
	int rc = floe_thrift_read_binary(&c->r, t, &p, &n, &pr);
	if (rc)
		return rc;
	if (present)
		*present = pr;
	if (!pr)
		return FLOE_OK;
	if (c->arena) {
		char *s = floe_arena_strndup(c->arena, (const char *)p, n);
		if (!s)
			return nomem(c);
		*out = s;
	} else {
		*out = NULL; /* strings are only read with an arena */
	}
	return FLOE_OK;
}

static int read_bytes(pctx *c, int t, floe_parquet_bytes *b, bool *present)
{
	const uint8_t *p;
	size_t n;
	bool pr = false;
	int rc = floe_thrift_read_binary(&c->r, t, &p, &n, &pr);
	if (rc)
		return rc;
	*present = pr;
	if (!pr)
		return FLOE_OK;
	if (c->arena && n > 0) {
		uint8_t *q = floe_arena_memdup(c->arena, p, n);
		if (!q)
			return nomem(c);
		p = q;
	}
	b->p = p;
	b->n = n;
	return FLOE_OK;
}

static int read_enum(pctx *c, int t, int *out, bool *present, int lo, int hi, const char *what)
{
	int32_t v = 0;
	bool pr = false;
	int rc = floe_thrift_read_i32(&c->r, t, &v, &pr);
	if (rc)
		return rc;
	if (present)
		*present = pr;
	if (!pr)
		return FLOE_OK;
	if (v < lo || v > hi)
		return floe_thrift_corrupt(&c->r, "%s %d is out of range", what, (int)v);
	*out = v;
	return FLOE_OK;
}

/* Allocate count elements for a list (count already bounded by the reader). */
static void *alloc_list(pctx *c, size_t count, size_t elem)
{
	if (count == 0)
		return NULL;
	return floe_arena_calloc(c->arena, count, elem);
}

/* Begin a list-valued field; a field of another type is skipped (*count = 0,
 * *ok = false). */
static int list_begin(pctx *c, int t, int want_elem, size_t *count, bool *ok)
{
	int et, rc;
	*ok = false;
	*count = 0;
	if (t != FLOE_THRIFT_LIST && t != FLOE_THRIFT_SET)
		return floe_thrift_skip(&c->r, t);
	if ((rc = floe_thrift_list_begin(&c->r, &et, count)))
		return rc;
	if (*count > 0 && et != want_elem &&
	    !(want_elem == FLOE_THRIFT_I32 && (et == FLOE_THRIFT_I16 || et == FLOE_THRIFT_I8 ||
					       et == FLOE_THRIFT_I64)))
		return floe_thrift_corrupt(&c->r, "list element type %d, expected %d", et, want_elem);
	*ok = true;
	return FLOE_OK;
}

/* ---- Statistics ------------------------------------------------------ */

static int parse_stats(pctx *c, floe_parquet_stats *s)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	memset(s, 0, sizeof(*s));
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			return FLOE_OK;
		switch (fid) {
		case 1: rc = read_bytes(c, t, &s->max, &s->has_max); break;
		case 2: rc = read_bytes(c, t, &s->min, &s->has_min); break;
		case 3: rc = floe_thrift_read_i64(r, t, &s->null_count, &s->has_null_count); break;
		case 4:
			rc = floe_thrift_read_i64(r, t, &s->distinct_count, &s->has_distinct_count);
			break;
		case 5: rc = read_bytes(c, t, &s->max_value, &s->has_max_value); break;
		case 6: rc = read_bytes(c, t, &s->min_value, &s->has_min_value); break;
		case 7:
			rc = floe_thrift_read_bool(r, t, &s->is_max_value_exact,
						   &s->has_is_max_value_exact);
			break;
		case 8:
			rc = floe_thrift_read_bool(r, t, &s->is_min_value_exact,
						   &s->has_is_min_value_exact);
			break;
		case 9: rc = floe_thrift_read_i64(r, t, &s->nan_count, &s->has_nan_count); break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
}

/* ---- LogicalType ------------------------------------------------------- */

static int parse_time_unit(pctx *c, int *unit)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	*unit = -1;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		if (fid >= 1 && fid <= 3 && t == FLOE_THRIFT_STRUCT)
			*unit = fid - 1;
		if ((rc = floe_thrift_skip(r, t)))
			return rc;
	}
	if (*unit < 0)
		return floe_thrift_corrupt(r, "TimeUnit has no known member");
	return FLOE_OK;
}

/* The members with fields: DECIMAL, TIME, TIMESTAMP, INTEGER, GEOMETRY,
 * GEOGRAPHY. Others are empty structs (skipped). */
static int parse_lt_member(pctx *c, floe_parquet_logical *lt)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		rc = 0;
		switch (lt->kind) {
		case FLOE_PARQUET_LT_DECIMAL:
			if (fid == 1)
				rc = floe_thrift_read_i32(r, t, &lt->scale, NULL), seen |= 1;
			else if (fid == 2)
				rc = floe_thrift_read_i32(r, t, &lt->precision, NULL), seen |= 2;
			else
				rc = floe_thrift_skip(r, t);
			break;
		case FLOE_PARQUET_LT_TIME:
		case FLOE_PARQUET_LT_TIMESTAMP:
			if (fid == 1) {
				rc = floe_thrift_read_bool(r, t, &lt->utc, NULL);
				seen |= 1;
			} else if (fid == 2 && t == FLOE_THRIFT_STRUCT) {
				rc = parse_time_unit(c, &lt->unit);
				seen |= 2;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case FLOE_PARQUET_LT_INTEGER:
			if (fid == 1) {
				int32_t bw = 0;
				rc = floe_thrift_read_i32(r, t, &bw, NULL);
				if (!rc && bw != 8 && bw != 16 && bw != 32 && bw != 64)
					return floe_thrift_corrupt(r, "IntType bitWidth %d", (int)bw);
				lt->bit_width = (int8_t)bw;
				seen |= 1;
			} else if (fid == 2) {
				rc = floe_thrift_read_bool(r, t, &lt->is_signed, NULL);
				seen |= 2;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case FLOE_PARQUET_LT_GEOMETRY:
		case FLOE_PARQUET_LT_GEOGRAPHY:
			if (fid == 1)
				rc = read_str(c, t, &lt->crs, NULL);
			else if (fid == 2 && lt->kind == FLOE_PARQUET_LT_GEOGRAPHY)
				rc = read_enum(c, t, &lt->algorithm, NULL, 0, 1000, "algorithm");
			else
				rc = floe_thrift_skip(r, t);
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
	switch (lt->kind) {
	case FLOE_PARQUET_LT_DECIMAL:
	case FLOE_PARQUET_LT_TIME:
	case FLOE_PARQUET_LT_TIMESTAMP:
	case FLOE_PARQUET_LT_INTEGER:
		if (seen != 3)
			return floe_thrift_corrupt(r, "logical type %d is missing a required field",
						   lt->kind);
		break;
	default: break;
	}
	return FLOE_OK;
}

static int parse_logical(pctx *c, floe_parquet_logical *lt)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	memset(lt, 0, sizeof(*lt));
	lt->algorithm = -1;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			return FLOE_OK;
		if (t != FLOE_THRIFT_STRUCT) {
			if ((rc = floe_thrift_skip(r, t)))
				return rc;
			continue;
		}
		if ((fid >= 1 && fid <= 8) || (fid >= 10 && fid <= 18))
			lt->kind = fid;
		else
			lt->kind = FLOE_PARQUET_LT_OTHER;
		if ((rc = parse_lt_member(c, lt)))
			return rc;
	}
}

void floe_parquet_logical_from_converted(floe_parquet_logical *lt, int ct, int32_t scale,
					 int32_t precision)
{
	memset(lt, 0, sizeof(*lt));
	lt->algorithm = -1;
	switch (ct) {
	case FLOE_PARQUET_CT_UTF8: lt->kind = FLOE_PARQUET_LT_STRING; break;
	case FLOE_PARQUET_CT_MAP: lt->kind = FLOE_PARQUET_LT_MAP; break;
	case FLOE_PARQUET_CT_LIST: lt->kind = FLOE_PARQUET_LT_LIST; break;
	case FLOE_PARQUET_CT_ENUM: lt->kind = FLOE_PARQUET_LT_ENUM; break;
	case FLOE_PARQUET_CT_DECIMAL:
		lt->kind = FLOE_PARQUET_LT_DECIMAL;
		lt->scale = scale;
		lt->precision = precision;
		break;
	case FLOE_PARQUET_CT_DATE: lt->kind = FLOE_PARQUET_LT_DATE; break;
	case FLOE_PARQUET_CT_TIME_MILLIS:
	case FLOE_PARQUET_CT_TIME_MICROS:
		lt->kind = FLOE_PARQUET_LT_TIME;
		lt->utc = true;
		lt->unit = ct == FLOE_PARQUET_CT_TIME_MILLIS ? FLOE_PARQUET_MILLIS : FLOE_PARQUET_MICROS;
		break;
	case FLOE_PARQUET_CT_TIMESTAMP_MILLIS:
	case FLOE_PARQUET_CT_TIMESTAMP_MICROS:
		lt->kind = FLOE_PARQUET_LT_TIMESTAMP;
		lt->utc = true;
		lt->unit = ct == FLOE_PARQUET_CT_TIMESTAMP_MILLIS ? FLOE_PARQUET_MILLIS
								   : FLOE_PARQUET_MICROS;
		break;
	case FLOE_PARQUET_CT_UINT_8:
	case FLOE_PARQUET_CT_UINT_16:
	case FLOE_PARQUET_CT_UINT_32:
	case FLOE_PARQUET_CT_UINT_64:
		lt->kind = FLOE_PARQUET_LT_INTEGER;
		lt->is_signed = false;
		lt->bit_width = (int8_t)(8 << (ct - FLOE_PARQUET_CT_UINT_8));
		break;
	case FLOE_PARQUET_CT_INT_8:
	case FLOE_PARQUET_CT_INT_16:
	case FLOE_PARQUET_CT_INT_32:
	case FLOE_PARQUET_CT_INT_64:
		lt->kind = FLOE_PARQUET_LT_INTEGER;
		lt->is_signed = true;
		lt->bit_width = (int8_t)(8 << (ct - FLOE_PARQUET_CT_INT_8));
		break;
	case FLOE_PARQUET_CT_JSON: lt->kind = FLOE_PARQUET_LT_JSON; break;
	case FLOE_PARQUET_CT_BSON: lt->kind = FLOE_PARQUET_LT_BSON; break;
	default: break;
	}
}

/* ---- SchemaElement, KeyValue ------------------------------------------ */

static int parse_schema_elem(pctx *c, floe_parquet_schema_elem *e)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	bool has_name = false, has_lt = false;
	memset(e, 0, sizeof(*e));
	e->type = -1;
	e->repetition = -1;
	e->converted = FLOE_PARQUET_CT_NONE;
	e->logical.algorithm = -1;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		switch (fid) {
		case 1: rc = read_enum(c, t, &e->type, NULL, 0, 7, "physical type"); break;
		case 2: rc = floe_thrift_read_i32(r, t, &e->type_length, &e->has_type_length); break;
		case 3: rc = read_enum(c, t, &e->repetition, NULL, 0, 2, "repetition type"); break;
		case 4: rc = read_str(c, t, &e->name, &has_name); break;
		case 5:
			rc = floe_thrift_read_i32(r, t, &e->num_children, &e->has_num_children);
			break;
		case 6: {
			int32_t v = FLOE_PARQUET_CT_NONE;
			rc = floe_thrift_read_i32(r, t, &v, NULL);
			/* an unknown converted type is ignored, as other readers do */
			e->converted = v >= 0 && v <= FLOE_PARQUET_CT_INTERVAL ? v : FLOE_PARQUET_CT_NONE;
			break;
		}
		case 7: rc = floe_thrift_read_i32(r, t, &e->scale, &e->has_scale); break;
		case 8: rc = floe_thrift_read_i32(r, t, &e->precision, &e->has_precision); break;
		case 9: rc = floe_thrift_read_i32(r, t, &e->field_id, &e->has_field_id); break;
		case 10:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_logical(c, &e->logical);
				has_lt = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
	if (!has_name)
		return missing(c, "SchemaElement", "name");
	if (!has_lt || e->logical.kind == FLOE_PARQUET_LT_NONE)
		floe_parquet_logical_from_converted(&e->logical, e->converted, e->scale, e->precision);
	if (e->num_children < 0)
		return floe_thrift_corrupt(r, "schema element '%s' has %d children", e->name,
					   (int)e->num_children);
	return FLOE_OK;
}

static int parse_kv(pctx *c, floe_parquet_kv *kv)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	bool has_key = false;
	memset(kv, 0, sizeof(*kv));
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		if (fid == 1) {
			rc = read_str(c, t, &kv->key, &has_key);
		} else if (fid == 2) {
			const uint8_t *p;
			size_t n;
			bool pr = false;
			rc = floe_thrift_read_binary(r, t, &p, &n, &pr);
			if (!rc && pr) {
				kv->value = floe_arena_strndup(c->arena, (const char *)p, n);
				kv->value_len = n;
				if (!kv->value)
					return nomem(c);
			}
		} else {
			rc = floe_thrift_skip(r, t);
		}
		if (rc)
			return rc;
	}
	if (!has_key)
		return missing(c, "KeyValue", "key");
	return FLOE_OK;
}

static int parse_kv_list(pctx *c, int t, floe_parquet_kv **out, size_t *n)
{
	size_t cnt;
	bool ok;
	int rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok);
	if (rc || !ok)
		return rc;
	if (cnt && !(*out = alloc_list(c, cnt, sizeof(**out))))
		return nomem(c);
	for (size_t i = 0; i < cnt; i++)
		if ((rc = parse_kv(c, &(*out)[i])))
			return rc;
	*n = cnt;
	floe_thrift_list_end(&c->r);
	return FLOE_OK;
}

/* ---- ColumnMetaData, ColumnChunk, RowGroup ------------------------------ */

static int parse_enc_stats(pctx *c, floe_parquet_page_enc_stats *s)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &s->page_type, NULL), seen |= 1; break;
		case 2: rc = floe_thrift_read_i32(r, t, &s->encoding, NULL), seen |= 2; break;
		case 3: rc = floe_thrift_read_i32(r, t, &s->count, NULL), seen |= 4; break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
	if (seen != 7)
		return missing(c, "PageEncodingStats", "page_type/encoding/count");
	return FLOE_OK;
}

static int parse_column_meta(pctx *c, floe_parquet_column_meta *m)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	size_t cnt;
	bool ok, pr;
	memset(m, 0, sizeof(*m));
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1: rc = read_enum(c, t, &m->type, &pr, 0, 7, "physical type"); break;
		case 2:
			if ((rc = list_begin(c, t, FLOE_THRIFT_I32, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->encodings = alloc_list(c, cnt, sizeof(int))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = floe_thrift_elem_i32(r, &m->encodings[i]);
			m->n_encodings = cnt;
			floe_thrift_list_end(r);
			pr = true;
			break;
		case 3:
			if ((rc = list_begin(c, t, FLOE_THRIFT_BINARY, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->path = alloc_list(c, cnt, sizeof(char *))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++) {
				const uint8_t *p;
				size_t n;
				rc = floe_thrift_elem_binary(r, &p, &n);
				if (!rc && !(m->path[i] = floe_arena_strndup(c->arena, (const char *)p, n)))
					return nomem(c);
			}
			m->path_len = cnt;
			floe_thrift_list_end(r);
			pr = true;
			break;
		case 4: rc = floe_thrift_read_i32(r, t, &m->codec, &pr); break;
		case 5: rc = floe_thrift_read_i64(r, t, &m->num_values, &pr); break;
		case 6: rc = floe_thrift_read_i64(r, t, &m->total_uncompressed_size, &pr); break;
		case 7: rc = floe_thrift_read_i64(r, t, &m->total_compressed_size, &pr); break;
		case 8: rc = parse_kv_list(c, t, &m->kv, &m->n_kv); break;
		case 9: rc = floe_thrift_read_i64(r, t, &m->data_page_offset, &pr); break;
		case 10:
			rc = floe_thrift_read_i64(r, t, &m->index_page_offset, &m->has_index_page_offset);
			break;
		case 11:
			rc = floe_thrift_read_i64(r, t, &m->dictionary_page_offset,
						  &m->has_dictionary_page_offset);
			break;
		case 12:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_stats(c, &m->statistics);
				m->has_statistics = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case 13:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->encoding_stats = alloc_list(c, cnt, sizeof(*m->encoding_stats))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_enc_stats(c, &m->encoding_stats[i]);
			m->n_encoding_stats = cnt;
			m->has_encoding_stats = true;
			floe_thrift_list_end(r);
			break;
		case 14:
			rc = floe_thrift_read_i64(r, t, &m->bloom_filter_offset,
						  &m->has_bloom_filter_offset);
			break;
		case 15:
			rc = floe_thrift_read_i32(r, t, &m->bloom_filter_length,
						  &m->has_bloom_filter_length);
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr && fid >= 1 && fid <= 9)
			seen |= REQ(fid);
	}
	static const struct {
		int fid;
		const char *name;
	} req[] = {{1, "type"},
		   {2, "encodings"},
		   {3, "path_in_schema"},
		   {4, "codec"},
		   {5, "num_values"},
		   {6, "total_uncompressed_size"},
		   {7, "total_compressed_size"},
		   {9, "data_page_offset"}};
	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		if (!(seen & REQ(req[i].fid)))
			return missing(c, "ColumnMetaData", req[i].name);
	if (m->num_values < 0 || m->total_compressed_size < 0 || m->total_uncompressed_size < 0 ||
	    m->data_page_offset < 0)
		return floe_thrift_corrupt(r, "ColumnMetaData has a negative size or offset");
	return FLOE_OK;
}

static int parse_column_chunk(pctx *c, floe_parquet_column_chunk *cc)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	bool has_off_len = false, has_col_len = false, pr;
	memset(cc, 0, sizeof(*cc));
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		switch (fid) {
		case 1: rc = read_str(c, t, &cc->file_path, NULL); break;
		case 2: rc = floe_thrift_read_i64(r, t, &cc->file_offset, NULL); break;
		case 3:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_column_meta(c, &cc->meta_data);
				cc->has_meta_data = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case 4:
			rc = floe_thrift_read_i64(r, t, &cc->offset_index_offset, &cc->has_offset_index);
			break;
		case 5: rc = floe_thrift_read_i32(r, t, &cc->offset_index_length, &has_off_len); break;
		case 6:
			rc = floe_thrift_read_i64(r, t, &cc->column_index_offset, &cc->has_column_index);
			break;
		case 7: rc = floe_thrift_read_i32(r, t, &cc->column_index_length, &has_col_len); break;
		case 8:
		case 9:
			pr = t != FLOE_THRIFT_STOP;
			cc->encrypted |= pr;
			rc = floe_thrift_skip(r, t);
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
	cc->has_offset_index &= has_off_len;
	cc->has_column_index &= has_col_len;
	return FLOE_OK;
}

static int parse_sorting_column(pctx *c, floe_parquet_sorting_column *s)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			return FLOE_OK;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &s->column_idx, NULL); break;
		case 2: rc = floe_thrift_read_bool(r, t, &s->descending, NULL); break;
		case 3: rc = floe_thrift_read_bool(r, t, &s->nulls_first, NULL); break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
	}
}

static int parse_row_group(pctx *c, floe_parquet_row_group *rg)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	size_t cnt;
	bool ok, pr;
	memset(rg, 0, sizeof(*rg));
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(rg->columns = alloc_list(c, cnt, sizeof(*rg->columns))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_column_chunk(c, &rg->columns[i]);
			rg->n_columns = cnt;
			floe_thrift_list_end(r);
			pr = true;
			break;
		case 2: rc = floe_thrift_read_i64(r, t, &rg->total_byte_size, &pr); break;
		case 3: rc = floe_thrift_read_i64(r, t, &rg->num_rows, &pr); break;
		case 4:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(rg->sorting_columns = alloc_list(c, cnt, sizeof(*rg->sorting_columns))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_sorting_column(c, &rg->sorting_columns[i]);
			rg->n_sorting_columns = cnt;
			floe_thrift_list_end(r);
			break;
		case 5: rc = floe_thrift_read_i64(r, t, &rg->file_offset, &rg->has_file_offset); break;
		case 6:
			rc = floe_thrift_read_i64(r, t, &rg->total_compressed_size,
						  &rg->has_total_compressed_size);
			break;
		case 7: {
			int32_t v = 0;
			rc = floe_thrift_read_i32(r, t, &v, &rg->has_ordinal);
			rg->ordinal = (int16_t)v;
			break;
		}
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if (!(seen & REQ(1)))
		return missing(c, "RowGroup", "columns");
	if (!(seen & REQ(3)))
		return missing(c, "RowGroup", "num_rows");
	if (rg->num_rows < 0)
		return floe_thrift_corrupt(r, "RowGroup has %lld rows", (long long)rg->num_rows);
	return FLOE_OK;
}

static int parse_column_order(pctx *c, int *order)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	*order = FLOE_PARQUET_ORDER_UNKNOWN;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			return FLOE_OK;
		if (t == FLOE_THRIFT_STRUCT && (fid == 1 || fid == 2))
			*order = fid;
		if ((rc = floe_thrift_skip(r, t)))
			return rc;
	}
}

static int parse_file_meta(pctx *c, floe_parquet_file_meta *m)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	size_t cnt;
	bool ok, pr;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &m->version, &pr); break;
		case 2:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->schema = alloc_list(c, cnt, sizeof(*m->schema))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_schema_elem(c, &m->schema[i]);
			m->n_schema = cnt;
			floe_thrift_list_end(r);
			pr = true;
			break;
		case 3: rc = floe_thrift_read_i64(r, t, &m->num_rows, &pr); break;
		case 4:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->row_groups = alloc_list(c, cnt, sizeof(*m->row_groups))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_row_group(c, &m->row_groups[i]);
			m->n_row_groups = cnt;
			floe_thrift_list_end(r);
			pr = true;
			break;
		case 5: rc = parse_kv_list(c, t, &m->kv, &m->n_kv); break;
		case 6: rc = read_str(c, t, &m->created_by, NULL); break;
		case 7:
			if ((rc = list_begin(c, t, FLOE_THRIFT_STRUCT, &cnt, &ok)) || !ok)
				break;
			if (cnt && !(m->column_orders = alloc_list(c, cnt, sizeof(int))))
				return nomem(c);
			for (size_t i = 0; i < cnt && !rc; i++)
				rc = parse_column_order(c, &m->column_orders[i]);
			m->n_column_orders = cnt;
			floe_thrift_list_end(r);
			break;
		case 8:
			m->encrypted = true;
			rc = floe_thrift_skip(r, t);
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if (!(seen & REQ(1)))
		return missing(c, "FileMetaData", "version");
	if (!(seen & REQ(2)) || m->n_schema == 0)
		return missing(c, "FileMetaData", "schema");
	if (!(seen & REQ(3)))
		return missing(c, "FileMetaData", "num_rows");
	if (!(seen & REQ(4)))
		return missing(c, "FileMetaData", "row_groups");
	if (m->num_rows < 0)
		return floe_thrift_corrupt(r, "num_rows is %lld", (long long)m->num_rows);
	return FLOE_OK;
}

int floe_parquet_meta_parse(floe_parquet_file_meta **out, floe_arena *arena, const uint8_t *p,
			    size_t n, const char *name, floe_error *err)
{
	pctx c;
	char what[300];
	floe_parquet_file_meta *m;
	int rc;
	snprintf(what, sizeof(what), "'%s' footer", name ? name : "parquet");
	floe_thrift_reader_init(&c.r, p, n, NULL, what, err);
	c.arena = arena;
	m = floe_arena_calloc(arena, 1, sizeof(*m));
	if (!m)
		return floe_error_oomf(err, "%s: out of memory", what);
	if ((rc = parse_file_meta(&c, m)))
		return rc;
	*out = m;
	return FLOE_OK;
}

/* ---- PageHeader ---------------------------------------------------------- */

static int parse_data_page_header(pctx *c, floe_parquet_page_header *h)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	bool pr;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &h->data_page_header.num_values, &pr); break;
		case 2: rc = floe_thrift_read_i32(r, t, &h->data_page_header.encoding, &pr); break;
		case 3:
			rc = floe_thrift_read_i32(r, t, &h->data_page_header.definition_level_encoding,
						  &pr);
			break;
		case 4:
			rc = floe_thrift_read_i32(r, t, &h->data_page_header.repetition_level_encoding,
						  &pr);
			break;
		case 5:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_stats(c, &h->data_page_header.statistics);
				h->data_page_header.has_statistics = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if ((seen & 0x1e) != 0x1e)
		return missing(c, "DataPageHeader", "num_values/encoding/level encodings");
	if (h->data_page_header.num_values < 0)
		return floe_thrift_corrupt(r, "data page has %d values",
					   (int)h->data_page_header.num_values);
	return FLOE_OK;
}

static int parse_dict_page_header(pctx *c, floe_parquet_page_header *h)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	bool pr;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1:
			rc = floe_thrift_read_i32(r, t, &h->dictionary_page_header.num_values, &pr);
			break;
		case 2: rc = floe_thrift_read_i32(r, t, &h->dictionary_page_header.encoding, &pr); break;
		case 3:
			rc = floe_thrift_read_bool(r, t, &h->dictionary_page_header.is_sorted,
						   &h->dictionary_page_header.has_is_sorted);
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if ((seen & 0x6) != 0x6)
		return missing(c, "DictionaryPageHeader", "num_values/encoding");
	if (h->dictionary_page_header.num_values < 0)
		return floe_thrift_corrupt(r, "dictionary page has %d values",
					   (int)h->dictionary_page_header.num_values);
	return FLOE_OK;
}

static int parse_data_page_header_v2(pctx *c, floe_parquet_page_header *h)
{
	floe_thrift_reader *r = &c->r;
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	bool pr;
	h->data_page_header_v2.is_compressed = true;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &h->data_page_header_v2.num_values, &pr); break;
		case 2: rc = floe_thrift_read_i32(r, t, &h->data_page_header_v2.num_nulls, &pr); break;
		case 3: rc = floe_thrift_read_i32(r, t, &h->data_page_header_v2.num_rows, &pr); break;
		case 4: rc = floe_thrift_read_i32(r, t, &h->data_page_header_v2.encoding, &pr); break;
		case 5:
			rc = floe_thrift_read_i32(
				r, t, &h->data_page_header_v2.definition_levels_byte_length, &pr);
			break;
		case 6:
			rc = floe_thrift_read_i32(
				r, t, &h->data_page_header_v2.repetition_levels_byte_length, &pr);
			break;
		case 7:
			rc = floe_thrift_read_bool(r, t, &h->data_page_header_v2.is_compressed, NULL);
			break;
		case 8:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_stats(c, &h->data_page_header_v2.statistics);
				h->data_page_header_v2.has_statistics = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if ((seen & 0x7e) != 0x7e)
		return missing(c, "DataPageHeaderV2", "counts/encoding/level lengths");
	if (h->data_page_header_v2.num_values < 0 || h->data_page_header_v2.num_nulls < 0 ||
	    h->data_page_header_v2.num_rows < 0 ||
	    h->data_page_header_v2.num_nulls > h->data_page_header_v2.num_values ||
	    h->data_page_header_v2.definition_levels_byte_length < 0 ||
	    h->data_page_header_v2.repetition_levels_byte_length < 0)
		return floe_thrift_corrupt(r, "DataPageHeaderV2 has negative or inconsistent counts");
	return FLOE_OK;
}

int floe_parquet_page_header_parse(floe_parquet_page_header *h, const uint8_t *p, size_t n,
				   size_t *used, const char *what, floe_error *err)
{
	pctx c;
	floe_thrift_reader *r = &c.r;
	static const floe_thrift_limits lim = {16, 1 << 16, (size_t)1 << 26, 1 << 20};
	int16_t fid;
	int t, rc;
	unsigned seen = 0;
	bool pr;
	memset(h, 0, sizeof(*h));
	floe_thrift_reader_init(r, p, n, &lim, what, err);
	c.arena = NULL;
	if ((rc = floe_thrift_struct_begin(r)))
		return rc;
	for (;;) {
		if ((rc = floe_thrift_next_field(r, &fid, &t)))
			return rc;
		if (t == FLOE_THRIFT_STOP)
			break;
		pr = false;
		switch (fid) {
		case 1: rc = floe_thrift_read_i32(r, t, &h->type, &pr); break;
		case 2: rc = floe_thrift_read_i32(r, t, &h->uncompressed_page_size, &pr); break;
		case 3: rc = floe_thrift_read_i32(r, t, &h->compressed_page_size, &pr); break;
		case 4: rc = floe_thrift_read_i32(r, t, &h->crc, &h->has_crc); break;
		case 5:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_data_page_header(&c, h);
				h->has_data_page_header = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case 7:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_dict_page_header(&c, h);
				h->has_dictionary_page_header = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		case 8:
			if (t == FLOE_THRIFT_STRUCT) {
				rc = parse_data_page_header_v2(&c, h);
				h->has_data_page_header_v2 = true;
			} else {
				rc = floe_thrift_skip(r, t);
			}
			break;
		default: rc = floe_thrift_skip(r, t); break;
		}
		if (rc)
			return rc;
		if (pr)
			seen |= REQ(fid);
	}
	if ((seen & 0xe) != 0xe)
		return missing(&c, "PageHeader", "type/uncompressed_page_size/compressed_page_size");
	if (h->uncompressed_page_size < 0 || h->compressed_page_size < 0)
		return floe_thrift_corrupt(r, "page header has a negative page size");
	*used = r->off;
	return FLOE_OK;
}

/* ---- names --------------------------------------------------------------- */

const char *floe_parquet_type_name(int type)
{
	static const char *n[] = {"BOOLEAN", "INT32",	   "INT64",	 "INT96",
				  "FLOAT",   "DOUBLE",	   "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
	return type >= 0 && type < 8 ? n[type] : "UNKNOWN";
}

const char *floe_parquet_encoding_name(int enc)
{
	static const char *n[] = {"PLAIN",
				  "GROUP_VAR_INT",
				  "PLAIN_DICTIONARY",
				  "RLE",
				  "BIT_PACKED",
				  "DELTA_BINARY_PACKED",
				  "DELTA_LENGTH_BYTE_ARRAY",
				  "DELTA_BYTE_ARRAY",
				  "RLE_DICTIONARY",
				  "BYTE_STREAM_SPLIT",
				  "ALP"};
	return enc >= 0 && enc < 11 ? n[enc] : "UNKNOWN";
}

const char *floe_parquet_codec_name(int codec)
{
	static const char *n[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO",
				  "BROTLI",	  "LZ4",    "ZSTD", "LZ4_RAW"};
	return codec >= 0 && codec < 8 ? n[codec] : "UNKNOWN";
}

const char *floe_parquet_page_type_name(int type)
{
	static const char *n[] = {"DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2"};
	return type >= 0 && type < 4 ? n[type] : "UNKNOWN";
}

const char *floe_parquet_converted_name(int ct)
{
	static const char *n[] = {"UTF8",	     "MAP",		 "MAP_KEY_VALUE",
				  "LIST",	     "ENUM",		 "DECIMAL",
				  "DATE",	     "TIME_MILLIS",	 "TIME_MICROS",
				  "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8",
				  "UINT_16",	     "UINT_32",		 "UINT_64",
				  "INT_8",	     "INT_16",		 "INT_32",
				  "INT_64",	     "JSON",		 "BSON",
				  "INTERVAL"};
	return ct >= 0 && ct < 22 ? n[ct] : "NONE";
}

const char *floe_parquet_repetition_name(int rep)
{
	static const char *n[] = {"required", "optional", "repeated"};
	return rep >= 0 && rep < 3 ? n[rep] : "";
}
