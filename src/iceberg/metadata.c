/*
 * metadata.c — table metadata JSON: parse (v1-v3, with Java's read-side
 * validation), write (Java's key order), lookups.
 *
 * DESIGN: the JSON tree is parsed into the metadata's own arena, so strings
 * of the result point into it and nothing is copied twice; statistics,
 * partition statistics and encryption keys are kept as JSON subtrees and
 * written back verbatim.
 */
#include "iceberg/metadata.h"

#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "util/rand.h"

#define CORRUPT(err, ...) floe_error_corrupt(err, __VA_ARGS__)

void floe_metadata_free(floe_metadata *m)
{
	if (!m)
		return;
	floe_arena a = m->arena;
	floe_arena_reset(&a); /* m lives inside its own arena */
}

static floe_metadata *metadata_alloc(void)
{
	floe_arena a;
	floe_metadata *m;
	floe_arena_init(&a, 64 * 1024);
	m = floe_arena_calloc(&a, 1, sizeof(*m));
	if (!m) {
		floe_arena_reset(&a);
		return NULL;
	}
	m->arena = a;
	return m;
}

/* The arena struct inside m is a copy: keep it authoritative while parsing by
 * allocating through m->arena only. */

static int get_opt_i64(const floe_json *obj, const char *key, int64_t *out, int64_t dflt,
		       const char *what, floe_error *err)
{
	int rc = floe_json_get_i64(obj, key, out, what, err);
	if (rc == FLOE_ENOTFOUND) {
		*out = dflt;
		floe_error_clear(err);
		return FLOE_OK;
	}
	return rc;
}

static int get_opt_i32(const floe_json *obj, const char *key, int32_t *out, int32_t dflt,
		       const char *what, floe_error *err)
{
	int rc = floe_json_get_i32(obj, key, out, what, err);
	if (rc == FLOE_ENOTFOUND) {
		*out = dflt;
		floe_error_clear(err);
		return FLOE_OK;
	}
	return rc;
}

static int parse_kv_object(floe_arena *a, const floe_json *obj, floe_kv **out, size_t *n,
			   const char *what, floe_error *err)
{
	size_t i = 0;
	*out = NULL;
	*n = 0;
	if (floe_json_is_null(obj))
		return FLOE_OK;
	if (obj->type != FLOE_JSON_OBJECT)
		return CORRUPT(err, "'%s' must be an object", what);
	*out = floe_arena_calloc(a, obj->len ? obj->len : 1, sizeof(floe_kv));
	if (!*out)
		return FLOE_ENOMEM;
	for (const floe_json *c = obj->child; c; c = c->next) {
		floe_kv *kv = &(*out)[i++];
		kv->key = c->key;
		if (c->type == FLOE_JSON_STRING || c->type == FLOE_JSON_NUMBER)
			kv->value = c->s;
		else if (c->type == FLOE_JSON_BOOL)
			kv->value = c->b ? "true" : "false";
		else
			return CORRUPT(err, "'%s': value of '%s' must be a string", what, c->key);
	}
	*n = i;
	return FLOE_OK;
}

