/*
 * scan_deletes.c — loading the deletes a planned data file needs: deletion
 * vectors (Puffin blobs), position delete files, equality delete files.
 *
 * DESIGN: each delete file is loaded at most once per scan, on first use,
 * and kept with the plan (scan_file.loaded): a position delete file becomes
 * a map from the recorded data file path to its sorted positions (one file
 * usually covers many data files of a partition); an equality delete file a
 * hash set of encoded key tuples over its equality ids. A DV is decoded per
 * data file (it belongs to exactly one); the Puffin footer of its file is
 * read once and the blob must be one it lists (a bare DV blob or a wrong
 * offset is refused rather than misread). Positions from every source are
 * merged into one sorted list that the reader walks alongside the rows.
 *
 * spec: "Position Delete Files", "Equality Delete Files", "Deletion
 * Vectors"; ../shared/iceberg-notes.md 3.3-3.4. Matching (which file applies
 * to which) happened at planning; this file only loads.
 */
#include <stdlib.h>
#include <string.h>

#include "io/fileio.h"
#include "puffin/puffin_dv.h"
#include "puffin/puffin_file.h"
#include "scan/scan_impl.h"
#include "util/cursor.h"
#include "util/sort.h"
#include "util/str.h"

/* a DV's blob is small */
#define MAX_DV_BLOB ((size_t)1 << 30)
#define DV_INPUTS 16

/* An open Puffin file of DVs. */
typedef struct dv_open {
	floe_input *in;
	char *path;
	uint64_t used; /* the clock of its last read (least recently used goes first) */
} dv_open;

struct delete_cache {
	floe_arena a;
	floe_schema *pos_schema;
	/* the Puffin files of the last DVs read: a checkpoint puts the DVs of many
	 * data files in one Puffin file, and a later one the DVs of files of many
	 * checkpoints, so a scan's data files take their DVs from a few Puffin
	 * files in turn (34 for the 799 DVs of a 200-checkpoint upsert table: 484
	 * opens with one kept open, 72 with 16) */
	dv_open dv[DV_INPUTS];
	uint64_t clock;
	floe_buf dv_blob;
};

typedef struct plist {
	uint64_t *v;
	size_t n, cap;
} plist;

typedef struct pos_loaded {
	floe_hmap by_path; /* raw data path -> index */
	plist *lists;
	size_t n, cap;
} pos_loaded;

struct eq_delete_set {
	int32_t *ids;
	size_t n_ids;
	floe_hmap keys;
	floe_buf key; /* scratch for probes (a scan is single-threaded) */
	const floe_schema *schema;
};

int floe_scan__deletes_init(floe_scan *s, floe_error *err)
{
	if (s->dc)
		return FLOE_OK;
	delete_cache *dc = floe_calloc(1, sizeof(*dc));
	if (!dc)
		return floe_error_oom(err);
	floe_arena_init(&dc->a, 4096);
	floe_buf_init(&dc->dv_blob, MAX_DV_BLOB);
	s->dc = dc;
	/* spec: position delete files hold file_path (2147483546) and pos (2147483545) */
	floe_type *root = floe_arena_calloc(&dc->a, 1, sizeof(*root));
	floe_field *fs = floe_arena_calloc(&dc->a, 2, sizeof(*fs));
	if (!root || !fs)
		return floe_error_oom(err);
	fs[0] = (floe_field){FLOE_ID_DELETE_FILE_PATH, "file_path", false,
			     floe_type_primitive(FLOE_T_STRING), NULL, NULL, NULL};
	fs[1] = (floe_field){FLOE_ID_DELETE_POS, "pos", false, floe_type_primitive(FLOE_T_LONG),
			     NULL, NULL, NULL};
	root->id = FLOE_T_STRUCT;
	root->fields = fs;
	root->n_fields = 2;
	return floe_schema_make(&dc->pos_schema, &dc->a, 0, root, NULL, 0, err);
}

