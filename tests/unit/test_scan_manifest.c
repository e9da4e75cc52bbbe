/*
 * test_scan_manifest.c — the fast manifest reader (iceberg/manifest_scan.h)
 * agrees with the generic one (floe_manifest_read) on every manifest of
 * every shared table (Spark, Flink, Impala, Trino, Hive, PyIceberg, DuckDB,
 * BigQuery writers): statuses, inherited snapshot ids and sequence numbers,
 * v3 first_row_ids, partition tuples, all metrics, offsets, equality ids,
 * DV references; and it reads only the requested metrics when asked.
 */
#include <stdlib.h>

#include "harness.h"
#include "iceberg/manifest_scan.h"
#include "io/fileio.h"
#include "util/rand.h"
#include "table/table_impl.h"

typedef struct collected {
	floe_arena a;
	floe_manifest_entry *e;
	size_t n, cap;
	size_t pos; /* compare cursor */
	const floe_path_map *map;
	const char *where;
	int mismatches;
	bool only_metrics; /* second pass: metrics restricted */
} collected;

static int collect(const floe_manifest_entry *e, void *payload)
{
	collected *c = payload;
	if (c->n == c->cap) {
		size_t nc = c->cap ? c->cap * 2 : 64;
		floe_manifest_entry *ne = realloc(c->e, nc * sizeof(*ne));
		if (!ne)
			return FLOE_ENOMEM;
		c->e = ne;
		c->cap = nc;
	}
	c->e[c->n] = *e;
	if (floe_data_file_copy(&c->e[c->n].file, &c->a, &e->file))
		return FLOE_ENOMEM;
	c->n++;
	return 0;
}

static bool same_longs(const floe_id_long *a, size_t na, const floe_id_long *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].value != b[i].value)
			return false;
	return true;
}

static bool same_bytes(const floe_id_bytes *a, size_t na, const floe_id_bytes *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].id != b[i].id || a[i].n != b[i].n || memcmp(a[i].p, b[i].p, a[i].n) != 0)
			return false;
	return true;
}

#define MISMATCH(what)                                                                        \
	do {                                                                                  \
		if (c->mismatches++ < 5)                                                      \
			t_fail(__FILE__, __LINE__, "%s: entry %zu (%s): %s differs", c->where, \
			       c->pos, w->file.file_path, what);                                \
		return 0;                                                                     \
	} while (0)

