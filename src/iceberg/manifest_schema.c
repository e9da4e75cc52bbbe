/*
 * manifest_schema.c — Avro schemas for manifests and manifest lists, and
 * Iceberg <-> Avro value mapping.
 *
 * spec: ../shared/iceberg-notes.md section 2 (Java's field order, ids and
 * record names: manifest_entry, r2, r102, r508, k<id>_v<id>, fixed_<L>,
 * decimal_<P>_<S>, uuid_fixed; optional = ["null", T] with default null).
 */
#include "iceberg/manifest_schema.h"

#include <stdio.h>
#include <string.h>

#include "util/timeutil.h"

size_t floe_decimal_fixed_size(int32_t precision)
{
	/* smallest n with 2^(8n-1) > 10^P - 1 */
	for (size_t n = 1; n <= 16; n++) {
		double maxv = 1.0;
		for (size_t k = 0; k < 8 * n - 1; k++)
			maxv *= 2.0;
		double need = 1.0;
		for (int32_t k = 0; k < precision; k++)
			need *= 10.0;
		if (maxv > need - 1.0)
			return n;
	}
	return 16;
}

static floe_avro_schema *cached(floe_arena *a, avro_named_cache *cache, const char *name,
				floe_avro_schema *(*make)(floe_arena *, const char *, void *),
				void *arg)
{
	for (size_t i = 0; i < cache->n; i++)
		if (strcmp(cache->nodes[i]->name, name) == 0)
			return cache->nodes[i];
	floe_avro_schema *s = make(a, name, arg);
	if (s && cache->n < sizeof(cache->nodes) / sizeof(cache->nodes[0]))
		cache->nodes[cache->n++] = s;
	return s;
}

static floe_avro_schema *make_fixed(floe_arena *a, const char *name, void *arg)
{
	return floe_avro_new_fixed(a, name, *(size_t *)arg);
}

static floe_avro_schema *make_uuid(floe_arena *a, const char *name, void *arg)
{
	(void)arg;
	floe_avro_schema *s = floe_avro_new_fixed(a, name, 16);
	if (s && floe_avro_schema_set_logical(a, s, "uuid"))
		return NULL;
	return s;
}

static floe_avro_schema *make_decimal(floe_arena *a, const char *name, void *arg)
{
	const floe_type *t = arg;
	return floe_avro_new_decimal_fixed(a, name, floe_decimal_fixed_size(t->precision),
					   t->precision, t->scale);
}

floe_avro_schema *floe_iceberg__avro_type(floe_arena *a, const floe_type *t,
					  avro_named_cache *cache)
{
	floe_avro_schema *s;
	char name[64];
	switch (t->id) {
	case FLOE_T_BOOLEAN: return floe_avro_new_primitive(a, FLOE_AVRO_BOOLEAN);
	case FLOE_T_INT: return floe_avro_new_primitive(a, FLOE_AVRO_INT);
	case FLOE_T_LONG: return floe_avro_new_primitive(a, FLOE_AVRO_LONG);
	case FLOE_T_FLOAT: return floe_avro_new_primitive(a, FLOE_AVRO_FLOAT);
	case FLOE_T_DOUBLE: return floe_avro_new_primitive(a, FLOE_AVRO_DOUBLE);
	case FLOE_T_DATE: return floe_avro_new_logical(a, FLOE_AVRO_INT, "date");
	case FLOE_T_TIME: return floe_avro_new_logical(a, FLOE_AVRO_LONG, "time-micros");
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
		s = floe_avro_new_logical(a, FLOE_AVRO_LONG, "timestamp-micros");
		if (s)
			s->adjust_to_utc = t->id == FLOE_T_TIMESTAMPTZ;
		return s;
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		s = floe_avro_new_logical(a, FLOE_AVRO_LONG, "timestamp-nanos");
		if (s)
			s->adjust_to_utc = t->id == FLOE_T_TIMESTAMPTZ_NS;
		return s;
	case FLOE_T_STRING: return floe_avro_new_primitive(a, FLOE_AVRO_STRING);
	case FLOE_T_BINARY:
	case FLOE_T_GEOMETRY:
	case FLOE_T_GEOGRAPHY: return floe_avro_new_primitive(a, FLOE_AVRO_BYTES);
	case FLOE_T_UUID: return cached(a, cache, "uuid_fixed", make_uuid, NULL);
	case FLOE_T_FIXED: {
		size_t len = (size_t)t->length;
		snprintf(name, sizeof(name), "fixed_%d", t->length);
		return cached(a, cache, name, make_fixed, &len);
	}
	case FLOE_T_DECIMAL:
		snprintf(name, sizeof(name), "decimal_%d_%d", t->precision, t->scale);
		return cached(a, cache, name, make_decimal, (void *)t);
	default: return NULL;
	}
}