static void free_loaded(scan_file *d)
{
	if (!d->loaded)
		return;
	if (d->content == FLOE_CONTENT_EQUALITY_DELETES) {
		eq_delete_set *q = d->loaded;
		floe_hmap_reset(&q->keys);
		floe_buf_reset(&q->key);
		floe_free(q->ids);
		floe_free(q);
	} else {
		pos_loaded *p = d->loaded;
		for (size_t i = 0; i < p->n; i++)
			floe_free(p->lists[i].v);
		floe_free(p->lists);
		floe_hmap_reset(&p->by_path);
		floe_free(p);
	}
	d->loaded = NULL;
}

void floe_scan__deletes_free(floe_scan *s)
{
	for (size_t i = 0; i < s->n_deletes; i++)
		free_loaded(s->deletes[i]);
	if (!s->dc)
		return;
	for (size_t i = 0; i < DV_INPUTS; i++) {
		floe_input_close(s->dc->dv[i].in);
		floe_free(s->dc->dv[i].path);
	}
	floe_buf_reset(&s->dc->dv_blob);
	floe_arena_reset(&s->dc->a);
	floe_free(s->dc);
	s->dc = NULL;
}

/* ---- position delete files ------------------------------------------------------------------ */

typedef struct pos_ctx {
	floe_scan *s;
	pos_loaded *p;
	const int32_t *ids;
	floe_arena a; /* relocated paths of one batch */
	floe_buf tmp;
} pos_ctx;

static int on_pos_batch(const struct ArrowArray *b, int64_t first, void *payload)
{
	pos_ctx *c = payload;
	const floe_schema *schema = c->s->dc->pos_schema;
	(void)first;
	floe_arena_reset(&c->a);
	for (int64_t r = 0; r < b->length; r++) {
		floe_value path, pos;
		floe_scan__batch_value(&path, b, c->ids, 2, schema, FLOE_ID_DELETE_FILE_PATH, r);
		floe_scan__batch_value(&pos, b, c->ids, 2, schema, FLOE_ID_DELETE_POS, r);
		/* rows without a path or position delete nothing (Impala's hand-edited
		 * iceberg_v2_null_delete_record) */
		if (path.is_null || pos.is_null || pos.v.i64 < 0)
			continue;
		/* matched in relocated form (see scan_plan.c) */
		const uint8_t *kp = path.v.bin.p;
		size_t kn = path.v.bin.n;
		if (c->s->map.n) {
			floe_buf_clear(&c->tmp);
			if (floe_buf_append(&c->tmp, kp, kn))
				return FLOE_ENOMEM;
			const char *rel = floe_path_map_apply(&c->s->map, &c->a, floe_buf_cstr(&c->tmp));
			if (!rel)
				return FLOE_ENOMEM;
			kp = (const uint8_t *)rel;
			kn = strlen(rel);
		}
		uint64_t *slot;
		bool existed;
		if (floe_hmap_upsert(&c->p->by_path, kp, kn, &slot, &existed))
			return FLOE_ENOMEM;
		if (!existed) {
			if (floe_array_grow((void **)&c->p->lists, &c->p->cap, sizeof(plist), c->p->n + 1))
				return FLOE_ENOMEM;
			memset(&c->p->lists[c->p->n], 0, sizeof(plist));
			*slot = c->p->n++;
		}
		plist *l = &c->p->lists[*slot];
		if (floe_array_grow((void **)&l->v, &l->cap, sizeof(uint64_t), l->n + 1))
			return FLOE_ENOMEM;
		l->v[l->n++] = (uint64_t)pos.v.i64;
	}
	return FLOE_OK;
}

