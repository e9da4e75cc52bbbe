/*
 * test_write_index_persist.c — the persisted key index (floe-key-index-v1,
 * src/write/write_index_persist.c): the blob round trip through a Puffin file
 * on the memory FileIO, exact and general keys; every validation failure a
 * loader must see (CRC, truncation, version, entry count, a file id out of
 * range, no such blob); and floe_key_index_foreach over a spilled index
 * against a model (what persisting writes).
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "io/fileio.h"
#include "puffin/puffin_file.h"
#include "util/alloc.h"
#include "util/hash.h"
#include "write/write_index.h"
#include "write/write_index_persist.h"

typedef struct ent {
	uint8_t key[32];
	size_t klen;
	uint32_t fid;
	uint64_t pos;
} ent;

typedef struct got {
	ent *e;
	size_t n, cap;
	char paths[8][64];
	size_t n_paths;
} got;

static int on_file(void *payload, const char *path, size_t len)
{
	got *g = payload;
	if (g->n_paths < 8 && len < 64) {
		memcpy(g->paths[g->n_paths], path, len);
		g->paths[g->n_paths][len] = 0;
	}
	g->n_paths++;
	return 0;
}

static int on_entry(void *payload, const uint8_t *key, size_t klen, uint32_t fid, uint64_t pos)
{
	got *g = payload;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 64;
		g->e = realloc(g->e, g->cap * sizeof(ent));
	}
	ent *e = &g->e[g->n++];
	memcpy(e->key, key, klen < 32 ? klen : 32);
	e->klen = klen;
	e->fid = fid;
	e->pos = pos;
	return 0;
}

static const int32_t FIELDS[2] = {1, 2};
static const char *PATHS[3] = {"mem://t/data/a.parquet", "mem://t/data/b.parquet",
			       "mem://t/data/c.parquet"};

static size_t make_key(uint8_t *b, bool exact, size_t i)
{
	if (exact) {
		int64_t v = (int64_t)i * 7919 - 5000;
		b[0] = 1;
		memcpy(b + 1, &v, 8);
		return 9;
	}
	char s[24];
	int n = snprintf(s, sizeof(s), "k%zu", i);
	uint32_t l = (uint32_t)n;
	b[0] = 1;
	memcpy(b + 1, &l, 4);
	memcpy(b + 5, s, (size_t)n);
	return 5 + (size_t)n;
}

/* Write a blob of n entries to path on io. */
static void write_blob(floe_fileio *io, const char *path, bool exact, size_t n)
{
	floe_error err;
	floe_output *out = NULL;
	floe_kib_writer *kw = NULL;
	floe_key_index_blob_hdr h = {4242, 4141, 7, FIELDS, exact ? 1 : 2, exact, "pipe"};
	T_OK(floe_io_create(io, path, true, &out, &err), &err);
	T_OK(floe_kib_writer_new(&kw, out, &h, PATHS, 3, &err), &err);
	uint8_t kb[32];
	for (size_t i = 0; i < n; i++) {
		size_t kl = make_key(kb, exact, i);
		T_OK(floe_kib_writer_entry(kw, kb, kl, (uint32_t)(i % 3), i * 3 + 1, &err), &err);
	}
	/* a file id past the list is refused by the writer */
	T_ERR(floe_kib_writer_entry(kw, kb, 1, 3, 0, &err), FLOE_EINVAL);
	uint64_t size = 0;
	T_OK(floe_kib_writer_finish(kw, &size, &err), &err);
	T_CHECK(size > n);
	T_OK(floe_output_close(out, &err), &err);
	floe_kib_writer_free(kw);
}