static int compare(const floe_manifest_entry *e, void *payload)
{
	collected *c = payload;
	if (c->pos >= c->n) {
		t_fail(__FILE__, __LINE__, "%s: the fast reader delivered more entries", c->where);
		return 1;
	}
	const floe_manifest_entry *w = &c->e[c->pos];
	const floe_data_file *f = &e->file, *g = &w->file;
	floe_arena tmp;
	floe_arena_init(&tmp, 1024);
	const char *mapped = floe_path_map_apply(c->map, &tmp, f->file_path);
	bool path_ok = mapped && !strcmp(mapped, g->file_path);
	floe_arena_reset(&tmp);
	t_checks++;
	if (!path_ok)
		MISMATCH("file_path");
	if (e->status != w->status || e->snapshot_id != w->snapshot_id ||
	    e->sequence_number != w->sequence_number ||
	    e->file_sequence_number != w->file_sequence_number)
		MISMATCH("status/snapshot/sequence numbers");
	if (f->content != g->content || strcasecmp(f->file_format, g->file_format) ||
	    f->record_count != g->record_count || f->file_size_in_bytes != g->file_size_in_bytes ||
	    f->spec_id != g->spec_id)
		MISMATCH("content/format/counts");
	if (!floe_partition_equal(&f->partition, &g->partition))
		MISMATCH("partition");
	if (!c->only_metrics &&
	    (!same_longs(f->column_sizes, f->n_column_sizes, g->column_sizes, g->n_column_sizes) ||
	     !same_longs(f->value_counts, f->n_value_counts, g->value_counts, g->n_value_counts) ||
	     !same_longs(f->null_value_counts, f->n_null_value_counts, g->null_value_counts,
			 g->n_null_value_counts) ||
	     !same_longs(f->nan_value_counts, f->n_nan_value_counts, g->nan_value_counts,
			 g->n_nan_value_counts) ||
	     !same_bytes(f->lower_bounds, f->n_lower_bounds, g->lower_bounds, g->n_lower_bounds) ||
	     !same_bytes(f->upper_bounds, f->n_upper_bounds, g->upper_bounds, g->n_upper_bounds)))
		MISMATCH("metrics");
	if (c->only_metrics) {
		/* only column 1's metrics */
		for (size_t i = 0; i < f->n_value_counts; i++)
			if (f->value_counts[i].id != 1)
				MISMATCH("restricted metrics");
		for (size_t i = 0; i < f->n_lower_bounds; i++)
			if (f->lower_bounds[i].id != 1)
				MISMATCH("restricted bounds");
	}
	if (f->key_metadata_len != g->key_metadata_len ||
	    (f->key_metadata_len && memcmp(f->key_metadata, g->key_metadata, f->key_metadata_len)))
		MISMATCH("key_metadata");
	if (!c->only_metrics &&
	    (f->n_split_offsets != g->n_split_offsets ||
	     (f->n_split_offsets &&
	      memcmp(f->split_offsets, g->split_offsets, f->n_split_offsets * 8))))
		MISMATCH("split_offsets");
	if (f->n_equality_ids != g->n_equality_ids ||
	    (f->n_equality_ids && memcmp(f->equality_ids, g->equality_ids, f->n_equality_ids * 4)))
		MISMATCH("equality_ids");
	if (f->has_sort_order_id != g->has_sort_order_id ||
	    (f->has_sort_order_id && f->sort_order_id != g->sort_order_id))
		MISMATCH("sort_order_id");
	if (f->first_row_id != g->first_row_id || f->content_offset != g->content_offset ||
	    f->content_size_in_bytes != g->content_size_in_bytes)
		MISMATCH("first_row_id/content offsets");
	if ((f->referenced_data_file == NULL) != (g->referenced_data_file == NULL) ||
	    (f->referenced_data_file && strcmp(f->referenced_data_file, g->referenced_data_file)))
		MISMATCH("referenced_data_file");
	c->pos++;
	return 0;
}

static long n_manifests, n_entries;

static void check_manifest(floe_table *t, const floe_manifest_file *mf, const char *dir)
{
	floe_input *in = NULL;
	floe_error err = {0};
	collected c = {0};
	floe_arena_init(&c.a, 65536);
	c.map = floe_table_path_map(t);
	c.where = dir;
	if (floe_io_open_read(floe_table_io(t), mf->path, &in, &err)) {
		t_fail(__FILE__, __LINE__, "%s: %s", dir, err.msg);
		goto done;
	}
	T_OK(floe_manifest_read(in, floe_table_metadata(t), mf, c.map, collect, &c, &err), &err);
	floe_mscan_opts o = FLOE_MSCAN_OPTS_INIT;
	o.all_metrics = true;
	o.column_sizes = true;
	o.split_offsets = true;
	o.key_metadata = true;
	o.deleted = true;
	T_OK(floe_manifest_scan(in, floe_table_metadata(t), mf, &o, compare, &c, NULL, &err), &err);
	T_EQ_INT(c.pos, c.n);
	/* restricted metrics */
	int32_t ids[] = {1};
	floe_mscan_opts r = FLOE_MSCAN_OPTS_INIT;
	r.metric_ids = ids;
	r.n_metric_ids = 1;
	r.key_metadata = true;
	r.deleted = true;
	c.pos = 0;
	c.only_metrics = true;
	floe_mscan_stats st = {0};
	T_OK(floe_manifest_scan(in, floe_table_metadata(t), mf, &r, compare, &c, &st, &err), &err);
	T_EQ_INT(st.entries, c.n);
	n_manifests++;
	n_entries += (long)c.n;
done:
	floe_input_close(in);
	free(c.e);
	floe_arena_reset(&c.a);
}

