/*
 * write_tool.c — a test-only driver of the write layer (not a product
 * command: streaming ingest is `floe ingest`, in src/stream). It reads JSON
 * rows (json_batch.h forms) for a table of an embedded-default catalog,
 * writes them through one task writer and commits the files in one append,
 * then prints one JSON object: the snapshot id and, per file, its path,
 * record count, size and partition (human strings).
 *
 *   write_tool --dir DIR --table NS.NAME [--input FILE] [--batch-rows N]
 *              [--target-size BYTES] [--max-open N] [--budget BYTES]
 *              [--checkpoint-rows N]
 *
 * --checkpoint-rows completes the task writer every N rows (each checkpoint
 * is committed as its own append), so several snapshots come from one run.
 * Used by tests/interop/test_write_interop.py; found next to the floe
 * binary's build directory (tests/write_tool) or through FLOE_WRITE_TOOL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "json_batch.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "write/write.h"

typedef struct tool_opts {
	const char *dir, *table, *input;
	int64_t batch_rows, target, budget, checkpoint_rows;
	size_t max_open;
} tool_opts;

static int usage(void)
{
	fprintf(stderr, "usage: write_tool --dir DIR --table NS.NAME [--input FILE] "
			"[--batch-rows N] [--target-size BYTES] [--max-open N] [--budget BYTES] "
			"[--checkpoint-rows N]\n");
	return 2;
}

static void print_files(floe_jw *w, const floe_table *t, const floe_data_file *files, size_t n)
{
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	for (size_t i = 0; i < n; i++) {
		const floe_data_file *f = &files[i];
		const floe_partition_spec *spec = floe_metadata_spec(m, f->spec_id);
		floe_jw_obj_begin(w);
		floe_jw_kv_str(w, "path", f->file_path);
		floe_jw_kv_i64(w, "records", f->record_count);
		floe_jw_kv_i64(w, "size", f->file_size_in_bytes);
		floe_jw_key(w, "partition");
		floe_jw_obj_begin(w);
		for (size_t k = 0; spec && k < spec->n_fields && k < f->partition.n; k++) {
			const floe_partition_field *pf = &spec->fields[k];
			const floe_schema_entry *e = floe_schema_find(s, pf->source_id);
			floe_buf h;
			floe_buf_init(&h, 0);
			floe_jw_key(w, pf->name);
			if (f->partition.values[k].is_null)
				floe_jw_null(w);
			else if (floe_transform_human(&h, &pf->transform, e ? e->type : NULL,
						      &f->partition.values[k]) == 0)
				floe_jw_str(w, floe_buf_cstr(&h));
			else
				floe_jw_null(w);
			floe_buf_reset(&h);
		}
		floe_jw_obj_end(w);
		floe_jw_obj_end(w);
	}
}

/* Complete the task writer and commit its files as one append. */
static int checkpoint(floe_table *t, floe_task_writer *tw, floe_jw *w, int *snapshots,
		      floe_error *err)
{
	floe_arena a;
	floe_data_file *files = NULL;
	size_t n = 0;
	floe_append *ap = NULL;
	int64_t snap = -1;
	int rc;
	floe_arena_init(&a, 0);
	if ((rc = floe_task_writer_complete(tw, &files, &n, &a, err)))
		goto done;
	if ((rc = floe_append_new(&ap, t, NULL, err)))
		goto done;
	for (size_t i = 0; i < n && !rc; i++)
		rc = floe_append_add_file(ap, &files[i], err);
	if (!rc)
		rc = floe_append_set_summary(ap, "floe.test-tool", "write_tool", err);
	if (!rc)
		rc = floe_append_commit(ap, &snap, err);
	if (rc) {
		/* the files were never committed: take them back */
		for (size_t i = 0; i < n; i++)
			floe_io_remove_quiet(floe_table_io(t), files[i].file_path);
		goto done;
	}
	floe_jw_obj_begin(w);
	floe_jw_kv_i64(w, "snapshot_id", snap);
	floe_jw_key(w, "files");
	floe_jw_arr_begin(w);
	print_files(w, t, files, n);
	floe_jw_arr_end(w);
	floe_jw_obj_end(w);
	(*snapshots)++;
done:
	floe_append_free(ap);
	floe_free(files);
	floe_arena_reset(&a);
	return rc;
}