static int parse_snapshot(floe_arena *a, const floe_json *j, floe_snapshot *s, int fv,
			  floe_error *err)
{
	int rc;
	memset(s, 0, sizeof(*s));
	if (j->type != FLOE_JSON_OBJECT)
		return CORRUPT(err, "snapshot must be an object");
	if ((rc = floe_json_get_i64(j, "snapshot-id", &s->snapshot_id, "snapshot", err)))
		return FLOE_ECORRUPT;
	if ((rc = get_opt_i64(j, "parent-snapshot-id", &s->parent_id, FLOE_NO_SNAPSHOT, "snapshot",
			      err)) ||
	    (rc = get_opt_i64(j, "sequence-number", &s->sequence_number, 0, "snapshot", err)) ||
	    (rc = get_opt_i32(j, "schema-id", &s->schema_id, -1, "snapshot", err)) ||
	    (rc = get_opt_i64(j, "first-row-id", &s->first_row_id, -1, "snapshot", err)) ||
	    (rc = get_opt_i64(j, "added-rows", &s->added_rows, -1, "snapshot", err)))
		goto bad;
	if ((rc = floe_json_get_i64(j, "timestamp-ms", &s->timestamp_ms, "snapshot", err)))
		goto bad;
	const floe_json *ml = floe_json_get(j, "manifest-list");
	if (ml && ml->type == FLOE_JSON_STRING) {
		s->manifest_list = ml->s;
	} else {
		const floe_json *mans = floe_json_get(j, "manifests");
		if (!mans || mans->type != FLOE_JSON_ARRAY) {
			rc = CORRUPT(err, "snapshot has neither 'manifest-list' nor 'manifests'");
			goto bad;
		}
		if (fv >= 2) {
			rc = CORRUPT(err, "'manifest-list' is required in format version %d", fv);
			goto bad;
		}
		s->v1_manifests = floe_arena_calloc(a, mans->len ? mans->len : 1, sizeof(char *));
		if (!s->v1_manifests)
			return FLOE_ENOMEM;
		for (const floe_json *c = mans->child; c; c = c->next) {
			if (c->type != FLOE_JSON_STRING) {
				rc = CORRUPT(err, "'manifests' must hold strings");
				goto bad;
			}
			s->v1_manifests[s->n_v1_manifests++] = c->s;
		}
	}
	if ((rc = parse_kv_object(a, floe_json_get(j, "summary"), &s->summary, &s->n_summary,
				  "summary", err)))
		goto bad;
	if (fv >= 2 && !floe_snapshot_summary(s, "operation") && s->n_summary == 0 &&
	    !floe_json_get(j, "summary")) {
		rc = CORRUPT(err, "'summary' is required in format version %d", fv);
		goto bad;
	}
	const floe_json *kid = floe_json_get(j, "key-id");
	if (kid && kid->type == FLOE_JSON_STRING)
		s->key_id = kid->s;
	/* keep its text: writing it back is then a copy (the input is the
	 * caller's, so the text is copied into the arena) */
	if (j->text && j->text_len) {
		if (!(s->json = floe_arena_memdup(a, j->text, j->text_len)))
			return FLOE_ENOMEM;
		s->json_len = j->text_len;
	}
	return FLOE_OK;
bad:
	return floe_error_prefix(err, FLOE_ECORRUPT, "snapshot %lld: ", (long long)s->snapshot_id);
}

static int parse_ref(const floe_json *j, floe_snapshot_ref *r, floe_error *err)
{
	const char *type;
	int rc;
	if (j->type != FLOE_JSON_OBJECT)
		return CORRUPT(err, "ref '%s' must be an object", j->key);
	r->name = j->key;
	if ((rc = floe_json_get_i64(j, "snapshot-id", &r->snapshot_id, "ref", err)) ||
	    (rc = floe_json_get_str(j, "type", &type, "ref", err)))
		goto bad;
	if (floe_str_ieq(type, "tag"))
		r->is_tag = true;
	else if (!floe_str_ieq(type, "branch")) {
		rc = CORRUPT(err, "unknown ref type '%s'", type);
		goto bad;
	}
	if ((rc = get_opt_i32(j, "min-snapshots-to-keep", &r->min_snapshots_to_keep, -1, "ref",
			      err)) ||
	    (rc = get_opt_i64(j, "max-snapshot-age-ms", &r->max_snapshot_age_ms, -1, "ref", err)) ||
	    (rc = get_opt_i64(j, "max-ref-age-ms", &r->max_ref_age_ms, -1, "ref", err)))
		goto bad;
	return FLOE_OK;
bad:
	return floe_error_prefix(err, FLOE_ECORRUPT, "ref '%s': ", j->key);
}

static int parse_json_list(floe_arena *a, const floe_json *arr, floe_json ***out, size_t *n,
			   const char *what, floe_error *err)
{
	size_t i = 0;
	*out = NULL;
	*n = 0;
	if (floe_json_is_null(arr))
		return FLOE_OK;
	if (arr->type != FLOE_JSON_ARRAY)
		return CORRUPT(err, "'%s' must be an array", what);
	*out = floe_arena_calloc(a, arr->len ? arr->len : 1, sizeof(floe_json *));
	if (!*out)
		return FLOE_ENOMEM;
	for (floe_json *c = arr->child; c; c = c->next)
		(*out)[i++] = c;
	*n = i;
	return FLOE_OK;
}