static char *field(char *line, int idx)
{
	char *p = line;
	for (int i = 0; i < idx && p; i++) {
		p = strchr(p, '\t');
		if (p)
			p++;
	}
	if (!p)
		return NULL;
	size_t n = strcspn(p, "\t\n");
	static char out[16][2048];
	static int slot;
	char *o = out[slot++ % 16];
	snprintf(o, 2048, "%.*s", (int)n, p);
	return o;
}

static void check_table(floe_fileio *io, char *line)
{
	char *dir = field(line, 0), *meta = field(line, 1), *recorded = field(line, 3);
	char abs_dir[2048], metapath[4096];
	char r1[2048], r2[2048], r3[2048], r4[2048], r5[2048], r6[2048];
	snprintf(abs_dir, sizeof(abs_dir), "%s", t_testdata(dir));
	snprintf(metapath, sizeof(metapath), "%s/metadata/%s", abs_dir, meta);
	snprintf(r1, sizeof(r1), "%s", recorded);
	snprintf(r2, sizeof(r2), "%s", strncmp(recorded, "./", 2) == 0 ? recorded + 2 : recorded);
	snprintf(r3, sizeof(r3), "%s", strncmp(recorded, "file://", 7) == 0 ? recorded + 7 : recorded);
	snprintf(r4, sizeof(r4), "%s", t_testdata("duckdb-iceberg/data/persistent/"));
	snprintf(r5, sizeof(r5), "%s", t_testdata("glaredb/testdata/iceberg/"));
	snprintf(r6, sizeof(r6), "%s", t_testdata("glaredb/testdata/wh/"));
	floe_path_rule rules[] = {{r1, abs_dir}, {r2, abs_dir},	       {r3, abs_dir},
				  {"data/persistent/", r4}, {"./iceberg/", r5}, {"wh/", r6}};
	floe_path_map map = {rules, sizeof(rules) / sizeof(rules[0])};
	floe_table *t = NULL;
	floe_error err = {0};
	if (floe_table_load_path(&t, io, metapath, &map, &err)) {
		t_fail(__FILE__, __LINE__, "%s: %s", dir, err.msg);
		return;
	}
	const floe_metadata *m = floe_table_metadata(t);
	/* every snapshot, so older manifests (other specs, v1) are covered too */
	for (size_t s = 0; s < m->n_snapshots; s++) {
		floe_arena a;
		floe_manifest_file *mfs;
		size_t n;
		floe_arena_init(&a, 65536);
		if (floe_table_manifests(&mfs, &n, &a, t, &m->snapshots[s], &err) == 0) {
			for (size_t i = 0; i < n; i++)
				if (floe_io_exists(floe_table_io(t), mfs[i].path))
					check_manifest(t, &mfs[i], dir);
		}
		floe_arena_reset(&a);
	}
	floe_table_free(t);
}

static void test_every_shared_manifest(void)
{
	size_t n;
	char *tsv = (char *)t_read_file(t_testdata("_derived/table_summaries.tsv"), &n);
	floe_fileio *io = floe_io_router_new(floe_io_local_new(), NULL, NULL);
	T_CHECK(tsv != NULL);
	if (!tsv)
		return;
	char *save = NULL;
	for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || strncmp(line, "table_dir", 9) == 0)
			continue;
		check_table(io, line);
	}
	printf("  %ld manifests, %ld entries\n", n_manifests, n_entries);
	T_CHECK(n_manifests > 200);
	floe_io_free(io);
	free(tsv);
}

