/*
 * manifest_scan.c — the fast manifest entry reader (see manifest_scan.h).
 *
 * DESIGN: the writer schema of each manifest is compiled once into "steps":
 * one per field of manifest_entry, data_file and the partition record, each
 * naming the slot it fills (or none: skip) and the field's Avro schema.
 * Unions are resolved per value from the branch index, so ["null", T], T and
 * BigQuery's nullable records all work without special plans. Values are
 * read straight from the decompressed block with inline varint decoding;
 * strings are borrowed from the block (copied only for the NUL-terminated
 * path fields into reusable scratch buffers); metric maps are walked in place
 * and only the wanted ids are kept. Per entry nothing is allocated.
 */
#include "iceberg/manifest_scan.h"

#include <string.h>

#include "avro/avro_datum.h"
#include "avro/avro_reader.h"
#include "util/str.h"
#include "util/timeutil.h"

enum slot {
	S_NONE = 0,
	S_STATUS,
	S_SNAPSHOT_ID,
	S_SEQ,
	S_FILE_SEQ,
	S_DATA_FILE,
	S_CONTENT,
	S_FILE_PATH,
	S_FILE_FORMAT,
	S_PARTITION,
	S_RECORD_COUNT,
	S_FILE_SIZE,
	S_COLUMN_SIZES,
	S_VALUE_COUNTS,
	S_NULL_COUNTS,
	S_NAN_COUNTS,
	S_LOWER,
	S_UPPER,
	S_KEY_METADATA,
	S_SPLIT_OFFSETS,
	S_EQUALITY_IDS,
	S_SORT_ORDER_ID,
	S_FIRST_ROW_ID,
	S_REF_FILE,
	S_CONTENT_OFFSET,
	S_CONTENT_SIZE,
};

static const struct {
	int32_t id;
	const char *name;
	uint8_t slot;
} ENTRY_FIELDS[] = {
	{0, "status", S_STATUS},
	{1, "snapshot_id", S_SNAPSHOT_ID},
	{3, "sequence_number", S_SEQ},
	{4, "file_sequence_number", S_FILE_SEQ},
	{2, "data_file", S_DATA_FILE},
};

static const struct {
	int32_t id;
	const char *name;
	uint8_t slot;
} FILE_FIELDS[] = {
	{134, "content", S_CONTENT},
	{100, "file_path", S_FILE_PATH},
	{101, "file_format", S_FILE_FORMAT},
	{102, "partition", S_PARTITION},
	{103, "record_count", S_RECORD_COUNT},
	{104, "file_size_in_bytes", S_FILE_SIZE},
	{108, "column_sizes", S_COLUMN_SIZES},
	{109, "value_counts", S_VALUE_COUNTS},
	{110, "null_value_counts", S_NULL_COUNTS},
	{137, "nan_value_counts", S_NAN_COUNTS},
	{125, "lower_bounds", S_LOWER},
	{128, "upper_bounds", S_UPPER},
	{131, "key_metadata", S_KEY_METADATA},
	{132, "split_offsets", S_SPLIT_OFFSETS},
	{135, "equality_ids", S_EQUALITY_IDS},
	{140, "sort_order_id", S_SORT_ORDER_ID},
	{142, "first_row_id", S_FIRST_ROW_ID},
	{143, "referenced_data_file", S_REF_FILE},
	{144, "content_offset", S_CONTENT_OFFSET},
	{145, "content_size_in_bytes", S_CONTENT_SIZE},
};

/* A value's decode recipe, compiled from its schema once per manifest:
 * ["null", T] unions resolved to a null-branch index, T to a kind. */
enum { VK_OTHER = 0, VK_NULL, VK_BOOL, VK_VARINT, VK_F4, VK_F8, VK_BYTES, VK_FIXED };

typedef struct vk {
	uint8_t kind;
	int8_t nb, vb;    /* union: null branch and value branch; -1 = not a union */
	uint8_t type;     /* Avro type of the value */
	uint32_t size;    /* fixed */
	const floe_avro_schema *s;    /* the value's schema (logical types) */
	const floe_avro_schema *orig; /* as written (for the generic path) */
} vk;

/* A metric map (Java's array of {key, value} records), compiled. */
typedef struct mapk {
	bool ok;      /* the shape Iceberg writes; else the generic path */
	vk outer;     /* the array, maybe in a union */
	int8_t inb, ivb; /* item union null/value branch, -1 = none */
	uint8_t key_first;
	vk key, val;
} mapk;

typedef struct step {
	uint8_t slot;
	int32_t spec_pos; /* partition steps: index in the spec, -1 = skip */
	const floe_avro_schema *schema;
	const char *name;
	vk k;
	mapk m;
} step;

#define MAX_STEPS 64

/* growable (id, value) arrays reused across entries */
typedef struct longs {
	floe_id_long *v;
	size_t n, cap;
	bool present; /* the entry holds the map (not null); reset per entry */
} longs;
typedef struct byteses {
	floe_id_bytes *v;
	size_t n, cap;
	bool present;
} byteses;

typedef struct mscan {
	const floe_mscan_opts *o;
	const floe_manifest_file *mf;
	const floe_partition_spec *spec;
	const floe_schema *schema;
	step entry[MAX_STEPS];
	size_t n_entry;
	step file[MAX_STEPS];
	size_t n_file;
	step part[MAX_STEPS];
	size_t n_part;
	const floe_type *ptypes[MAX_STEPS]; /* result type per spec position */
	size_t n_spec;
	/* per-entry scratch */
	floe_manifest_entry e;
	floe_value pvals[MAX_STEPS];
	floe_buf path, ref, fmt;
	longs cs, vc, nc, nanc;
	byteses lo, up;
	int32_t *eq;
	size_t n_eq, cap_eq;
	int64_t *so;
	size_t n_so, cap_so;
	bool has[32];
	int64_t next_row_id;
	floe_error *err;
	const char *where; /* field being decoded, for messages */
} mscan;

/* ---- primitives ----------------------------------------------------------------------- */

