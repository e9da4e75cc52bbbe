/*
 * arrow_schema.c — Iceberg schemas as Arrow schemas and Parquet schemas.
 */
#include "iceberg/arrow_schema.h"

#include <stdio.h>
#include <string.h>

#include "arrow/arrow_build.h"

int floe_iceberg_arrow_format(char *out, size_t cap, const floe_type *t)
{
	const char *f = NULL;
	switch (t->id) {
	case FLOE_T_BOOLEAN: f = "b"; break;
	case FLOE_T_INT: f = "i"; break;
	case FLOE_T_LONG: f = "l"; break;
	case FLOE_T_FLOAT: f = "f"; break;
	case FLOE_T_DOUBLE: f = "g"; break;
	case FLOE_T_DATE: f = "tdD"; break;
	case FLOE_T_TIME: f = "ttu"; break;
	case FLOE_T_TIMESTAMP: f = "tsu:"; break;
	case FLOE_T_TIMESTAMPTZ: f = "tsu:UTC"; break;
	case FLOE_T_TIMESTAMP_NS: f = "tsn:"; break;
	case FLOE_T_TIMESTAMPTZ_NS: f = "tsn:UTC"; break;
	case FLOE_T_STRING: f = "u"; break;
	case FLOE_T_BINARY: f = "z"; break;
	case FLOE_T_UUID: f = "w:16"; break;
	case FLOE_T_UNKNOWN: f = "n"; break;
	case FLOE_T_DECIMAL: return snprintf(out, cap, "d:%d,%d", t->precision, t->scale) < (int)cap ? 0 : -1;
	case FLOE_T_FIXED: return snprintf(out, cap, "w:%d", t->length) < (int)cap ? 0 : -1;
	case FLOE_T_STRUCT: f = "+s"; break;
	case FLOE_T_LIST: f = "+l"; break;
	case FLOE_T_MAP: f = "+m"; break;
	default: return -1;
	}
	return snprintf(out, cap, "%s", f) < (int)cap ? 0 : -1;
}

static int set_id(struct ArrowSchema *s, int32_t id, bool uuid)
{
	char idbuf[16];
	snprintf(idbuf, sizeof(idbuf), "%d", id);
	if (uuid) {
		const char *keys[] = {"PARQUET:field_id", "ARROW:extension:name",
				      "ARROW:extension:metadata"};
		const char *vals[] = {idbuf, "arrow.uuid", ""};
		return floe_arrow_schema_set_metadata(s, keys, vals, 3);
	}
	const char *keys[] = {"PARQUET:field_id"};
	const char *vals[] = {idbuf};
	return floe_arrow_schema_set_metadata(s, keys, vals, 1);
}

static int arrow_field(struct ArrowSchema *out, const char *name, int32_t id, const floe_type *t,
		       bool required, bool variant_json, floe_error *err)
{
	char fmt[32];
	int64_t flags = required ? 0 : ARROW_FLAG_NULLABLE;
	int64_t n_children = t->id == FLOE_T_STRUCT ? (int64_t)t->n_fields
			     : t->id == FLOE_T_LIST || t->id == FLOE_T_MAP ? 1
									    : 0;
	int rc;
	if (variant_json && t->id == FLOE_T_VARIANT)
		snprintf(fmt, sizeof(fmt), "u"); /* the variant's JSON text */
	else if (floe_iceberg_arrow_format(fmt, sizeof(fmt), t) != 0)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "column '%s': this type has no Arrow form in floe yet", name);
	if ((rc = floe_arrow_schema_init(out, fmt, name, flags, n_children)))
		return floe_error_set(err, rc, "out of memory");
	if ((rc = set_id(out, id, t->id == FLOE_T_UUID)))
		goto fail;
	switch (t->id) {
	case FLOE_T_STRUCT:
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			if ((rc = arrow_field(out->children[i], f->name, f->id, f->type,
					      f->required, variant_json, err)))
				goto fail_quiet;
		}
		break;
	case FLOE_T_LIST:
		if ((rc = arrow_field(out->children[0], "element", t->element_id, t->element,
				      t->element_required, variant_json, err)))
			goto fail_quiet;
		break;
	case FLOE_T_MAP: {
		struct ArrowSchema *e = out->children[0];
		if ((rc = floe_arrow_schema_init(e, "+s", "entries", 0, 2)))
			goto fail;
		if ((rc = arrow_field(e->children[0], "key", t->key_id, t->key, true, variant_json,
				      err)) ||
		    (rc = arrow_field(e->children[1], "value", t->value_id, t->value,
				      t->value_required, variant_json, err)))
			goto fail_quiet;
		break;
	}
	default: break;
	}
	return FLOE_OK;