static int load_pos_file(floe_scan *s, scan_file *d, floe_error *err)
{
	static const int32_t ids[2] = {FLOE_ID_DELETE_FILE_PATH, FLOE_ID_DELETE_POS};
	pos_loaded *p = floe_calloc(1, sizeof(*p));
	if (!p)
		return floe_error_oom(err);
	floe_hmap_init(&p->by_path);
	d->loaded = p;
	pos_ctx c = {s, p, ids, {0}, {0}};
	floe_arena_init(&c.a, 65536);
	floe_buf_init(&c.tmp, 1 << 20);
	int rc = floe_scan__read_file_columns(s, d, s->dc->pos_schema, ids, 2, on_pos_batch, &c, err);
	floe_arena_reset(&c.a);
	floe_buf_reset(&c.tmp);
	if (rc == FLOE_ENOMEM && (!err || !err->code))
		rc = floe_error_oom(err);
	if (rc)
		return floe_error_prefix(err, rc, "position delete file: ");
	for (size_t i = 0; i < p->n; i++)
		p->lists[i].n = floe_sort_unique_u64(p->lists[i].v, p->lists[i].n);
	return FLOE_OK;
}

/* ---- deletion vectors ------------------------------------------------------------------------ */

/*
 * A DV is read from the manifest's content_offset and content_size_in_bytes
 * alone, as Java's BaseDeleteLoader does, without the Puffin footer: the
 * spec has no compression for deletion-vector-v1 blobs, and the blob checks
 * itself (length prefix, magic, CRC-32, and the manifest's cardinality), so
 * the footer would add two reads and a JSON parse per Puffin file and
 * nothing a wrong offset could slip past. The file's two magics are checked
 * once per Puffin file.
 */
static int dv_input(delete_cache *dc, floe_scan *s, const char *path, floe_input **in,
		    floe_error *err)
{
	dv_open *o = &dc->dv[0];
	for (size_t i = 0; i < DV_INPUTS; i++) {
		dv_open *c = &dc->dv[i];
		if (c->in && !strcmp(c->path, path)) {
			c->used = ++dc->clock;
			*in = c->in;
			return FLOE_OK;
		}
		if (!c->in || (o->in && c->used < o->used))
			o = c; /* a free one, else the least recently used */
	}
	floe_input_close(o->in);
	o->in = NULL;
	floe_free(o->path);
	if (!(o->path = floe_strdup(path)))
		return floe_error_oom(err);
	o->used = ++dc->clock;
	int rc = floe_io_open_read(floe_table_io(s->t), path, &o->in, err);
	*in = o->in;
	if (rc)
		return rc;
	/* a Puffin file, by its two magics (no footer parse): a bare blob in a file
	 * of its own (an old writer's) is refused, as DuckDB refuses it */
	uint8_t head[4], tail[4];
	if (o->in->size < 12 || floe_input_read_exact(o->in, 0, head, 4, err) ||
	    floe_input_read_exact(o->in, o->in->size - 4, tail, 4, err) ||
	    memcmp(head, FLOE_PUFFIN_MAGIC, 4) || memcmp(tail, FLOE_PUFFIN_MAGIC, 4)) {
		floe_input_close(o->in);
		o->in = NULL;
		*in = NULL;
		return floe_error_corrupt(err, "'%s' is not a Puffin file (no PFA1 magic at both ends): "
				      "a deletion vector must be a blob of one",
				      path);
	}
	return FLOE_OK;
}

static int load_dv(floe_scan *s, const scan_file *d, const scan_file *data, uint64_t **pos,
		   size_t *n, floe_error *err)
{
	delete_cache *dc = s->dc;
	floe_input *in = NULL;
	int rc;
	*pos = NULL;
	*n = 0;
	if (d->content_offset < 0 || d->content_size < 0)
		return floe_error_corrupt(err, "deletion vector in '%s' for '%s' has no content_offset / "
				      "content_size_in_bytes",
				      d->path, data->raw_path);
	if ((rc = dv_input(dc, s, d->path, &in, err)))
		return rc;
	floe_puffin_blob b = {.type = "deletion-vector-v1",
			      .offset = d->content_offset,
			      .length = d->content_size};
	floe_buf_clear(&dc->dv_blob);
	if ((rc = floe_puffin_read_blob(&dc->dv_blob, in, &b, MAX_DV_BLOB, err)))
		return floe_error_prefix(err, rc, "'%s' (deletion vector for '%s'): ", d->path,
					 data->raw_path);
	size_t cap = d->record_count > 0 ? (size_t)d->record_count
					 : (size_t)(data->record_count > 0 ? data->record_count : 1);
	rc = floe_dv_decode(pos, n, dc->dv_blob.data, dc->dv_blob.len, d->record_count, cap, err);
	if (rc)
		floe_error_prefix(err, rc, "'%s' (deletion vector for '%s') at offset %lld: ", d->path,
				  data->raw_path, (long long)d->content_offset);
	return rc;
}

