/*
 * test_puffin.c — Puffin footers and deletion vectors against Java's golden
 * files (apache-iceberg deletes/ and puffin/v1/) and iceberg-go's Java- and
 * Go-written DV Puffin files; corrupt inputs fail with ECORRUPT.
 */
#include <stdlib.h>

#include "harness.h"
#include "puffin/puffin_dv.h"
#include "puffin/puffin_file.h"
#include "util/alloc.h"

#define DELETES "apache-iceberg/core/src/test/resources/org/apache/iceberg/deletes/"
#define PUFFINS "apache-iceberg/core/src/test/resources/org/apache/iceberg/puffin/v1/"

static unsigned char *load(const char *rel, size_t *n)
{
	unsigned char *p = t_read_file(t_testdata(rel), n);
	if (!p)
		t_fail(__FILE__, __LINE__, "cannot read %s", rel);
	return p;
}

static void check_dv_file(const char *rel, const uint64_t *want, size_t n_want, size_t want_count)
{
	size_t n, count = 0;
	uint64_t *pos = NULL;
	floe_error err = {0};
	unsigned char *p = load(rel, &n);
	if (!p)
		return;
	T_OK(floe_dv_decode(&pos, &count, p, n, -1, (size_t)1 << 24, &err), &err);
	T_EQ_INT(count, want_count);
	for (size_t i = 0; i < n_want && i < count; i++)
		T_EQ_INT(pos[i], want[i]);
	for (size_t i = 1; i < count; i++)
		if (pos[i] <= pos[i - 1]) {
			t_fail(__FILE__, __LINE__, "%s: positions not ascending at %zu", rel, i);
			break;
		}
	floe_free(pos);
	free(p);
}

static void test_java_dv_blobs(void)
{
	static const uint64_t alt[] = {1, 3, 5, 7, 9};
	static const uint64_t large[] = {100, 101, 2147483747ULL, 2147483748ULL};
	check_dv_file(DELETES "empty-position-index.bin", NULL, 0, 0);
	check_dv_file(DELETES "small-alternating-values-position-index.bin", alt, 5, 5);
	check_dv_file(DELETES "small-and-large-values-position-index.bin", large, 4, 4);
	/* array, run and bitset containers across two keys */
	check_dv_file(DELETES "all-container-types-position-index.bin", NULL, 0, 132561);
}

static void test_roaring64_examples(void)
{
	size_t n, count;
	uint64_t *pos;
	floe_error err = {0};
	unsigned char *p = load(DELETES "64map32bitvals.bin", &n);
	if (p) {
		T_OK(floe_roaring64_decode(&pos, &count, p, n, 1000, &err), &err);
		T_EQ_INT(count, 10);
		for (size_t i = 0; i < count; i++)
			T_EQ_INT(pos[i], i);
		floe_free(pos);
		free(p);
	}
	p = load(DELETES "64mapempty.bin", &n);
	if (p) {
		T_OK(floe_roaring64_decode(&pos, &count, p, n, 1000, &err), &err);
		T_EQ_INT(count, 0);
		floe_free(pos);
		free(p);
	}
	p = load(DELETES "64mapspreadvals.bin", &n);
	if (p) {
		T_OK(floe_roaring64_decode(&pos, &count, p, n, 1000, &err), &err);
		T_EQ_INT(count, 100);
		/* keys 0..9, each with values 0..9 */
		T_EQ_INT(pos[0], 0);
		T_EQ_INT(pos[10], (uint64_t)1 << 32);
		T_EQ_INT(pos[99], ((uint64_t)9 << 32) | 9);
		floe_free(pos);
		free(p);
	}
	/* keys above 2^31 - 2 are rejected, as Java rejects them */
	p = load(DELETES "64maphighvals.bin", &n);
	if (p) {
		T_ERR(floe_roaring64_decode(&pos, &count, p, n, (size_t)1 << 20, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "exceeds") != NULL);
		free(p);
	}
}

