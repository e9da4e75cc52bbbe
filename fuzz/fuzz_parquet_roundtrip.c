/*
 * fuzz_parquet_roundtrip.c — random batch -> writer -> reader -> same rows.
 *
 * The input decides the writer options (codec, page version, dictionary,
 * page rows, dictionary size, row-group rows), the row count, every
 * validity bit, list length and value. The batch has flat, nested, list,
 * map and decimal columns. What the reader returns must render to the same
 * JSON lines as the batch itself; any difference traps.
 */
#include <stdint.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "parquet/writer.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct src {
	const uint8_t *p;
	size_t n, off;
} src;

static uint8_t u8(src *s)
{
	return s->off < s->n ? s->p[s->off++] : 0;
}

static bool ok;

static void *alloc0(size_t n)
{
	void *p = floe_calloc(1, n ? n : 1);
	if (!p)
		ok = false;
	return p;
}

/* Validity from the input: every bit, or all valid. */
static int64_t validity(src *s, struct ArrowArray *a, int64_t n, bool nullable)
{
	int64_t nulls = 0;
	if (!nullable)
		return 0;
	uint8_t *b = alloc0((size_t)(n + 7) / 8);
	if (!b)
		return 0;
	for (int64_t i = 0; i < n; i++) {
		if (u8(s) % 5)
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			nulls++;
	}
	floe_arrow_array_set_buffer(a, 0, b);
	a->null_count = nulls;
	return nulls;
}

static void prim(src *s, struct ArrowSchema *sc, struct ArrowArray *a, const char *fmt,
		 const char *name, int width, int64_t n, bool nullable)
{
	uint8_t *v;
	if (floe_arrow_schema_init(sc, fmt, name, nullable ? ARROW_FLAG_NULLABLE : 0, 0) ||
	    floe_arrow_array_init(a, 2, 0)) {
		ok = false;
		return;
	}
	a->length = n;
	validity(s, a, n, nullable);
	v = alloc0((size_t)(width ? n * width : (n + 7) / 8) + 8);
	if (!v)
		return;
	if (width == 0) { /* booleans */
		for (int64_t i = 0; i < n; i++)
			v[i >> 3] |= (uint8_t)((u8(s) & 1) << (i & 7));
	} else {
		for (int64_t i = 0; i < n * width; i++)
			v[i] = u8(s);
		if (fmt[0] == 'd') { /* decimal(20,2): sign-extend 9 random bytes */
			for (int64_t i = 0; i < n; i++) {
				uint8_t fill = (v[i * 16 + 8] & 0x80) ? 0xff : 0;
				memset(v + i * 16 + 9, fill, 7);
			}
		}
	}
	floe_arrow_array_set_buffer(a, 1, v);
}

static void strings(src *s, struct ArrowSchema *sc, struct ArrowArray *a, const char *name,
		    int64_t n, bool nullable)
{
	int32_t *off;
	uint8_t *d;
	if (floe_arrow_schema_init(sc, "u", name, nullable ? ARROW_FLAG_NULLABLE : 0, 0) ||
	    floe_arrow_array_init(a, 3, 0)) {
		ok = false;
		return;
	}
	a->length = n;
	validity(s, a, n, nullable);
	off = alloc0(sizeof(int32_t) * (size_t)(n + 1));
	d = alloc0((size_t)n * 8 + 1);
	if (!off || !d) {
		floe_free(off);
		floe_free(d);
		return;
	}
	for (int64_t i = 0; i < n; i++) {
		int len = u8(s) % 9;
		for (int k = 0; k < len; k++)
			d[off[i] + k] = (uint8_t)('a' + u8(s) % 4); /* low cardinality, valid UTF-8 */
		off[i + 1] = off[i] + len;
	}
	floe_arrow_array_set_buffer(a, 1, off);
	floe_arrow_array_set_buffer(a, 2, d);
}

/* Offsets of a list/map: lengths 0..3 from the input; returns the total. */
static int64_t offsets(src *s, struct ArrowArray *a, int64_t n)
{
	int32_t *off = alloc0(sizeof(int32_t) * (size_t)(n + 1));
	if (!off)
		return 0;
	for (int64_t i = 0; i < n; i++)
		off[i + 1] = off[i] + u8(s) % 4;
	floe_arrow_array_set_buffer(a, 1, off);
	return off[n];
}

