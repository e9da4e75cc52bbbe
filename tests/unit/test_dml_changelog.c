/*
 * test_dml_changelog.c — floe_scan_changelog_open over tables that
 * floe_dml_* changed in both modes: copy-on-write (rewritten files carry
 * rows over, which cancel) and merge-on-read (position deletes in v2, DVs
 * in v3) give the same changes; identifier columns pair updates; ranges,
 * refs and bad ranges.
 */
#include "dml/dml_int.h"
#include "floe/scan.h"
#include "stream/stream_source.h"
#include "test_write_util.h"

static const char *cols = "id long not null, region string not null, name string, v long";
static int src_n;
static const char *src_dir;

static int collect(const char *data, size_t n, void *payload)
{
	return floe_buf_append(payload, data, n);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void merge_text(floe_table *t, const char *text)
{
	char path[1024];
	floe_dml_result r;
	floe_error err = {0};
	if (!src_dir)
		src_dir = t_tmpdir();
	snprintf(path, sizeof(path), "%s/src%d.jsonl", src_dir, src_n++);
	FILE *f = fopen(path, "w");
	T_CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	const char *on[] = {"id"};
	T_OK(floe_dml_merge(t, path, NULL, on, 1, NULL, &r, &err), &err);
	floe_dml_result_reset(&r);
}

/* The changelog as sorted CSV lines without the snapshot id column. */
static int changelog_text(floe_table *t, const floe_changelog_opts *o, floe_buf *out,
			  floe_error *err)
{
	floe_scan *sc = NULL;
	floe_buf raw;
	int rc;
	floe_buf_init(&raw, 0);
	floe_buf_clear(out);
	if ((rc = floe_scan_changelog_open(&sc, t, o, err)) ||
	    (rc = floe_scan_write(sc, FLOE_OUTPUT_CSV, collect, &raw, err))) {
		floe_scan_free(sc);
		floe_buf_reset(&raw);
		return rc;
	}
	floe_scan_free(sc);
	char *lines[256];
	size_t n = 0;
	char *p = (char *)floe_buf_cstr(&raw);
	bool header = true;
	while (p && *p && n < 256) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		char *last = strrchr(p, ',');
		if (last)
			*last = 0; /* _commit_snapshot_id differs per table */
		if (!header && *p)
			lines[n++] = p;
		header = false;
		p = nl ? nl + 1 : NULL;
	}
	qsort(lines, n, sizeof(char *), cmp_line);
	for (size_t i = 0; i < n; i++)
		T_EQ_INT(floe_buf_printf(out, "%s\n", lines[i]), 0);
	(void)floe_buf_cstr(out);
	floe_buf_reset(&raw);
	return FLOE_OK;
}

static const char *want_all =
	"1,eu,a,10,INSERT,0\n"
	"2,eu,b,20,INSERT,0\n"
	"2,eu,b,20,UPDATE_BEFORE,1\n"
	"2,eu,b2,21,UPDATE_AFTER,1\n"
	"3,us,c,30,DELETE,2\n"
	"3,us,c,30,INSERT,0\n"
	"4,us,,40,INSERT,0\n"
	"5,us,e,50,INSERT,1\n";

static void test_modes_agree(void)
{
	wenv e;
	floe_buf got;
	floe_error err = {0};
	env_open(&e, true);
	floe_buf_init(&got, 0);
	for (int fv = 2; fv <= 3; fv++)
		for (int mor = 0; mor < 2; mor++) {
			char name[32];
			snprintf(name, sizeof(name), "c%d%d", fv, mor);
			floe_table *t = make_table(&e, name, cols, "region", NULL, fv);
			floe_dml_opts o = FLOE_DML_OPTS_INIT;
			floe_dml_result r;
			o.mode = mor ? FLOE_DML_MERGE_ON_READ : FLOE_DML_COPY_ON_WRITE;
			merge_text(t, "{\"id\":1,\"region\":\"eu\",\"name\":\"a\",\"v\":10}\n"
				      "{\"id\":2,\"region\":\"eu\",\"name\":\"b\",\"v\":20}\n"
				      "{\"id\":3,\"region\":\"us\",\"name\":\"c\",\"v\":30}\n"
				      "{\"id\":4,\"region\":\"us\",\"name\":null,\"v\":40}\n");
			merge_text(t, "{\"id\":2,\"region\":\"eu\",\"name\":\"b2\",\"v\":21}\n"
				      "{\"id\":5,\"region\":\"us\",\"name\":\"e\",\"v\":50}\n");
			T_OK(floe_dml_delete(t, "id = 3", &o, &r, &err), &err);
			floe_dml_result_reset(&r);
			floe_changelog_opts co = FLOE_CHANGELOG_OPTS_INIT;
			const char *ids[] = {"id"};
			co.identifier_columns = ids;
			co.n_identifier_columns = 1;
			T_OK(changelog_text(t, &co, &got, &err), &err);
			T_EQ_STR((const char *)floe_buf_cstr(&got), want_all);
			/* without updates: the pair stays DELETE + INSERT */
			co.no_updates = true;
			T_OK(changelog_text(t, &co, &got, &err), &err);
			T_CHECK(strstr((const char *)floe_buf_cstr(&got), "2,eu,b,20,DELETE,1\n") != NULL);
			T_CHECK(strstr((const char *)floe_buf_cstr(&got), "2,eu,b2,21,INSERT,1\n") != NULL);
			/* a range: the last commit only, ordinal 0 */
			const floe_metadata *m = floe_table_metadata(t);
			const floe_snapshot *head = floe_metadata_current_snapshot(m);
			char from[32];
			snprintf(from, sizeof(from), "%lld", (long long)head->parent_id);
			co.no_updates = false;
			co.from = from;
			T_OK(changelog_text(t, &co, &got, &err), &err);
			T_EQ_STR((const char *)floe_buf_cstr(&got), "3,us,c,30,DELETE,0\n");
			/* bad ranges */
			co.from = "999";
			T_CHECK(changelog_text(t, &co, &got, &err) == FLOE_ENOTFOUND);
			co.from = "tag:none";
			T_CHECK(changelog_text(t, &co, &got, &err) == FLOE_ENOTFOUND);
			co.from = NULL;
			co.to = from;
			char head_id[32];
			snprintf(head_id, sizeof(head_id), "%lld", (long long)head->snapshot_id);
			co.from = head_id;
			T_CHECK(changelog_text(t, &co, &got, &err) == FLOE_EINVAL);
			floe_table_free(t);
		}
	floe_buf_reset(&got);
	env_close(&e);
}

