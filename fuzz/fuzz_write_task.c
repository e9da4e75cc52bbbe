/*
 * fuzz_write_task.c — random batch -> task writer -> files -> floe's reader.
 *
 * The input decides the partition spec (from a list covering every
 * transform), the target file size, the open-file limit and the memory
 * budget, the row count, every validity bit and value (strings are raw
 * bytes, not necessarily UTF-8), and where the batch is cut into writes.
 * Every row must come back exactly once, in a file whose partition tuple is
 * floe_transform_apply of that row's source values, with value/null counts
 * matching the file; a take() of input-chosen rows must pass the checks.
 * Any difference traps.
 */
#include <stdint.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_check.h"
#include "arrow/arrow_take.h"
#include "iceberg/arrow_schema.h"
#include "parquet/reader.h"
#include "util/alloc.h"
#include "write/write_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct src {
	const uint8_t *p;
	size_t n, off;
} src;

static uint8_t u8(src *s)
{
	return s->off < s->n ? s->p[s->off++] : 0;
}

static uint64_t u64(src *s)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | u8(s);
	return v;
}

#define CHECK(c)                                                                              \
	do {                                                                                  \
		if (!(c))                                                                     \
			__builtin_trap();                                                     \
	} while (0)

static const char *const cols =
	"id long not null, i int, l long, s string, bin binary, d date, ts timestamptz, "
	"tsn timestamp_ns, dec decimal(9,2), st struct<x: int>";
static const char *const specs[] = {
	NULL,
	"bucket(3, id)",
	"i, s",
	"truncate(2, s), truncate(10, l), truncate(3, bin)",
	"day(ts), hour(tsn)",
	"year(d), month(ts), bucket(2, dec)",
	"void(i), st.x",
	"bucket(5, s), truncate(4, dec), month(d)",
};

static uint8_t *bits(src *s, int64_t n, int64_t *nulls)
{
	uint8_t *b = floe_calloc(1, (size_t)(n + 7) / 8 + 1);
	*nulls = 0;
	for (int64_t i = 0; b && i < n; i++) {
		if (u8(s) % 4)
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			(*nulls)++;
	}
	return b;
}

static void fixed_col(src *s, struct ArrowArray *a, int64_t n, int width, bool nullable,
		      bool ids)
{
	int64_t nulls = 0;
	uint8_t *v;
	CHECK(floe_arrow_array_init(a, 2, 0) == 0);
	a->length = n;
	if (nullable) {
		floe_arrow_array_set_buffer(a, 0, bits(s, n, &nulls));
		a->null_count = nulls;
	}
	v = floe_calloc((size_t)n + 1, (size_t)width);
	CHECK(v);
	for (int64_t i = 0; i < n; i++) {
		if (ids) {
			memcpy(v + i * 8, &i, 8);
			continue;
		}
		uint64_t x = u64(s);
		if (width == 4) {
			int32_t y = (int32_t)x;
			memcpy(v + i * 4, &y, 4);
		} else if (width == 16) {
			/* decimal(9,2): unscaled within 9 digits */
			floe_i128 d = (floe_i128)((int64_t)x % 1000000000);
			memcpy(v + i * 16, &d, 16);
		} else {
			memcpy(v + i * 8, &x, 8);
		}
	}
	floe_arrow_array_set_buffer(a, 1, v);
}

static void bytes_col(src *s, struct ArrowArray *a, int64_t n)
{
	int64_t nulls;
	int32_t *off = floe_calloc((size_t)n + 1, 4);
	uint8_t *d = floe_calloc((size_t)n * 8 + 1, 1);
	CHECK(off && d && floe_arrow_array_init(a, 3, 0) == 0);
	a->length = n;
	floe_arrow_array_set_buffer(a, 0, bits(s, n, &nulls));
	a->null_count = nulls;
	for (int64_t i = 0; i < n; i++) {
		int len = u8(s) % 9;
		for (int k = 0; k < len; k++)
			d[off[i] + k] = u8(s);
		off[i + 1] = off[i] + len;
	}
	floe_arrow_array_set_buffer(a, 1, off);
	floe_arrow_array_set_buffer(a, 2, d);
}