static int parse_body(floe_metadata *m, const floe_json *root, floe_error *err)
{
	floe_arena *a = &m->arena;
	int64_t fv64;
	int rc;
	const floe_json *j;
	size_t i;

	if (!root || root->type != FLOE_JSON_OBJECT)
		return CORRUPT(err, "table metadata must be a JSON object");
	if ((rc = floe_json_get_i64(root, "format-version", &fv64, "table metadata", err)))
		return FLOE_ECORRUPT;
	if (fv64 < 1 || fv64 > FLOE_FORMAT_VERSION_MAX)
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "format version %lld is not supported (floe reads 1 to %d)",
				      (long long)fv64, FLOE_FORMAT_VERSION_MAX);
	m->format_version = (int)fv64;
	int fv = m->format_version;

	j = floe_json_get(root, "table-uuid");
	if (j && j->type == FLOE_JSON_STRING)
		m->table_uuid = j->s;
	else if (fv >= 2)
		return CORRUPT(err, "'table-uuid' is required in format version %d", fv);
	if ((rc = floe_json_get_str(root, "location", &m->location, "table metadata", err)))
		return FLOE_ECORRUPT;
	if (fv >= 2) {
		if ((rc = floe_json_get_i64(root, "last-sequence-number", &m->last_sequence_number,
					    "table metadata", err)))
			return FLOE_ECORRUPT;
	}
	if ((rc = floe_json_get_i64(root, "last-updated-ms", &m->last_updated_ms, "table metadata",
				    err)) ||
	    (rc = floe_json_get_i32(root, "last-column-id", &m->last_column_id, "table metadata",
				    err)))
		return FLOE_ECORRUPT;

	/* schemas */
	j = floe_json_get(root, "schemas");
	if (j && j->type == FLOE_JSON_ARRAY) {
		m->schemas = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_schema *));
		if (!m->schemas)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			if ((rc = floe_schema_from_json(&m->schemas[m->n_schemas], a, c, err)))
				return rc;
			m->n_schemas++;
		}
		if ((rc = floe_json_get_i32(root, "current-schema-id", &m->current_schema_id,
					    "table metadata", err))) {
			if (fv >= 2 || rc != FLOE_ENOTFOUND)
				return FLOE_ECORRUPT;
			m->current_schema_id = m->n_schemas ? m->schemas[0]->schema_id : 0;
		}
	} else if (fv >= 2) {
		return CORRUPT(err, "'schemas' is required in format version %d", fv);
	} else {
		j = floe_json_get(root, "schema");
		if (!j)
			return CORRUPT(err, "neither 'schemas' nor 'schema' is present");
		m->schemas = floe_arena_calloc(a, 1, sizeof(floe_schema *));
		if (!m->schemas)
			return FLOE_ENOMEM;
		if ((rc = floe_schema_from_json(&m->schemas[0], a, j, err)))
			return rc;
		m->n_schemas = 1;
		m->current_schema_id = m->schemas[0]->schema_id;
	}
	if (m->n_schemas == 0)
		return CORRUPT(err, "table metadata has no schema");
	for (i = 0; i < m->n_schemas; i++)
		for (size_t k = 0; k < i; k++)
			if (m->schemas[i]->schema_id == m->schemas[k]->schema_id)
				return CORRUPT(err, "schema id %d appears twice",
					       m->schemas[i]->schema_id);
	if (!floe_metadata_schema(m, m->current_schema_id))
		return CORRUPT(err, "current-schema-id %d does not name a schema",
			       m->current_schema_id);

	/* partition specs */
	j = floe_json_get(root, "partition-specs");
	if (j && j->type == FLOE_JSON_ARRAY) {
		m->specs = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_partition_spec *));
		if (!m->specs)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			if ((rc = floe_spec_from_json(&m->specs[m->n_specs], a, c, 0, err)))
				return rc;
			m->n_specs++;
		}
		if ((rc = get_opt_i32(root, "default-spec-id", &m->default_spec_id,
				      m->n_specs ? m->specs[0]->spec_id : 0, "table metadata", err)))
			return FLOE_ECORRUPT;
	} else if (fv >= 2) {
		return CORRUPT(err, "'partition-specs' is required in format version %d", fv);
	} else {
		j = floe_json_get(root, "partition-spec");
		m->specs = floe_arena_calloc(a, 1, sizeof(floe_partition_spec *));
		if (!m->specs)
			return FLOE_ENOMEM;
		if (j) {
			if ((rc = floe_spec_from_json(&m->specs[0], a, j, 0, err)))
				return rc;
		} else {
			floe_partition_spec *s = floe_arena_calloc(a, 1, sizeof(*s));
			if (!s)
				return FLOE_ENOMEM;
			m->specs[0] = s;
		}
		m->n_specs = 1;
		m->default_spec_id = m->specs[0]->spec_id;
	}
	if (m->n_specs == 0)
		return CORRUPT(err, "table metadata has no partition spec");
	if (!floe_metadata_spec(m, m->default_spec_id))
		return CORRUPT(err, "default-spec-id %d does not name a partition spec",
			       m->default_spec_id);
	{
		int32_t maxid = FLOE_PARTITION_FIELD_ID_START - 1;
		for (i = 0; i < m->n_specs; i++) {
			int32_t x = floe_spec_max_field_id(m->specs[i]);
			if (x > maxid)
				maxid = x;
		}
		rc = floe_json_get_i32(root, "last-partition-id", &m->last_partition_id,
				       "table metadata", err);
		if (rc == FLOE_ENOTFOUND && fv == 1) {
			m->last_partition_id = maxid;
			floe_error_clear(err);
		} else if (rc) {
			return FLOE_ECORRUPT;
		}
	}

	/* sort orders */
	j = floe_json_get(root, "sort-orders");
	if (j && j->type == FLOE_JSON_ARRAY) {
		m->sort_orders = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_sort_order *));
		if (!m->sort_orders)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			if ((rc = floe_sort_order_from_json(&m->sort_orders[m->n_sort_orders], a, c,
							    err)))
				return rc;
			m->n_sort_orders++;
		}
		if ((rc = get_opt_i32(root, "default-sort-order-id", &m->default_sort_order_id, 0,
				      "table metadata", err)))
			return FLOE_ECORRUPT;
	} else if (fv >= 2) {
		return CORRUPT(err, "'sort-orders' is required in format version %d", fv);
	}
	if (m->n_sort_orders == 0) {
		m->sort_orders = floe_arena_calloc(a, 1, sizeof(floe_sort_order *));
		floe_sort_order *o = floe_arena_calloc(a, 1, sizeof(*o));
		if (!m->sort_orders || !o)
			return FLOE_ENOMEM;
		m->sort_orders[0] = o;
		m->n_sort_orders = 1;
		m->default_sort_order_id = 0;
	}
	if (!floe_metadata_sort_order(m, m->default_sort_order_id))
		return CORRUPT(err, "default-sort-order-id %d does not name a sort order",
			       m->default_sort_order_id);

	if ((rc = parse_kv_object(a, floe_json_get(root, "properties"), &m->properties,
				  &m->n_properties, "properties", err)))
		return rc;

	/* snapshots */
	j = floe_json_get(root, "current-snapshot-id");
	if (floe_json_is_null(j)) {
		m->current_snapshot_id = FLOE_NO_SNAPSHOT;
	} else if (floe_json_as_i64(j, &m->current_snapshot_id)) {
		return CORRUPT(err, "'current-snapshot-id' must be an integer");
	}
	j = floe_json_get(root, "snapshots");
	if (!floe_json_is_null(j)) {
		if (j->type != FLOE_JSON_ARRAY)
			return CORRUPT(err, "'snapshots' must be an array");
		m->snapshots = floe_arena_calloc(a, j->len ? j->len : 1, sizeof(floe_snapshot));
		if (!m->snapshots)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			if ((rc = parse_snapshot(a, c, &m->snapshots[m->n_snapshots], fv, err)))
				return rc;
			m->n_snapshots++;
		}
	}
	if (m->current_snapshot_id != FLOE_NO_SNAPSHOT &&
	    !floe_metadata_snapshot(m, m->current_snapshot_id))
		return CORRUPT(err, "current-snapshot-id %lld does not name a snapshot",
			       (long long)m->current_snapshot_id);

	/* refs (main is implied by current-snapshot-id) */
	j = floe_json_get(root, "refs");
	size_t nrefs = (j && j->type == FLOE_JSON_OBJECT) ? j->len : 0;
	m->refs = floe_arena_calloc(a, nrefs + 1, sizeof(floe_snapshot_ref));
	if (!m->refs)
		return FLOE_ENOMEM;
	if (nrefs) {
		for (const floe_json *c = j->child; c; c = c->next) {
			if ((rc = parse_ref(c, &m->refs[m->n_refs], err)))
				return rc;
			if (!floe_metadata_snapshot(m, m->refs[m->n_refs].snapshot_id))
				return CORRUPT(err, "ref '%s' names unknown snapshot %lld", c->key,
					       (long long)m->refs[m->n_refs].snapshot_id);
			m->n_refs++;
		}
	}
	const floe_snapshot_ref *main_ref = floe_metadata_ref(m, "main");
	if (main_ref) {
		if (main_ref->is_tag)
			return CORRUPT(err, "ref 'main' must be a branch");
		if (m->current_snapshot_id == FLOE_NO_SNAPSHOT)
			return CORRUPT(err, "ref 'main' is set but current-snapshot-id is not");
		if (main_ref->snapshot_id != m->current_snapshot_id)
			return CORRUPT(err,
				       "current-snapshot-id %lld does not match the main branch (%lld)",
				       (long long)m->current_snapshot_id,
				       (long long)main_ref->snapshot_id);
	} else if (m->current_snapshot_id != FLOE_NO_SNAPSHOT) {
		floe_snapshot_ref *r = &m->refs[m->n_refs++];
		r->name = "main";
		r->snapshot_id = m->current_snapshot_id;
		r->min_snapshots_to_keep = -1;
		r->max_snapshot_age_ms = -1;
		r->max_ref_age_ms = -1;
	}

	/* logs */
	j = floe_json_get(root, "snapshot-log");
	if (!floe_json_is_null(j)) {
		if (j->type != FLOE_JSON_ARRAY)
			return CORRUPT(err, "'snapshot-log' must be an array");
		m->snapshot_log = floe_arena_calloc(a, j->len ? j->len : 1,
						    sizeof(floe_snapshot_log_entry));
		if (!m->snapshot_log)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			floe_snapshot_log_entry *e = &m->snapshot_log[m->n_snapshot_log++];
			if (floe_json_get_i64(c, "timestamp-ms", &e->timestamp_ms, "snapshot-log",
					      err) ||
			    floe_json_get_i64(c, "snapshot-id", &e->snapshot_id, "snapshot-log", err))
				return FLOE_ECORRUPT;
		}
	}
	j = floe_json_get(root, "metadata-log");
	if (!floe_json_is_null(j)) {
		if (j->type != FLOE_JSON_ARRAY)
			return CORRUPT(err, "'metadata-log' must be an array");
		m->metadata_log = floe_arena_calloc(a, j->len ? j->len : 1,
						    sizeof(floe_metadata_log_entry));
		if (!m->metadata_log)
			return FLOE_ENOMEM;
		for (const floe_json *c = j->child; c; c = c->next) {
			floe_metadata_log_entry *e = &m->metadata_log[m->n_metadata_log++];
			if (floe_json_get_i64(c, "timestamp-ms", &e->timestamp_ms, "metadata-log",
					      err) ||
			    floe_json_get_str(c, "metadata-file", &e->metadata_file, "metadata-log",
					      err))
				return FLOE_ECORRUPT;
		}
	}
	if ((rc = parse_json_list(a, floe_json_get(root, "statistics"), &m->statistics,
				  &m->n_statistics, "statistics", err)) ||
	    (rc = parse_json_list(a, floe_json_get(root, "partition-statistics"),
				  &m->partition_statistics, &m->n_partition_statistics,
				  "partition-statistics", err)) ||
	    (rc = parse_json_list(a, floe_json_get(root, "encryption-keys"), &m->encryption_keys,
				  &m->n_encryption_keys, "encryption-keys", err)))
		return rc;
	/* spec: required in v3; some writers (DuckDB) omit it, read as 0 */
	if (fv >= 3 && (rc = get_opt_i64(root, "next-row-id", &m->next_row_id, 0, "table metadata",
					  err)))
		return FLOE_ECORRUPT;
	if (fv == 1)
		for (i = 0; i < m->n_snapshots; i++)
			if (m->snapshots[i].sequence_number != 0)
				return CORRUPT(err, "format version 1 snapshots must not have sequence "
						    "numbers");
	return FLOE_OK;
}