/* zig-zag long; Java-compatible: bits past the 64th of a 10-byte varint are dropped */
static inline bool rd_long(floe_cursor *c, int64_t *v)
{
	const uint8_t *p = c->p + c->off;
	size_t left = c->n - c->off;
	uint64_t u;
	if (left && p[0] < 0x80) {
		u = p[0];
		c->off++;
	} else {
		size_t i = 0;
		u = 0;
		for (int shift = 0;; shift += 7) {
			if (i >= left || i >= 10)
				return false;
			uint8_t b = p[i++];
			u |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
		c->off += i;
	}
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

/* step over a varint (at most 10 bytes) */
static inline bool skip_varint(floe_cursor *c)
{
	const uint8_t *p = c->p + c->off;
	size_t left = c->n - c->off, i = 0;
	while (i < left && i < 10) {
		if (!(p[i++] & 0x80)) {
			c->off += i;
			return true;
		}
	}
	return false;
}

static inline bool rd_bytes(floe_cursor *c, const uint8_t **p, size_t *n)
{
	size_t save = c->off;
	int64_t len;
	if (!rd_long(c, &len))
		return false;
	if (len < 0 || (uint64_t)len > c->n - c->off) {
		c->off = save;
		return false;
	}
	*p = c->p + c->off;
	*n = (size_t)len;
	c->off += (size_t)len;
	return true;
}

/* a scalar read through any union */
typedef struct sval {
	bool null;
	floe_avro_type t;
	const floe_avro_schema *s; /* the branch schema */
	int64_t l;
	double d;
	const uint8_t *p;
	size_t n;
} sval;

static int corrupt(mscan *ms, floe_cursor *c, const char *what)
{
	return floe_error_corrupt(ms->err, "%s: at offset %zu: %s",
			      ms->where ? ms->where : "entry", c->off, what);
}

static int resolve_union(mscan *ms, floe_cursor *c, const floe_avro_schema **s)
{
	while (*s && (*s)->type == FLOE_AVRO_UNION) {
		int64_t b;
		if (!rd_long(c, &b) || b < 0 || (uint64_t)b >= (*s)->n_branches)
			return corrupt(ms, c, "bad union branch");
		*s = (*s)->branches[b];
	}
	return FLOE_OK;
}

static int read_val(mscan *ms, floe_cursor *c, const floe_avro_schema *s, sval *v)
{
	int rc;
	float f;
	double d;
	uint8_t b;
	v->null = false;
	v->l = 0;
	v->d = 0;
	v->p = NULL;
	v->n = 0;
	if ((rc = resolve_union(ms, c, &s)))
		return rc;
	v->s = s;
	v->t = s->type;
	switch (s->type) {
	case FLOE_AVRO_NULL: v->null = true; return FLOE_OK;
	case FLOE_AVRO_BOOLEAN:
		if (!floe_cursor_u8(c, &b) || b > 1)
			return corrupt(ms, c, "bad boolean");
		v->l = b;
		return FLOE_OK;
	case FLOE_AVRO_INT:
	case FLOE_AVRO_LONG:
	case FLOE_AVRO_ENUM:
		if (!rd_long(c, &v->l))
			return corrupt(ms, c, "bad varint");
		if (s->type == FLOE_AVRO_INT && (v->l < INT32_MIN || v->l > INT32_MAX))
			return corrupt(ms, c, "int out of range");
		return FLOE_OK;
	case FLOE_AVRO_FLOAT:
		if (c->n - c->off < 4)
			return corrupt(ms, c, "truncated float");
		memcpy(&f, c->p + c->off, 4);
		c->off += 4;
		v->d = f;
		return FLOE_OK;
	case FLOE_AVRO_DOUBLE:
		if (c->n - c->off < 8)
			return corrupt(ms, c, "truncated double");
		memcpy(&d, c->p + c->off, 8);
		c->off += 8;
		v->d = d;
		return FLOE_OK;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
		if (!rd_bytes(c, &v->p, &v->n))
			return corrupt(ms, c, "bad length or truncated string/bytes");
		return FLOE_OK;
	case FLOE_AVRO_FIXED:
		if (c->n - c->off < s->size)
			return corrupt(ms, c, "truncated fixed");
		v->p = c->p + c->off;
		v->n = s->size;
		c->off += s->size;
		return FLOE_OK;
	default:
		/* not a scalar: skip it */
		if ((rc = floe_avro_skip(c, s, ms->err)))
			return rc;
		v->null = true;
		return FLOE_OK;
	}
}

static vk compile_vk(const floe_avro_schema *s)
{
	vk k;
	memset(&k, 0, sizeof(k));
	k.nb = k.vb = -1;
	k.orig = s;
	const floe_avro_schema *v = s;
	if (s && s->type == FLOE_AVRO_UNION) {
		if (s->n_branches == 2 && (s->branches[0]->type == FLOE_AVRO_NULL) !=
					      (s->branches[1]->type == FLOE_AVRO_NULL)) {
			k.nb = s->branches[0]->type == FLOE_AVRO_NULL ? 0 : 1;
			k.vb = (int8_t)(1 - k.nb);
			v = s->branches[k.vb];
		} else {
			return k; /* VK_OTHER */
		}
	}
	if (!v)
		return k;
	k.s = v;
	k.type = (uint8_t)v->type;
	switch (v->type) {
	case FLOE_AVRO_NULL: k.kind = VK_NULL; break;
	case FLOE_AVRO_BOOLEAN: k.kind = VK_BOOL; break;
	case FLOE_AVRO_INT:
	case FLOE_AVRO_LONG:
	case FLOE_AVRO_ENUM: k.kind = VK_VARINT; break;
	case FLOE_AVRO_FLOAT: k.kind = VK_F4; break;
	case FLOE_AVRO_DOUBLE: k.kind = VK_F8; break;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING: k.kind = VK_BYTES; break;
	case FLOE_AVRO_FIXED:
		k.kind = VK_FIXED;
		k.size = (uint32_t)v->size;
		break;
	default: k.kind = VK_OTHER; break;
	}
	return k;
}

/* read one value by its compiled recipe (the generic reader for anything else) */
static inline int rd_fast(mscan *ms, floe_cursor *c, const vk *k, sval *v)
{
	if (k->kind == VK_OTHER)
		return read_val(ms, c, k->orig, v);
	v->null = false;
	v->s = k->s;
	v->t = (floe_avro_type)k->type;
	if (k->nb >= 0) {
		int64_t b;
		if (!rd_long(c, &b))
			return corrupt(ms, c, "bad union branch");
		if (b == k->nb) {
			v->null = true;
			v->t = FLOE_AVRO_NULL;
			return FLOE_OK;
		}
		if (b != k->vb)
			return corrupt(ms, c, "bad union branch");
	}
	switch (k->kind) {
	case VK_VARINT:
		if (!rd_long(c, &v->l))
			return corrupt(ms, c, "bad varint");
		if (k->type == FLOE_AVRO_INT && (v->l < INT32_MIN || v->l > INT32_MAX))
			return corrupt(ms, c, "int out of range");
		return FLOE_OK;
	case VK_BYTES:
		if (!rd_bytes(c, &v->p, &v->n))
			return corrupt(ms, c, "bad length or truncated string/bytes");
		return FLOE_OK;
	case VK_NULL: v->null = true; return FLOE_OK;
	case VK_BOOL: {
		uint8_t b;
		if (!floe_cursor_u8(c, &b) || b > 1)
			return corrupt(ms, c, "bad boolean");
		v->l = b;
		return FLOE_OK;
	}
	case VK_F4: {
		float f;
		if (c->n - c->off < 4)
			return corrupt(ms, c, "truncated float");
		memcpy(&f, c->p + c->off, 4);
		c->off += 4;
		v->d = f;
		return FLOE_OK;
	}
	case VK_F8:
		if (c->n - c->off < 8)
			return corrupt(ms, c, "truncated double");
		memcpy(&v->d, c->p + c->off, 8);
		c->off += 8;
		return FLOE_OK;
	case VK_FIXED:
		if (c->n - c->off < k->size)
			return corrupt(ms, c, "truncated fixed");
		v->p = c->p + c->off;
		v->n = k->size;
		c->off += k->size;
		return FLOE_OK;
	default: return read_val(ms, c, k->orig, v);
	}
}

static bool is_int_like(const sval *v)
{
	return !v->null && (v->t == FLOE_AVRO_INT || v->t == FLOE_AVRO_LONG);
}

static const floe_avro_schema *nonnull(const floe_avro_schema *s);

/* ---- metric maps and arrays -------------------------------------------------------------- */

static bool wanted(const mscan *ms, int32_t id)
{
	if (ms->o->all_metrics)
		return true;
	for (size_t i = 0; i < ms->o->n_metric_ids; i++)
		if (ms->o->metric_ids[i] == id)
			return true;
	return false;
}

static int grow(void **v, size_t *cap, size_t elem, size_t need, mscan *ms)
{
	if (need <= *cap)
		return FLOE_OK;
	if (floe_array_grow(v, cap, elem, need))
		return floe_error_oom(ms->err);
	return FLOE_OK;
}

/*
 * An array (the Java map encoding) of records {key: int, value: long|bytes};
 * keep = store the wanted entries into *l or *b.
 */
static int read_metric_map(mscan *ms, floe_cursor *c, const floe_avro_schema *s, bool keep,
			   longs *l, byteses *b)
{
	int rc;
	if ((rc = resolve_union(ms, c, &s)))
		return rc;
	if (s->type == FLOE_AVRO_NULL)
		return FLOE_OK;
	if (l)
		l->present = true;
	if (b)
		b->present = true;
	const floe_avro_schema *items = s->type == FLOE_AVRO_ARRAY ? s->items : NULL;
	/* BigQuery writes the items as ["null", record] */
	const floe_avro_schema *item = nonnull(items);
	if (!item || item->type != FLOE_AVRO_RECORD || item->n_fields != 2)
		return floe_avro_skip(c, s, ms->err); /* not the shape Iceberg writes */
	/* which of the two fields is the key (by id: even-odd pairs, or by name) */
	size_t ki = 0;
	if (item->fields[1].name && !strcmp(item->fields[1].name, "key"))
		ki = 1;
	for (;;) {
		int64_t count, bytes = -1;
		if (!rd_long(c, &count))
			return corrupt(ms, c, "bad array block count");
		if (count == 0)
			break;
		if (count < 0) {
			if (count == INT64_MIN || !rd_long(c, &bytes) || bytes < 0 ||
			    (uint64_t)bytes > c->n - c->off)
				return corrupt(ms, c, "bad array block size");
			count = -count;
			if (!keep) {
				c->off += (size_t)bytes;
				continue;
			}
		}
		/* every item takes at least one byte */
		if ((uint64_t)count > c->n - c->off)
			return corrupt(ms, c, "array block count exceeds the bytes left");
		for (int64_t i = 0; i < count; i++) {
			sval k = {0}, v = {0};
			if (items->type == FLOE_AVRO_UNION) {
				const floe_avro_schema *br = items;
				if ((rc = resolve_union(ms, c, &br)))
					return rc;
				if (br->type == FLOE_AVRO_NULL)
					continue;
				if (br != item)
					return corrupt(ms, c, "unexpected metric map item branch");
			}
			for (size_t f = 0; f < 2; f++) {
				sval *dst = f == ki ? &k : &v;
				if ((rc = read_val(ms, c, item->fields[f].type, dst)))
					return rc;
			}
			if (!keep || !is_int_like(&k) || v.null || !wanted(ms, (int32_t)k.l))
				continue;
			if (l && (v.t == FLOE_AVRO_LONG || v.t == FLOE_AVRO_INT)) {
				if ((rc = grow((void **)&l->v, &l->cap, sizeof(*l->v), l->n + 1, ms)))
					return rc;
				l->v[l->n].id = (int32_t)k.l;
				l->v[l->n++].value = v.l;
			} else if (b && (v.t == FLOE_AVRO_BYTES || v.t == FLOE_AVRO_STRING ||
					 v.t == FLOE_AVRO_FIXED)) {
				if ((rc = grow((void **)&b->v, &b->cap, sizeof(*b->v), b->n + 1, ms)))
					return rc;
				b->v[b->n].id = (int32_t)k.l;
				b->v[b->n].p = v.p;
				b->v[b->n++].n = v.n;
			}
		}
	}
	return FLOE_OK;
}

static mapk compile_map(const floe_avro_schema *s)
{
	mapk m;
	memset(&m, 0, sizeof(m));
	m.outer = compile_vk(s);
	const floe_avro_schema *arr = m.outer.s;
	if (!arr || arr->type != FLOE_AVRO_ARRAY || !arr->items)
		return m;
	const floe_avro_schema *items = arr->items;
	m.inb = m.ivb = -1;
	if (items->type == FLOE_AVRO_UNION) {
		if (items->n_branches != 2 || (items->branches[0]->type == FLOE_AVRO_NULL) ==
						      (items->branches[1]->type == FLOE_AVRO_NULL))
			return m;
		m.inb = items->branches[0]->type == FLOE_AVRO_NULL ? 0 : 1;
		m.ivb = (int8_t)(1 - m.inb);
		items = items->branches[m.ivb];
	}
	if (items->type != FLOE_AVRO_RECORD || items->n_fields != 2)
		return m;
	size_t ki = items->fields[1].name && !strcmp(items->fields[1].name, "key") ? 1 : 0;
	m.key_first = ki == 0;
	m.key = compile_vk(items->fields[ki].type);
	m.val = compile_vk(items->fields[1 - ki].type);
	m.ok = m.key.kind == VK_VARINT && m.key.nb < 0 &&
	       (m.val.kind == VK_VARINT || m.val.kind == VK_BYTES || m.val.kind == VK_FIXED);
	return m;
}

/* a metric map by its compiled recipe; keep = store the wanted entries */
static int read_metric_map_fast(mscan *ms, floe_cursor *c, const mapk *mk, bool keep, longs *l,
				byteses *b)
{
	int rc;
	if (mk->outer.nb >= 0) {
		int64_t br;
		if (!rd_long(c, &br))
			return corrupt(ms, c, "bad union branch");
		if (br == mk->outer.nb)
			return FLOE_OK;
		if (br != mk->outer.vb)
			return corrupt(ms, c, "bad union branch");
	}
	if (l)
		l->present = true;
	if (b)
		b->present = true;
	for (;;) {
		int64_t count, bytes;
		if (!rd_long(c, &count))
			return corrupt(ms, c, "bad array block count");
		if (count == 0)
			break;
		if (count < 0) {
			if (count == INT64_MIN || !rd_long(c, &bytes) || bytes < 0 ||
			    (uint64_t)bytes > c->n - c->off)
				return corrupt(ms, c, "bad array block size");
			count = -count;
			if (!keep) {
				c->off += (size_t)bytes;
				continue;
			}
		}
		if ((uint64_t)count > c->n - c->off)
			return corrupt(ms, c, "array block count exceeds the bytes left");
		if (!keep && mk->inb < 0 && mk->val.nb < 0 && mk->val.kind != VK_FIXED) {
			/* not wanted: step over varints and byte strings without decoding */
			bool bytes_val = mk->val.kind == VK_BYTES;
			for (int64_t i = 0; i < count; i++) {
				for (int f = 0; f < 2; f++) {
					bool is_key = (f == 0) == (mk->key_first != 0);
					if (is_key || !bytes_val) {
						if (!skip_varint(c))
							return corrupt(ms, c, "bad varint");
					} else {
						const uint8_t *p;
						size_t n;
						if (!rd_bytes(c, &p, &n))
							return corrupt(ms, c, "bad length or truncated bytes");
					}
				}
			}
			continue;
		}
		for (int64_t i = 0; i < count; i++) {
			int64_t key = 0;
			sval v;
			if (mk->inb >= 0) {
				int64_t br;
				if (!rd_long(c, &br) || (br != mk->inb && br != mk->ivb))
					return corrupt(ms, c, "bad union branch");
				if (br == mk->inb)
					continue;
			}
			if (mk->key_first) {
				if (!rd_long(c, &key))
					return corrupt(ms, c, "bad map key");
				if ((rc = rd_fast(ms, c, &mk->val, &v)))
					return rc;
			} else {
				if ((rc = rd_fast(ms, c, &mk->val, &v)))
					return rc;
				if (!rd_long(c, &key))
					return corrupt(ms, c, "bad map key");
			}
			if (!keep || v.null || !wanted(ms, (int32_t)key))
				continue;
			if (l && mk->val.kind == VK_VARINT) {
				if (l->n == l->cap &&
				    (rc = grow((void **)&l->v, &l->cap, sizeof(*l->v), l->n + 1, ms)))
					return rc;
				l->v[l->n].id = (int32_t)key;
				l->v[l->n++].value = v.l;
			} else if (b && mk->val.kind != VK_VARINT) {
				if (b->n == b->cap &&
				    (rc = grow((void **)&b->v, &b->cap, sizeof(*b->v), b->n + 1, ms)))
					return rc;
				b->v[b->n].id = (int32_t)key;
				b->v[b->n].p = v.p;
				b->v[b->n++].n = v.n;
			}
		}
	}
	return FLOE_OK;
}

/* array<int|long> into *out (or skipped) */
static int read_long_array(mscan *ms, floe_cursor *c, const floe_avro_schema *s, bool keep,
			   void **out, size_t *n, size_t *cap, size_t elem)
{
	int rc;
	*n = 0;
	if ((rc = resolve_union(ms, c, &s)))
		return rc;
	if (s->type == FLOE_AVRO_NULL)
		return FLOE_OK;
	if (s->type != FLOE_AVRO_ARRAY)
		return floe_avro_skip(c, s, ms->err);
	for (;;) {
		int64_t count, bytes;
		if (!rd_long(c, &count))
			return corrupt(ms, c, "bad array block count");
		if (count == 0)
			break;
		if (count < 0) {
			if (count == INT64_MIN || !rd_long(c, &bytes) || bytes < 0 ||
			    (uint64_t)bytes > c->n - c->off)
				return corrupt(ms, c, "bad array block size");
			count = -count;
		}
		if ((uint64_t)count > c->n - c->off)
			return corrupt(ms, c, "array block count exceeds the bytes left");
		if (!keep && s->items && (s->items->type == FLOE_AVRO_LONG ||
					  s->items->type == FLOE_AVRO_INT)) {
			for (int64_t i = 0; i < count; i++)
				if (!skip_varint(c))
					return corrupt(ms, c, "bad varint");
			continue;
		}
		for (int64_t i = 0; i < count; i++) {
			sval v;
			if ((rc = read_val(ms, c, s->items, &v)))
				return rc;
			if (!keep || !is_int_like(&v))
				continue;
			if ((rc = grow(out, cap, elem, *n + 1, ms)))
				return rc;
			if (elem == sizeof(int32_t))
				((int32_t *)*out)[(*n)++] = (int32_t)v.l;
			else
				((int64_t *)*out)[(*n)++] = v.l;
		}
	}
	return FLOE_OK;
}

/* ---- partition values ---------------------------------------------------------------- */

static bool lt_is(const floe_avro_schema *s, const char *lt)
{
	return s->logical_type && !strcmp(s->logical_type, lt);
}

/* Avro value -> Iceberg value of type t (NULL: infer from Avro, as manifest_read does) */
static void to_value(floe_value *out, const floe_type *t, const sval *v)
{
	const floe_avro_schema *s = v->s;
	floe_type_id id;
	memset(out, 0, sizeof(*out));
	if (t) {
		id = t->id;
	} else {
		switch (v->t) {
		case FLOE_AVRO_BOOLEAN: id = FLOE_T_BOOLEAN; break;
		case FLOE_AVRO_INT: id = s && lt_is(s, "date") ? FLOE_T_DATE : FLOE_T_INT; break;
		case FLOE_AVRO_LONG:
			id = s && lt_is(s, "time-micros")	      ? FLOE_T_TIME
			     : s && lt_is(s, "timestamp-micros") ? (s->adjust_to_utc == 1
									   ? FLOE_T_TIMESTAMPTZ
									   : FLOE_T_TIMESTAMP)
			     : s && lt_is(s, "timestamp-nanos")
				     ? (s->adjust_to_utc == 1 ? FLOE_T_TIMESTAMPTZ_NS : FLOE_T_TIMESTAMP_NS)
				     : FLOE_T_LONG;
			break;
		case FLOE_AVRO_FLOAT: id = FLOE_T_FLOAT; break;
		case FLOE_AVRO_DOUBLE: id = FLOE_T_DOUBLE; break;
		case FLOE_AVRO_STRING: id = FLOE_T_STRING; break;
		case FLOE_AVRO_FIXED:
			id = s && lt_is(s, "decimal") ? FLOE_T_DECIMAL
			     : s && lt_is(s, "uuid")  ? FLOE_T_UUID
						      : FLOE_T_FIXED;
			break;
		default: id = FLOE_T_BINARY; break;
		}
	}
	out->type = id;
	if (v->null) {
		out->is_null = true;
		return;
	}
	switch (id) {
	case FLOE_T_BOOLEAN: out->v.b = v->l != 0; break;
	case FLOE_T_INT:
	case FLOE_T_DATE: out->v.i32 = (int32_t)v->l; break;
	case FLOE_T_LONG:
	case FLOE_T_TIME:
	case FLOE_T_TIMESTAMP:
	case FLOE_T_TIMESTAMPTZ:
	case FLOE_T_TIMESTAMP_NS:
	case FLOE_T_TIMESTAMPTZ_NS:
		out->v.i64 = v->l;
		/* promoted: a date partition of a column now a timestamp */
		if (v->t == FLOE_AVRO_INT && s && lt_is(s, "date") && id != FLOE_T_LONG)
			out->v.i64 = v->l * (id == FLOE_T_TIMESTAMP_NS || id == FLOE_T_TIMESTAMPTZ_NS
						     ? 86400 * INT64_C(1000000000)
						     : FLOE_US_PER_DAY);
		break;
	case FLOE_T_FLOAT: out->v.f32 = (float)v->d; break;
	case FLOE_T_DOUBLE: out->v.f64 = v->d; break;
	case FLOE_T_DECIMAL:
		if (v->t == FLOE_AVRO_INT || v->t == FLOE_AVRO_LONG)
			out->v.dec = v->l;
		else
			out->v.dec = v->n && v->n <= 16 ? floe_i128_from_be(v->p, v->n) : 0;
		break;
	default:
		out->v.bin.p = v->p ? v->p : (const uint8_t *)"";
		out->v.bin.n = v->n;
		break;
	}
}

static int read_partition(mscan *ms, floe_cursor *c, const floe_avro_schema *s)
{
	int rc;
	if ((rc = resolve_union(ms, c, &s)))
		return rc;
	for (size_t i = 0; i < ms->n_spec; i++)
		ms->pvals[i] = floe_value_null(ms->ptypes[i] ? ms->ptypes[i]->id : FLOE_T_INT);
	if (s->type != FLOE_AVRO_RECORD)
		return s->type == FLOE_AVRO_NULL ? FLOE_OK : floe_avro_skip(c, s, ms->err);
	for (size_t i = 0; i < ms->n_part; i++) {
		const step *st = &ms->part[i];
		sval v;
		if ((rc = rd_fast(ms, c, &st->k, &v)))
			return rc;
		if (st->spec_pos >= 0)
			to_value(&ms->pvals[st->spec_pos], ms->ptypes[st->spec_pos], &v);
	}
	return FLOE_OK;
}

/* ---- one entry ------------------------------------------------------------------------ */

static const char *format_name(const uint8_t *p, size_t n, floe_buf *scratch)
{
	static const char *const known[] = {"PARQUET", "AVRO", "ORC", "PUFFIN"};
	if (n == 7 && !memcmp(p, "PARQUET", 7))
		return known[0];
	for (size_t i = 0; i < 4; i++)
		if (strlen(known[i]) == n && strncasecmp((const char *)p, known[i], n) == 0)
			return known[i];
	floe_buf_clear(scratch);
	if (floe_buf_append(scratch, p, n))
		return "UNKNOWN";
	return floe_buf_cstr(scratch);
}

static int set_str(mscan *ms, floe_buf *b, const sval *v, const char **out)
{
	floe_buf_clear(b);
	if (v->null) {
		*out = NULL;
		return FLOE_OK;
	}
	if (floe_buf_append(b, v->p, v->n))
		return floe_error_oom(ms->err);
	*out = floe_buf_cstr(b);
	return FLOE_OK;
}

static int read_data_file(mscan *ms, floe_cursor *c, const floe_avro_schema *s)
{
	floe_data_file *f = &ms->e.file;
	int rc;
	if ((rc = resolve_union(ms, c, &s)))
		return rc;
	if (s->type != FLOE_AVRO_RECORD)
		return corrupt(ms, c, "data_file is not a record");
	bool metrics = ms->o->all_metrics || ms->o->n_metric_ids > 0;
	for (size_t i = 0; i < ms->n_file; i++) {
		const step *st = &ms->file[i];
		sval v;
		ms->where = st->name;
		switch (st->slot) {
		case S_PARTITION:
			if ((rc = read_partition(ms, c, st->schema)))
				return rc;
			ms->has[S_PARTITION] = true;
			continue;
		case S_COLUMN_SIZES:
		case S_VALUE_COUNTS:
		case S_NULL_COUNTS:
		case S_NAN_COUNTS:
		case S_LOWER:
		case S_UPPER: {
			longs *l = st->slot == S_COLUMN_SIZES	? &ms->cs
				   : st->slot == S_VALUE_COUNTS ? &ms->vc
				   : st->slot == S_NULL_COUNTS	? &ms->nc
				   : st->slot == S_NAN_COUNTS	? &ms->nanc
								: NULL;
			byteses *bb = st->slot == S_LOWER ? &ms->lo : st->slot == S_UPPER ? &ms->up : NULL;
			bool keep = metrics && (st->slot != S_COLUMN_SIZES || ms->o->column_sizes);
			if (l)
				l->n = 0;
			if (bb)
				bb->n = 0;
			rc = st->m.ok ? read_metric_map_fast(ms, c, &st->m, keep, l, bb)
				      : read_metric_map(ms, c, st->schema, keep, l, bb);
			if (rc)
				return rc;
			continue;
		}
		case S_SPLIT_OFFSETS:
			if ((rc = read_long_array(ms, c, st->schema, ms->o->split_offsets, (void **)&ms->so,
						  &ms->n_so, &ms->cap_so, sizeof(int64_t))))
				return rc;
			continue;
		case S_EQUALITY_IDS:
			if ((rc = read_long_array(ms, c, st->schema, true, (void **)&ms->eq, &ms->n_eq,
						  &ms->cap_eq, sizeof(int32_t))))
				return rc;
			continue;
		case S_NONE:
			if (st->k.kind != VK_OTHER)
				rc = rd_fast(ms, c, &st->k, &v);
			else
				rc = floe_avro_skip(c, st->schema, ms->err);
			if (rc)
				return rc;
			continue;
		default: break;
		}
		if ((rc = rd_fast(ms, c, &st->k, &v)))
			return rc;
		if (v.null)
			continue;
		ms->has[st->slot] = true;
		switch (st->slot) {
		case S_CONTENT: f->content = (int)v.l; break;
		case S_FILE_PATH:
			if ((rc = set_str(ms, &ms->path, &v, &f->file_path)))
				return rc;
			break;
		case S_FILE_FORMAT: f->file_format = format_name(v.p, v.n, &ms->fmt); break;
		case S_RECORD_COUNT: f->record_count = v.l; break;
		case S_FILE_SIZE: f->file_size_in_bytes = v.l; break;
		case S_KEY_METADATA:
			if (ms->o->key_metadata) {
				f->key_metadata = v.p;
				f->key_metadata_len = v.n;
			}
			break;
		case S_SORT_ORDER_ID:
			f->has_sort_order_id = true;
			f->sort_order_id = (int32_t)v.l;
			break;
		case S_FIRST_ROW_ID: f->first_row_id = v.l; break;
		case S_REF_FILE:
			if ((rc = set_str(ms, &ms->ref, &v, &f->referenced_data_file)))
				return rc;
			break;
		case S_CONTENT_OFFSET: f->content_offset = v.l; break;
		case S_CONTENT_SIZE: f->content_size_in_bytes = v.l; break;
		default: break;
		}
	}
	ms->where = NULL;
	return FLOE_OK;
}

static int read_entry(mscan *ms, floe_cursor *c, bool *deliver)
{
	floe_manifest_entry *e = &ms->e;
	floe_data_file *f = &e->file;
	const floe_manifest_file *mf = ms->mf;
	int rc;
	memset(ms->has, 0, sizeof(ms->has));
	floe_data_file_init(f);
	f->file_path = NULL;
	f->spec_id = mf->spec_id;
	f->partition.values = ms->pvals;
	f->partition.n = ms->n_spec;
	for (size_t i = 0; i < ms->n_spec; i++)
		ms->pvals[i] = floe_value_null(ms->ptypes[i] ? ms->ptypes[i]->id : FLOE_T_INT);
	ms->n_eq = ms->n_so = 0;
	ms->cs.n = ms->vc.n = ms->nc.n = ms->nanc.n = ms->lo.n = ms->up.n = 0;
	ms->cs.present = ms->vc.present = ms->nc.present = ms->nanc.present = ms->lo.present =
		ms->up.present = false;
	int64_t status = -1, snap = 0, seq = 0, fseq = 0;
	bool has_snap = false, has_seq = false, has_fseq = false;
	for (size_t i = 0; i < ms->n_entry; i++) {
		const step *st = &ms->entry[i];
		sval v;
		ms->where = st->name;
		if (st->slot == S_DATA_FILE) {
			if ((rc = read_data_file(ms, c, st->schema)))
				return rc;
			ms->has[S_DATA_FILE] = true;
			continue;
		}
		if (st->slot == S_NONE) {
			if (st->k.kind != VK_OTHER)
				rc = rd_fast(ms, c, &st->k, &v);
			else
				rc = floe_avro_skip(c, st->schema, ms->err);
			if (rc)
				return rc;
			continue;
		}
		if ((rc = rd_fast(ms, c, &st->k, &v)))
			return rc;
		if (!is_int_like(&v))
			continue;
		switch (st->slot) {
		case S_STATUS: status = v.l; break;
		case S_SNAPSHOT_ID:
			snap = v.l;
			has_snap = true;
			break;
		case S_SEQ:
			seq = v.l;
			has_seq = true;
			break;
		case S_FILE_SEQ:
			fseq = v.l;
			has_fseq = true;
			break;
		default: break;
		}
	}
	ms->where = NULL;
	if (status < 0 || status > 2)
		return floe_error_corrupt(ms->err, "entry status %lld is not 0, 1 or 2",
				      (long long)status);
	if (!ms->has[S_DATA_FILE] || !f->file_path)
		return floe_error_corrupt(ms->err, "entry without data_file.file_path");
	if (!ms->has[S_RECORD_COUNT] || !ms->has[S_FILE_SIZE])
		return floe_error_corrupt(ms->err, "'%s': record_count or file_size missing",
				      f->file_path);
	e->status = (int)status;
	/* spec: inherit a null snapshot id from the manifest */
	e->snapshot_id = has_snap ? snap : mf->added_snapshot_id;
	/* spec: a null data sequence number is inherited only by ADDED entries
	 * (or from v1 manifests, whose sequence number is 0) */
	if (has_seq) {
		e->sequence_number = seq;
	} else if (status == FLOE_ENTRY_ADDED || mf->sequence_number == 0) {
		e->sequence_number = mf->sequence_number;
	} else {
		return floe_error_corrupt(ms->err, "%s entry without a sequence number",
				      status == FLOE_ENTRY_EXISTING ? "existing" : "deleted");
	}
	e->file_sequence_number = has_fseq ? fseq
				  : status == FLOE_ENTRY_ADDED || mf->sequence_number == 0
					  ? mf->sequence_number
					  : -1;
	f->equality_ids = ms->n_eq ? ms->eq : NULL;
	f->n_equality_ids = ms->n_eq;
	f->split_offsets = ms->n_so ? ms->so : NULL;
	f->n_split_offsets = ms->n_so;
	f->column_sizes = ms->cs.v;
	f->n_column_sizes = ms->cs.n;
	f->value_counts = ms->vc.v;
	f->n_value_counts = ms->vc.n;
	f->null_value_counts = ms->nc.v;
	f->n_null_value_counts = ms->nc.n;
	f->nan_value_counts = ms->nanc.v;
	f->n_nan_value_counts = ms->nanc.n;
	f->lower_bounds = ms->lo.v;
	f->n_lower_bounds = ms->lo.n;
	f->upper_bounds = ms->up.v;
	f->n_upper_bounds = ms->up.n;
	f->absent_metrics = (ms->cs.present ? 0u : FLOE_METRICS_ABSENT_COLUMN_SIZES) |
			    (ms->vc.present ? 0u : FLOE_METRICS_ABSENT_VALUE_COUNTS) |
			    (ms->nc.present ? 0u : FLOE_METRICS_ABSENT_NULL_COUNTS) |
			    (ms->nanc.present ? 0u : FLOE_METRICS_ABSENT_NAN_COUNTS) |
			    (ms->lo.present ? 0u : FLOE_METRICS_ABSENT_LOWER_BOUNDS) |
			    (ms->up.present ? 0u : FLOE_METRICS_ABSENT_UPPER_BOUNDS);
	/* spec (v3): data files without first_row_id inherit the manifest's plus
	 * the record counts of the null ones before them */
	if (f->content == FLOE_CONTENT_DATA && f->first_row_id < 0 && ms->next_row_id >= 0 &&
	    status != FLOE_ENTRY_DELETED) {
		f->first_row_id = ms->next_row_id;
		ms->next_row_id += f->record_count;
	}
	*deliver = status != FLOE_ENTRY_DELETED || ms->o->deleted;
	return FLOE_OK;
}

/* ---- plan ---------------------------------------------------------------------------- */

static const floe_avro_schema *nonnull(const floe_avro_schema *s)
{
	if (s && s->type == FLOE_AVRO_UNION) {
		const floe_avro_schema *t = floe_avro_union_nonnull(s);
		return t ? t : s;
	}
	return s;
}

static int compile(mscan *ms, const floe_avro_schema *root, floe_error *err)
{
	if (!root || root->type != FLOE_AVRO_RECORD)
		return floe_error_corrupt(err, "the schema is not a manifest_entry record");
	if (root->n_fields > MAX_STEPS)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "manifest_entry has %zu fields",
				      root->n_fields);
	bool ids = false;
	for (size_t i = 0; i < root->n_fields; i++)
		ids |= root->fields[i].field_id != FLOE_AVRO_ID_NONE;
	const floe_avro_schema *df = NULL;
	for (size_t i = 0; i < root->n_fields; i++) {
		const floe_avro_field *fl = &root->fields[i];
		step *st = &ms->entry[ms->n_entry++];
		st->schema = fl->type;
		st->name = fl->name;
		st->slot = S_NONE;
		st->k = compile_vk(fl->type);
		for (size_t k = 0; k < sizeof(ENTRY_FIELDS) / sizeof(ENTRY_FIELDS[0]); k++)
			if (ids ? fl->field_id == ENTRY_FIELDS[k].id
				: (fl->name && !strcmp(fl->name, ENTRY_FIELDS[k].name)))
				st->slot = ENTRY_FIELDS[k].slot;
		if (st->slot == S_DATA_FILE)
			df = nonnull(fl->type);
	}
	if (!df || df->type != FLOE_AVRO_RECORD)
		return floe_error_corrupt(err, "no data_file record in the schema");
	if (df->n_fields > MAX_STEPS)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "data_file has %zu fields", df->n_fields);
	bool fids = false;
	for (size_t i = 0; i < df->n_fields; i++)
		fids |= df->fields[i].field_id != FLOE_AVRO_ID_NONE;
	const floe_avro_schema *part = NULL;
	for (size_t i = 0; i < df->n_fields; i++) {
		const floe_avro_field *fl = &df->fields[i];
		step *st = &ms->file[ms->n_file++];
		st->schema = fl->type;
		st->name = fl->name;
		st->slot = S_NONE;
		st->k = compile_vk(fl->type);
		st->m = compile_map(fl->type);
		for (size_t k = 0; k < sizeof(FILE_FIELDS) / sizeof(FILE_FIELDS[0]); k++)
			if (fids ? fl->field_id == FILE_FIELDS[k].id
				 : (fl->name && !strcmp(fl->name, FILE_FIELDS[k].name)))
				st->slot = FILE_FIELDS[k].slot;
		if (st->slot == S_PARTITION)
			part = nonnull(fl->type);
	}
	if (!part || part->type != FLOE_AVRO_RECORD)
		return floe_error_corrupt(err, "no data_file.partition record in the schema");
	if (part->n_fields > MAX_STEPS)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "partition has %zu fields",
				      part->n_fields);
	/* partition fields by field id, else by position */
	ms->n_spec = ms->spec ? ms->spec->n_fields : part->n_fields;
	if (ms->n_spec > MAX_STEPS)
		return floe_error_set(err, FLOE_EUNSUPPORTED, "spec has %zu fields", ms->n_spec);
	for (size_t i = 0; i < ms->n_spec; i++)
		ms->ptypes[i] = ms->spec ? floe_spec_field_type(ms->spec, i, ms->schema) : NULL;
	for (size_t i = 0; i < part->n_fields; i++) {
		const floe_avro_field *fl = &part->fields[i];
		step *st = &ms->part[ms->n_part++];
		st->schema = fl->type;
		st->name = fl->name;
		st->spec_pos = -1;
		st->k = compile_vk(fl->type);
		if (!ms->spec) {
			st->spec_pos = (int32_t)i;
			continue;
		}
		for (size_t k = 0; k < ms->spec->n_fields; k++)
			if (fl->field_id != FLOE_AVRO_ID_NONE ? ms->spec->fields[k].field_id == fl->field_id
							      : k == i)
				st->spec_pos = (int32_t)k;
	}
	return FLOE_OK;
}

