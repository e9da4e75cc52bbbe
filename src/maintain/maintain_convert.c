/*
 * maintain_convert.c — equality deletes turned into deletion vectors / position
 * deletes (floe maintain --steps convert-deletes), without rewriting data.
 *
 * DESIGN: the current snapshot is planned as a scan would read it: each data
 * file gets the delete files that apply to it by the spec's rules (an
 * equality delete applies to data files of a LOWER data sequence number in
 * its partition — or every partition when its spec is unpartitioned; a
 * position delete / DV to the same or lower). For every data file with
 * equality deletes attached, its equality columns are read and each row some
 * attached equality delete matches becomes a position: a DV bit (v3: merged
 * with the file's DV, or with its position delete files folded in) or a
 * position delete (v2, one file-scoped file per data file). One row delta
 * then adds those, removes the replaced DVs and EVERY live equality delete
 * file, and adds or removes no data file. Rows already deleted by a position
 * delete are deleted again (harmless). Equality delete files whose sequence
 * number applies to no live data file are removed with nothing to convert.
 *
 * Safety: the commit's base must be the snapshot planned, or only appends
 * may have landed since (their data has a higher sequence number than every
 * equality delete removed here, which never applied to it); a compaction,
 * delete or overwrite meanwhile fails the step with FLOE_ECONFLICT and
 * nothing committed (the written files are deleted).
 */
#include <stdlib.h>
#include <string.h>

#include "maintain/maintain_int.h"
#include "scan/scan_select.h"
#include "table/table_impl.h"
#include "util/alloc.h"
#include "util/log.h"
#include "util/timeutil.h"
#include "write/write.h"

typedef struct conv_file {
	int64_t *pos;
	size_t n, cap;
	const floe_schema *schema;
	const eq_delete_set **sets;
	size_t n_sets;
	const int32_t *ids;
	size_t n_ids;
	int64_t bytes;
} conv_file;

static int on_batch(const struct ArrowArray *batch, int64_t first_pos, void *payload)
{
	conv_file *c = payload;
	for (int64_t r = 0; r < batch->length; r++) {
		bool del = false;
		for (size_t q = 0; q < c->n_sets && !del; q++)
			del = floe_scan__eq_match(c->sets[q], batch, c->ids, c->n_ids, c->schema, r);
		if (!del)
			continue;
		if (FLOE_ARRAY_RESERVE(c->pos, c->cap, c->n + 1))
			return FLOE_ENOMEM;
		c->pos[c->n++] = first_pos + r;
	}
	return FLOE_OK;
}

static void entry_of(floe_data_file *f, const scan_file *s)
{
	floe_data_file_init(f);
	f->content = s->content;
	f->file_path = s->raw_path;
	f->file_format = s->format;
	f->spec_id = s->spec_id;
	f->partition = s->partition;
	f->record_count = s->record_count;
	f->file_size_in_bytes = s->file_size;
	f->referenced_data_file = s->referenced;
	f->content_offset = s->content_offset;
	f->content_size_in_bytes = s->content_size;
	if (s->n_equality_ids) {
		f->equality_ids = s->equality_ids;
		f->n_equality_ids = s->n_equality_ids;
	}
}

typedef struct conv_check {
	int64_t base;
} conv_check;

/* Only appends may land between the plan and the commit. */
static int conv_check_cb(void *payload, const floe_metadata *m, const floe_snapshot *head,
			 floe_error *err)
{
	conv_check *c = payload;
	for (const floe_snapshot *s = head; s && s->snapshot_id != c->base;
	     s = floe_metadata_parent(m, s)) {
		const char *op = floe_snapshot_summary(s, "operation");
		if (!op || strcmp(op, "append") != 0)
			return floe_error_set(err, FLOE_ECONFLICT,
					      "convert-deletes: snapshot %lld (%s) landed meanwhile; "
					      "run it again",
					      (long long)s->snapshot_id, op ? op : "?");
	}
	return FLOE_OK;
}

typedef struct rm_ctx {
	floe_snapshot_op *op;
	floe_convert_deletes_result *res;
	floe_error *err;
	int rc;
} rm_ctx;

