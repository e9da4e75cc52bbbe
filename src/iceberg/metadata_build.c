/*
 * metadata_build.c — building new table metadata versions: new tables and
 * updates (the REST TableUpdate actions) applied to a base.
 *
 * DESIGN: a builder starts from a deep copy of its base (serialised and
 * parsed again, which also re-validates it) and edits that copy in place; the
 * arrays it grows are re-allocated in the metadata's arena (metadata is small
 * and updates are few per commit).
 */
#include "iceberg/metadata.h"

#include <string.h>

#include "util/rand.h"
#include "util/timeutil.h"

struct floe_metadata_builder {
	floe_metadata *m;
	int32_t last_added_schema_id;
	int32_t last_added_spec_id;
	int32_t last_added_order_id;
};

#define GROW(m, arr, n, T)                                                                    \
	do {                                                                                  \
		T *grown_ = floe_arena_calloc(&(m)->arena, (n) + 1, sizeof(T));               \
		if (!grown_)                                                                  \
			return floe_error_oom(err);             \
		if (n)                                                                        \
			memcpy(grown_, (arr), (n) * sizeof(T));                               \
		(arr) = grown_;                                                               \
	} while (0)

static const char *const RESERVED_PROPS[] = {"format-version",	    "uuid",
					     "snapshot-count",	    "current-snapshot-summary",
					     "current-snapshot-id", "current-snapshot-timestamp-ms"};

static bool is_reserved(const char *k)
{
	for (size_t i = 0; i < sizeof(RESERVED_PROPS) / sizeof(RESERVED_PROPS[0]); i++)
		if (strcmp(k, RESERVED_PROPS[i]) == 0)
			return true;
	return false;
}

void floe_metadata_builder_free(floe_metadata_builder *b)
{
	if (!b)
		return;
	floe_metadata_free(b->m);
	floe_free(b);
}

const floe_metadata *floe_metadata_builder_peek(const floe_metadata_builder *b)
{
	return b->m;
}

floe_arena *floe_metadata_builder_arena(floe_metadata_builder *b)
{
	return &b->m->arena;
}

static floe_metadata_builder *builder_alloc(void)
{
	floe_metadata_builder *b = floe_calloc(1, sizeof(*b));
	if (b) {
		b->last_added_schema_id = -1;
		b->last_added_spec_id = -1;
		b->last_added_order_id = -1;
	}
	return b;
}

static int copy_snapshot(floe_arena *a, floe_snapshot *dst, const floe_snapshot *s);

static const char *dup_str(floe_arena *a, const char *s, bool *oom)
{
	if (!s)
		return NULL;
	const char *d = floe_arena_strdup(a, s);
	if (!d)
		*oom = true;
	return d;
}

/* floe_json_copy of each of n trees into a's array *dst. */
static bool copy_json_list(floe_arena *a, floe_json ***dst, floe_json *const *src, size_t n)
{
	if (!n) {
		*dst = NULL;
		return true;
	}
	if (!(*dst = floe_arena_calloc(a, n, sizeof(floe_json *))))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((*dst)[i] = floe_json_copy(a, src[i])))
			return false;
	return true;
}

/*
 * A deep copy of m in an arena of its own: a structural copy (one pass, no
 * serialising and parsing) so that building a new version costs a fraction
 * of reading the old one (bench/commit).
 */
