/*
 * schema_arrow.c — a Parquet schema for an Arrow schema: the mapping a
 * generic tool (floe parquet rewrite, tests) uses when no Iceberg schema
 * says otherwise. Field ids come from "PARQUET:field_id" field metadata.
 *
 * Arrow -> Parquet: b BOOLEAN; c/s/i INT32 (INTEGER(8/16) for c/s); C/S/I
 * INT32 INTEGER(n, unsigned); l INT64; L INT64 INTEGER(64, unsigned); e
 * FIXED(2) FLOAT16; f FLOAT; g DOUBLE; u/U BYTE_ARRAY STRING; z/Z BYTE_ARRAY;
 * w:N FIXED(N) (UUID when the field is the arrow.uuid extension); d:P,S
 * DECIMAL on INT32 (P <= 9), INT64 (P <= 18) or FIXED(min bytes); tdD DATE;
 * ttm INT32 TIME(MILLIS); ttu/ttn INT64 TIME; ts?:[zone] INT64 TIMESTAMP
 * (seconds as MILLIS), UTC-adjusted iff a zone is set; n INT32 UNKNOWN;
 * +s group; +l/+L 3-level LIST; +m MAP.
 */
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_fmt.h"
#include "parquet/schema.h"
#include "parquet/writer.h"
#include "util/str.h"

static int set_from_arrow(floe_parquet_field *f, const struct ArrowSchema *s, floe_error *err)
{
	floe_arrow_fmt a;
	size_t len;
	const char *id;
	int rc = floe_arrow_fmt_parse(&a, s->format, err);
	if (rc)
		return rc;
	f->name = s->name && *s->name ? s->name : "field";
	f->repetition = (s->flags & ARROW_FLAG_NULLABLE) ? FLOE_PARQUET_OPTIONAL : FLOE_PARQUET_REQUIRED;
	id = floe_arrow_metadata_get(s->metadata, "PARQUET:field_id", &len);
	if (id && floe_parse_i32(id, len, &f->field_id))
		f->has_field_id = true;
	f->physical = -1;
	switch (a.type) {
	case FLOE_ARROW_NA:
		f->physical = FLOE_PARQUET_INT32;
		f->logical.kind = FLOE_PARQUET_LT_UNKNOWN;
		f->repetition = FLOE_PARQUET_OPTIONAL;
		break;
	case FLOE_ARROW_BOOL: f->physical = FLOE_PARQUET_BOOLEAN; break;
	case FLOE_ARROW_INT8:
	case FLOE_ARROW_INT16:
	case FLOE_ARROW_UINT8:
	case FLOE_ARROW_UINT16:
	case FLOE_ARROW_UINT32:
		f->physical = FLOE_PARQUET_INT32;
		f->logical.kind = FLOE_PARQUET_LT_INTEGER;
		f->logical.is_signed = a.type == FLOE_ARROW_INT8 || a.type == FLOE_ARROW_INT16;
		f->logical.bit_width = a.type == FLOE_ARROW_INT8 || a.type == FLOE_ARROW_UINT8 ? 8
				       : a.type == FLOE_ARROW_UINT32				? 32
												: 16;
		break;
	case FLOE_ARROW_INT32: f->physical = FLOE_PARQUET_INT32; break;
	case FLOE_ARROW_INT64: f->physical = FLOE_PARQUET_INT64; break;
	case FLOE_ARROW_UINT64:
		f->physical = FLOE_PARQUET_INT64;
		f->logical.kind = FLOE_PARQUET_LT_INTEGER;
		f->logical.bit_width = 64;
		break;
	case FLOE_ARROW_HALF_FLOAT:
		f->physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		f->type_length = 2;
		f->logical.kind = FLOE_PARQUET_LT_FLOAT16;
		break;
	case FLOE_ARROW_FLOAT: f->physical = FLOE_PARQUET_FLOAT; break;
	case FLOE_ARROW_DOUBLE: f->physical = FLOE_PARQUET_DOUBLE; break;
	case FLOE_ARROW_STRING:
	case FLOE_ARROW_LARGE_STRING:
		f->physical = FLOE_PARQUET_BYTE_ARRAY;
		f->logical.kind = FLOE_PARQUET_LT_STRING;
		break;
	case FLOE_ARROW_BINARY:
	case FLOE_ARROW_LARGE_BINARY: f->physical = FLOE_PARQUET_BYTE_ARRAY; break;
	case FLOE_ARROW_FIXED_BINARY: {
		const char *ext = floe_arrow_metadata_get(s->metadata, "ARROW:extension:name", &len);
		f->physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		f->type_length = a.width;
		if (ext && a.width == 16 && len == 10 && memcmp(ext, "arrow.uuid", 10) == 0)
			f->logical.kind = FLOE_PARQUET_LT_UUID;
		break;
	}
	case FLOE_ARROW_DECIMAL128:
		f->logical.kind = FLOE_PARQUET_LT_DECIMAL;
		f->logical.precision = a.precision;
		f->logical.scale = a.scale;
		if (a.precision <= 9) {
			f->physical = FLOE_PARQUET_INT32;
		} else if (a.precision <= 18) {
			f->physical = FLOE_PARQUET_INT64;
		} else {
			f->physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
			f->type_length = floe_parquet_decimal_bytes(a.precision);
		}
		break;
	case FLOE_ARROW_DATE32:
		f->physical = FLOE_PARQUET_INT32;
		f->logical.kind = FLOE_PARQUET_LT_DATE;
		break;
	case FLOE_ARROW_TIME32:
		if (a.unit != FLOE_ARROW_MILLI)
			goto unsupported;
		f->physical = FLOE_PARQUET_INT32;
		f->logical.kind = FLOE_PARQUET_LT_TIME;
		f->logical.unit = FLOE_PARQUET_MILLIS;
		break;
	case FLOE_ARROW_TIME64:
		f->physical = FLOE_PARQUET_INT64;
		f->logical.kind = FLOE_PARQUET_LT_TIME;
		f->logical.unit = a.unit == FLOE_ARROW_NANO ? FLOE_PARQUET_NANOS : FLOE_PARQUET_MICROS;
		break;
	case FLOE_ARROW_TIMESTAMP:
		f->physical = FLOE_PARQUET_INT64;
		f->logical.kind = FLOE_PARQUET_LT_TIMESTAMP;
		f->logical.unit = a.unit == FLOE_ARROW_NANO    ? FLOE_PARQUET_NANOS
				  : a.unit == FLOE_ARROW_MICRO ? FLOE_PARQUET_MICROS
							       : FLOE_PARQUET_MILLIS;
		f->logical.utc = a.tz && *a.tz;
		break;
	case FLOE_ARROW_STRUCT:
	case FLOE_ARROW_LIST:
	case FLOE_ARROW_LARGE_LIST:
	case FLOE_ARROW_MAP: f->physical = -1; break;
	default: goto unsupported;
	}
	return FLOE_OK;
unsupported:
	return floe_error_set(err, FLOE_EUNSUPPORTED, "field '%s': arrow format '%s' has no Parquet mapping",
			      f->name, s->format);
}