/* one manifest of an identity(uuid) spec over the given UUIDs: its summary */
static void uuid_summary(const char *const *uuids, size_t n, floe_manifest_file *mf, floe_arena *a)
{
	floe_error err = {0};
	floe_schema *s;
	floe_partition_spec *spec;
	int32_t lp = 999;
	floe_fileio *io = floe_io_memory_new();
	floe_output *out = NULL;
	floe_manifest_writer *w = NULL;
	T_OK(floe_schema_parse_compact(&s, a, "id long, u uuid, f double", &err), &err);
	T_OK(floe_spec_parse_expr(&spec, a, "u, f", s, 0, &lp, &err), &err);
	T_OK(floe_io_create(io, "mem://m.avro", false, &out, &err), &err);
	T_OK(floe_manifest_writer_open(&w, out, "mem://m.avro", 2, s, spec, FLOE_MANIFEST_DATA, 1, NULL,
				       &err),
	     &err);
	for (size_t i = 0; i < n; i++) {
		floe_data_file f;
		floe_value pv[2] = {{.type = FLOE_T_UUID}, {.type = FLOE_T_DOUBLE}};
		uint8_t u[16];
		T_CHECK(floe_uuid_parse(uuids[i], strlen(uuids[i]), u));
		pv[0].v.bin.p = u;
		pv[0].v.bin.n = 16;
		pv[1].v.f64 = i % 2 ? 0.0 : -0.0;
		floe_data_file_init(&f);
		f.file_path = "mem://d.parquet";
		f.file_format = "PARQUET";
		f.record_count = 1;
		f.file_size_in_bytes = 10;
		f.partition = (floe_partition){pv, 2};
		T_OK(floe_manifest_writer_add(w, FLOE_ENTRY_ADDED, -1, -1, -1, &f, &err), &err);
	}
	T_OK(floe_manifest_writer_close(w, mf, a, &err), &err);
	floe_io_free(io);
}

/* Partition summaries Java prunes correctly: UUID bounds valid in its signed
 * order too, or no summaries at all (apache/iceberg#14216); zero bounds that
 * cover both zeros */
static void test_summaries_safe_for_java(void)
{
	floe_arena a;
	floe_manifest_file mf;
	floe_arena_init(&a, 0);
	const char *straddle[] = {"123e4567-e89b-12d3-a456-426614174000",
				  "9e3e4567-e89b-12d3-a456-426614174000"};
	uuid_summary(straddle, 2, &mf, &a);
	T_CHECK(!mf.partitions_present);
	T_EQ_INT(mf.n_partitions, 0);
	const char *low[] = {"123e4567-e89b-12d3-a456-426614174000",
			     "323e4567-e89b-12d3-a456-426614174000"};
	uuid_summary(low, 2, &mf, &a);
	T_CHECK(mf.partitions_present);
	T_EQ_INT(mf.n_partitions, 2);
	const floe_field_summary *us = &mf.partitions[0];
	T_CHECK(us->has_lower && us->has_upper && us->lower_len == 16 && us->upper_len == 16);
	T_EQ_INT(us->lower[0], 0x12);
	/* the upper bound steps past the low halves Java reads as negative */
	static const uint8_t want_hi[16] = {0x32, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd4};
	T_CHECK(memcmp(us->upper, want_hi, 16) == 0);
	T_EQ_INT(us->contains_nan, 0); /* written (false) for every type, as Java does */
	/* -0.0 and 0.0 were both values: lower -0.0, upper +0.0 */
	const floe_field_summary *fs = &mf.partitions[1];
	T_CHECK(fs->has_lower && fs->lower_len == 8 && fs->lower[7] == 0x80);
	T_CHECK(fs->has_upper && fs->upper_len == 8 && fs->upper[7] == 0);
	const char *one[] = {"123e4567-e89b-12d3-a456-426614174000"};
	uuid_summary(one, 1, &mf, &a);
	T_CHECK(mf.partitions_present);
	/* a lone -0.0: the upper bound is widened to +0.0 */
	fs = &mf.partitions[1];
	T_CHECK(fs->lower[7] == 0x80 && fs->upper[7] == 0);
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_every_shared_manifest);
	T_RUN(test_summaries_safe_for_java);
	return t_finish();
}