typedef struct check {
	const floe_schema *schema;
	const floe_partition_spec *spec;
	const floe_partition *part;
	uint8_t *seen;
	int64_t n;
} check;

static void check_batch(check *c, const struct ArrowArray *b, const struct ArrowSchema *bs)
{
	floe_arrow_view root, idv;
	CHECK(floe_arrow_view_init(&root, bs, b, NULL) == 0);
	CHECK(floe_arrow_view_child(&idv, &root, bs->children[0], b->children[0], NULL) == 0);
	for (int64_t r = 0; r < b->length; r++) {
		int64_t id = floe_arrow_view_int(&idv, r);
		CHECK(id >= 0 && id < c->n && !c->seen[id]);
		c->seen[id] = 1;
	}
	for (size_t k = 0; k < c->spec->n_fields; k++) {
		const floe_partition_field *pf = &c->spec->fields[k];
		const floe_schema_entry *e = floe_schema_find(c->schema, pf->source_id);
		const floe_type *rt = c->schema->root;
		floe_arrow_view cur = root;
		const struct ArrowSchema *s = bs;
		const struct ArrowArray *a = b;
		/* walk the struct path (top level or one struct deep) */
		int32_t chain[2] = {e->id, 0};
		int depth = 1;
		if (e->parent_id) {
			chain[0] = e->parent_id;
			chain[1] = e->id;
			depth = 2;
		}
		for (int d = 0; d < depth; d++) {
			int pos = -1;
			for (size_t j = 0; j < rt->n_fields; j++)
				if (rt->fields[j].id == chain[d])
					pos = (int)j;
			CHECK(pos >= 0);
			floe_arrow_view next;
			CHECK(floe_arrow_view_child(&next, &cur, s->children[pos], a->children[pos],
						    NULL) == 0);
			cur = next;
			s = s->children[pos];
			a = a->children[pos];
			rt = rt->fields[pos].type;
		}
		floe_write__source fs;
		fs.view = cur;
		CHECK(floe_write__source_bind(&fs, e->type, e->full_name, NULL) == 0);
		for (int64_t r = 0; r < b->length; r++) {
			floe_value v, t;
			floe_write__source_value(&v, &fs, r);
			CHECK(floe_transform_apply(&t, &pf->transform, e->type, &v, NULL) == 0);
			CHECK(floe_value_equal(&t, &c->part->values[k]));
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	src s = {data, size, 0};
	floe_arena a;
	floe_schema *schema = NULL;
	floe_partition_spec *spec = NULL;
	floe_metadata_builder *mb = NULL;
	floe_metadata *m = NULL;
	floe_strmap props;
	floe_write_config cfg;
	floe_task_writer *tw = NULL;
	floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
	floe_fileio *io = floe_io_memory_new();
	struct ArrowSchema as;
	struct ArrowArray b;
	floe_data_file *files = NULL;
	size_t n_files = 0;
	int32_t lp = 999;
	floe_arena_init(&a, 0);
	floe_strmap_init(&props);
	const char *expr = specs[u8(&s) % (sizeof(specs) / sizeof(specs[0]))];
	CHECK(floe_schema_parse_compact(&schema, &a, cols, NULL) == 0);
	if (expr)
		CHECK(floe_spec_parse_expr(&spec, &a, expr, schema, 0, &lp, NULL) == 0);
	CHECK(floe_strmap_set(&props, "write.parquet.page-row-limit", "16") == 0);
	CHECK(floe_metadata_builder_new_table(&mb, 3, "mem://t", NULL, schema, spec, NULL, &props,
					      NULL) == 0);
	CHECK(floe_metadata_builder_finish(&m, mb, NULL, 0, NULL) == 0);
	const floe_schema *sc = floe_metadata_current_schema(m);
	CHECK(floe_write_config_from(&cfg, &a, m, NULL) == 0);
	o.target_file_size = 512 + (int64_t)(u8(&s) % 64) * 256;
	o.max_open_files = 1 + u8(&s) % 6;
	o.budget_bytes = (uint64_t)(4 + u8(&s) % 64) << 10;
	o.operation_id = "fuzz";

	int64_t n = u8(&s) % 200;
	CHECK(floe_iceberg_arrow_schema(&as, sc, NULL) == 0);
	CHECK(floe_arrow_array_init(&b, 1, 10) == 0);
	b.length = n;
	fixed_col(&s, b.children[0], n, 8, false, true);
	fixed_col(&s, b.children[1], n, 4, true, false);
	fixed_col(&s, b.children[2], n, 8, true, false);
	bytes_col(&s, b.children[3], n);
	bytes_col(&s, b.children[4], n);
	fixed_col(&s, b.children[5], n, 4, true, false);
	fixed_col(&s, b.children[6], n, 8, true, false);
	fixed_col(&s, b.children[7], n, 8, true, false);
	fixed_col(&s, b.children[8], n, 16, true, false);
	{
		struct ArrowArray *st = b.children[9];
		int64_t nulls;
		CHECK(floe_arrow_array_init(st, 1, 1) == 0);
		st->length = n;
		floe_arrow_array_set_buffer(st, 0, bits(&s, n, &nulls));
		st->null_count = nulls;
		fixed_col(&s, st->children[0], n, 4, true, false);
	}
	CHECK(floe_arrow_check(&as, &b, NULL) == 0);

	/* take: input-chosen rows, checked structurally */
	if (n > 0) {
		int64_t idx[64], k = u8(&s) % 64;
		struct ArrowArray t;
		for (int64_t i = 0; i < k; i++)
			idx[i] = u8(&s) % n;
		CHECK(floe_arrow_take(&t, &as, &b, idx, k, NULL) == 0);
		CHECK(t.length == k && floe_arrow_check(&as, &t, NULL) == 0);
		floe_arrow_array_release(&t);
	}

	CHECK(floe_task_writer_new(&tw, io, m, &cfg, &o, NULL) == 0);
	/* the batch in up to three writes */
	int64_t cut1 = n ? u8(&s) % (n + 1) : 0, cut2 = cut1 + (n - cut1 ? u8(&s) % (n - cut1 + 1) : 0);
	int64_t cuts[4] = {0, cut1, cut2, n};
	for (int k = 0; k < 3; k++) {
		struct ArrowArray slice;
		floe_arrow_slice_view(&slice, &b, cuts[k], cuts[k + 1] - cuts[k]);
		CHECK(floe_task_writer_write(tw, &slice, &as, NULL) == 0);
	}
	CHECK(floe_task_writer_complete(tw, &files, &n_files, &a, NULL) == 0);
	floe_task_writer_free(tw);

	check c = {sc, floe_metadata_default_spec(m), NULL, floe_calloc((size_t)n + 1, 1), n};
	int64_t total = 0;
	for (size_t f = 0; f < n_files; f++) {
		floe_input *in = NULL;
		floe_parquet_reader *r = NULL;
		struct ArrowSchema rs;
		bool eof = false;
		int64_t rows = 0;
		c.part = &files[f].partition;
		CHECK(files[f].partition.n == c.spec->n_fields);
		CHECK(floe_io_open_read(io, files[f].file_path, &in, NULL) == 0);
		CHECK((int64_t)in->size == files[f].file_size_in_bytes);
		CHECK(floe_parquet_reader_open(&r, in, NULL, NULL) == 0);
		CHECK(floe_parquet_reader_arrow_schema(r, &rs, NULL) == 0);
		while (!eof) {
			struct ArrowArray rb;
			CHECK(floe_parquet_reader_next(r, &rb, &eof, NULL) == 0);
			if (eof)
				break;
			check_batch(&c, &rb, &rs);
			rows += rb.length;
			floe_arrow_array_release(&rb);
		}
		CHECK(rows == files[f].record_count);
		for (size_t k = 0; k < files[f].n_value_counts; k++)
			CHECK(files[f].value_counts[k].value == rows);
		total += rows;
		floe_arrow_schema_release(&rs);
		floe_parquet_reader_free(r);
		floe_input_close(in);
	}
	CHECK(total == n);
	for (int64_t i = 0; i < n; i++)
		CHECK(c.seen[i]);
	floe_free(c.seen);
	floe_free(files);
	floe_arrow_array_release(&b);
	floe_arrow_schema_release(&as);
	floe_metadata_free(m);
	floe_io_free(io);
	floe_strmap_reset(&props);
	floe_arena_reset(&a);
	return 0;
}