static int rm_eq(const floe_manifest_entry *e, const floe_manifest_file *mf, void *payload)
{
	rm_ctx *x = payload;
	(void)mf;
	if (e->file.content != FLOE_CONTENT_EQUALITY_DELETES)
		return 0;
	if ((x->rc = floe_op_remove_file(x->op, &e->file, x->err)))
		return 1;
	x->res->equality_delete_files_removed++;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

int floe_convert_deletes(floe_table *t, const floe_convert_deletes_opts *opts,
			 floe_convert_deletes_result *res, floe_error *err)
{
	floe_scan *s = NULL;
	floe_arena a;
	floe_write_config cfg;
	floe_file_namer *namer = NULL;
	floe_dv_writer *dw = NULL;
	floe_pos_delete_writer *pw = NULL;
	floe_snapshot_op *op = NULL;
	floe_data_file *out = NULL, *repl = NULL;
	size_t n_out = 0, n_repl = 0;
	conv_file c;
	int rc;
	int64_t t0 = floe_monotonic_ns();
	memset(res, 0, sizeof(*res));
	res->snapshot_id = -1;
	memset(&c, 0, sizeof(c));
	floe_arena_init(&a, 65536);
	const floe_metadata *m = floe_table_metadata(t);
	const floe_snapshot *head = floe_metadata_current_snapshot(m);
	if (!head || m->format_version < 2)
		return FLOE_OK;
	/* any equality delete file at all? (the summary says so) */
	const char *ne = floe_snapshot_summary(head, "total-equality-deletes");
	if (ne && !strcmp(ne, "0"))
		return FLOE_OK;
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	so.snapshot_id = head->snapshot_id;
	if ((rc = floe_scan_open(&s, t, &so, err)) || (rc = floe_scan__deletes_init(s, err)) ||
	    (rc = floe_write_config_from(&cfg, &a, m, err)) ||
	    (rc = floe_file_namer_new(&namer, 0, 0, NULL, err)))
		goto done;
	floe_delete_writer_opts dwo = FLOE_DELETE_WRITER_OPTS_INIT;
	dwo.namer = namer;
	dwo.file_scoped = true;
	bool v3 = m->format_version >= 3;
	rc = v3 ? floe_dv_writer_new(&dw, floe_table_io(t), m, &cfg, &dwo, err)
		: floe_pos_delete_writer_new(&pw, floe_table_io(t), m, &cfg, &dwo, err);
	if (rc)
		goto done;
	scan_file *const *files;
	size_t nf;
	floe_scan__plan_files(s, &files, &nf);
	for (size_t i = 0; i < nf && !rc; i++) {
		scan_file *f = files[i];
		int32_t ids[128];
		size_t n_ids = 0;
		const eq_delete_set *sets[256];
		c.n_sets = 0;
		c.n = 0;
		const scan_file *dv = NULL;
		bool pos_files = false;
		for (size_t k = 0; k < f->n_deletes && !rc; k++) {
			scan_file *d = f->deletes[k];
			if (d->is_dv)
				dv = d;
			else if (d->content == FLOE_CONTENT_POSITION_DELETES)
				pos_files = true;
			if (d->content != FLOE_CONTENT_EQUALITY_DELETES)
				continue;
			if (c.n_sets == 256) {
				rc = floe_error_set(err, FLOE_EUNSUPPORTED,
						    "convert-deletes: more than 256 equality delete files "
						    "apply to '%s' (compact the table instead)",
						    f->raw_path);
				break;
			}
			if ((rc = floe_scan__eq_set(s, d, &sets[c.n_sets], err)))
				break;
			size_t nid;
			const int32_t *qi = floe_scan__eq_ids(sets[c.n_sets], &nid);
			c.n_sets++;
			for (size_t x = 0; x < nid; x++) {
				bool have = false;
				for (size_t y = 0; y < n_ids; y++)
					have = have || ids[y] == qi[x];
				if (!have && n_ids < 128)
					ids[n_ids++] = qi[x];
			}
		}
		if (rc || !c.n_sets)
			continue;
		c.sets = sets;
		c.ids = ids;
		c.n_ids = n_ids;
		c.schema = s->schema;
		rc = floe_scan__read_file_columns(s, f, s->schema, ids, n_ids, on_batch, &c, err);
		if (rc == FLOE_ENOMEM)
			rc = floe_error_oom(err);
		if (rc)
			break;
		res->data_files_read++;
		res->bytes_read += f->file_size;
		if (!c.n)
			continue;
		qsort(c.pos, c.n, sizeof(int64_t), cmp_i64);
		res->rows_converted += (int64_t)c.n;
		res->data_files_touched++;
		if (v3) {
			if (dv) {
				floe_data_file df;
				entry_of(&df, dv);
				rc = floe_dv_writer_merge_previous(dw, &df, err);
			} else if (pos_files) {
				uint64_t *old = NULL;
				size_t n_old = 0;
				rc = floe_scan__positions(s, f, &old, &n_old, err);
				if (!rc)
					rc = floe_dv_writer_merge(dw, f->raw_path, f->spec_id, &f->partition,
								  old, n_old, NULL, err);
				floe_free(old);
			}
			if (!rc)
				rc = floe_dv_writer_delete(dw, f->raw_path, f->spec_id, &f->partition,
							   c.pos, c.n, err);
		} else {
			rc = floe_pos_delete_writer_delete(pw, f->raw_path, f->spec_id, &f->partition,
							   c.pos, c.n, err);
		}
	}
	if (rc)
		goto done;
	if (v3)
		rc = floe_dv_writer_complete(dw, &out, &n_out, &repl, &n_repl, &a, err);
	else
		rc = floe_pos_delete_writer_complete(pw, &out, &n_out, &a, err);
	if (rc)
		goto done;
	/* every live equality delete file of the snapshot goes */
	if ((rc = floe_op_new(&op, t, FLOE_OP_ROW_DELTA, NULL, err)))
		goto done;
	/* every live equality delete file of the snapshot (one that applies to
	 * no live data file applies to no later one either: their sequence
	 * numbers are higher) */
	rm_ctx rx = {op, res, err, FLOE_OK};
	rc = floe_table_walk(t, head, FLOE_WALK_DELETES, rm_eq, &rx, err);
	if (rc == 1 || rx.rc)
		rc = rx.rc;
	for (size_t i = 0; i < n_out && !rc; i++)
		rc = floe_op_add_file(op, &out[i], err);
	for (size_t i = 0; i < n_repl && !rc; i++)
		rc = floe_op_remove_file(op, &repl[i], err);
	res->delete_files_written = (int64_t)n_out;
	if (rc || !res->equality_delete_files_removed || (opts && opts->dry_run))
		goto done;
	conv_check ck = {head->snapshot_id};
	floe_op_set_check(op, conv_check_cb, &ck);
	rc = floe_op_set_summary(op, "floe.operation", "convert-deletes", err);
	if (!rc)
		rc = floe_op_commit(op, &res->snapshot_id, err);
	if (rc == FLOE_ECOMMITUNKNOWN) {
		n_out = 0; /* nothing it wrote may be deleted */
		goto done;
	}
	if (!rc) {
		n_out = 0;
		FLOE_INFO("convert-deletes: %lld rows of %lld data files now in %lld delete files; "
			  "%lld equality delete files removed (snapshot %lld)",
			  (long long)res->rows_converted, (long long)res->data_files_touched,
			  (long long)res->delete_files_written,
			  (long long)res->equality_delete_files_removed,
			  (long long)res->snapshot_id);
	}
done:
	/* files written and not committed */
	for (size_t i = 0; i < n_out; i++)
		floe_io_remove_quiet(floe_table_io(t), out[i].file_path);
	res->duration_ms = (floe_monotonic_ns() - t0) / 1000000;
	floe_op_free(op);
	floe_free(out);
	floe_free(repl);
	floe_free(c.pos);
	if (rc) {
		floe_dv_writer_abort(dw);
		floe_pos_delete_writer_abort(pw);
	} else {
		floe_dv_writer_free(dw);
		floe_pos_delete_writer_free(pw);
	}
	floe_file_namer_free(namer);
	floe_scan_free(s);
	floe_arena_reset(&a);
	return rc ? floe_error_prefix(err, rc, "convert-deletes: ") : FLOE_OK;
}