static bool avro_name_char(char c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

const char *floe_iceberg__avro_name(floe_arena *a, const char *name)
{
	bool valid = name[0] != 0;
	for (size_t i = 0; name[i] && valid; i++)
		valid = avro_name_char(name[i], i == 0);
	if (valid)
		return name;
	floe_buf b;
	floe_buf_init(&b, 0);
	int rc = 0;
	const unsigned char *p = (const unsigned char *)name;
	size_t i = 0;
	while (p[i] && !rc) {
		unsigned char c = p[i];
		if (avro_name_char((char)c, i == 0)) {
			rc = floe_buf_putc(&b, (char)c);
			i++;
		} else if (i == 0 && c >= '0' && c <= '9') {
			rc = floe_buf_printf(&b, "_%c", c);
			i++;
		} else {
			/* Java works on UTF-16 code units: decode one code point */
			uint32_t cp = c;
			size_t k = 1;
			if (c >= 0xf0 && p[i + 1] && p[i + 2] && p[i + 3]) {
				cp = ((uint32_t)(c & 7) << 18) | ((uint32_t)(p[i + 1] & 63) << 12) |
				     ((uint32_t)(p[i + 2] & 63) << 6) | (p[i + 3] & 63);
				k = 4;
			} else if (c >= 0xe0 && p[i + 1] && p[i + 2]) {
				cp = ((uint32_t)(c & 15) << 12) | ((uint32_t)(p[i + 1] & 63) << 6) |
				     (p[i + 2] & 63);
				k = 3;
			} else if (c >= 0xc0 && p[i + 1]) {
				cp = ((uint32_t)(c & 31) << 6) | (p[i + 1] & 63);
				k = 2;
			}
			if (cp >= 0x10000) {
				uint32_t v = cp - 0x10000;
				rc = floe_buf_printf(&b, "_x%X_x%X", 0xd800 + (v >> 10),
						     0xdc00 + (v & 0x3ff));
			} else {
				rc = floe_buf_printf(&b, "_x%X", cp);
			}
			i += k;
		}
	}
	const char *out = rc ? NULL : floe_arena_strdup(a, floe_buf_cstr(&b));
	floe_buf_reset(&b);
	return out;
}

static floe_avro_field *opt_field(floe_arena *a, floe_avro_schema *rec, const char *name,
				  floe_avro_schema *t, int32_t id)
{
	floe_avro_field *f = floe_avro_record_add(a, rec, name, floe_avro_new_optional(a, t));
	if (f) {
		f->field_id = id;
		if (floe_avro_field_set_default_null(a, f))
			return NULL;
	}
	return f;
}

static floe_avro_field *req_field(floe_arena *a, floe_avro_schema *rec, const char *name,
				  floe_avro_schema *t, int32_t id)
{
	floe_avro_field *f = floe_avro_record_add(a, rec, name, t);
	if (f)
		f->field_id = id;
	return f;
}

floe_avro_schema *floe_iceberg__partition_record(floe_arena *a, const floe_partition_spec *spec,
						 const floe_schema *schema, avro_named_cache *cache,
						 floe_error *err)
{
	floe_avro_schema *rec = floe_avro_new_record(a, "r102", NULL);
	if (!rec)
		return NULL;
	for (size_t i = 0; i < spec->n_fields; i++) {
		const floe_partition_field *pf = &spec->fields[i];
		const floe_type *t = floe_spec_field_type(spec, i, schema);
		if (!t) {
			floe_error_set(err, FLOE_EINVAL,
				       "partition field '%s': source %d is not in the schema", pf->name,
				       pf->source_id);
			return NULL;
		}
		const char *an = floe_iceberg__avro_name(a, pf->name);
		floe_avro_schema *at = floe_iceberg__avro_type(a, t, cache);
		if (!an || !at) {
			floe_error_set(err, FLOE_EUNSUPPORTED,
				       "partition field '%s' has a type Avro manifests cannot hold",
				       pf->name);
			return NULL;
		}
		floe_avro_field *f = opt_field(a, rec, an, at, pf->field_id);
		if (!f)
			return NULL;
		if (an != pf->name && floe_avro_field_add_attr_str(a, f, "iceberg-field-name", pf->name))
			return NULL;
	}
	return rec;
}

/* Metric maps: array of k<K>_v<V> records with logicalType map. */
static floe_avro_schema *int_map(floe_arena *a, int32_t kid, int32_t vid, floe_avro_type vt)
{
	char name[32];
	snprintf(name, sizeof(name), "k%d_v%d", kid, vid);
	floe_avro_schema *rec = floe_avro_new_record(a, name, NULL);
	if (!rec)
		return NULL;
	if (!req_field(a, rec, "key", floe_avro_new_primitive(a, FLOE_AVRO_INT), kid) ||
	    !req_field(a, rec, "value", floe_avro_new_primitive(a, vt), vid))
		return NULL;
	floe_avro_schema *arr = floe_avro_new_array(a, rec);
	if (arr && floe_avro_schema_set_logical(a, arr, "map"))
		return NULL;
	return arr;
}

static floe_avro_schema *long_array(floe_arena *a, int32_t elem_id, floe_avro_type t)
{
	floe_avro_schema *arr = floe_avro_new_array(a, floe_avro_new_primitive(a, t));
	if (arr)
		arr->element_id = elem_id;
	return arr;
}

/*
 * data_file r2 in Java's order for fv; reader = true builds the superset with
 * every field optional.
 */
static floe_avro_schema *data_file_schema(floe_arena *a, int fv, floe_avro_schema *partition,
					  bool reader)
{
	floe_avro_schema *r2 = floe_avro_new_record(a, "r2", NULL);
	bool ok = r2 != NULL;
#define REQ(name, type, id)                                                                   \
	ok = ok && (reader ? opt_field(a, r2, name, type, id) : req_field(a, r2, name, type, id))
#define OPT(name, type, id) ok = ok && opt_field(a, r2, name, type, id)
#define P(t) floe_avro_new_primitive(a, t)
	if (fv >= 2 || reader)
		REQ("content", P(FLOE_AVRO_INT), 134);
	REQ("file_path", P(FLOE_AVRO_STRING), 100);
	REQ("file_format", P(FLOE_AVRO_STRING), 101);
	/* partition is required, never a union (readers reject ["null", r102]) */
	ok = ok && (reader ? opt_field(a, r2, "partition", partition, 102) /* BigQuery: null */
			   : req_field(a, r2, "partition", partition, 102));
	REQ("record_count", P(FLOE_AVRO_LONG), 103);
	REQ("file_size_in_bytes", P(FLOE_AVRO_LONG), 104);
	if (fv == 1 || reader)
		REQ("block_size_in_bytes", P(FLOE_AVRO_LONG), 105);
	OPT("column_sizes", int_map(a, 117, 118, FLOE_AVRO_LONG), 108);
	OPT("value_counts", int_map(a, 119, 120, FLOE_AVRO_LONG), 109);
	OPT("null_value_counts", int_map(a, 121, 122, FLOE_AVRO_LONG), 110);
	OPT("nan_value_counts", int_map(a, 138, 139, FLOE_AVRO_LONG), 137);
	OPT("lower_bounds", int_map(a, 126, 127, FLOE_AVRO_BYTES), 125);
	OPT("upper_bounds", int_map(a, 129, 130, FLOE_AVRO_BYTES), 128);
	OPT("key_metadata", P(FLOE_AVRO_BYTES), 131);
	OPT("split_offsets", long_array(a, 133, FLOE_AVRO_LONG), 132);
	/* the reader takes longs: some writers (fastavro) use long items */
	if (fv >= 2 || reader)
		OPT("equality_ids", long_array(a, 136, reader ? FLOE_AVRO_LONG : FLOE_AVRO_INT), 135);
	OPT("sort_order_id", P(FLOE_AVRO_INT), 140);
	if (fv >= 3 || reader)
		OPT("first_row_id", P(FLOE_AVRO_LONG), 142);
	if (fv >= 2 || reader)
		OPT("referenced_data_file", P(FLOE_AVRO_STRING), 143);
	if (fv >= 3 || reader) {
		OPT("content_offset", P(FLOE_AVRO_LONG), 144);
		OPT("content_size_in_bytes", P(FLOE_AVRO_LONG), 145);
	}
#undef REQ
#undef OPT
#undef P
	return ok ? r2 : NULL;
}

floe_avro_schema *floe_iceberg__entry_schema(floe_arena *a, int fv, floe_avro_schema *partition)
{
	floe_avro_schema *e = floe_avro_new_record(a, "manifest_entry", NULL);
	floe_avro_schema *df = data_file_schema(a, fv, partition, false);
	if (!e || !df)
		return NULL;
	if (!req_field(a, e, "status", floe_avro_new_primitive(a, FLOE_AVRO_INT), 0) ||
	    !opt_field(a, e, "snapshot_id", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 1))
		return NULL;
	if (fv >= 2 &&
	    (!opt_field(a, e, "sequence_number", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 3) ||
	     !opt_field(a, e, "file_sequence_number", floe_avro_new_primitive(a, FLOE_AVRO_LONG),
			4)))
		return NULL;
	if (!req_field(a, e, "data_file", df, 2))
		return NULL;
	return e;
}

floe_avro_schema *floe_iceberg__entry_reader_schema(floe_arena *a, floe_avro_schema *partition)
{
	floe_avro_schema *e = floe_avro_new_record(a, "manifest_entry", NULL);
	floe_avro_schema *df = data_file_schema(a, 3, partition, true);
	if (!e || !df)
		return NULL;
	if (!opt_field(a, e, "status", floe_avro_new_primitive(a, FLOE_AVRO_INT), 0) ||
	    !opt_field(a, e, "snapshot_id", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 1) ||
	    !opt_field(a, e, "sequence_number", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 3) ||
	    !opt_field(a, e, "file_sequence_number", floe_avro_new_primitive(a, FLOE_AVRO_LONG), 4) ||
	    !opt_field(a, e, "data_file", df, 2))
		return NULL;
	return e;
}

static floe_avro_schema *summary_record(floe_arena *a, bool reader)
{
	floe_avro_schema *r = floe_avro_new_record(a, "r508", NULL);
	bool ok = r != NULL;
	if (reader)
		ok = ok && opt_field(a, r, "contains_null",
				     floe_avro_new_primitive(a, FLOE_AVRO_BOOLEAN), 509);
	else
		ok = ok && req_field(a, r, "contains_null",
				     floe_avro_new_primitive(a, FLOE_AVRO_BOOLEAN), 509);
	ok = ok &&
	     opt_field(a, r, "contains_nan", floe_avro_new_primitive(a, FLOE_AVRO_BOOLEAN), 518) &&
	     opt_field(a, r, "lower_bound", floe_avro_new_primitive(a, FLOE_AVRO_BYTES), 510) &&
	     opt_field(a, r, "upper_bound", floe_avro_new_primitive(a, FLOE_AVRO_BYTES), 511);
	return ok ? r : NULL;
}

static floe_avro_schema *list_schema(floe_arena *a, int fv, bool reader)
{
	floe_avro_schema *r = floe_avro_new_record(a, "manifest_file", NULL);
	floe_avro_schema *parts = floe_avro_new_array(a, summary_record(a, reader));
	bool ok = r && parts;
#define P(t) floe_avro_new_primitive(a, t)
#define REQ(name, type, id)                                                                   \
	ok = ok && (reader ? opt_field(a, r, name, type, id) : req_field(a, r, name, type, id))
#define OPT(name, type, id) ok = ok && opt_field(a, r, name, type, id)
	if (parts)
		parts->element_id = 508;
	REQ("manifest_path", P(FLOE_AVRO_STRING), 500);
	REQ("manifest_length", P(FLOE_AVRO_LONG), 501);
	REQ("partition_spec_id", P(FLOE_AVRO_INT), 502);
	if (fv >= 2 || reader) {
		REQ("content", P(FLOE_AVRO_INT), 517);
		REQ("sequence_number", P(FLOE_AVRO_LONG), 515);
		REQ("min_sequence_number", P(FLOE_AVRO_LONG), 516);
	}
	REQ("added_snapshot_id", P(FLOE_AVRO_LONG), 503);
	if (fv == 1 && !reader) {
		/* v1: counts optional; partitions before the row counts */
		OPT("added_files_count", P(FLOE_AVRO_INT), 504);
		OPT("existing_files_count", P(FLOE_AVRO_INT), 505);
		OPT("deleted_files_count", P(FLOE_AVRO_INT), 506);
		OPT("partitions", parts, 507);
		OPT("added_rows_count", P(FLOE_AVRO_LONG), 512);
		OPT("existing_rows_count", P(FLOE_AVRO_LONG), 513);
		OPT("deleted_rows_count", P(FLOE_AVRO_LONG), 514);
	} else {
		REQ("added_files_count", P(FLOE_AVRO_INT), 504);
		REQ("existing_files_count", P(FLOE_AVRO_INT), 505);
		REQ("deleted_files_count", P(FLOE_AVRO_INT), 506);
		REQ("added_rows_count", P(FLOE_AVRO_LONG), 512);
		REQ("existing_rows_count", P(FLOE_AVRO_LONG), 513);
		REQ("deleted_rows_count", P(FLOE_AVRO_LONG), 514);
		OPT("partitions", parts, 507);
	}
	OPT("key_metadata", P(FLOE_AVRO_BYTES), 519);
	if (fv >= 3 || reader)
		OPT("first_row_id", P(FLOE_AVRO_LONG), 520);
#undef P
#undef REQ
#undef OPT
	return ok ? r : NULL;
}

floe_avro_schema *floe_iceberg__list_schema(floe_arena *a, int fv)
{
	return list_schema(a, fv, false);
}

floe_avro_schema *floe_iceberg__list_reader_schema(floe_arena *a)
{
	return list_schema(a, 3, true);
}

/* ---- values ----------------------------------------------------------------- */

static int value_bad(floe_error *err, const char *why)
{
	return floe_error_corrupt(err, "partition value: %s", why);
}

int floe_iceberg__value_from_avro(floe_value *out, floe_arena *a, const floe_type *t,
				  const floe_avro_schema *s, const floe_avro_value *v,
				  floe_error *err)
{
	const floe_avro_schema *base = s && s->type == FLOE_AVRO_UNION ? floe_avro_union_nonnull(s)
								       : s;
	floe_type_id tid;
	memset(out, 0, sizeof(*out));
	if (t) {
		tid = t->id;
	} else {
		/* no Iceberg type known: infer from Avro */
		const char *lt = base ? base->logical_type : NULL;
		switch (v->type) {
		case FLOE_AVRO_BOOLEAN: tid = FLOE_T_BOOLEAN; break;
		case FLOE_AVRO_INT: tid = lt && !strcmp(lt, "date") ? FLOE_T_DATE : FLOE_T_INT; break;
		case FLOE_AVRO_LONG:
			tid = lt && !strcmp(lt, "time-micros")	       ? FLOE_T_TIME
			      : lt && !strcmp(lt, "timestamp-micros") ? (base->adjust_to_utc == 1
									      ? FLOE_T_TIMESTAMPTZ
									      : FLOE_T_TIMESTAMP)
			      : lt && !strcmp(lt, "timestamp-nanos")
				      ? (base->adjust_to_utc == 1 ? FLOE_T_TIMESTAMPTZ_NS
								  : FLOE_T_TIMESTAMP_NS)
				      : FLOE_T_LONG;
			break;
		case FLOE_AVRO_FLOAT: tid = FLOE_T_FLOAT; break;
		case FLOE_AVRO_DOUBLE: tid = FLOE_T_DOUBLE; break;
		case FLOE_AVRO_STRING: tid = FLOE_T_STRING; break;
		case FLOE_AVRO_FIXED:
			tid = lt && !strcmp(lt, "decimal") ? FLOE_T_DECIMAL
			      : lt && !strcmp(lt, "uuid")  ? FLOE_T_UUID
							   : FLOE_T_FIXED;
			break;
		default: tid = FLOE_T_BINARY; break;
		}
	}
	out->type = tid;
	if (v->type == FLOE_AVRO_NULL) {
		out->is_null = true;
		return FLOE_OK;
	}
	switch (tid) {
	case FLOE_T_BOOLEAN:
		if (v->type != FLOE_AVRO_BOOLEAN)
			return value_bad(err, "expected a boolean");
		out->v.b = v->u.b;
		return FLOE_OK;
	case FLOE_T_INT:
	case FLOE_T_DATE:
		if (v->type == FLOE_AVRO_INT)
			out->v.i32 = v->u.i;
		else if (v->type == FLOE_AVRO_LONG && v->u.l >= INT32_MIN && v->u.l <= INT32_MAX)
			out->v.i32 = (int32_t)v->u.l;
		else
			return value_bad(err, "expected an int");
		return FLOE_OK;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		if (v->type == FLOE_AVRO_LONG)
			out->v.i64 = v->u.l;
		else if (v->type == FLOE_AVRO_INT) {
			/* promoted: int -> long, date -> timestamp */
			const char *lt = base ? base->logical_type : NULL;
			if (lt && !strcmp(lt, "date") && tid != FLOE_T_LONG)
				out->v.i64 = (int64_t)v->u.i *
					     (tid == FLOE_T_TIMESTAMP_NS || tid == FLOE_T_TIMESTAMPTZ_NS
						      ? 86400 * INT64_C(1000000000)
						      : FLOE_US_PER_DAY);
			else
				out->v.i64 = v->u.i;
		} else
			return value_bad(err, "expected a long");
		return FLOE_OK;
	case FLOE_T_FLOAT:
		if (v->type != FLOE_AVRO_FLOAT)
			return value_bad(err, "expected a float");
		out->v.f32 = v->u.f;
		return FLOE_OK;
	case FLOE_T_DOUBLE:
		if (v->type == FLOE_AVRO_DOUBLE)
			out->v.f64 = v->u.d;
		else if (v->type == FLOE_AVRO_FLOAT)
			out->v.f64 = v->u.f;
		else
			return value_bad(err, "expected a double");
		return FLOE_OK;
	case FLOE_T_DECIMAL:
		if (v->type != FLOE_AVRO_FIXED && v->type != FLOE_AVRO_BYTES)
			return value_bad(err, "expected a decimal");
		if (v->u.bytes.len == 0 || v->u.bytes.len > 16)
			return value_bad(err, "decimal of bad length");
		out->v.dec = floe_i128_from_be(v->u.bytes.p, v->u.bytes.len);
		return FLOE_OK;
	case FLOE_T_UUID:
		if (v->u.bytes.len != 16 || (v->type != FLOE_AVRO_FIXED && v->type != FLOE_AVRO_BYTES))
			return value_bad(err, "expected a 16-byte uuid");
		break;
	case FLOE_T_STRING:
	case FLOE_T_BINARY:
	case FLOE_T_FIXED:
		if (v->type != FLOE_AVRO_STRING && v->type != FLOE_AVRO_BYTES &&
		    v->type != FLOE_AVRO_FIXED)
			return value_bad(err, "expected bytes");
		break;
	default: return floe_error_set(err, FLOE_EUNSUPPORTED, "partition value of unsupported type");
	}
	out->v.bin.p = v->u.bytes.p;
	out->v.bin.n = v->u.bytes.len;
	return floe_value_own(out, a);
}

int floe_iceberg__value_to_avro(floe_buf *b, const floe_value *v, const floe_type *t,
				floe_error *err)
{
	int rc;
	switch (v->type) {
	case FLOE_T_BOOLEAN: rc = floe_avro_enc_bool(b, v->v.b); break;
	case FLOE_T_INT:
	case FLOE_T_DATE: rc = floe_avro_enc_int(b, v->v.i32); break;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS: rc = floe_avro_enc_long(b, v->v.i64); break;
	case FLOE_T_FLOAT: rc = floe_avro_enc_float(b, v->v.f32); break;
	case FLOE_T_DOUBLE: rc = floe_avro_enc_double(b, v->v.f64); break;
	case FLOE_T_STRING: rc = floe_avro_enc_string(b, (const char *)v->v.bin.p, v->v.bin.n); break;
	case FLOE_T_BINARY: rc = floe_avro_enc_bytes(b, v->v.bin.p, v->v.bin.n); break;
	case FLOE_T_UUID:
	case FLOE_T_FIXED:
		if (t && t->id == FLOE_T_FIXED && v->v.bin.n != (size_t)t->length)
			return floe_error_set(err, FLOE_EINVAL, "fixed[%d] value has %zu bytes",
					      t->length, v->v.bin.n);
		rc = floe_avro_enc_fixed(b, v->v.bin.p, v->v.bin.n);
		break;
	case FLOE_T_DECIMAL: {
		/* sign-extended big-endian in minBytes(P) */
		uint8_t full[16];
		size_t n = floe_decimal_fixed_size(t ? t->precision : 38);
		floe_u128 u = (floe_u128)v->v.dec;
		for (int i = 15; i >= 0; i--) {
			full[i] = (uint8_t)u;
			u >>= 8;
		}
		rc = floe_avro_enc_fixed(b, full + 16 - n, n);
		break;
	}
	default: return floe_error_set(err, FLOE_EUNSUPPORTED, "value type cannot be written to Avro");
	}
	return rc ? floe_error_oom(err) : FLOE_OK;
}