int floe_scan__positions(floe_scan *s, const scan_file *f, uint64_t **pos, size_t *n,
			 floe_error *err)
{
	plist all = {0};
	int rc = FLOE_OK;
	size_t sources = 0;
	bool one_dv = false;
	*pos = NULL;
	*n = 0;
	for (size_t i = 0; i < f->n_deletes && !rc; i++) {
		scan_file *d = f->deletes[i];
		if (d->content != FLOE_CONTENT_POSITION_DELETES)
			continue;
		if (d->is_dv) {
			uint64_t *v;
			size_t k;
			if ((rc = load_dv(s, d, f, &v, &k, err)))
				break;
			if (!all.v) {
				/* the usual case, the file's one DV: its array as it is */
				all.v = v;
				all.n = all.cap = k;
				one_dv = ++sources == 1;
				continue;
			}
			sources++;
			if (floe_array_grow((void **)&all.v, &all.cap, sizeof(uint64_t), all.n + k)) {
				floe_free(v);
				rc = floe_error_oom(err);
				break;
			}
			if (k)
				memcpy(all.v + all.n, v, k * sizeof(uint64_t));
			all.n += k;
			floe_free(v);
			continue;
		}
		if (!d->loaded && (rc = load_pos_file(s, d, err)))
			break;
		pos_loaded *p = d->loaded;
		uint64_t li;
		if (!floe_hmap_get(&p->by_path, f->path, strlen(f->path), &li))
			continue;
		plist *l = &p->lists[li];
		sources++;
		if (floe_array_grow((void **)&all.v, &all.cap, sizeof(uint64_t), all.n + l->n)) {
			rc = floe_error_oom(err);
			break;
		}
		if (l->n)
			memcpy(all.v + all.n, l->v, l->n * sizeof(uint64_t));
		all.n += l->n;
	}
	if (rc) {
		floe_free(all.v);
		return rc;
	}
	/* a DV decodes ascending and unique (its decoder checks): alone, it needs no
	 * second look */
	*n = sources == 1 && one_dv ? all.n : floe_sort_unique_u64(all.v, all.n);
	*pos = all.v;
	return FLOE_OK;
}

/* ---- every row of one delete file (the position_deletes table) ------------------------------- */

typedef struct rows_ctx {
	floe_scan *s;
	const int32_t *ids;
	floe_delete_row_fn fn;
	void *payload;
} rows_ctx;

static int on_rows_batch(const struct ArrowArray *b, int64_t first, void *payload)
{
	rows_ctx *c = payload;
	const floe_schema *schema = c->s->dc->pos_schema;
	int rc;
	(void)first;
	for (int64_t r = 0; r < b->length; r++) {
		floe_value path, pos;
		floe_scan__batch_value(&path, b, c->ids, 2, schema, FLOE_ID_DELETE_FILE_PATH, r);
		floe_scan__batch_value(&pos, b, c->ids, 2, schema, FLOE_ID_DELETE_POS, r);
		if (path.is_null || pos.is_null)
			continue;
		if ((rc = c->fn((const char *)path.v.bin.p, path.v.bin.n, pos.v.i64, c->payload)))
			return rc;
	}
	return FLOE_OK;
}