static void test_dv_corruption(void)
{
	size_t n, count;
	uint64_t *pos;
	floe_error err = {0};
	unsigned char *p = load(DELETES "small-alternating-values-position-index.bin", &n);
	if (!p)
		return;
	/* CRC */
	p[n - 1] ^= 1;
	T_ERR(floe_dv_decode(&pos, &count, p, n, -1, 1000, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "CRC") != NULL);
	p[n - 1] ^= 1;
	/* cardinality from the manifest */
	T_ERR(floe_dv_decode(&pos, &count, p, n, 4, 1000, &err), FLOE_ECORRUPT);
	T_OK(floe_dv_decode(&pos, &count, p, n, 5, 1000, &err), &err);
	floe_free(pos);
	/* magic */
	p[4] ^= 0xff;
	T_ERR(floe_dv_decode(&pos, &count, p, n, -1, 1000, &err), FLOE_ECORRUPT);
	T_CHECK(strstr(err.msg, "magic") != NULL);
	p[4] ^= 0xff;
	/* length prefix and truncation */
	T_ERR(floe_dv_decode(&pos, &count, p, n - 1, -1, 1000, &err), FLOE_ECORRUPT);
	T_ERR(floe_dv_decode(&pos, &count, p, 3, -1, 1000, &err), FLOE_ECORRUPT);
	/* the cap */
	T_ERR(floe_dv_decode(&pos, &count, p, n, -1, 4, &err), FLOE_ECORRUPT);
	free(p);
}

static void test_puffin_footers(void)
{
	size_t n;
	floe_arena a;
	floe_puffin_footer f;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	unsigned char *p = load(PUFFINS "empty-puffin-uncompressed.bin", &n);
	if (p) {
		T_OK(floe_puffin_footer_parse(&f, &a, p, n, n, "empty", NULL, &err), &err);
		T_EQ_INT(f.n_blobs, 0);
		T_EQ_INT(f.footer_size, n - 4);
		free(p);
	}
	static const char *const files[] = {"sample-metric-data-uncompressed.bin",
					    "sample-metric-data-compressed-zstd.bin"};
	for (size_t k = 0; k < 2; k++) {
		char rel[256];
		snprintf(rel, sizeof(rel), PUFFINS "%s", files[k]);
		p = load(rel, &n);
		if (!p)
			continue;
		floe_input *in = floe_input_memory(p, n, files[k]);
		T_OK(floe_puffin_read_footer(&f, &a, in, &err), &err);
		T_EQ_INT(f.n_blobs, 2);
		if (f.n_blobs == 2) {
			floe_buf b;
			floe_buf_init(&b, 0);
			T_EQ_STR(f.blobs[0].type, "some-blob");
			T_OK(floe_puffin_read_blob(&b, in, &f.blobs[0], 1 << 20, &err), &err);
			T_EQ_INT(b.len, 9);
			T_CHECK(b.len == 9 && memcmp(b.data, "abcdefghi", 9) == 0);
			floe_buf_clear(&b);
			T_OK(floe_puffin_read_blob(&b, in, &f.blobs[1], 1 << 20, &err), &err);
			T_EQ_INT(b.len, 83);
			floe_buf_reset(&b);
		}
		floe_input_close(in);
		free(p);
	}
	floe_arena_reset(&a);
}

typedef struct dv_want {
	const char *ref;
	uint64_t pos[5];
	size_t n;
} dv_want;