int floe_metadata_parse(floe_metadata **out, const char *json, size_t n, floe_error *err)
{
	floe_metadata *m = metadata_alloc();
	floe_json *root;
	floe_json_limits lim = {.max_depth = 256, .max_nodes = (size_t)64 << 20, .max_string = 0};
	int rc;
	if (!m)
		return floe_error_oom(err);
	rc = floe_json_parse(&root, &m->arena, json, n, &lim, err);
	if (!rc)
		rc = parse_body(m, root, err);
	if (rc) {
		if (rc == FLOE_ENOMEM)
			floe_error_oomf(err, "out of memory reading table metadata");
		floe_metadata_free(m);
		return rc;
	}
	*out = m;
	return FLOE_OK;
}

int floe_metadata_parse_file_bytes(floe_metadata **out, const uint8_t *p, size_t n,
				   floe_error *err)
{
	bool gz = n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
	bool zst = n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd;
	if (gz || zst) {
		floe_buf b;
		int rc;
		floe_buf_init(&b, 0);
		rc = floe_codec_decompress_any(gz ? FLOE_CODEC_GZIP : FLOE_CODEC_ZSTD, p, n, &b,
					       (size_t)1 << 30, err);
		if (!rc)
			rc = floe_metadata_parse(out, (const char *)b.data, b.len, err);
		floe_buf_reset(&b);
		return rc;
	}
	return floe_metadata_parse(out, (const char *)p, n, err);
}