fail:
	floe_error_set(err, rc, "out of memory");
fail_quiet:
	floe_arrow_schema_release(out);
	return rc;
}

int floe_iceberg_arrow_field(struct ArrowSchema *out, const char *name, int32_t id,
			     const floe_type *t, bool required, floe_error *err)
{
	return arrow_field(out, name, id, t, required, false, err);
}

int floe_iceberg_arrow_field_read(struct ArrowSchema *out, const char *name, int32_t id,
				  const floe_type *t, bool required, floe_error *err)
{
	return arrow_field(out, name, id, t, required, true, err);
}

int floe_iceberg_arrow_schema(struct ArrowSchema *out, const floe_schema *s, floe_error *err)
{
	const floe_type *root = s->root;
	int rc = floe_arrow_schema_init(out, "+s", "", 0, (int64_t)root->n_fields);
	if (rc)
		return floe_error_set(err, rc, "out of memory");
	for (size_t i = 0; i < root->n_fields; i++) {
		const floe_field *f = &root->fields[i];
		if ((rc = floe_iceberg_arrow_field(out->children[i], f->name, f->id, f->type,
						   f->required, err))) {
			floe_arrow_schema_release(out);
			return rc;
		}
	}
	return FLOE_OK;
}

/* ---- Parquet -------------------------------------------------------------------- */

static int pq_leaf(floe_parquet_field *pf, const floe_type *t, floe_error *err)
{
	floe_parquet_logical *lt = &pf->logical;
	switch (t->id) {
	case FLOE_T_BOOLEAN: pf->physical = FLOE_PARQUET_BOOLEAN; break;
	case FLOE_T_INT: pf->physical = FLOE_PARQUET_INT32; break;
	case FLOE_T_LONG: pf->physical = FLOE_PARQUET_INT64; break;
	case FLOE_T_FLOAT: pf->physical = FLOE_PARQUET_FLOAT; break;
	case FLOE_T_DOUBLE: pf->physical = FLOE_PARQUET_DOUBLE; break;
	case FLOE_T_DECIMAL:
		pf->physical = t->precision <= 9	? FLOE_PARQUET_INT32
			       : t->precision <= 18 ? FLOE_PARQUET_INT64
						    : FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		if (pf->physical == FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY)
			pf->type_length = floe_parquet_decimal_bytes(t->precision);
		lt->kind = FLOE_PARQUET_LT_DECIMAL;
		lt->precision = t->precision;
		lt->scale = t->scale;
		break;
	case FLOE_T_DATE:
		pf->physical = FLOE_PARQUET_INT32;
		lt->kind = FLOE_PARQUET_LT_DATE;
		break;
	case FLOE_T_TIME:
		pf->physical = FLOE_PARQUET_INT64;
		lt->kind = FLOE_PARQUET_LT_TIME;
		lt->unit = FLOE_PARQUET_MICROS;
		lt->utc = false;
		break;
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		pf->physical = FLOE_PARQUET_INT64;
		lt->kind = FLOE_PARQUET_LT_TIMESTAMP;
		lt->unit = t->id == FLOE_T_TIMESTAMP_NS || t->id == FLOE_T_TIMESTAMPTZ_NS
				   ? FLOE_PARQUET_NANOS
				   : FLOE_PARQUET_MICROS;
		lt->utc = t->id == FLOE_T_TIMESTAMPTZ || t->id == FLOE_T_TIMESTAMPTZ_NS;
		break;
	case FLOE_T_STRING:
		pf->physical = FLOE_PARQUET_BYTE_ARRAY;
		lt->kind = FLOE_PARQUET_LT_STRING;
		break;
	case FLOE_T_UUID:
		pf->physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		pf->type_length = 16;
		lt->kind = FLOE_PARQUET_LT_UUID;
		break;
	case FLOE_T_FIXED:
		pf->physical = FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY;
		pf->type_length = t->length;
		break;
	case FLOE_T_BINARY: pf->physical = FLOE_PARQUET_BYTE_ARRAY; break;
	default:
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "column '%s': floe does not write this type to Parquet yet",
				      pf->name);
	}
	return FLOE_OK;
}

