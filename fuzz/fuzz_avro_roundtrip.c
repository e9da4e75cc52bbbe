/*
 * fuzz_avro_roundtrip.c — the input bytes drive a generator: a schema (the
 * builder API), records of that schema, a codec and block size; the file is
 * written, read back and every record must compare equal. The schema must
 * also survive its JSON round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro/avro_reader.h"
#include "avro/avro_writer.h"

typedef struct src {
	const uint8_t *p;
	size_t n, off;
	int names;
} src;

static unsigned take(src *s)
{
	return s->off < s->n ? s->p[s->off++] : 0;
}

static floe_avro_schema *gen_schema(floe_arena *a, src *s, int depth)
{
	unsigned t = take(s) % (depth > 3 ? 8 : 14);
	char name[32];
	switch (t) {
	case 8: {
		snprintf(name, sizeof(name), "R%d", s->names++);
		floe_avro_schema *r = floe_avro_new_record(a, name, depth % 2 ? "ns" : NULL);
		unsigned n = take(s) % 5;
		for (unsigned i = 0; i < n; i++) {
			char fname[16];
			snprintf(fname, sizeof(fname), "f%u", i);
			floe_avro_field *f = floe_avro_record_add(a, r, fname, gen_schema(a, s, depth + 1));
			if (f)
				f->field_id = (int32_t)(take(s) * 7);
		}
		return r;
	}
	case 9: {
		static const char *const syms[] = {"A", "B", "C", "D"};
		snprintf(name, sizeof(name), "E%d", s->names++);
		return floe_avro_new_enum(a, name, syms, 1 + take(s) % 4);
	}
	case 10: {
		floe_avro_schema *arr = floe_avro_new_array(a, gen_schema(a, s, depth + 1));
		if (arr)
			arr->element_id = 5;
		return arr;
	}
	case 11: return floe_avro_new_map(a, gen_schema(a, s, depth + 1));
	case 12: {
		floe_avro_schema *inner = gen_schema(a, s, depth + 1);
		if (inner && (inner->type == FLOE_AVRO_UNION || inner->type == FLOE_AVRO_NULL))
			inner = floe_avro_new_primitive(a, FLOE_AVRO_LONG);
		return floe_avro_new_optional(a, inner);
	}
	case 13:
		snprintf(name, sizeof(name), "X%d", s->names++);
		return floe_avro_new_fixed(a, name, take(s) % 20);
	default: return floe_avro_new_primitive(a, (floe_avro_type)t);
	}
}

static int gen_value(floe_arena *a, const floe_avro_schema *sc, src *s, floe_avro_value *v,
		     int depth)
{
	uint8_t *p;
	size_t n;
	memset(v, 0, sizeof(*v));
	v->branch = -1;
	v->type = sc->type;
	switch (sc->type) {
	case FLOE_AVRO_NULL: return 0;
	case FLOE_AVRO_BOOLEAN: v->u.b = take(s) & 1; return 0;
	case FLOE_AVRO_INT: v->u.i = (int32_t)((take(s) << 24 | take(s) << 8 | take(s)) - 99u); return 0;
	case FLOE_AVRO_LONG:
		v->u.l = (int64_t)((uint64_t)take(s) << 56 | (uint64_t)take(s) << 20 | take(s));
		return 0;
	case FLOE_AVRO_FLOAT: {
		uint32_t u = take(s) << 24 | take(s) << 16 | take(s) << 8 | take(s);
		memcpy(&v->u.f, &u, 4);
		return 0;
	}
	case FLOE_AVRO_DOUBLE: {
		uint64_t u = (uint64_t)take(s) << 56 | (uint64_t)take(s) << 40 | take(s) << 8 | take(s);
		memcpy(&v->u.d, &u, 8);
		return 0;
	}
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
	case FLOE_AVRO_FIXED:
		n = sc->type == FLOE_AVRO_FIXED ? sc->size : take(s) % 24;
		if (!(p = floe_arena_alloc(a, n + 1)))
			return -1;
		for (size_t i = 0; i < n; i++)
			p[i] = sc->type == FLOE_AVRO_STRING ? (uint8_t)('a' + take(s) % 26)
							    : (uint8_t)take(s);
		v->u.bytes.p = p;
		v->u.bytes.len = n;
		return 0;
	case FLOE_AVRO_ENUM: v->u.i = (int32_t)(take(s) % sc->n_symbols); return 0;
	case FLOE_AVRO_RECORD:
	case FLOE_AVRO_ARRAY: {
		const floe_avro_schema *item = sc->items;
		n = sc->type == FLOE_AVRO_RECORD ? sc->n_fields : (depth > 6 ? 0 : take(s) % 5);
		v->u.list.n = n;
		if (!(v->u.list.items = floe_arena_calloc(a, n + 1, sizeof(floe_avro_value))))
			return -1;
		for (size_t i = 0; i < n; i++)
			if (gen_value(a, sc->type == FLOE_AVRO_RECORD ? sc->fields[i].type : item, s,
				      &v->u.list.items[i], depth + 1))
				return -1;
		return 0;
	}
	case FLOE_AVRO_MAP:
		n = depth > 6 ? 0 : take(s) % 4;
		v->u.map.n = n;
		if (!(v->u.map.entries = floe_arena_calloc(a, n + 1, sizeof(floe_avro_map_entry))))
			return -1;
		for (size_t i = 0; i < n; i++) {
			char *k = floe_arena_sprintf(a, "k%zu", i);
			if (!k)
				return -1;
			v->u.map.entries[i].key = (const uint8_t *)k;
			v->u.map.entries[i].key_len = strlen(k);
			if (gen_value(a, sc->items, s, &v->u.map.entries[i].value, depth + 1))
				return -1;
		}
		return 0;
	case FLOE_AVRO_UNION: {
		size_t br = take(s) % sc->n_branches;
		if (gen_value(a, sc->branches[br], s, v, depth + 1))
			return -1;
		v->branch = (int32_t)br;
		return 0;
	}
	}
	return -1;
}

static bool value_eq(const floe_avro_value *x, const floe_avro_value *y)
{
	if (x->type != y->type || x->branch != y->branch)
		return false;
	switch (x->type) {
	case FLOE_AVRO_NULL: return true;
	case FLOE_AVRO_BOOLEAN: return x->u.b == y->u.b;
	case FLOE_AVRO_INT:
	case FLOE_AVRO_ENUM: return x->u.i == y->u.i;
	case FLOE_AVRO_LONG: return x->u.l == y->u.l;
	case FLOE_AVRO_FLOAT: return memcmp(&x->u.f, &y->u.f, 4) == 0;
	case FLOE_AVRO_DOUBLE: return memcmp(&x->u.d, &y->u.d, 8) == 0;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
	case FLOE_AVRO_FIXED:
		return x->u.bytes.len == y->u.bytes.len &&
		       (!x->u.bytes.len || memcmp(x->u.bytes.p, y->u.bytes.p, x->u.bytes.len) == 0);
	case FLOE_AVRO_RECORD:
	case FLOE_AVRO_ARRAY:
		if (x->u.list.n != y->u.list.n)
			return false;
		for (size_t i = 0; i < x->u.list.n; i++)
			if (!value_eq(&x->u.list.items[i], &y->u.list.items[i]))
				return false;
		return true;
	case FLOE_AVRO_MAP:
		if (x->u.map.n != y->u.map.n)
			return false;
		for (size_t i = 0; i < x->u.map.n; i++)
			if (x->u.map.entries[i].key_len != y->u.map.entries[i].key_len ||
			    memcmp(x->u.map.entries[i].key, y->u.map.entries[i].key,
				   x->u.map.entries[i].key_len) != 0 ||
			    !value_eq(&x->u.map.entries[i].value, &y->u.map.entries[i].value))
				return false;
		return true;
	default: return false;
	}
}

/* A reader value of a non-union field has branch -1; the generator gives
 * the same, so compare directly. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const codecs[] = {"null", "deflate", "snappy", "zstandard"};
	src s = {data, size, 0, 0};
	floe_arena a;
	floe_buf file, json;
	floe_avro_writer_opts o = FLOE_AVRO_WRITER_OPTS_INIT;
	floe_avro_writer *w = NULL;
	floe_avro_value *vals;
	floe_avro_schema *root, *again = NULL;
	size_t n;
	uint64_t fsize = 0;
	if (size > 65536)
		return 0;
	floe_arena_init(&a, 0);
	floe_buf_init(&file, 0);
	floe_buf_init(&json, 0);
	root = floe_avro_new_record(&a, "root", NULL);
	for (unsigned i = 0, nf = take(&s) % 6; i < nf; i++) {
		char fname[16];
		snprintf(fname, sizeof(fname), "c%u", i);
		floe_avro_record_add(&a, root, fname, gen_schema(&a, &s, 0));
	}
	if (floe_avro_schema_finish(root, NULL))
		abort();
	/* the schema's JSON round trip */
	if (floe_avro_schema_to_json(&json, root, NULL) ||
	    floe_avro_schema_parse(&again, &a, (const char *)json.data, json.len, NULL, NULL) ||
	    !floe_avro_schema_equal(root, again))
		abort();
	o.codec = codecs[take(&s) % 4];
	o.block_bytes = 1 + take(&s) * 8;
	o.block_records = take(&s) % 7;
	n = take(&s) % 24;
	vals = floe_arena_calloc(&a, n + 1, sizeof(*vals));
	if (!vals)
		abort();
	for (size_t i = 0; i < n; i++)
		if (gen_value(&a, root, &s, &vals[i], 0))
			abort();
	if (floe_avro_writer_open(&w, floe_output_buffer(&file, "rt.avro"), root, &o, NULL))
		abort();
	if (floe_avro_writer_meta_str(w, "k", "v", NULL))
		abort();
	for (size_t i = 0; i < n; i++)
		if (floe_avro_writer_append(w, &vals[i], NULL))
			abort();
	if (floe_avro_writer_close(w, &fsize, NULL) || fsize != file.len)
		abort();
	/* read back: with the writer's schema and with the built one */
	for (int pass = 0; pass < 2; pass++) {
		floe_input *in = floe_input_memory(file.data, file.len, "rt.avro");
		floe_avro_reader *r = NULL;
		size_t k = 0;
		if (floe_avro_reader_open(&r, in, NULL, NULL) ||
		    !floe_avro_schema_equal(floe_avro_reader_schema(r), root) ||
		    (pass && floe_avro_reader_set_schema(r, root, NULL)))
			abort();
		for (;; k++) {
			floe_avro_value v;
			bool eof;
			if (floe_avro_reader_next(&v, &eof, r, NULL))
				abort();
			if (eof)
				break;
			if (k >= n || !value_eq(&v, &vals[k]))
				abort();
		}
		if (k != n)
			abort();
		floe_avro_reader_free(r);
		floe_input_close(in);
	}
	floe_buf_reset(&file);
	floe_buf_reset(&json);
	floe_arena_reset(&a);
	return 0;
}