static void reset(mscan *ms)
{
	floe_buf_reset(&ms->path);
	floe_buf_reset(&ms->ref);
	floe_buf_reset(&ms->fmt);
	floe_free(ms->cs.v);
	floe_free(ms->vc.v);
	floe_free(ms->nc.v);
	floe_free(ms->nanc.v);
	floe_free(ms->lo.v);
	floe_free(ms->up.v);
	floe_free(ms->eq);
	floe_free(ms->so);
}

int floe_manifest_scan(floe_input *in, const floe_metadata *m, const floe_manifest_file *mf,
		       const floe_mscan_opts *opts, floe_entry_fn fn, void *payload,
		       floe_mscan_stats *stats, floe_error *err)
{
	static const floe_mscan_opts dflt = FLOE_MSCAN_OPTS_INIT;
	floe_avro_reader *r = NULL;
	floe_avro_reader_opts ro = FLOE_AVRO_READER_OPTS_INIT;
	floe_arena sa;
	mscan *ms = floe_calloc(1, sizeof(*ms));
	int rc;
	if (!ms)
		return floe_error_oom(err);
	floe_arena_init(&sa, 16384);
	ms->o = opts ? opts : &dflt;
	ms->mf = mf;
	ms->err = err;
	ms->next_row_id = mf->first_row_id;
	floe_buf_init(&ms->path, 1 << 20);
	floe_buf_init(&ms->ref, 1 << 20);
	floe_buf_init(&ms->fmt, 256);
	ro.schema_cache = ms->o->schema_cache;
	if ((rc = floe_avro_reader_open(&r, in, &ro, err)))
		goto done;
	ms->schema = m ? floe_metadata_current_schema(m) : NULL;
	ms->spec = m ? floe_metadata_spec(m, mf->spec_id) : NULL;
	if (!ms->spec) {
		/* fall back to the manifest's own header (older writers, moved tables) */
		const char *sj = floe_avro_reader_meta(r, "partition-spec", NULL);
		const char *tj = floe_avro_reader_meta(r, "schema", NULL);
		floe_json *j;
		floe_partition_spec *ps;
		floe_schema *sc;
		if (sj && floe_json_parse(&j, &sa, sj, strlen(sj), NULL, NULL) == 0 &&
		    floe_spec_from_json(&ps, &sa, j, mf->spec_id, NULL) == 0)
			ms->spec = ps;
		if (tj && floe_json_parse(&j, &sa, tj, strlen(tj), NULL, NULL) == 0 &&
		    floe_schema_from_json(&sc, &sa, j, NULL) == 0)
			ms->schema = sc;
	}
	if (ms->spec && m) {
		/* a dropped column's partition field finds its type in an older schema */
		for (size_t i = 0; i < ms->spec->n_fields; i++)
			if (!floe_spec_field_type(ms->spec, i, ms->schema))
				for (size_t k = 0; k < m->n_schemas; k++)
					if (floe_schema_find(m->schemas[k], ms->spec->fields[i].source_id)) {
						ms->schema = m->schemas[k];
						break;
					}
	}
	if ((rc = compile(ms, floe_avro_reader_schema(r), err)))
		goto done;
	floe_manifest_tally tally;
	memset(&tally, 0, sizeof(tally));
	for (;;) {
		floe_avro_block blk;
		bool eof;
		floe_cursor cur;
		if ((rc = floe_avro_reader_next_block(&blk, &eof, r, err)))
			goto done;
		if (eof) {
			/* what the manifest list promised, counted as decoded */
			rc = floe_manifest_check_tally(mf, &tally, err);
			break;
		}
		if (stats)
			stats->bytes += blk.len;
		floe_cursor_init(&cur, blk.data, blk.len);
		for (int64_t i = 0; i < blk.count; i++) {
			bool deliver = false;
			if ((rc = read_entry(ms, &cur, &deliver))) {
				floe_error_prefix(err, rc, "block %llu record %lld: ",
						  (unsigned long long)blk.index, (long long)i);
				goto done;
			}
			if (stats)
				stats->entries++;
			floe_manifest_tally_add(&tally, ms->e.status, ms->e.file.record_count);
			if (!deliver)
				continue;
			if (stats)
				stats->delivered++;
			if ((rc = fn(&ms->e, payload)))
				goto done;
		}
		if (floe_cursor_left(&cur) != 0) {
			rc = floe_error_corrupt(err, "block %llu has %zu trailing bytes",
					    (unsigned long long)blk.index, floe_cursor_left(&cur));
			goto done;
		}
	}
done:
	floe_avro_reader_free(r);
	reset(ms);
	floe_free(ms);
	floe_arena_reset(&sa);
	if (rc && rc != FLOE_ECANCELED && err && err->code)
		floe_error_prefix(err, rc, "manifest '%s': ", mf->path);
	return rc;
}