static void test_round_trip(void)
{
	floe_fileio *io = floe_io_memory_new();
	floe_error err;
	for (int exact = 0; exact < 2; exact++) {
		size_t n = exact ? 20000 : 200000; /* general: > 1 MiB, the reader's window refills */
		write_blob(io, "mem://t/metadata/ki.puffin", exact, n);
		floe_buf blob;
		floe_buf_init(&blob, 0);
		T_OK(floe_kib_read_file(io, "mem://t/metadata/ki.puffin", &blob, &err), &err);
		/* the Puffin footer names the blob as the spec wants */
		floe_input *in = NULL;
		floe_arena fa;
		floe_arena_init(&fa, 1024);
		floe_puffin_footer ft;
		T_OK(floe_io_open_read(io, "mem://t/metadata/ki.puffin", &in, &err), &err);
		T_OK(floe_puffin_read_footer(&ft, &fa, in, &err), &err);
		T_EQ_INT(ft.n_blobs, 1);
		T_EQ_STR(ft.blobs[0].type, FLOE_KEY_INDEX_BLOB_TYPE);
		T_CHECK(ft.blobs[0].snapshot_id == 4242 && ft.blobs[0].sequence_number == 7);
		T_EQ_STR(floe_puffin_blob_property(&ft.blobs[0], "entries"), exact ? "20000" : "200000");
		T_EQ_STR(floe_puffin_blob_property(&ft.blobs[0], "floe.pipeline-id"), "pipe");
		floe_input_close(in);
		floe_arena_reset(&fa);

		floe_arena a;
		floe_arena_init(&a, 1024);
		floe_key_index_blob_hdr h;
		uint64_t nf = 0, ne = 0;
		got g = {0};
		T_OK(floe_kib_decode(blob.data, blob.len, "ki", &h, &a, &nf, &ne, on_file, on_entry, &g,
				     &err),
		     &err);
		T_CHECK(h.snapshot_id == 4242 && h.parent_id == 4141 && h.parent_seq == 7);
		T_CHECK(h.exact == (exact == 1) && h.n_fields == (size_t)(exact ? 1 : 2));
		T_CHECK(h.field_ids[0] == 1);
		T_EQ_INT(nf, 3);
		T_EQ_INT(ne, n);
		T_EQ_INT(g.n_paths, 3);
		T_EQ_STR(g.paths[1], PATHS[1]);
		T_EQ_INT(g.n, n);
		int bad = 0;
		for (size_t i = 0; i < g.n && !bad; i++) {
			uint8_t kb[32];
			size_t kl = make_key(kb, exact, i);
			bad = g.e[i].klen != kl || memcmp(g.e[i].key, kb, kl) ||
			      g.e[i].fid != i % 3 || g.e[i].pos != i * 3 + 1;
		}
		T_CHECK(!bad);
		free(g.e);

		/* the header alone, for comparing before decoding */
		floe_key_index_blob_hdr h2;
		T_OK(floe_kib_decode_header(blob.data, blob.len, "ki", &h2, &a, &nf, &ne, &err), &err);
		T_CHECK(h2.snapshot_id == 4242 && h2.parent_id == 4141 && nf == 3 && ne == n);
		/* validation: each of these must be refused, nothing handed out */
		uint8_t *p = blob.data;
		size_t len = blob.len;
		got none = {0};
		p[len / 2] ^= 1; /* a flipped bit: CRC */
		T_ERR(floe_kib_decode(p, len, "ki", &h, &a, &nf, &ne, on_file, on_entry, &none, &err),
		      FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "CRC") != NULL);
		p[len / 2] ^= 1;
		T_ERR(floe_kib_decode(p, len - 100, "ki", &h, &a, &nf, &ne, on_file, on_entry, &none,
				      &err),
		      FLOE_ECORRUPT); /* truncated */
		T_ERR(floe_kib_decode(p, 10, "ki", &h, &a, &nf, &ne, NULL, NULL, NULL, &err),
		      FLOE_ECORRUPT);
		/* a well-formed CRC over wrong contents: version, entry count */
		uint32_t v2 = 2, crc;
		uint8_t save[4];
		memcpy(save, p + 4, 4);
		memcpy(p + 4, &v2, 4);
		crc = floe_crc32c(0, p, len - 4);
		memcpy(p + len - 4, &crc, 4);
		T_ERR(floe_kib_decode(p, len, "ki", &h, &a, &nf, &ne, on_file, on_entry, &none, &err),
		      FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "version") != NULL);
		memcpy(p + 4, save, 4);
		uint64_t more = n + 1;
		memcpy(p + len - 12, &more, 8);
		crc = floe_crc32c(0, p, len - 4);
		memcpy(p + len - 4, &crc, 4);
		T_ERR(floe_kib_decode(p, len, "ki", &h, &a, &nf, &ne, NULL, NULL, NULL, &err),
		      FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "count") != NULL);
		T_EQ_INT(none.n, 0);
		floe_buf_reset(&blob);
		floe_arena_reset(&a);
	}
	/* a Puffin file without the blob (a DV file) */
	floe_buf b;
	floe_buf_init(&b, 0);
	const char *foot = "{\"blobs\":[]}";
	T_CHECK(floe_buf_append(&b, "PFA1PFA1", 8) == 0 && floe_buf_append(&b, foot, strlen(foot)) == 0 &&
		floe_buf_put_u32le(&b, (uint32_t)strlen(foot)) == 0 && floe_buf_put_u32le(&b, 0) == 0 &&
		floe_buf_append(&b, "PFA1", 4) == 0);
	T_OK(floe_io_write_all(io, "mem://t/metadata/other.puffin", b.data, b.len, true, &err), &err);
	floe_buf out;
	floe_buf_init(&out, 0);
	T_ERR(floe_kib_read_file(io, "mem://t/metadata/other.puffin", &out, &err), FLOE_ECORRUPT);
	floe_buf_reset(&out);
	floe_buf_reset(&b);
	floe_io_free(io);
}