static int run(const tool_opts *o, floe_error *err)
{
	floe_catalog *cat = NULL;
	floe_table *t = NULL;  /* its metadata is what the writer borrows: never committed to */
	floe_table *tc = NULL; /* commits go through this one (they replace its metadata) */
	floe_task_writer *tw = NULL;
	json_batch *jb = NULL;
	floe_write_config cfg;
	floe_task_writer_opts two = FLOE_TASK_WRITER_OPTS_INIT;
	floe_arena a;
	floe_buf out, line;
	floe_jw w;
	FILE *in = stdin;
	char ns[256];
	const char *dot = strrchr(o->table, '.');
	int64_t since_ckpt = 0;
	int snapshots = 0, rc;

	floe_arena_init(&a, 0);
	floe_buf_init(&out, 0);
	floe_buf_init(&line, 0);
	floe_jw_init(&w, &out, 0);
	if (!dot || dot == o->table || (size_t)(dot - o->table) >= sizeof(ns)) {
		rc = floe_error_set(err, FLOE_EINVAL, "--table must be NS.NAME");
		goto done;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(dot - o->table), o->table);
	if ((rc = floe_catalog_open_default(&cat, o->dir, err)) ||
	    (rc = floe_table_load(&t, cat, ns, dot + 1, err)) ||
	    (rc = floe_table_load(&tc, cat, ns, dot + 1, err)))
		goto done;
	const floe_metadata *m = floe_table_metadata(t);
	if ((rc = floe_write_config_from(&cfg, &a, m, err)))
		goto done;
	two.target_file_size = o->target;
	two.max_open_files = o->max_open;
	two.budget_bytes = (uint64_t)o->budget;
	if ((rc = floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &two, err)) ||
	    (rc = json_batch_new(&jb, floe_metadata_current_schema(m), err)))
		goto done;
	if (o->input && !(in = fopen(o->input, "r"))) {
		rc = floe_error_set(err, FLOE_EIO, "cannot open '%s'", o->input);
		goto done;
	}
	floe_jw_obj_begin(&w);
	floe_jw_key(&w, "checkpoints");
	floe_jw_arr_begin(&w);
	for (;;) {
		int c = EOF;
		floe_buf_clear(&line);
		while ((c = fgetc(in)) != EOF && c != '\n')
			if ((rc = floe_buf_putc(&line, (char)c)))
				goto done;
		bool blank = line.len == 0 || strspn(floe_buf_cstr(&line), " \t\r") == line.len;
		if (!blank) {
			if ((rc = json_batch_append_text(jb, floe_buf_cstr(&line), line.len, err)))
				goto done;
			since_ckpt++;
		}
		bool last = c == EOF;
		bool ckpt = o->checkpoint_rows > 0 && since_ckpt >= o->checkpoint_rows;
		if (json_batch_rows(jb) > 0 &&
		    (json_batch_rows(jb) >= o->batch_rows || last || ckpt)) {
			struct ArrowArray b;
			struct ArrowSchema bs;
			if ((rc = json_batch_finish(jb, &b, &bs, err)))
				goto done;
			rc = floe_task_writer_write(tw, &b, &bs, err);
			floe_arrow_array_release(&b);
			floe_arrow_schema_release(&bs);
			if (rc)
				goto done;
		}
		if (ckpt || last) {
			if ((rc = checkpoint(tc, tw, &w, &snapshots, err)))
				goto done;
			since_ckpt = 0;
		}
		if (last)
			break;
	}
	floe_jw_arr_end(&w);
	floe_jw_obj_end(&w);
	if ((rc = floe_jw_finish(&w)))
		goto done;
	fwrite(out.data, 1, out.len, stdout);
	fputc('\n', stdout);
done:
	if (in && in != stdin)
		fclose(in);
	if (rc)
		floe_task_writer_abort(tw);
	else
		floe_task_writer_free(tw);
	json_batch_free(jb);
	floe_table_free(t);
	floe_table_free(tc);
	floe_catalog_free(cat);
	floe_buf_reset(&out);
	floe_buf_reset(&line);
	floe_arena_reset(&a);
	return rc;
}

static bool num_arg(const char *s, int64_t *out)
{
	char *end;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || v < 0)
		return false;
	*out = v;
	return true;
}

int main(int argc, char **argv)
{
	tool_opts o = {0};
	floe_error err = {0};
	int64_t n;
	o.batch_rows = 10000;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			return usage();
		if (strcmp(a, "--dir") == 0)
			o.dir = v;
		else if (strcmp(a, "--table") == 0)
			o.table = v;
		else if (strcmp(a, "--input") == 0)
			o.input = v;
		else if (strcmp(a, "--batch-rows") == 0 && num_arg(v, &n) && n > 0)
			o.batch_rows = n;
		else if (strcmp(a, "--target-size") == 0 && num_arg(v, &n))
			o.target = n;
		else if (strcmp(a, "--max-open") == 0 && num_arg(v, &n))
			o.max_open = (size_t)n;
		else if (strcmp(a, "--budget") == 0 && num_arg(v, &n))
			o.budget = n;
		else if (strcmp(a, "--checkpoint-rows") == 0 && num_arg(v, &n))
			o.checkpoint_rows = n;
		else
			return usage();
		i++;
	}
	if (!o.dir || !o.table)
		return usage();
	if (run(&o, &err)) {
		fprintf(stderr, "write_tool: %s\n", err.msg);
		return 1;
	}
	return 0;
}
