/*
 * test_parquet_read.c — the reader against the conformance corpus.
 *
 * tests/data/parquet/expected/MANIFEST.tsv (made by gen_expected.py from
 * pyarrow) lists every Parquet file of $FLOE_TESTDATA/parquet-testing and the
 * Iceberg encoding golden files with what floe must do:
 *   jsonl    rows equal to <path>.jsonl (read twice: default batches and
 *            batches of 7 rows, which cut through pages and nested rows)
 *   summary  rows/bytes/CRC-32 of the JSON lines equal <path>.summary
 *   error    reading fails cleanly, the message names the file
 *   crc-error reading with CRC checks fails with ECORRUPT "checksum 0x… != 0x…"
 * and every other file reads the same with page checksums verified.
 * Plus: every encoding golden file decodes to the same rows as its PLAIN
 * twin, and column selection / row-group selection on a nested file.
 */
#include <stdlib.h>

#include "arrow/arrow_build.h"
#include "harness.h"
#include "parquet/pjson.h"
#include "parquet/reader.h"
#include "util/alloc.h"
#include "util/hash.h"

/* Read a whole file into JSON lines; returns the floe status. */
static int dump(const char *path, int64_t batch_rows, bool crc, floe_buf *out, floe_error *err)
{
	size_t len;
	unsigned char *data = t_read_file(path, &len);
	floe_input *in;
	floe_parquet_reader *r = NULL;
	floe_parquet_reader_opts o = FLOE_PARQUET_READER_OPTS_INIT;
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	int rc;
	if (!data)
		return floe_error_set(err, FLOE_ENOTFOUND, "%s: cannot read", path);
	in = floe_input_memory(data, len, path);
	o.batch_rows = batch_rows;
	o.verify_checksums = crc;
	rc = floe_parquet_reader_open(&r, in, &o, err);
	if (!rc)
		rc = floe_parquet_reader_arrow_schema(r, &s, err);
	while (!rc) {
		bool eof;
		if ((rc = floe_parquet_reader_next(r, &a, &eof, err)) || eof)
			break;
		rc = floe_parquet__json_rows(out, &s, &a, 0, a.length, err);
		floe_arrow_array_release(&a);
	}
	floe_arrow_schema_release(&s);
	floe_parquet_reader_free(r);
	floe_input_close(in);
	free(data);
	return rc;
}

static void first_diff(const char *rel, const char *got, const char *want)
{
	int line = 1;
	const char *g = got, *w = want;
	while (*g && *g == *w) {
		if (*g == '\n')
			line++;
		g++, w++;
	}
	const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
	t_fail(__FILE__, __LINE__, "%s: line %d differs:\n  floe:    %.*s\n  pyarrow: %.*s", rel, line,
	       (int)(ge ? ge - g : 200), g, (int)(we ? we - w : 200), w);
}

static int n_jsonl, n_summary, n_error, n_crc, n_verified;

/* Files the manifest lists as crc-error (their pages fail verification). */
static char *crc_bad[16];
static size_t n_crc_bad;

static bool crc_is_bad(const char *rel)
{
	for (size_t i = 0; i < n_crc_bad; i++)
		if (!strcmp(crc_bad[i], rel))
			return true;
	return false;
}