static int add(floe_parquet_schema *ps, floe_parquet_node *parent, const struct ArrowSchema *s,
	       const char *name, bool required, int depth, floe_error *err)
{
	floe_parquet_field f = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *n = NULL;
	int rc;
	if (depth > FLOE_PARQUET_MAX_DEPTH)
		return floe_error_set(err, FLOE_EINVAL, "arrow schema nested too deeply");
	if ((rc = set_from_arrow(&f, s, err)))
		return rc;
	if (name)
		f.name = name;
	if (required)
		f.repetition = FLOE_PARQUET_REQUIRED;
	if (strcmp(s->format, "+s") == 0) {
		if ((rc = floe_parquet_schema_add(ps, parent, &f, &n, err)))
			return rc;
		for (int64_t i = 0; i < s->n_children; i++)
			if ((rc = add(ps, n, s->children[i], NULL, false, depth + 1, err)))
				return rc;
		return FLOE_OK;
	}
	if (strcmp(s->format, "+l") == 0 || strcmp(s->format, "+L") == 0) {
		if (s->n_children != 1)
			return floe_error_set(err, FLOE_EINVAL, "list '%s' without a child", f.name);
		if ((rc = floe_parquet_schema_add_list_node(ps, parent, &f, NULL, &n, err)))
			return rc;
		return add(ps, n, s->children[0], "element", false, depth + 2, err);
	}
	if (strcmp(s->format, "+m") == 0) {
		const struct ArrowSchema *e = s->n_children == 1 ? s->children[0] : NULL;
		if (!e || e->n_children != 2)
			return floe_error_set(err, FLOE_EINVAL, "map '%s' without key and value", f.name);
		if ((rc = floe_parquet_schema_add_map_node(ps, parent, &f, NULL, &n, err)) ||
		    (rc = add(ps, n, e->children[0], "key", true, depth + 2, err)) ||
		    (rc = add(ps, n, e->children[1], "value", false, depth + 2, err)))
			return rc;
		return FLOE_OK;
	}
	return floe_parquet_schema_add(ps, parent, &f, NULL, err);
}

int floe_parquet_schema_from_arrow(floe_parquet_schema **out, const struct ArrowSchema *s,
				   floe_error *err)
{
	floe_parquet_schema *ps = NULL;
	int rc;
	if (!s || !s->format || strcmp(s->format, "+s") != 0)
		return floe_error_set(err, FLOE_EINVAL, "a Parquet schema needs a struct arrow schema");
	if ((rc = floe_parquet_schema_new(&ps, "schema", err)))
		return rc;
	for (int64_t i = 0; i < s->n_children; i++)
		if ((rc = add(ps, NULL, s->children[i], NULL, false, 1, err)))
			goto fail;
	if ((rc = floe_parquet_schema_finish(ps, err)))
		goto fail;
	*out = ps;
	return FLOE_OK;
fail:
	floe_parquet_schema_free(ps);
	return rc;
}