bool floe_iceberg_type_written(const floe_type *t)
{
	if (t->id == FLOE_T_UNKNOWN)
		return false; /* spec: unknown columns are not written */
	if (t->id != FLOE_T_STRUCT)
		return true;
	for (size_t i = 0; i < t->n_fields; i++)
		if (floe_iceberg_type_written(t->fields[i].type))
			return true;
	return false; /* a Parquet group needs a child */
}

static int pq_add(floe_parquet_schema *ps, floe_parquet_node *parent, const char *name, int32_t id,
		  const floe_type *t, bool required, floe_error *err)
{
	floe_parquet_field pf = FLOE_PARQUET_FIELD_INIT;
	floe_parquet_node *node;
	int rc;
	pf.name = name;
	pf.repetition = required ? FLOE_PARQUET_REQUIRED : FLOE_PARQUET_OPTIONAL;
	pf.has_field_id = true;
	pf.field_id = id;
	switch (t->id) {
	case FLOE_T_STRUCT:
		pf.physical = -1;
		if ((rc = floe_parquet_schema_add(ps, parent, &pf, &node, err)))
			return rc;
		for (size_t i = 0; i < t->n_fields; i++) {
			const floe_field *f = &t->fields[i];
			if (floe_iceberg_type_written(f->type) &&
			    (rc = pq_add(ps, node, f->name, f->id, f->type, f->required, err)))
				return rc;
		}
		return FLOE_OK;
	case FLOE_T_LIST: {
		/* 3-level: the element (a leaf, a struct, or another list or
		 * map) goes under the repeated "list" group */
		floe_parquet_node *rep;
		pf.physical = -1;
		if ((rc = floe_parquet_schema_add_list_node(ps, parent, &pf, NULL, &rep, err)))
			return rc;
		return pq_add(ps, rep, "element", t->element_id, t->element, t->element_required,
			      err);
	}
	case FLOE_T_MAP: {
		floe_parquet_node *kv;
		pf.physical = -1;
		if ((rc = floe_parquet_schema_add_map_node(ps, parent, &pf, NULL, &kv, err)) ||
		    (rc = pq_add(ps, kv, "key", t->key_id, t->key, true, err)))
			return rc;
		return pq_add(ps, kv, "value", t->value_id, t->value, t->value_required, err);
	}
	default:
		if ((rc = pq_leaf(&pf, t, err)))
			return rc;
		return floe_parquet_schema_add(ps, parent, &pf, NULL, err);
	}
}

int floe_iceberg_parquet_schema(floe_parquet_schema **out, const floe_schema *s, floe_error *err)
{
	floe_parquet_schema *ps;
	int rc = floe_parquet_schema_new(&ps, "table", err);
	if (rc)
		return rc;
	for (size_t i = 0; i < s->root->n_fields && !rc; i++) {
		const floe_field *f = &s->root->fields[i];
		if (!floe_iceberg_type_written(f->type))
			continue; /* spec: unknown columns are not written */
		rc = pq_add(ps, NULL, f->name, f->id, f->type, f->required, err);
	}
	if (!rc)
		rc = floe_parquet_schema_finish(ps, err);
	if (rc) {
		floe_parquet_schema_free(ps);
		return rc;
	}
	*out = ps;
	return FLOE_OK;
}