/* ---- lookups ------------------------------------------------------------------ */

const floe_schema *floe_metadata_schema(const floe_metadata *m, int32_t schema_id)
{
	for (size_t i = 0; i < m->n_schemas; i++)
		if (m->schemas[i]->schema_id == schema_id)
			return m->schemas[i];
	return NULL;
}

const floe_schema *floe_metadata_current_schema(const floe_metadata *m)
{
	return floe_metadata_schema(m, m->current_schema_id);
}

const floe_partition_spec *floe_metadata_spec(const floe_metadata *m, int32_t spec_id)
{
	for (size_t i = 0; i < m->n_specs; i++)
		if (m->specs[i]->spec_id == spec_id)
			return m->specs[i];
	return NULL;
}

const floe_partition_spec *floe_metadata_default_spec(const floe_metadata *m)
{
	return floe_metadata_spec(m, m->default_spec_id);
}

const floe_sort_order *floe_metadata_sort_order(const floe_metadata *m, int32_t order_id)
{
	for (size_t i = 0; i < m->n_sort_orders; i++)
		if (m->sort_orders[i]->order_id == order_id)
			return m->sort_orders[i];
	return NULL;
}

const floe_snapshot *floe_metadata_snapshot(const floe_metadata *m, int64_t snapshot_id)
{
	for (size_t i = 0; i < m->n_snapshots; i++)
		if (m->snapshots[i].snapshot_id == snapshot_id)
			return &m->snapshots[i];
	return NULL;
}

