/*
 * delete_tool.c — a test-only driver of the delete writers (not a product
 * command: upserts and `floe delete` come with the upsert writer). It reads
 * one JSON request for a table of an embedded-default catalog, writes the
 * files through the write layer and commits them in one row delta:
 *
 *   {
 *     "data_rows": [{...table row...}, ...],          optional: new data files
 *     "equality_fields": ["id", "region"],             equality deletes on these
 *     "full_rows": false,                              delete rows are whole rows
 *     "equality_rows": [{...}, ...],                   rows of the delete columns
 *                                                      (or table rows with full_rows)
 *     "positions": [{"file": "<data file path as recorded>", "pos": [0, 5]}, ...],
 *     "file_scoped": false,                            v2: one delete file per data file
 *     "target_size": 0                                 delete target size (0: the table's)
 *   }
 *
 * Positions become position delete files on v2 tables and deletion vectors
 * on v3 (a data file's live DV is merged into the new one and replaced in
 * the same commit). Prints one JSON object: the snapshot id, the operation,
 * the files added (path, content, records, size, referenced data file,
 * content offset and size) and the number of entries replaced.
 *
 *   delete_tool --dir DIR --table NS.NAME --input FILE
 *
 * Used by tests/interop/test_delete_interop.py; found next to the floe
 * binary's build directory (tests/delete_tool) or through FLOE_DELETE_TOOL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow/arrow_build.h"
#include "json_batch.h"
#include "table/commit.h"
#include "util/alloc.h"
#include "write/write.h"

typedef struct live_file {
	floe_data_file f; /* copied into the tool's arena */
} live_file;

typedef struct live_set {
	floe_arena *a;
	live_file *v;
	size_t n, cap;
} live_set;

static int collect_cb(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	live_set *ls = payload;
	(void)mf;
	if (FLOE_ARRAY_RESERVE(ls->v, ls->cap, ls->n + 1) ||
	    floe_data_file_copy(&ls->v[ls->n].f, ls->a, &e->file))
		return FLOE_ENOMEM;
	ls->n++;
	return 0;
}

static int write_rows(const floe_schema *s, const floe_json *rows,
		      int (*fn)(void *w, const struct ArrowArray *, const struct ArrowSchema *,
				floe_error *),
		      void *w, floe_error *err)
{
	json_batch *jb = NULL;
	struct ArrowArray b;
	struct ArrowSchema bs;
	int rc;
	if ((rc = json_batch_new(&jb, s, err)))
		return rc;
	for (const floe_json *r = rows->child; r && !rc; r = r->next)
		rc = json_batch_append(jb, r, err);
	if (!rc && json_batch_rows(jb) > 0 && !(rc = json_batch_finish(jb, &b, &bs, err))) {
		rc = fn(w, &b, &bs, err);
		floe_arrow_array_release(&b);
		floe_arrow_schema_release(&bs);
	}
	json_batch_free(jb);
	return rc;
}

static int tw_write(void *w, const struct ArrowArray *b, const struct ArrowSchema *s,
		    floe_error *err)
{
	return floe_task_writer_write(w, b, s, err);
}

static int ew_write(void *w, const struct ArrowArray *b, const struct ArrowSchema *s,
		    floe_error *err)
{
	return floe_eq_delete_writer_write(w, b, s, err);
}

static void print_file(floe_jw *w, const floe_data_file *f)
{
	floe_jw_obj_begin(w);
	floe_jw_kv_str(w, "path", f->file_path);
	floe_jw_kv_i64(w, "content", f->content);
	floe_jw_kv_str(w, "format", f->file_format);
	floe_jw_kv_i64(w, "records", f->record_count);
	floe_jw_kv_i64(w, "size", f->file_size_in_bytes);
	floe_jw_key(w, "referenced_data_file");
	if (f->referenced_data_file)
		floe_jw_str(w, f->referenced_data_file);
	else
		floe_jw_null(w);
	floe_jw_kv_i64(w, "content_offset", f->content_offset);
	floe_jw_kv_i64(w, "content_size", f->content_size_in_bytes);
	floe_jw_obj_end(w);
}