static void check_dv_puffin(const char *rel, const dv_want *want, size_t n_want)
{
	size_t n;
	floe_arena a;
	floe_puffin_footer f;
	floe_error err = {0};
	unsigned char *p = load(rel, &n);
	if (!p)
		return;
	floe_arena_init(&a, 0);
	floe_input *in = floe_input_memory(p, n, rel);
	T_OK(floe_puffin_read_footer(&f, &a, in, &err), &err);
	T_EQ_INT(f.n_blobs, n_want);
	for (size_t i = 0; i < f.n_blobs && i < n_want; i++) {
		floe_buf b;
		uint64_t *pos = NULL;
		size_t count = 0;
		floe_buf_init(&b, 0);
		T_EQ_STR(f.blobs[i].type, "deletion-vector-v1");
		const char *ref = floe_puffin_blob_property(&f.blobs[i], "referenced-data-file");
		T_EQ_STR(ref, want[i].ref);
		T_OK(floe_puffin_read_blob(&b, in, &f.blobs[i], 1 << 20, &err), &err);
		T_OK(floe_dv_decode(&pos, &count, b.data, b.len, (int64_t)want[i].n, 1 << 20, &err),
		     &err);
		T_EQ_INT(count, want[i].n);
		for (size_t k = 0; k < count && k < want[i].n; k++)
			T_EQ_INT(pos[k], want[i].pos[k]);
		floe_free(pos);
		floe_buf_reset(&b);
	}
	floe_input_close(in);
	floe_arena_reset(&a);
	free(p);
}

static void test_iceberg_go_dv_puffins(void)
{
	static const dv_want single[] = {
		{"s3://warehouse/db/table/data/00000-0-abc.parquet", {1, 3, 5, 7, 9}, 5}};
	static const dv_want multi[] = {
		{"s3://warehouse/db/table/data/file-001.parquet", {0, 100, 200}, 3},
		{"s3://warehouse/db/table/data/file-002.parquet", {50, 150}, 2}};
	static const dv_want go[] = {{"data/test.parquet", {1, 3, 5, 7, 9}, 5}};
	check_dv_puffin("iceberg-go/table/dv/testdata/deletes/single-blob-dv.puffin", single, 1);
	check_dv_puffin("iceberg-go/table/dv/testdata/deletes/multi-blob-dv.puffin", multi, 2);
	check_dv_puffin("iceberg-go/puffin/testdata/deletion-vector-v1.puffin", go, 1);
}

static void test_puffin_corruption(void)
{
	size_t n;
	floe_arena a;
	floe_puffin_footer f;
	floe_error err = {0};
	floe_arena_init(&a, 0);
	unsigned char *p = load("iceberg-go/table/dv/testdata/deletes/multi-blob-dv.puffin", &n);
	if (!p)
		return;
	/* a bare DV blob is not a Puffin file (DuckDB's legacy output) */
	size_t bn;
	unsigned char *bare = load("duckdb-iceberg/data/persistent/legacy_bare_deletion_vector/"
				   "warehouse/default/legacy_bare_deletion_vector/data/"
				   "legacy-bare-deletion-vector.puffin",
				   &bn);
	if (bare) {
		floe_input *in = floe_input_memory(bare, bn, "bare.puffin");
		T_ERR(floe_puffin_read_footer(&f, &a, in, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "bare.puffin") != NULL);
		floe_input_close(in);
		free(bare);
	}
	/* payload size past the start of the file */
	unsigned char *q = malloc(n);
	memcpy(q, p, n);
	q[n - 12] = 0xff;
	q[n - 11] = 0xff;
	T_ERR(floe_puffin_footer_parse(&f, &a, q, n, n, "x", NULL, &err), FLOE_ECORRUPT);
	/* unknown flag */
	memcpy(q, p, n);
	q[n - 8] |= 0x80;
	T_ERR(floe_puffin_footer_parse(&f, &a, q, n, n, "x", NULL, &err), FLOE_EUNSUPPORTED);
	/* a blob that overlaps the footer: "length":44 -> "length":94 */
	memcpy(q, p, n);
	char *len = NULL;
	for (size_t i = 0; i + 11 <= n && !len; i++)
		if (memcmp(q + i, "\"length\":44", 11) == 0)
			len = (char *)q + i;
	T_CHECK(len != NULL);
	if (len) {
		len[9] = '9';
		T_ERR(floe_puffin_footer_parse(&f, &a, q, n, n, "x", NULL, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "outside") != NULL);
	}
	free(q);
	free(p);
	floe_arena_reset(&a);
}