const floe_snapshot *floe_metadata_parent(const floe_metadata *m, const floe_snapshot *s)
{
	if (!s || s->parent_id < 0)
		return NULL;
	/* snapshots are kept in commit order, so a parent is usually the entry
	 * before: an ancestry walk stays linear */
	if (s > m->snapshots && s <= m->snapshots + m->n_snapshots && s[-1].snapshot_id == s->parent_id)
		return &s[-1];
	return floe_metadata_snapshot(m, s->parent_id);
}

const floe_snapshot *floe_metadata_current_snapshot(const floe_metadata *m)
{
	if (m->current_snapshot_id == FLOE_NO_SNAPSHOT)
		return NULL;
	return floe_metadata_snapshot(m, m->current_snapshot_id);
}

const floe_snapshot_ref *floe_metadata_ref(const floe_metadata *m, const char *name)
{
	for (size_t i = 0; i < m->n_refs; i++)
		if (strcmp(m->refs[i].name, name) == 0)
			return &m->refs[i];
	return NULL;
}

const floe_snapshot *floe_metadata_branch_head(const floe_metadata *m, const char *branch)
{
	const floe_snapshot_ref *r = floe_metadata_ref(m, branch ? branch : "main");
	if (!r)
		return NULL;
	return floe_metadata_snapshot(m, r->snapshot_id);
}

const char *floe_metadata_property(const floe_metadata *m, const char *key)
{
	for (size_t i = 0; i < m->n_properties; i++)
		if (strcmp(m->properties[i].key, key) == 0)
			return m->properties[i].value;
	return NULL;
}

int64_t floe_metadata_property_i64(const floe_metadata *m, const char *key, int64_t dflt)
{
	const char *v = floe_metadata_property(m, key);
	int64_t x;
	if (!v || !floe_parse_i64(v, strlen(v), &x))
		return dflt;
	return x;
}

int64_t floe_metadata_property_duration_ms(const floe_metadata *m, const char *key, int64_t dflt)
{
	const char *v = floe_metadata_property(m, key);
	int64_t x;
	if (!v || !floe_parse_duration_ms(v, &x))
		return dflt;
	return x;
}