static floe_parquet_schema *make_schema(void)
{
	floe_parquet_schema *ps = NULL;
	floe_parquet_field f;
	floe_parquet_node *st;
	if (floe_parquet_schema_new(&ps, "t", NULL))
		return NULL;
#define LEAF(NAME, PHYS, REP)                                                                 \
	do {                                                                                  \
		f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;                              \
		f.name = NAME;                                                                \
		f.physical = PHYS;                                                            \
		f.repetition = REP;                                                           \
	} while (0)
	LEAF("i", FLOE_PARQUET_INT32, FLOE_PARQUET_OPTIONAL);
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	LEAF("l", FLOE_PARQUET_INT64, FLOE_PARQUET_REQUIRED);
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	LEAF("d", FLOE_PARQUET_DOUBLE, FLOE_PARQUET_OPTIONAL);
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	LEAF("s", FLOE_PARQUET_BYTE_ARRAY, FLOE_PARQUET_OPTIONAL);
	f.logical.kind = FLOE_PARQUET_LT_STRING;
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	LEAF("b", FLOE_PARQUET_BOOLEAN, FLOE_PARQUET_OPTIONAL);
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	LEAF("dec", FLOE_PARQUET_FIXED_LEN_BYTE_ARRAY, FLOE_PARQUET_OPTIONAL);
	f.type_length = 9;
	f.logical.kind = FLOE_PARQUET_LT_DECIMAL;
	f.logical.precision = 20;
	f.logical.scale = 2;
	if (floe_parquet_schema_add(ps, NULL, &f, NULL, NULL))
		goto fail;
	{
		floe_parquet_field lf = FLOE_PARQUET_FIELD_INIT, el = FLOE_PARQUET_FIELD_INIT;
		lf.name = "li";
		el.physical = FLOE_PARQUET_INT32;
		if (floe_parquet_schema_add_list(ps, NULL, &lf, &el, NULL, NULL, NULL))
			goto fail;
	}
	f = (floe_parquet_field)FLOE_PARQUET_FIELD_INIT;
	f.name = "st";
	if (floe_parquet_schema_add(ps, NULL, &f, &st, NULL))
		goto fail;
	LEAF("x", FLOE_PARQUET_INT64, FLOE_PARQUET_OPTIONAL);
	if (floe_parquet_schema_add(ps, st, &f, NULL, NULL))
		goto fail;
	LEAF("y", FLOE_PARQUET_BYTE_ARRAY, FLOE_PARQUET_REQUIRED);
	f.logical.kind = FLOE_PARQUET_LT_STRING;
	if (floe_parquet_schema_add(ps, st, &f, NULL, NULL))
		goto fail;
	{
		floe_parquet_field mf = FLOE_PARQUET_FIELD_INIT, k = FLOE_PARQUET_FIELD_INIT,
				   v = FLOE_PARQUET_FIELD_INIT;
		mf.name = "m";
		k.physical = FLOE_PARQUET_BYTE_ARRAY;
		k.logical.kind = FLOE_PARQUET_LT_STRING;
		v.physical = FLOE_PARQUET_INT32;
		if (floe_parquet_schema_add_map(ps, NULL, &mf, &k, &v, NULL, NULL, NULL, NULL))
			goto fail;
	}
#undef LEAF
	if (floe_parquet_schema_finish(ps, NULL))
		goto fail;
	return ps;
fail:
	floe_parquet_schema_free(ps);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int codecs[] = {FLOE_PARQUET_UNCOMPRESSED, FLOE_PARQUET_SNAPPY, FLOE_PARQUET_GZIP,
				     FLOE_PARQUET_ZSTD, FLOE_PARQUET_LZ4_RAW, FLOE_PARQUET_BROTLI};
	src s = {data, size, 0};
	floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
	floe_parquet_schema *ps;
	struct ArrowSchema sc;
	struct ArrowArray a;
	floe_buf file, want, got;
	floe_error err = {0};
	int64_t n;
	uint8_t opt = u8(&s);
	int rc;

	o.codec = codecs[opt % 6];
	o.page_version = opt & 0x40 ? 2 : 1;
	o.dictionary = opt & 0x80;
	o.page_rows = 1 + u8(&s);
	o.dict_bytes = 8 + u8(&s) * 4;
	o.row_group_rows = u8(&s) % 4 ? 0 : 1 + u8(&s);
	n = (int64_t)(u8(&s) | (u8(&s) & 3) << 8);
	ok = true;
	if (!(ps = make_schema()))
		return 0;
	if (floe_arrow_schema_init(&sc, "+s", "", 0, 9) || floe_arrow_array_init(&a, 1, 9)) {
		floe_arrow_schema_release(&sc);
		floe_parquet_schema_free(ps);
		return 0;
	}
	a.length = n;
	prim(&s, sc.children[0], a.children[0], "i", "i", 4, n, true);
	prim(&s, sc.children[1], a.children[1], "l", "l", 8, n, false);
	prim(&s, sc.children[2], a.children[2], "g", "d", 8, n, true);
	strings(&s, sc.children[3], a.children[3], "s", n, true);
	prim(&s, sc.children[4], a.children[4], "b", "b", 0, n, true);
	prim(&s, sc.children[5], a.children[5], "d:20,2", "dec", 16, n, true);
	{ /* li: list<int32> */
		struct ArrowSchema *ls = sc.children[6];
		struct ArrowArray *la = a.children[6];
		int64_t m;
		if (floe_arrow_schema_init(ls, "+l", "li", ARROW_FLAG_NULLABLE, 1) ||
		    floe_arrow_array_init(la, 2, 1))
			ok = false;
		else {
			la->length = n;
			validity(&s, la, n, true);
			m = offsets(&s, la, n);
			prim(&s, ls->children[0], la->children[0], "i", "element", 4, m, true);
		}
	}
	{ /* st: struct<x: int64, y: string (required)> */
		struct ArrowSchema *ss = sc.children[7];
		struct ArrowArray *sa = a.children[7];
		if (floe_arrow_schema_init(ss, "+s", "st", ARROW_FLAG_NULLABLE, 2) ||
		    floe_arrow_array_init(sa, 1, 2))
			ok = false;
		else {
			sa->length = n;
			validity(&s, sa, n, true);
			prim(&s, ss->children[0], sa->children[0], "l", "x", 8, n, true);
			strings(&s, ss->children[1], sa->children[1], "y", n, false);
		}
	}
	{ /* m: map<string, int32> */
		struct ArrowSchema *ms = sc.children[8];
		struct ArrowArray *ma = a.children[8];
		int64_t m;
		if (floe_arrow_schema_init(ms, "+m", "m", ARROW_FLAG_NULLABLE, 1) ||
		    floe_arrow_array_init(ma, 2, 1))
			ok = false;
		else {
			ma->length = n;
			validity(&s, ma, n, true);
			m = offsets(&s, ma, n);
			if (floe_arrow_schema_init(ms->children[0], "+s", "entries", 0, 2) ||
			    floe_arrow_array_init(ma->children[0], 1, 2))
				ok = false;
			else {
				ma->children[0]->length = m;
				strings(&s, ms->children[0]->children[0], ma->children[0]->children[0],
					"key", m, false);
				prim(&s, ms->children[0]->children[1], ma->children[0]->children[1], "i",
				     "value", 4, m, true);
			}
		}
	}
	floe_buf_init(&file, 0);
	floe_buf_init(&want, 0);
	floe_buf_init(&got, 0);
	if (ok && floe_parquet__json_rows(&want, &sc, &a, 0, n, &err) == 0) {
		floe_output *out = floe_output_buffer(&file, "rt.parquet");
		floe_parquet_writer *w = NULL;
		rc = out ? floe_parquet_writer_new(&w, out, ps, &o, &err) : FLOE_ENOMEM;
		if (!rc)
			rc = floe_parquet_writer_write(w, &a, &sc, &err);
		if (!rc)
			rc = floe_parquet_writer_close(w, NULL, &err);
		floe_parquet_writer_free(w);
		if (out && floe_output_close(out, NULL))
			rc = FLOE_EIO;
		if (rc == 0) {
			floe_input *in = floe_input_memory(file.data, file.len, "rt.parquet");
			floe_parquet_reader *r = NULL;
			floe_parquet_reader_opts ro = FLOE_PARQUET_READER_OPTS_INIT;
			struct ArrowSchema rs = {0};
			struct ArrowArray ra = {0};
			ro.batch_rows = 1 + (opt & 0x3f);
			ro.verify_checksums = true;
			rc = in ? floe_parquet_reader_open(&r, in, &ro, &err) : FLOE_ENOMEM;
			if (!rc)
				rc = floe_parquet_reader_arrow_schema(r, &rs, &err);
			while (!rc) {
				bool eof;
				if ((rc = floe_parquet_reader_next(r, &ra, &eof, &err)) || eof)
					break;
				rc = floe_parquet__json_rows(&got, &rs, &ra, 0, ra.length, &err);
				floe_arrow_array_release(&ra);
			}
			if (rc != 0 && rc != FLOE_ENOMEM)
				__builtin_trap(); /* floe cannot read what it wrote */
			if (rc == 0 && (got.len != want.len || (want.len && memcmp(got.data, want.data, want.len))))
				__builtin_trap(); /* different rows */
			floe_arrow_schema_release(&rs);
			floe_parquet_reader_free(r);
			floe_input_close(in);
		} else if (rc != FLOE_ENOMEM) {
			__builtin_trap(); /* a valid batch must be writable */
		}
	}
	floe_buf_reset(&file);
	floe_buf_reset(&want);
	floe_buf_reset(&got);
	floe_arrow_array_release(&a);
	floe_arrow_schema_release(&sc);
	floe_parquet_schema_free(ps);
	return 0;
}