static int metadata_copy(floe_metadata **out, const floe_metadata *m)
{
	floe_arena a;
	/* big enough chunks for the snapshot strings of a long history */
	size_t chunk = 65536 + m->n_snapshots * 512;
	if (chunk > ((size_t)8 << 20))
		chunk = (size_t)8 << 20;
	floe_arena_init(&a, chunk);
	floe_metadata *c = floe_arena_calloc(&a, 1, sizeof(*c));
	bool oom = !c;
	if (oom)
		goto fail;
	*c = *m;
	c->metadata_location = NULL;
	c->table_uuid = dup_str(&a, m->table_uuid, &oom);
	c->location = dup_str(&a, m->location, &oom);
	c->schemas = floe_arena_calloc(&a, m->n_schemas + 1, sizeof(floe_schema *));
	c->specs = floe_arena_calloc(&a, m->n_specs + 1, sizeof(floe_partition_spec *));
	c->sort_orders = floe_arena_calloc(&a, m->n_sort_orders + 1, sizeof(floe_sort_order *));
	c->properties = floe_arena_calloc(&a, m->n_properties + 1, sizeof(floe_kv));
	c->snapshots = floe_arena_calloc(&a, m->n_snapshots + 1, sizeof(floe_snapshot));
	c->refs = floe_arena_calloc(&a, m->n_refs + 1, sizeof(floe_snapshot_ref));
	/* n + 1 entries, of which the source has n (its array may end there) */
	c->snapshot_log = floe_arena_calloc(&a, m->n_snapshot_log + 1,
					    sizeof(floe_snapshot_log_entry));
	if (c->snapshot_log && m->n_snapshot_log)
		memcpy(c->snapshot_log, m->snapshot_log,
		       m->n_snapshot_log * sizeof(floe_snapshot_log_entry));
	c->metadata_log = floe_arena_calloc(&a, m->n_metadata_log + 1,
					    sizeof(floe_metadata_log_entry));
	if (!c->schemas || !c->specs || !c->sort_orders || !c->properties || !c->snapshots ||
	    !c->refs || !c->snapshot_log || !c->metadata_log) {
		oom = true;
		goto fail;
	}
	for (size_t i = 0; i < m->n_schemas && !oom; i++)
		oom = !(c->schemas[i] = floe_schema_copy(&a, m->schemas[i]));
	for (size_t i = 0; i < m->n_specs && !oom; i++)
		oom = !(c->specs[i] = floe_spec_copy(&a, m->specs[i]));
	for (size_t i = 0; i < m->n_sort_orders && !oom; i++)
		oom = !(c->sort_orders[i] = floe_sort_order_copy(&a, m->sort_orders[i]));
	for (size_t i = 0; i < m->n_properties && !oom; i++) {
		c->properties[i].key = dup_str(&a, m->properties[i].key, &oom);
		c->properties[i].value = dup_str(&a, m->properties[i].value, &oom);
	}
	for (size_t i = 0; i < m->n_snapshots && !oom; i++)
		oom = copy_snapshot(&a, &c->snapshots[i], &m->snapshots[i]) != FLOE_OK;
	for (size_t i = 0; i < m->n_refs && !oom; i++) {
		c->refs[i] = m->refs[i];
		c->refs[i].name = dup_str(&a, m->refs[i].name, &oom);
	}
	for (size_t i = 0; i < m->n_metadata_log && !oom; i++) {
		c->metadata_log[i] = m->metadata_log[i];
		c->metadata_log[i].metadata_file = dup_str(&a, m->metadata_log[i].metadata_file, &oom);
	}
	if (!oom)
		oom = !copy_json_list(&a, &c->statistics, m->statistics, m->n_statistics) ||
		      !copy_json_list(&a, &c->partition_statistics, m->partition_statistics,
				      m->n_partition_statistics) ||
		      !copy_json_list(&a, &c->encryption_keys, m->encryption_keys,
				      m->n_encryption_keys);
	if (oom)
		goto fail;
	c->arena = a;
	*out = c;
	return FLOE_OK;
fail:
	floe_arena_reset(&a);
	return FLOE_ENOMEM;
}

int floe_metadata_builder_from(floe_metadata_builder **out, const floe_metadata *base,
			       floe_error *err)
{
	floe_metadata_builder *b = builder_alloc();
	if (!b)
		return floe_error_oom(err);
	if (metadata_copy(&b->m, base)) {
		floe_free(b);
		return floe_error_oomf(err, "copying table metadata: out of memory");
	}
	*out = b;
	return FLOE_OK;
}

/* Map each source field of spec/order from the old schema to the new one by
 * name (ids change when a schema gets fresh ids). */
static int rebind_source(int32_t *id, const floe_schema *from, const floe_schema *to,
			 floe_error *err)
{
	const floe_schema_entry *e = floe_schema_find(from, *id);
	const floe_schema_entry *n;
	if (!e)
		return floe_error_set(err, FLOE_EINVAL, "source field %d is not in the schema", *id);
	n = floe_schema_find_name(to, e->full_name, false);
	if (!n)
		return floe_error_set(err, FLOE_EINVAL, "source field '%s' was lost", e->full_name);
	*id = n->id;
	return FLOE_OK;
}