int floe_scan__delete_rows(floe_scan *s, const scan_file *d, floe_delete_row_fn fn, void *payload,
			   floe_error *err)
{
	static const int32_t ids[2] = {FLOE_ID_DELETE_FILE_PATH, FLOE_ID_DELETE_POS};
	int rc;
	if ((rc = floe_scan__deletes_init(s, err)))
		return rc;
	if (d->is_dv) {
		if (!d->referenced)
			return floe_error_corrupt(err, "deletion vector in '%s' has no "
						       "referenced_data_file",
						  d->path);
		scan_file data = *d;
		data.raw_path = d->referenced;
		data.record_count = -1;
		uint64_t *pos = NULL;
		size_t n = 0;
		if ((rc = load_dv(s, d, &data, &pos, &n, err)))
			return rc;
		for (size_t i = 0; i < n && !rc; i++)
			rc = fn(d->referenced, strlen(d->referenced), (int64_t)pos[i], payload);
		floe_free(pos);
		return rc;
	}
	rows_ctx c = {s, ids, fn, payload};
	rc = floe_scan__read_file_columns(s, d, s->dc->pos_schema, ids, 2, on_rows_batch, &c, err);
	if (rc == FLOE_ENOMEM && (!err || !err->code))
		rc = floe_error_oom(err);
	return rc ? floe_error_prefix(err, rc, "position delete file: ") : FLOE_OK;
}

/* ---- equality deletes ------------------------------------------------------------------------ */

/* canonical bytes of a key: per column a null flag, then the value's binary form */
static int encode_key(floe_buf *b, const floe_value *vals, size_t n)
{
	int rc;
	floe_buf_clear(b);
	for (size_t i = 0; i < n; i++) {
		floe_value v = vals[i];
		if (v.is_null) {
			if ((rc = floe_buf_putc(b, 0)))
				return rc;
			continue;
		}
		/* one encoding per type family, so a key read with an older schema
		 * (int, float) meets rows read with a promoted one (long, double) */
		if (v.type == FLOE_T_INT) {
			v.v.i64 = v.v.i32;
			v.type = FLOE_T_LONG;
		} else if (v.type == FLOE_T_FLOAT) {
			v.v.f64 = v.v.f32;
			v.type = FLOE_T_DOUBLE;
		}
		if (v.type == FLOE_T_DOUBLE && v.v.f64 != v.v.f64)
			v.v.f64 = __builtin_nan("");
		size_t at = b->len;
		if ((rc = floe_buf_putc(b, 1)) || (rc = floe_buf_put_u32le(b, 0)) ||
		    (rc = floe_value_to_bytes(b, &v)))
			return rc;
		floe_store_u32le(b->data + at + 1, (uint32_t)(b->len - at - 5));
	}
	return FLOE_OK;
}

typedef struct eq_ctx {
	eq_delete_set *q;
	const int32_t *top;
	size_t n_top;
	floe_value *vals;
} eq_ctx;