/* A deletion vector's CRC-32 covers magic + bitmap: any one byte flipped in
 * a DV blob read from a Puffin file is refused (a bitmap byte flipped would
 * otherwise delete or resurrect rows), and the footer's magics are checked. */
static void test_dv_blob_flips(void)
{
	size_t n;
	floe_arena a;
	floe_puffin_footer f;
	floe_error err = {0};
	unsigned char *p = load("iceberg-go/table/dv/testdata/deletes/multi-blob-dv.puffin", &n);
	if (!p)
		return;
	floe_arena_init(&a, 0);
	floe_input *in = floe_input_memory(p, n, "m.puffin");
	T_OK(floe_puffin_read_footer(&f, &a, in, &err), &err);
	T_EQ_INT(f.n_blobs, 2);
	if (f.n_blobs == 2) {
		const floe_puffin_blob *b = &f.blobs[1];
		size_t off = (size_t)b->offset, len = (size_t)b->length;
		floe_buf blob;
		uint64_t *pos = NULL;
		size_t count = 0, refused = 0;
		floe_buf_init(&blob, 0);
		T_CHECK(len > 12 && off + len <= n);
		/* a bitmap byte (past length prefix and magic, before the CRC) */
		size_t at = off + 8 + (len - 12) / 2;
		p[at] ^= 0x04;
		T_OK(floe_puffin_read_blob(&blob, in, b, 1 << 20, &err), &err);
		T_ERR(floe_dv_decode(&pos, &count, blob.data, blob.len, 2, 1 << 20, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "deletion vector: CRC-32 mismatch") != NULL);
		T_CHECK(pos == NULL && count == 0);
		p[at] ^= 0x04;
		/* every byte of the blob in turn */
		for (size_t i = off; i < off + len; i++) {
			p[i] ^= 0x81;
			floe_buf_clear(&blob);
			T_OK(floe_puffin_read_blob(&blob, in, b, 1 << 20, &err), &err);
			int rc = floe_dv_decode(&pos, &count, blob.data, blob.len, 2, 1 << 20, &err);
			refused += rc == FLOE_ECORRUPT;
			if (rc == FLOE_OK)
				floe_free(pos);
			p[i] ^= 0x81;
		}
		T_EQ_INT(refused, len);
		/* undamaged: the blob still decodes to its positions */
		floe_buf_clear(&blob);
		T_OK(floe_puffin_read_blob(&blob, in, b, 1 << 20, &err), &err);
		T_OK(floe_dv_decode(&pos, &count, blob.data, blob.len, 2, 1 << 20, &err), &err);
		T_EQ_INT(count, 2);
		floe_free(pos);
		floe_buf_reset(&blob);
	}
	floe_input_close(in);
	/* the footer's structure: leading magic, footer-start magic, trailing magic */
	size_t where[] = {0, n - (size_t)f.footer_size, n - 1};
	for (size_t k = 0; k < 3; k++) {
		floe_puffin_footer g;
		p[where[k]] ^= 0x01;
		in = floe_input_memory(p, n, "m.puffin");
		T_ERR(floe_puffin_read_footer(&g, &a, in, &err), FLOE_ECORRUPT);
		T_CHECK(strstr(err.msg, "m.puffin") && strstr(err.msg, "magic"));
		floe_input_close(in);
		p[where[k]] ^= 0x01;
	}
	floe_arena_reset(&a);
	free(p);
}

int main(void)
{
	T_RUN(test_java_dv_blobs);
	T_RUN(test_roaring64_examples);
	T_RUN(test_dv_corruption);
	T_RUN(test_puffin_footers);
	T_RUN(test_iceberg_go_dv_puffins);
	T_RUN(test_puffin_corruption);
	T_RUN(test_dv_blob_flips);
	return t_finish();
}