int floe_metadata_builder_new_table(floe_metadata_builder **out, int format_version,
				    const char *location, const char *uuid,
				    const floe_schema *schema, const floe_partition_spec *spec,
				    const floe_sort_order *order, const floe_strmap *properties,
				    floe_error *err)
{
	floe_metadata_builder *b;
	floe_metadata *m;
	floe_arena a;
	floe_arena *ar;
	int32_t last_id = 0;
	int rc;
	char ubuf[37];

	if (format_version < 1 || format_version > FLOE_FORMAT_VERSION_MAX)
		return floe_error_set(err, FLOE_EINVAL, "format-version must be 1, 2 or 3, not %d",
				      format_version);
	if (!location || !*location)
		return floe_error_set(err, FLOE_EINVAL, "a table needs a location");
	b = builder_alloc();
	if (!b)
		return floe_error_oom(err);
	floe_arena_init(&a, 64 * 1024);
	m = floe_arena_calloc(&a, 1, sizeof(*m));
	if (!m) {
		floe_arena_reset(&a);
		floe_free(b);
		return floe_error_oom(err);
	}
	m->arena = a;
	b->m = m;
	ar = &m->arena;

	m->format_version = format_version;
	if (!uuid) {
		floe_uuid_v4_str(ubuf);
		uuid = ubuf;
	}
	m->table_uuid = floe_arena_strdup(ar, uuid);
	m->location = floe_arena_strdup(ar, location);
	/* strip a trailing slash, as Java does */
	if (m->location) {
		size_t n = strlen(m->location);
		while (n > 1 && m->location[n - 1] == '/')
			((char *)m->location)[--n] = '\0';
	}
	m->current_snapshot_id = FLOE_NO_SNAPSHOT;

	floe_schema *fresh;
	if ((rc = floe_schema_assign_fresh_ids(&fresh, ar, schema, 0, &last_id, err)))
		goto fail;
	if (floe_type_min_format_version(fresh->root) > format_version) {
		rc = floe_error_set(err, FLOE_EINVAL,
				    "the schema uses types that need format version %d",
				    floe_type_min_format_version(fresh->root));
		goto fail;
	}
	m->last_column_id = last_id;
	m->schemas = floe_arena_calloc(ar, 1, sizeof(floe_schema *));
	if (!m->schemas)
		goto nomem;
	m->schemas[0] = fresh;
	m->n_schemas = 1;
	m->current_schema_id = 0;

	floe_partition_spec *ps = spec ? floe_spec_copy(ar, spec) : floe_arena_calloc(ar, 1, sizeof(*ps));
	if (!ps)
		goto nomem;
	ps->spec_id = 0;
	m->last_partition_id = FLOE_PARTITION_FIELD_ID_START - 1;
	for (size_t i = 0; i < ps->n_fields; i++) {
		if ((rc = rebind_source(&ps->fields[i].source_id, schema, fresh, err)))
			goto fail;
		ps->fields[i].field_id = ++m->last_partition_id;
		if (ps->fields[i].n_source_ids > 1) {
			rc = floe_error_set(err, FLOE_EUNSUPPORTED,
					    "multi-argument partition transforms are not supported");
			goto fail;
		}
	}
	if ((rc = floe_spec_validate(ps, fresh, err)))
		goto fail;
	m->specs = floe_arena_calloc(ar, 1, sizeof(floe_partition_spec *));
	if (!m->specs)
		goto nomem;
	m->specs[0] = ps;
	m->n_specs = 1;
	m->default_spec_id = 0;

	floe_sort_order *so = order ? floe_sort_order_copy(ar, order)
				    : floe_arena_calloc(ar, 1, sizeof(*so));
	if (!so)
		goto nomem;
	so->order_id = so->n_fields ? 1 : 0;
	for (size_t i = 0; i < so->n_fields; i++)
		if ((rc = rebind_source(&so->fields[i].source_id, schema, fresh, err)))
			goto fail;
	m->sort_orders = floe_arena_calloc(ar, 1, sizeof(floe_sort_order *));
	if (!m->sort_orders)
		goto nomem;
	m->sort_orders[0] = so;
	m->n_sort_orders = 1;
	m->default_sort_order_id = so->order_id;

	if (properties && properties->len) {
		m->properties = floe_arena_calloc(ar, properties->len, sizeof(floe_kv));
		if (!m->properties)
			goto nomem;
		for (size_t i = 0; i < properties->len; i++) {
			if (is_reserved(properties->items[i].key))
				continue;
			floe_kv *kv = &m->properties[m->n_properties++];
			kv->key = floe_arena_strdup(ar, properties->items[i].key);
			kv->value = floe_arena_strdup(ar, properties->items[i].value);
			if (!kv->key || !kv->value)
				goto nomem;
		}
	}
	m->last_updated_ms = floe_now_ms();
	*out = b;
	return FLOE_OK;
nomem:
	rc = floe_error_oom(err);
fail:
	floe_metadata_builder_free(b);
	return rc;
}