static void check_entry(const char *rel, const char *kind)
{
	char exp_path[4096];
	const char *path = t_testdata(rel);
	floe_buf out;
	floe_error err = {0};
	int rc;
	floe_buf_init(&out, 0);
	snprintf(exp_path, sizeof(exp_path), "tests/data/parquet/expected/%s.%s", rel, kind);
	if (!strcmp(kind, "jsonl") || !strcmp(kind, "summary")) {
		size_t elen;
		unsigned char *want = t_read_file(exp_path, &elen);
		if (!want) {
			t_fail(__FILE__, __LINE__, "missing %s", exp_path);
			return;
		}
		rc = dump(path, 65536, false, &out, &err);
		if (rc) {
			t_fail(__FILE__, __LINE__, "%s: %s: %s", rel, floe_strerror(rc), err.msg);
		} else if (!strcmp(kind, "jsonl")) {
			n_jsonl++;
			if (out.len != elen || (elen && memcmp(out.data, want, elen) != 0))
				first_diff(rel, floe_buf_cstr(&out), (const char *)want);
			else {
				/* again in batches of 7 rows */
				floe_buf_clear(&out);
				rc = dump(path, 7, false, &out, &err);
				if (rc)
					t_fail(__FILE__, __LINE__, "%s (batches of 7): %s", rel, err.msg);
				else if (out.len != elen || (elen && memcmp(out.data, want, elen) != 0))
					first_diff(rel, floe_buf_cstr(&out), (const char *)want);
			}
		} else {
			char got[128];
			int64_t rows = 0;
			for (size_t i = 0; i < out.len; i++)
				rows += out.data[i] == '\n';
			snprintf(got, sizeof(got), "{\"rows\":%lld,\"bytes\":%zu,\"crc32\":%u}\n",
				 (long long)rows, out.len, floe_crc32(0, out.data, out.len));
			n_summary++;
			if (strcmp(got, (const char *)want) != 0)
				t_fail(__FILE__, __LINE__, "%s: %s != %s", rel, got, (const char *)want);
		}
		/* with page checksums verified, every file but the damaged ones
		 * reads the same (CRCs written by parquet-mr, pyarrow, ... agree
		 * with floe's) */
		if (!crc_is_bad(rel)) {
			floe_buf v;
			floe_buf_init(&v, 0);
			rc = dump(path, 65536, true, &v, &err);
			n_verified++;
			if (rc)
				t_fail(__FILE__, __LINE__, "%s (verified): %s: %s", rel, floe_strerror(rc),
				       err.msg);
			else if (v.len != out.len || (v.len && memcmp(v.data, out.data, v.len) != 0))
				t_fail(__FILE__, __LINE__, "%s: verified read differs", rel);
			floe_buf_reset(&v);
		}
		free(want);
	} else if (!strcmp(kind, "error")) {
		rc = dump(path, 65536, true, &out, &err);
		n_error++;
		if (rc == 0)
			t_fail(__FILE__, __LINE__, "%s: read without error, expected one", rel);
		else if (!strstr(err.msg, rel + strlen(rel) - 10))
			t_fail(__FILE__, __LINE__, "%s: message does not name the file: %s", rel, err.msg);
	} else if (!strcmp(kind, "crc-error")) {
		rc = dump(path, 65536, true, &out, &err);
		n_crc++;
		if (rc != FLOE_ECORRUPT || !strstr(err.msg, "checksum 0x") ||
		    !strstr(err.msg, "(the page is damaged"))
			t_fail(__FILE__, __LINE__, "%s: expected a CRC error, got %s: %s", rel,
			       floe_strerror(rc), err.msg);
	}
	floe_buf_reset(&out);
}