bool floe_metadata_property_bool(const floe_metadata *m, const char *key, bool dflt)
{
	const char *v = floe_metadata_property(m, key);
	if (!v)
		return dflt;
	if (floe_str_ieq(v, "true"))
		return true;
	if (floe_str_ieq(v, "false"))
		return false;
	return dflt;
}

const char *floe_snapshot_summary(const floe_snapshot *s, const char *key)
{
	for (size_t i = 0; i < s->n_summary; i++)
		if (strcmp(s->summary[i].key, key) == 0)
			return s->summary[i].value;
	return NULL;
}

const floe_schema *floe_snapshot_schema(const floe_metadata *m, const floe_snapshot *s)
{
	const floe_schema *sc = NULL;
	if (s && s->schema_id >= 0)
		sc = floe_metadata_schema(m, s->schema_id);
	return sc ? sc : floe_metadata_current_schema(m);
}

/* ---- writing ------------------------------------------------------------------ */

static void write_snapshot(floe_jw *w, const floe_snapshot *s, int fv)
{
	if (s->json && !w->indent) {
		floe_jw_raw(w, s->json, s->json_len);
		return;
	}
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "snapshot-id", s->snapshot_id);
	if (s->parent_id != FLOE_NO_SNAPSHOT)
		floe_jw_kv_i64(w, "parent-snapshot-id", s->parent_id);
	if (fv >= 2 && s->sequence_number > 0)
		floe_jw_kv_i64(w, "sequence-number", s->sequence_number);
	floe_jw_kv_i64(w, "timestamp-ms", s->timestamp_ms);
	if (s->n_summary) {
		floe_jw_key(w, "summary");
		floe_jw_obj_begin(w);
		const char *op = floe_snapshot_summary(s, "operation");
		if (op)
			floe_jw_kv_str(w, "operation", op);
		for (size_t i = 0; i < s->n_summary; i++)
			if (strcmp(s->summary[i].key, "operation") != 0)
				floe_jw_kv_str(w, s->summary[i].key, s->summary[i].value);
		floe_jw_obj_end(w);
	}
	if (s->manifest_list) {
		floe_jw_kv_str(w, "manifest-list", s->manifest_list);
	} else {
		floe_jw_key(w, "manifests");
		floe_jw_arr_begin(w);
		for (size_t i = 0; i < s->n_v1_manifests; i++)
			floe_jw_str(w, s->v1_manifests[i]);
		floe_jw_arr_end(w);
	}
	if (s->schema_id >= 0)
		floe_jw_kv_i64(w, "schema-id", s->schema_id);
	if (fv >= 3) {
		if (s->first_row_id >= 0)
			floe_jw_kv_i64(w, "first-row-id", s->first_row_id);
		if (s->added_rows >= 0)
			floe_jw_kv_i64(w, "added-rows", s->added_rows);
	}
	if (s->key_id)
		floe_jw_kv_str(w, "key-id", s->key_id);
	floe_jw_obj_end(w);
}

static void write_json_list(floe_jw *w, const char *key, floe_json *const *items, size_t n)
{
	floe_jw_key(w, key);
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < n; i++)
		floe_jw_value(w, items[i]);
	floe_jw_arr_end(w);
}