int floe_mb_set_properties(floe_metadata_builder *b, const floe_strmap *updates, floe_error *err)
{
	floe_metadata *m = b->m;
	for (size_t i = 0; i < updates->len; i++) {
		const char *k = updates->items[i].key, *v = updates->items[i].value;
		char *vc;
		if (is_reserved(k))
			continue;
		if (!(vc = floe_arena_strdup(&m->arena, v)))
			return floe_error_oom(err);
		size_t j;
		for (j = 0; j < m->n_properties; j++)
			if (strcmp(m->properties[j].key, k) == 0)
				break;
		if (j < m->n_properties) {
			m->properties[j].value = vc;
			continue;
		}
		GROW(m, m->properties, m->n_properties, floe_kv);
		m->properties[m->n_properties].key = floe_arena_strdup(&m->arena, k);
		m->properties[m->n_properties].value = vc;
		if (!m->properties[m->n_properties].key)
			return floe_error_oom(err);
		m->n_properties++;
	}
	return FLOE_OK;
}

int floe_mb_remove_properties(floe_metadata_builder *b, const char *const *keys, size_t n,
			      floe_error *err)
{
	floe_metadata *m = b->m;
	(void)err;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m->n_properties; j++)
			if (strcmp(m->properties[j].key, keys[i]) == 0) {
				memmove(&m->properties[j], &m->properties[j + 1],
					(m->n_properties - j - 1) * sizeof(floe_kv));
				m->n_properties--;
				break;
			}
	return FLOE_OK;
}

int floe_mb_upgrade_format_version(floe_metadata_builder *b, int version, floe_error *err)
{
	floe_metadata *m = b->m;
	if (version < m->format_version)
		return floe_error_set(err, FLOE_EINVAL, "cannot downgrade format version %d to %d",
				      m->format_version, version);
	if (version > FLOE_FORMAT_VERSION_MAX)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "format version %d is not supported",
				      version);
	if (version > m->format_version && !m->table_uuid) {
		char u[37];
		floe_uuid_v4_str(u);
		m->table_uuid = floe_arena_strdup(&m->arena, u);
	}
	if (m->format_version < 3 && version >= 3)
		m->next_row_id = 0;
	m->format_version = version;
	return FLOE_OK;
}

int floe_mb_add_schema(floe_metadata_builder *b, const floe_schema *s, int32_t *out_id,
		       floe_error *err)
{
	floe_metadata *m = b->m;
	int32_t new_id = 0;
	for (size_t i = 0; i < m->n_schemas; i++) {
		if (floe_schema_same_structure(m->schemas[i], s)) {
			*out_id = m->schemas[i]->schema_id;
			return FLOE_OK;
		}
		if (m->schemas[i]->schema_id >= new_id)
			new_id = m->schemas[i]->schema_id + 1;
	}
	if (floe_type_min_format_version(s->root) > m->format_version)
		return floe_error_set(err, FLOE_EINVAL,
				      "the schema needs format version %d (table is version %d)",
				      floe_type_min_format_version(s->root), m->format_version);
	floe_schema *c = floe_schema_copy(&m->arena, s);
	if (!c)
		return floe_error_oom(err);
	c->schema_id = new_id;
	GROW(m, m->schemas, m->n_schemas, floe_schema *);
	m->schemas[m->n_schemas++] = c;
	if (c->highest_field_id > m->last_column_id)
		m->last_column_id = c->highest_field_id;
	b->last_added_schema_id = new_id;
	*out_id = new_id;
	return FLOE_OK;
}

int floe_mb_set_current_schema(floe_metadata_builder *b, int32_t schema_id, floe_error *err)
{
	if (schema_id == -1)
		schema_id = b->last_added_schema_id;
	if (!floe_metadata_schema(b->m, schema_id))
		return floe_error_set(err, FLOE_EINVAL, "schema %d does not exist", schema_id);
	b->m->current_schema_id = schema_id;
	return FLOE_OK;
}