/* Every block's text from src until it ends; *pos: the position after the
 * first `stop_after` blocks (0: never taken). */
static void read_source(stream_source *src, floe_buf *out, size_t stop_after, stream_offsets *pos)
{
	floe_error err = {0};
	for (size_t n = 0;;) {
		stream_block b;
		bool got, eof;
		T_OK(src->ops->next(src, &b, &got, &eof, &err), &err);
		if (eof || !got)
			break;
		T_EQ_INT(floe_buf_append(out, b.data, b.len), 0);
		stream_block_reset(&b);
		if (++n == stop_after) {
			T_OK(src->ops->position(src, pos, &err), &err);
			return;
		}
	}
}

/* A changelog source read whole equals one read in two parts with a
 * restart from the position in between (inside a snapshot: small blocks). */
static void test_iceberg_source_resumes_inside_a_snapshot(void)
{
	wenv e;
	floe_error err = {0};
	floe_buf whole, parts;
	env_open(&e, true);
	floe_buf_init(&whole, 0);
	floe_buf_init(&parts, 0);
	floe_table *t = make_table(&e, "src", cols, "region", NULL, 3);
	floe_buf in;
	floe_buf_init(&in, 0);
	for (int k = 0; k < 3; k++) {
		floe_buf_clear(&in);
		for (int i = 0; i < 300; i++)
			T_EQ_INT(floe_buf_printf(&in, "{\"id\":%d,\"region\":\"%s\",\"name\":\"n%d\",\"v\":%d}\n",
						 (i * 7 + k) % 400, i % 2 ? "eu" : "us", k, i),
				 0);
		merge_text(t, floe_buf_cstr(&in));
	}
	floe_table_free(t);
	stream_iceberg_opts o = {0};
	o.cat = e.cat;
	o.table = "db.src";
	o.mode = STREAM_ICEBERG_CHANGELOG;
	o.start = FLOE_START_EARLIEST;
	o.block_bytes = 4096;
	stream_source *a = NULL, *b = NULL;
	stream_offsets pos;
	stream_offsets_init(&pos);
	T_OK(stream_source_iceberg_new(&a, "s", &o, &err), &err);
	T_OK(a->ops->seek(a, NULL, &err), &err);
	read_source(a, &whole, 0, NULL);
	a->ops->free(a);
	T_OK(stream_source_iceberg_new(&a, "s", &o, &err), &err);
	T_OK(a->ops->seek(a, NULL, &err), &err);
	read_source(a, &parts, 7, &pos);
	a->ops->free(a);
	T_CHECK(stream_offsets_tok(&pos, "iceberg") != NULL);
	T_CHECK(stream_offsets_get(&pos, "iceberg", 0) > 0);
	T_OK(stream_source_iceberg_new(&b, "s", &o, &err), &err);
	T_OK(b->ops->seek(b, &pos, &err), &err);
	read_source(b, &parts, 0, NULL);
	b->ops->free(b);
	T_CHECK(whole.len > 3 * 4096);
	T_EQ_INT((int64_t)parts.len, (int64_t)whole.len);
	T_CHECK(parts.len == whole.len && !memcmp(parts.data, whole.data, whole.len));
	stream_offsets_reset(&pos);
	floe_buf_reset(&in);
	floe_buf_reset(&whole);
	floe_buf_reset(&parts);
	env_close(&e);
}

int main(void)
{
	T_RUN(test_modes_agree);
	T_RUN(test_iceberg_source_resumes_inside_a_snapshot);
	return t_finish();
}