/* ---- floe_key_index_foreach: what a persisted index holds ---------------------- */

typedef struct fe {
	int64_t *model; /* -1 none */
	size_t n, seen;
	bool exact;
	int bad;
} fe;

static int fe_cb(void *payload, const uint8_t *key, size_t klen, uint32_t fid, uint64_t pos)
{
	fe *c = payload;
	size_t i;
	if (c->exact) {
		int64_t v;
		if (klen != 9)
			return c->bad++, 0;
		memcpy(&v, key + 1, 8);
		i = (size_t)((v + 5000) / 7919);
	} else {
		char s[24] = {0};
		memcpy(s, key + 5, klen - 5 < 23 ? klen - 5 : 23);
		i = (size_t)strtoull(s + 1, NULL, 10);
	}
	if (i >= c->n || c->model[i] != (int64_t)((uint64_t)fid << 20 | pos))
		c->bad++;
	else
		c->model[i] = -2; /* seen once */
	c->seen++;
	return 0;
}

static void foreach_model(bool exact, size_t budget)
{
	floe_key_index *ix = NULL;
	floe_error err;
	size_t n = 6000;
	T_OK(floe_key_index_new(&ix, exact, budget, t_tmpdir(), &err), &err);
	int64_t *model = malloc(n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		model[i] = -1;
	uint64_t xs = 0x9e3779b97f4a7c15ULL;
	uint8_t kb[32];
	for (size_t op = 0; op < 40000; op++) {
		xs ^= xs << 13;
		xs ^= xs >> 7;
		xs ^= xs << 17;
		size_t i = (size_t)(xs % n);
		size_t kl = make_key(kb, exact, i);
		if (xs % 5 == 0) {
			T_OK(floe_key_index_del(ix, kb, kl, &err), &err);
			model[i] = -1;
		} else {
			uint32_t fid = (uint32_t)(xs >> 40) % 100;
			uint64_t pos = op;
			T_OK(floe_key_index_put(ix, kb, kl, fid, pos, &err), &err);
			model[i] = (int64_t)((uint64_t)fid << 20 | pos);
		}
	}
	floe_key_index_stats st;
	floe_key_index_get_stats(ix, &st);
	if (budget)
		T_CHECK(st.spills > 0);
	fe c = {model, n, 0, exact, 0};
	T_OK(floe_key_index_foreach(ix, fe_cb, &c, &err), &err);
	T_EQ_INT(c.bad, 0);
	size_t missing = 0;
	for (size_t i = 0; i < n; i++)
		missing += model[i] >= 0;
	T_EQ_INT(missing, 0);
	free(model);
	floe_key_index_free(ix);
}

static void test_foreach(void)
{
	foreach_model(true, 0);
	foreach_model(false, 0);
	foreach_model(true, 16384);  /* spilled: runs and memory, newest wins */
	foreach_model(false, 32768);
}

int main(void)
{
	T_RUN(test_round_trip);
	T_RUN(test_foreach);
	return t_finish();
}