static void test_corpus(void)
{
	size_t len;
	char *m = (char *)t_read_file("tests/data/parquet/expected/MANIFEST.tsv", &len);
	T_CHECK(m != NULL);
	if (!m)
		return;
	for (char *p = strstr(m, "\tcrc-error"); p; p = strstr(p + 1, "\tcrc-error")) {
		char *start = p;
		while (start > m && start[-1] != '\n')
			start--;
		if (n_crc_bad < sizeof(crc_bad) / sizeof(crc_bad[0]))
			crc_bad[n_crc_bad++] = strndup(start, (size_t)(p - start));
	}
	for (char *save = NULL, *line = strtok_r(m, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tab1, *tab2;
		if (line[0] == '#')
			continue;
		tab1 = strchr(line, '\t');
		if (!tab1)
			continue;
		*tab1 = 0;
		tab2 = strchr(tab1 + 1, '\t');
		if (tab2)
			*tab2 = 0;
		check_entry(line, tab1 + 1);
	}
	free(m);
	for (size_t i = 0; i < n_crc_bad; i++)
		free(crc_bad[i]);
	printf("corpus: %d row comparisons, %d summaries, %d rejected, %d CRC checks, %d verified reads\n",
	       n_jsonl, n_summary, n_error, n_crc, n_verified);
	T_CHECK(n_jsonl > 200);
	T_CHECK(n_error >= 20);
	T_EQ_INT(n_crc, 2);
	T_EQ_INT(n_crc_bad, 2);
	T_CHECK(n_verified >= n_jsonl);
}

/* spec: each encoding must decode to the same values as the PLAIN file. */
static void test_encoding_goldens(void)
{
	static const char *enc[] = {"BYTE_STREAM_SPLIT", "DELTA_BINARY_PACKED", "DELTA_BYTE_ARRAY",
				    "DELTA_LENGTH_BYTE_ARRAY", "PLAIN_DICTIONARY", "RLE_DICTIONARY"};
	static const char *names[] = {"binary", "binary_with_nulls", "boolean", "boolean_with_nulls",
				      "double", "double_with_nulls", "float", "float_with_nulls",
				      "int32", "int32_with_nulls", "int64", "int64_with_nulls",
				      "string", "string_with_nulls", "uuid", "uuid_with_nulls"};
	int compared = 0;
	for (size_t e = 0; e < sizeof(enc) / sizeof(enc[0]); e++) {
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
			char rel[512], plain[512];
			floe_buf a, b;
			floe_error err = {0};
			FILE *f;
			snprintf(rel, sizeof(rel),
				 "apache-iceberg/parquet/src/testFixtures/resources/encodings/%s/%s.parquet",
				 enc[e], names[n]);
			snprintf(plain, sizeof(plain),
				 "apache-iceberg/parquet/src/testFixtures/resources/encodings/PLAIN/%s.parquet",
				 names[n]);
			if (!(f = fopen(t_testdata(rel), "rb")))
				continue;
			fclose(f);
			floe_buf_init(&a, 0);
			floe_buf_init(&b, 0);
			T_OK(dump(t_testdata(rel), 100, false, &a, &err), &err);
			T_OK(dump(t_testdata(plain), 1000, false, &b, &err), &err);
			if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0)
				t_fail(__FILE__, __LINE__, "%s differs from its PLAIN twin", rel);
			T_CHECK(a.len > 0);
			compared++;
			floe_buf_reset(&a);
			floe_buf_reset(&b);
		}
	}
	T_EQ_INT(compared, 30);
}

/* Selecting a nested leaf and a row group. */
static void test_selection(void)
{
	const char *path = t_testdata("parquet-testing/data/nested_structs.rust.parquet");
	size_t len;
	unsigned char *data = t_read_file(path, &len);
	floe_input *in;
	floe_parquet_reader *r = NULL;
	floe_error err = {0};
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	bool eof = false;
	int idx;
	T_CHECK(data != NULL);
	if (!data)
		return;
	in = floe_input_memory(data, len, "nested_structs.rust.parquet");
	T_OK(floe_parquet_reader_open(&r, in, NULL, &err), &err);
	if (r) {
		const floe_parquet_schema *sc = floe_parquet_reader_schema(r);
		/* the last leaf alone */
		idx = sc->leaves[sc->n_leaves - 1]->index;
		T_OK(floe_parquet_reader_select(r, &idx, 1, &err), &err);
		T_OK(floe_parquet_reader_arrow_schema(r, &s, &err), &err);
		T_EQ_INT(s.n_children, 1);
		T_OK(floe_parquet_reader_next(r, &a, &eof, &err), &err);
		T_CHECK(!eof && a.n_children == 1 && a.length == floe_parquet_reader_meta(r)->num_rows);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
		idx = -1;
		T_ERR(floe_parquet_reader_select(r, &idx, 1, &err), FLOE_EINVAL);
		idx = 5;
		T_ERR(floe_parquet_reader_select_row_groups(r, &idx, 1, &err), FLOE_EINVAL);
	}
	floe_parquet_reader_free(r);
	floe_input_close(in);
	free(data);
}

int main(void)
{
	T_RUN(test_corpus);
	T_RUN(test_encoding_goldens);
	T_RUN(test_selection);
	return t_finish();
}