static int on_eq_batch(const struct ArrowArray *b, int64_t first, void *payload)
{
	eq_ctx *c = payload;
	eq_delete_set *q = c->q;
	(void)first;
	for (int64_t r = 0; r < b->length; r++) {
		for (size_t i = 0; i < q->n_ids; i++)
			floe_scan__batch_value(&c->vals[i], b, c->top, c->n_top, q->schema, q->ids[i], r);
		int rc = encode_key(&q->key, c->vals, q->n_ids);
		if (rc || floe_hmap_put(&q->keys, q->key.data ? q->key.data : (const uint8_t *)"",
					q->key.len, 1, NULL))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

static const floe_field *top_of(const floe_schema *schema, int32_t id)
{
	const floe_schema_entry *e = floe_schema_find(schema, id);
	while (e && e->parent_id != 0)
		e = floe_schema_find(schema, e->parent_id);
	return e ? e->field : NULL;
}

int floe_scan__eq_set(floe_scan *s, scan_file *d, const eq_delete_set **out, floe_error *err)
{
	int rc;
	if (d->loaded) {
		*out = d->loaded;
		return FLOE_OK;
	}
	if (!d->n_equality_ids)
		return floe_error_corrupt(err, "equality delete file '%s' has no equality_ids",
				      d->raw_path);
	/* the read schema, or an older one that still has the columns */
	const floe_schema *schema = s->schema;
	for (size_t k = 0; k < d->n_equality_ids; k++)
		if (!floe_schema_find(schema, d->equality_ids[k])) {
			schema = NULL;
			break;
		}
	for (size_t i = 0; !schema && i < s->m->n_schemas; i++) {
		bool all = true;
		for (size_t k = 0; k < d->n_equality_ids && all; k++)
			all = floe_schema_find(s->m->schemas[i], d->equality_ids[k]) != NULL;
		if (all)
			schema = s->m->schemas[i];
	}
	if (!schema)
		return floe_error_corrupt(err, "equality delete file '%s': its equality ids are in no schema",
				      d->raw_path);
	eq_delete_set *q = floe_calloc(1, sizeof(*q));
	int32_t *top = floe_calloc(d->n_equality_ids, sizeof(int32_t));
	floe_value *vals = floe_calloc(d->n_equality_ids, sizeof(floe_value));
	if (!q || !top || !vals) {
		floe_free(q);
		floe_free(top);
		floe_free(vals);
		return floe_error_oom(err);
	}
	d->loaded = q;
	floe_hmap_init(&q->keys);
	floe_buf_init(&q->key, 0);
	q->schema = schema;
	q->ids = floe_memdup(d->equality_ids, d->n_equality_ids * sizeof(int32_t));
	q->n_ids = q->ids ? d->n_equality_ids : 0;
	size_t n_top = 0;
	for (size_t k = 0; k < q->n_ids; k++) {
		const floe_field *f = top_of(schema, q->ids[k]);
		if (!f) {
			rc = floe_error_set(err, FLOE_EUNSUPPORTED,
					    "equality delete file '%s': field %d is inside a list or map",
					    d->raw_path, q->ids[k]);
			goto done;
		}
		bool dup = false;
		for (size_t j = 0; j < n_top; j++)
			dup |= top[j] == f->id;
		if (!dup)
			top[n_top++] = f->id;
	}
	eq_ctx c = {q, top, n_top, vals};
	rc = floe_scan__read_file_columns(s, d, schema, top, n_top, on_eq_batch, &c, err);
	if (rc == FLOE_ENOMEM && (!err || !err->code))
		rc = floe_error_oom(err);
	if (rc)
		floe_error_prefix(err, rc, "equality delete file: ");
done:
	floe_free(top);
	floe_free(vals);
	if (!rc)
		*out = q;
	return rc;
}

const int32_t *floe_scan__eq_ids(const eq_delete_set *q, size_t *n)
{
	*n = q->n_ids;
	return q->ids;
}

bool floe_scan__eq_match(const eq_delete_set *q, const struct ArrowArray *batch,
			 const int32_t *top_ids, size_t n_top, const floe_schema *schema, int64_t r)
{
	floe_value vals[16];
	floe_value *v = vals;
	eq_delete_set *mq = (eq_delete_set *)q; /* the probe scratch buffer */
	bool hit = false;
	if (q->keys.len == 0)
		return false;
	if (q->n_ids > 16 && !(v = floe_calloc(q->n_ids, sizeof(floe_value))))
		return false;
	for (size_t i = 0; i < q->n_ids; i++)
		floe_scan__batch_value(&v[i], batch, top_ids, n_top, schema, q->ids[i], r);
	/* spec: NULL equals NULL in equality deletes */
	if (encode_key(&mq->key, v, q->n_ids) == 0)
		hit = floe_hmap_has(&q->keys, q->key.data ? q->key.data : (const uint8_t *)"",
				    q->key.len);
	if (v != vals)
		floe_free(v);
	return hit;
}