int floe_metadata_write(floe_buf *out, const floe_metadata *m, int indent)
{
	floe_jw jw, *w = &jw;
	int fv = m->format_version;
	const floe_schema *cur = floe_metadata_current_schema(m);
	const floe_partition_spec *dspec = floe_metadata_default_spec(m);

	floe_jw_init(w, out, indent);
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "format-version", fv);
	if (m->table_uuid)
		floe_jw_kv_str(w, "table-uuid", m->table_uuid);
	floe_jw_kv_str(w, "location", m->location);
	if (fv >= 2)
		floe_jw_kv_i64(w, "last-sequence-number", m->last_sequence_number);
	floe_jw_kv_i64(w, "last-updated-ms", m->last_updated_ms);
	floe_jw_kv_i64(w, "last-column-id", m->last_column_id);
	if (fv == 1 && cur) {
		floe_jw_key(w, "schema");
		floe_schema_write_json(w, cur);
	}
	floe_jw_kv_i64(w, "current-schema-id", m->current_schema_id);
	floe_jw_key(w, "schemas");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_schemas; i++)
		floe_schema_write_json(w, m->schemas[i]);
	floe_jw_arr_end(w);
	if (fv == 1 && dspec) {
		floe_jw_key(w, "partition-spec");
		floe_spec_write_fields_json(w, dspec);
	}
	floe_jw_kv_i64(w, "default-spec-id", m->default_spec_id);
	floe_jw_key(w, "partition-specs");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_specs; i++)
		floe_spec_write_json(w, m->specs[i]);
	floe_jw_arr_end(w);
	floe_jw_kv_i64(w, "last-partition-id", m->last_partition_id);
	floe_jw_kv_i64(w, "default-sort-order-id", m->default_sort_order_id);
	floe_jw_key(w, "sort-orders");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_sort_orders; i++)
		floe_sort_order_write_json(w, m->sort_orders[i]);
	floe_jw_arr_end(w);
	floe_jw_key(w, "properties");
	floe_jw_obj_begin(w);
	for (size_t i = 0; i < m->n_properties; i++)
		floe_jw_kv_str(w, m->properties[i].key, m->properties[i].value);
	floe_jw_obj_end(w);
	floe_jw_key(w, "current-snapshot-id");
	if (m->current_snapshot_id != FLOE_NO_SNAPSHOT)
		floe_jw_i64(w, m->current_snapshot_id);
	else if (fv >= 3)
		floe_jw_null(w);
	else
		floe_jw_i64(w, -1);
	if (fv >= 3)
		floe_jw_kv_i64(w, "next-row-id", m->next_row_id);
	if (m->n_encryption_keys)
		write_json_list(w, "encryption-keys", m->encryption_keys, m->n_encryption_keys);
	floe_jw_key(w, "refs");
	floe_jw_obj_begin(w);
	for (size_t i = 0; i < m->n_refs; i++) {
		const floe_snapshot_ref *r = &m->refs[i];
		floe_jw_key(w, r->name);
		floe_jw_obj_begin(w);
		floe_jw_kv_i64(w, "snapshot-id", r->snapshot_id);
		floe_jw_kv_str(w, "type", r->is_tag ? "tag" : "branch");
		if (r->min_snapshots_to_keep >= 0)
			floe_jw_kv_i64(w, "min-snapshots-to-keep", r->min_snapshots_to_keep);
		if (r->max_snapshot_age_ms >= 0)
			floe_jw_kv_i64(w, "max-snapshot-age-ms", r->max_snapshot_age_ms);
		if (r->max_ref_age_ms >= 0)
			floe_jw_kv_i64(w, "max-ref-age-ms", r->max_ref_age_ms);
		floe_jw_obj_end(w);
	}
	floe_jw_obj_end(w);
	floe_jw_key(w, "snapshots");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_snapshots; i++)
		write_snapshot(w, &m->snapshots[i], fv);
	floe_jw_arr_end(w);
	write_json_list(w, "statistics", m->statistics, m->n_statistics);
	write_json_list(w, "partition-statistics", m->partition_statistics,
			m->n_partition_statistics);
	floe_jw_key(w, "snapshot-log");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_snapshot_log; i++) {
		floe_jw_obj_begin(w);
		floe_jw_kv_i64(w, "timestamp-ms", m->snapshot_log[i].timestamp_ms);
		floe_jw_kv_i64(w, "snapshot-id", m->snapshot_log[i].snapshot_id);
		floe_jw_obj_end(w);
	}
	floe_jw_arr_end(w);
	floe_jw_key(w, "metadata-log");
	floe_jw_arr_begin(w);
	for (size_t i = 0; i < m->n_metadata_log; i++) {
		floe_jw_obj_begin(w);
		floe_jw_kv_i64(w, "timestamp-ms", m->metadata_log[i].timestamp_ms);
		floe_jw_kv_str(w, "metadata-file", m->metadata_log[i].metadata_file);
		floe_jw_obj_end(w);
	}
	floe_jw_arr_end(w);
	floe_jw_obj_end(w);
	return floe_jw_finish(w);
}

int64_t floe_new_snapshot_id(void)
{
	uint8_t u[16];
	uint64_t hi = 0, lo = 0;
	floe_uuid_v4(u);
	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | u[i];
		lo = lo << 8 | u[8 + i];
	}
	int64_t id = (int64_t)((hi ^ lo) & (uint64_t)INT64_MAX);
	return id ? id : 1;
}