int floe_mb_add_spec(floe_metadata_builder *b, const floe_partition_spec *s, int32_t *out_id,
		     floe_error *err)
{
	floe_metadata *m = b->m;
	int32_t new_id = 0;
	int rc;
	for (size_t i = 0; i < m->n_specs; i++) {
		if (floe_spec_equivalent(m->specs[i], s)) {
			*out_id = m->specs[i]->spec_id;
			return FLOE_OK;
		}
		if (m->specs[i]->spec_id >= new_id)
			new_id = m->specs[i]->spec_id + 1;
	}
	if ((rc = floe_spec_validate(s, floe_metadata_current_schema(m), err)))
		return rc;
	floe_partition_spec *c = floe_spec_copy(&m->arena, s);
	if (!c)
		return floe_error_oom(err);
	c->spec_id = new_id;
	GROW(m, m->specs, m->n_specs, floe_partition_spec *);
	m->specs[m->n_specs++] = c;
	int32_t mx = floe_spec_max_field_id(c);
	if (mx > m->last_partition_id)
		m->last_partition_id = mx;
	b->last_added_spec_id = new_id;
	*out_id = new_id;
	return FLOE_OK;
}

int floe_mb_set_default_spec(floe_metadata_builder *b, int32_t spec_id, floe_error *err)
{
	if (spec_id == -1)
		spec_id = b->last_added_spec_id;
	if (!floe_metadata_spec(b->m, spec_id))
		return floe_error_set(err, FLOE_EINVAL, "partition spec %d does not exist", spec_id);
	b->m->default_spec_id = spec_id;
	return FLOE_OK;
}

int floe_mb_add_sort_order(floe_metadata_builder *b, const floe_sort_order *o, int32_t *out_id,
			   floe_error *err)
{
	floe_metadata *m = b->m;
	int32_t new_id = 1;
	for (size_t i = 0; i < m->n_sort_orders; i++) {
		if (floe_sort_order_equivalent(m->sort_orders[i], o)) {
			*out_id = m->sort_orders[i]->order_id;
			return FLOE_OK;
		}
		if (m->sort_orders[i]->order_id >= new_id)
			new_id = m->sort_orders[i]->order_id + 1;
	}
	if (o->n_fields == 0)
		new_id = 0;
	floe_sort_order *c = floe_sort_order_copy(&m->arena, o);
	if (!c)
		return floe_error_oom(err);
	c->order_id = new_id;
	GROW(m, m->sort_orders, m->n_sort_orders, floe_sort_order *);
	m->sort_orders[m->n_sort_orders++] = c;
	b->last_added_order_id = new_id;
	*out_id = new_id;
	return FLOE_OK;
}

int floe_mb_set_default_sort_order(floe_metadata_builder *b, int32_t order_id, floe_error *err)
{
	if (order_id == -1)
		order_id = b->last_added_order_id;
	if (!floe_metadata_sort_order(b->m, order_id))
		return floe_error_set(err, FLOE_EINVAL, "sort order %d does not exist", order_id);
	b->m->default_sort_order_id = order_id;
	return FLOE_OK;
}