static int run(const char *dir, const char *table, const char *input, floe_error *err)
{
	floe_catalog *cat = NULL;
	floe_table *t = NULL, *tc = NULL;
	floe_task_writer *tw = NULL;
	floe_eq_delete_writer *ew = NULL;
	floe_pos_delete_writer *pw = NULL;
	floe_dv_writer *dw = NULL;
	floe_file_namer *namer = NULL;
	floe_parquet_budget *budget = NULL;
	floe_snapshot_op *op = NULL;
	floe_data_file *files = NULL, *replaced = NULL;
	size_t n = 0, n_replaced = 0;
	floe_write_config cfg;
	floe_arena a;
	floe_buf req, out;
	floe_jw w;
	floe_json *j = NULL;
	live_set live = {0};
	char ns[256];
	const char *dot = strrchr(table, '.');
	int64_t snap = -1;
	bool committed = false;
	int rc;

	floe_arena_init(&a, 0);
	floe_buf_init(&req, 0);
	floe_buf_init(&out, 0);
	live.a = &a;
	if (!dot || dot == table || (size_t)(dot - table) >= sizeof(ns)) {
		rc = floe_error_set(err, FLOE_EINVAL, "--table must be NS.NAME");
		goto done;
	}
	snprintf(ns, sizeof(ns), "%.*s", (int)(dot - table), table);
	FILE *in = fopen(input, "rb");
	if (!in) {
		rc = floe_error_set(err, FLOE_EIO, "cannot open '%s'", input);
		goto done;
	}
	char chunk[65536];
	size_t got;
	rc = 0;
	while (!rc && (got = fread(chunk, 1, sizeof(chunk), in)) > 0)
		rc = floe_buf_append(&req, chunk, got);
	fclose(in);
	if (rc || (rc = floe_json_parse(&j, &a, (const char *)req.data, req.len, NULL, err)))
		goto done;
	if ((rc = floe_catalog_open_default(&cat, dir, err)) ||
	    (rc = floe_table_load(&t, cat, ns, dot + 1, err)) ||
	    (rc = floe_table_load(&tc, cat, ns, dot + 1, err)))
		goto done;
	const floe_metadata *m = floe_table_metadata(t);
	const floe_schema *s = floe_metadata_current_schema(m);
	if ((rc = floe_write_config_from(&cfg, &a, m, err)) ||
	    (rc = floe_table_walk(t, NULL, FLOE_WALK_DATA | FLOE_WALK_DELETES, collect_cb, &live,
				  err)))
		goto done;
	if ((rc = floe_file_namer_new(&namer, 0, 1, NULL, err)) ||
	    (rc = floe_parquet_budget_new(&budget, (uint64_t)64 << 20, NULL, NULL)))
		goto done;
	floe_delete_writer_opts o = FLOE_DELETE_WRITER_OPTS_INIT;
	o.namer = namer;
	o.budget = budget;
	const floe_json *ts = floe_json_get(j, "target_size");
	if (ts && ts->is_int)
		o.target_file_size = ts->i;
	const floe_json *fsj = floe_json_get(j, "file_scoped");
	o.file_scoped = fsj && fsj->type == FLOE_JSON_BOOL && fsj->b;

	/* data rows */
	const floe_json *dr = floe_json_get(j, "data_rows");
	if (dr && dr->type == FLOE_JSON_ARRAY && dr->len) {
		floe_task_writer_opts to = FLOE_TASK_WRITER_OPTS_INIT;
		to.namer = namer;
		to.budget = budget;
		if ((rc = floe_task_writer_new(&tw, floe_table_io(t), m, &cfg, &to, err)) ||
		    (rc = write_rows(s, dr, tw_write, tw, err)) ||
		    (rc = floe_task_writer_complete(tw, &files, &n, &a, err)))
			goto done;
	}
	/* equality deletes */
	const floe_json *ef = floe_json_get(j, "equality_fields");
	const floe_json *er = floe_json_get(j, "equality_rows");
	if (ef && ef->type == FLOE_JSON_ARRAY && er && er->type == FLOE_JSON_ARRAY) {
		int32_t ids[64];
		size_t k = 0;
		for (const floe_json *x = ef->child; x && k < 64; x = x->next) {
			const floe_field *fd = x->type == FLOE_JSON_STRING ? floe_schema_field(s, x->s)
									  : NULL;
			if (!fd) {
				rc = floe_error_set(err, FLOE_EINVAL, "unknown equality field");
				goto done;
			}
			ids[k++] = fd->id;
		}
		const floe_json *fr = floe_json_get(j, "full_rows");
		o.full_rows = fr && fr->type == FLOE_JSON_BOOL && fr->b;
		o.equality_ids = ids;
		o.n_equality_ids = k;
		if ((rc = floe_eq_delete_writer_new(&ew, floe_table_io(t), m, &cfg, &o, err)) ||
		    (rc = write_rows(floe_eq_delete_writer_schema(ew), er, ew_write, ew, err)) ||
		    (rc = floe_eq_delete_writer_complete(ew, &files, &n, &a, err)))
			goto done;
	}
	/* positions: position delete files (v2) or deletion vectors (v3) */
	const floe_json *ps = floe_json_get(j, "positions");
	if (ps && ps->type == FLOE_JSON_ARRAY && ps->len) {
		bool dv = m->format_version >= 3;
		if (dv ? (rc = floe_dv_writer_new(&dw, floe_table_io(t), m, &cfg, &o, err))
		       : (rc = floe_pos_delete_writer_new(&pw, floe_table_io(t), m, &cfg, &o, err)))
			goto done;
		for (const floe_json *x = ps->child; x; x = x->next) {
			const floe_json *fj = floe_json_get(x, "file"), *pj = floe_json_get(x, "pos");
			if (!fj || fj->type != FLOE_JSON_STRING || !pj || pj->type != FLOE_JSON_ARRAY) {
				rc = floe_error_set(err, FLOE_EINVAL, "positions need file and pos");
				goto done;
			}
			const floe_data_file *df = NULL;
			for (size_t i = 0; i < live.n; i++)
				if (live.v[i].f.content == FLOE_CONTENT_DATA &&
				    strcmp(live.v[i].f.file_path, fj->s) == 0)
					df = &live.v[i].f;
			if (!df) {
				rc = floe_error_set(err, FLOE_EINVAL, "not a live data file: %s", fj->s);
				goto done;
			}
			int64_t *pos = floe_calloc(pj->len + 1, sizeof(int64_t));
			size_t np = 0;
			if (!pos) {
				rc = floe_error_oom(err);
				goto done;
			}
			for (const floe_json *p = pj->child; p; p = p->next)
				pos[np++] = p->i;
			rc = dv ? floe_dv_writer_delete(dw, df->file_path, df->spec_id, &df->partition,
							pos, np, err)
				: floe_pos_delete_writer_delete(pw, df->file_path, df->spec_id,
								&df->partition, pos, np, err);
			floe_free(pos);
			if (rc)
				goto done;
			/* spec: one DV per data file — fold the live one in */
			for (size_t i = 0; dv && i < live.n; i++) {
				const floe_data_file *d = &live.v[i].f;
				if (d->content == FLOE_CONTENT_POSITION_DELETES && d->referenced_data_file &&
				    strcmp(d->referenced_data_file, df->file_path) == 0 &&
				    d->file_format && strcmp(d->file_format, "PUFFIN") == 0 &&
				    (rc = floe_dv_writer_merge_previous(dw, d, err)))
					goto done;
			}
		}
		rc = dv ? floe_dv_writer_complete(dw, &files, &n, &replaced, &n_replaced, &a, err)
			: floe_pos_delete_writer_complete(pw, &files, &n, &a, err);
		if (rc)
			goto done;
	}
	/* one row delta */
	if ((rc = floe_op_new(&op, tc, FLOE_OP_ROW_DELTA, NULL, err)))
		goto done;
	for (size_t i = 0; i < n && !rc; i++)
		rc = floe_op_add_file(op, &files[i], err);
	for (size_t i = 0; i < n_replaced && !rc; i++)
		rc = floe_op_remove_file(op, &replaced[i], err);
	if (!rc)
		rc = floe_op_set_summary(op, "floe.test-tool", "delete_tool", err);
	if (!rc)
		rc = floe_op_commit(op, &snap, err);
	if (rc)
		goto done;
	committed = true;
	floe_jw_init(&w, &out, 0);
	floe_jw_obj_begin(&w);
	floe_jw_kv_i64(&w, "snapshot_id", snap);
	floe_jw_key(&w, "files");
	floe_jw_arr_begin(&w);
	for (size_t i = 0; i < n; i++)
		print_file(&w, &files[i]);
	floe_jw_arr_end(&w);
	floe_jw_kv_i64(&w, "replaced", (int64_t)n_replaced);
	floe_jw_obj_end(&w);
	if ((rc = floe_jw_finish(&w)))
		goto done;
	fwrite(out.data, 1, out.len, stdout);
	fputc('\n', stdout);
done:
	if (rc && !committed)
		/* never committed: take the files back */
		for (size_t i = 0; i < n; i++)
			floe_io_remove_quiet(floe_table_io(t), files[i].file_path);
	floe_op_free(op);
	floe_task_writer_abort(tw);
	floe_eq_delete_writer_abort(ew);
	floe_pos_delete_writer_abort(pw);
	floe_dv_writer_abort(dw);
	floe_parquet_budget_free(budget);
	floe_file_namer_free(namer);
	floe_free(files);
	floe_free(replaced);
	floe_free(live.v);
	floe_table_free(t);
	floe_table_free(tc);
	floe_catalog_free(cat);
	floe_buf_reset(&req);
	floe_buf_reset(&out);
	floe_arena_reset(&a);
	return rc;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *table = NULL, *input = NULL;
	floe_error err = {0};
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--table") == 0)
			table = argv[i + 1];
		else if (strcmp(argv[i], "--input") == 0)
			input = argv[i + 1];
	}
	if (!dir || !table || !input) {
		fprintf(stderr, "usage: delete_tool --dir DIR --table NS.NAME --input FILE\n");
		return 2;
	}
	if (run(dir, table, input, &err)) {
		fprintf(stderr, "delete_tool: %s\n", err.msg);
		return 1;
	}
	return 0;
}