static int copy_snapshot(floe_arena *a, floe_snapshot *dst, const floe_snapshot *s)
{
	*dst = *s;
	if (s->json && !(dst->json = floe_arena_memdup(a, s->json, s->json_len)))
		return FLOE_ENOMEM;
	if (s->manifest_list && !(dst->manifest_list = floe_arena_strdup(a, s->manifest_list)))
		return FLOE_ENOMEM;
	if (s->key_id && !(dst->key_id = floe_arena_strdup(a, s->key_id)))
		return FLOE_ENOMEM;
	if (s->n_v1_manifests) {
		dst->v1_manifests = floe_arena_calloc(a, s->n_v1_manifests, sizeof(char *));
		if (!dst->v1_manifests)
			return FLOE_ENOMEM;
		for (size_t i = 0; i < s->n_v1_manifests; i++)
			if (!(dst->v1_manifests[i] = floe_arena_strdup(a, s->v1_manifests[i])))
				return FLOE_ENOMEM;
	}
	dst->summary = floe_arena_calloc(a, s->n_summary ? s->n_summary : 1, sizeof(floe_kv));
	if (!dst->summary)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < s->n_summary; i++) {
		dst->summary[i].key = floe_arena_strdup(a, s->summary[i].key);
		dst->summary[i].value = floe_arena_strdup(a, s->summary[i].value);
		if (!dst->summary[i].key || !dst->summary[i].value)
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_mb_add_snapshot(floe_metadata_builder *b, const floe_snapshot *s, floe_error *err)
{
	floe_metadata *m = b->m;
	if (floe_metadata_snapshot(m, s->snapshot_id))
		return floe_error_set(err, FLOE_ECONFLICT, "snapshot %lld already exists",
				      (long long)s->snapshot_id);
	if (m->format_version >= 2 && s->sequence_number <= m->last_sequence_number &&
	    s->parent_id != FLOE_NO_SNAPSHOT)
		return floe_error_set(err, FLOE_ECONFLICT,
				      "snapshot sequence number %lld is not above the table's %lld",
				      (long long)s->sequence_number,
				      (long long)m->last_sequence_number);
	if (m->format_version == 1 && s->sequence_number != 0)
		return floe_error_set(err, FLOE_EINVAL, "format version 1 has no sequence numbers");
	GROW(m, m->snapshots, m->n_snapshots, floe_snapshot);
	floe_snapshot fresh = *s;
	fresh.json = NULL; /* a new snapshot is serialised from its fields (a caller may
			      have made it from a copy of another) */
	fresh.json_len = 0;
	if (copy_snapshot(&m->arena, &m->snapshots[m->n_snapshots], &fresh))
		return floe_error_oom(err);
	m->n_snapshots++;
	if (s->sequence_number > m->last_sequence_number)
		m->last_sequence_number = s->sequence_number;
	if (s->timestamp_ms > m->last_updated_ms)
		m->last_updated_ms = s->timestamp_ms;
	return FLOE_OK;
}

int floe_mb_set_ref(floe_metadata_builder *b, const floe_snapshot_ref *ref, floe_error *err)
{
	floe_metadata *m = b->m;
	const floe_snapshot *snap = floe_metadata_snapshot(m, ref->snapshot_id);
	size_t i;
	if (!snap)
		return floe_error_set(err, FLOE_EINVAL, "ref '%s': snapshot %lld does not exist",
				      ref->name, (long long)ref->snapshot_id);
	if (strcmp(ref->name, "main") == 0 && ref->is_tag)
		return floe_error_set(err, FLOE_EINVAL, "'main' must be a branch");
	for (i = 0; i < m->n_refs; i++)
		if (strcmp(m->refs[i].name, ref->name) == 0)
			break;
	if (i == m->n_refs) {
		GROW(m, m->refs, m->n_refs, floe_snapshot_ref);
		m->n_refs++;
	}
	m->refs[i] = *ref;
	m->refs[i].name = floe_arena_strdup(&m->arena, ref->name);
	if (!m->refs[i].name)
		return floe_error_oom(err);
	if (strcmp(ref->name, "main") == 0 && m->current_snapshot_id != ref->snapshot_id) {
		m->current_snapshot_id = ref->snapshot_id;
		GROW(m, m->snapshot_log, m->n_snapshot_log, floe_snapshot_log_entry);
		/* sorted, as Java requires of the log: a branch published later can
		 * hold snapshots older than main's last entry */
		int64_t ts = snap->timestamp_ms;
		if (m->n_snapshot_log && m->snapshot_log[m->n_snapshot_log - 1].timestamp_ms > ts)
			ts = m->snapshot_log[m->n_snapshot_log - 1].timestamp_ms;
		m->snapshot_log[m->n_snapshot_log].timestamp_ms = ts;
		m->snapshot_log[m->n_snapshot_log].snapshot_id = snap->snapshot_id;
		m->n_snapshot_log++;
	}
	return FLOE_OK;
}

int floe_mb_remove_ref(floe_metadata_builder *b, const char *name, floe_error *err)
{
	floe_metadata *m = b->m;
	(void)err;
	for (size_t i = 0; i < m->n_refs; i++)
		if (strcmp(m->refs[i].name, name) == 0) {
			memmove(&m->refs[i], &m->refs[i + 1],
				(m->n_refs - i - 1) * sizeof(floe_snapshot_ref));
			m->n_refs--;
			if (strcmp(name, "main") == 0)
				m->current_snapshot_id = FLOE_NO_SNAPSHOT;
			return FLOE_OK;
		}
	return FLOE_OK;
}

int floe_mb_remove_snapshots(floe_metadata_builder *b, const int64_t *ids, size_t n,
			     floe_error *err)
{
	floe_metadata *m = b->m;
	size_t w = 0;
	(void)err;
	for (size_t i = 0; i < m->n_snapshots; i++) {
		bool drop = false;
		for (size_t k = 0; k < n; k++)
			if (ids[k] == m->snapshots[i].snapshot_id)
				drop = true;
		if (!drop)
			m->snapshots[w++] = m->snapshots[i];
	}
	m->n_snapshots = w;
	/* refs to removed snapshots go too */
	w = 0;
	for (size_t i = 0; i < m->n_refs; i++)
		if (floe_metadata_snapshot(m, m->refs[i].snapshot_id))
			m->refs[w++] = m->refs[i];
		else if (strcmp(m->refs[i].name, "main") == 0)
			m->current_snapshot_id = FLOE_NO_SNAPSHOT;
	m->n_refs = w;
	/* snapshot log: drop every entry up to the last one naming a removed snapshot */
	size_t keep_from = 0;
	for (size_t i = 0; i < m->n_snapshot_log; i++)
		if (!floe_metadata_snapshot(m, m->snapshot_log[i].snapshot_id))
			keep_from = i + 1;
	if (keep_from) {
		memmove(m->snapshot_log, m->snapshot_log + keep_from,
			(m->n_snapshot_log - keep_from) * sizeof(floe_snapshot_log_entry));
		m->n_snapshot_log -= keep_from;
	}
	/* statistics of removed snapshots */
	w = 0;
	for (size_t i = 0; i < m->n_statistics; i++) {
		int64_t sid;
		if (floe_json_get_i64(m->statistics[i], "snapshot-id", &sid, NULL, NULL) == 0 &&
		    !floe_metadata_snapshot(m, sid))
			continue;
		m->statistics[w++] = m->statistics[i];
	}
	m->n_statistics = w;
	w = 0;
	for (size_t i = 0; i < m->n_partition_statistics; i++) {
		int64_t sid;
		if (floe_json_get_i64(m->partition_statistics[i], "snapshot-id", &sid, NULL, NULL) ==
			    0 &&
		    !floe_metadata_snapshot(m, sid))
			continue;
		m->partition_statistics[w++] = m->partition_statistics[i];
	}
	m->n_partition_statistics = w;
	return FLOE_OK;
}

int floe_mb_set_location(floe_metadata_builder *b, const char *location, floe_error *err)
{
	const char *l = floe_arena_strdup(&b->m->arena, location);
	if (!l)
		return floe_error_oom(err);
	b->m->location = l;
	return FLOE_OK;
}

void floe_mb_set_next_row_id(floe_metadata_builder *b, int64_t next_row_id)
{
	b->m->next_row_id = next_row_id;
}

int floe_metadata_builder_finish(floe_metadata **out, floe_metadata_builder *b,
				 const char *previous_location, int64_t previous_updated_ms,
				 floe_error *err)
{
	floe_metadata *m = b->m;
	int64_t now = floe_now_ms();
	if (now > m->last_updated_ms)
		m->last_updated_ms = now;
	if (previous_location) {
		int64_t maxv = floe_metadata_property_i64(m, "write.metadata.previous-versions-max",
							  100);
		if (maxv < 1)
			maxv = 1;
		GROW(m, m->metadata_log, m->n_metadata_log, floe_metadata_log_entry);
		m->metadata_log[m->n_metadata_log].timestamp_ms = previous_updated_ms;
		m->metadata_log[m->n_metadata_log].metadata_file =
			floe_arena_strdup(&m->arena, previous_location);
		if (!m->metadata_log[m->n_metadata_log].metadata_file)
			return floe_error_oom(err);
		m->n_metadata_log++;
		if (m->n_metadata_log > (size_t)maxv) {
			size_t drop = m->n_metadata_log - (size_t)maxv;
			memmove(m->metadata_log, m->metadata_log + drop,
				(size_t)maxv * sizeof(floe_metadata_log_entry));
			m->n_metadata_log = (size_t)maxv;
		}
	}
	*out = m;
	b->m = NULL;
	floe_free(b);
	return FLOE_OK;
}
