/*
 * stream_task.c — the writer tasks: decode raw blocks into batches per
 * table (routing filters, restart skips, dead letters), distribute them
 * (NONE: the decoding task writes them; HASH: rows go to the task that owns
 * their partition), and write them with one task writer per table.
 *
 * See stream_runtime.h for the threads, the hub and the unit accounting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "arrow/arrow_build.h"
#include "arrow/arrow_take.h"
#include "json/json.h"
#include "stream/stream_runtime.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/timeutil.h"

/* Dead-letter lines are written out beyond this. */
#define DLQ_FLUSH_BYTES ((size_t)64 << 10)

void stream_fail_locked(floe_pipeline *p, const floe_error *err)
{
	if (!p->failed) {
		p->failed = true;
		p->first_err = *err;
		if (!p->first_err.code)
			p->first_err.code = FLOE_EIO;
	}
	atomic_store(&p->cancel, true);
	floe_cond_broadcast(&p->hub_cv);
	floe_cond_broadcast(&p->commit_cv);
	for (int i = 0; i < p->n_tasks; i++)
		floe_cond_broadcast(&p->tasks[i].cv);
}

void stream_fail(floe_pipeline *p, const floe_error *err)
{
	floe_mutex_lock(&p->lock);
	stream_fail_locked(p, err);
	floe_mutex_unlock(&p->lock);
}

int stream_task_init(rt_task *t, floe_pipeline *p, int idx, floe_error *err)
{
	size_t nt = p->n_tables ? p->n_tables : 1;
	int rc;
	memset(t, 0, sizeof(*t));
	t->p = p;
	t->idx = idx;
	if (floe_cond_init(&t->cv))
		return floe_error_oom(err);
	t->sinks = floe_calloc(nt, sizeof(void *));
	t->roots = floe_calloc(nt, sizeof(stream_col));
	t->csv = floe_calloc(nt, sizeof(stream_csv_dec));
	t->csv_header = floe_calloc(nt, sizeof(char *));
	t->pre_roots = floe_calloc(nt, sizeof(stream_col));
	t->pre_csv = floe_calloc(nt, sizeof(stream_csv_dec));
	t->pre_csv_header = floe_calloc(nt, sizeof(char *));
	t->ckpt_files = floe_calloc(nt, sizeof(floe_data_file *));
	t->ckpt_n = floe_calloc(nt, sizeof(size_t));
	t->in_cap = (size_t)p->max_units + (size_t)p->n_tasks * (size_t)p->n_tasks + 4;
	t->inbox = floe_calloc(t->in_cap, sizeof(part_item));
	t->owner_cache = floe_calloc(nt, sizeof(floe_imap));
	t->rstats = floe_calloc(nt, sizeof(stream_range_stats));
	t->deltas = floe_calloc(nt, sizeof(floe_delta_writer *));
	t->kinds = floe_calloc(nt, sizeof(uint8_t *));
	t->kinds_cap = floe_calloc(nt, sizeof(size_t));
	t->cdc = floe_calloc(nt, sizeof(stream_cdc_dec));
	t->next_seq = floe_calloc(nt, sizeof(int64_t));
	t->vdec = floe_calloc(nt, sizeof(void *));
	t->proj_out = floe_calloc(nt, sizeof(stream_col));
	t->proj_tmp = floe_calloc(nt, sizeof(stream_col));
	t->prec = floe_calloc(nt, sizeof(proj_rec *));
	t->n_prec = floe_calloc(nt, sizeof(size_t));
	t->cap_prec = floe_calloc(nt, sizeof(size_t));
	t->last_table = (size_t)-1;
	if (t->owner_cache)
		for (size_t i = 0; i < nt; i++)
			floe_imap_init(&t->owner_cache[i]);
	if (t->rstats)
		for (size_t i = 0; i < nt; i++)
			stream_range_stats_init(&t->rstats[i]);
	if (!t->sinks || !t->roots || !t->csv || !t->csv_header || !t->ckpt_files || !t->ckpt_n ||
	    !t->inbox || !t->owner_cache || !t->rstats || !t->pre_roots || !t->pre_csv || !t->pre_csv_header ||
	    !t->deltas || !t->kinds || !t->kinds_cap || !t->cdc || !t->next_seq || !t->vdec ||
	    !t->proj_out || !t->proj_tmp || !t->prec || !t->n_prec || !t->cap_prec)
		return floe_error_oom(err);
	floe_buf_init(&t->dlq, (size_t)256 << 20);
	floe_buf_init(&t->meta_buf, (size_t)64 << 20);
	floe_buf_init(&t->bad_text, (size_t)64 << 20);
	stream_json_dec_init(&t->json, NULL);
	floe_arena_init(&t->route_arena, 4096);
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *tb = &p->tables[i];
		const stream_source_cfg *sc = p->sources[tb->src].cfg;
		stream_csv_opts co = {sc->csv_delimiter, sc->csv_quote, sc->csv_header,
				      sc->csv_null_literal, sc->csv_allow_comments};
		stream_coerce_opts xo = {(stream_epoch_unit)sc->epoch_unit};
		if ((rc = stream_col_init(&t->roots[i], tb->decode_type, NULL, 0, false, err)))
			return rc;
		stream_csv_dec_init(&t->csv[i], &co, &xo);
		stream_csv_dec_init(&t->pre_csv[i], &co, &xo);
		t->cdc[i].plan = &tb->cdc_plan;
		t->cdc[i].json = &t->json;
		if (tb->pre_type &&
		    (rc = stream_col_init(&t->pre_roots[i], tb->pre_type, NULL, 0, false, err)))
			return rc;
		if (tb->project &&
		    ((rc = stream_col_init(&t->proj_out[i], tb->schema->root, NULL, 0, false, err)) ||
		     (rc = stream_col_init(&t->proj_tmp[i], tb->schema->root, NULL, 0, false, err))))
			return rc;
	}
	return stream_task__open_value_decoders(t, err);
}

void stream_task_reset(rt_task *t, bool abort)
{
	floe_pipeline *p = t->p;
	if (!p)
		return;
	for (size_t i = 0; i < p->n_tables; i++) {
		if (t->sinks && t->sinks[i]) {
			if (abort)
				p->sink->abort(t->sinks[i]);
			else
				p->sink->free(t->sinks[i]);
		}
		if (t->deltas)
			floe_delta_writer_free(t->deltas[i]); /* both delete what was not handed out */
		if (t->kinds)
			floe_free(t->kinds[i]);
		if (t->roots)
			stream_col_reset(&t->roots[i]);
		if (t->csv)
			stream_csv_dec_reset(&t->csv[i]);
		if (t->pre_roots)
			stream_col_reset(&t->pre_roots[i]);
		if (t->pre_csv)
			stream_csv_dec_reset(&t->pre_csv[i]);
		if (t->ckpt_files)
			floe_free(t->ckpt_files[i]);
		if (t->owner_cache)
			floe_imap_reset(&t->owner_cache[i]);
		if (t->rstats)
			stream_range_stats_free(&t->rstats[i]);
		if (t->proj_out)
			stream_col_reset(&t->proj_out[i]);
		if (t->proj_tmp)
			stream_col_reset(&t->proj_tmp[i]);
		if (t->prec)
			floe_free(t->prec[i]);
	}
	floe_free(t->proj_out);
	floe_free(t->proj_tmp);
	floe_free(t->prec);
	floe_free(t->n_prec);
	floe_free(t->cap_prec);
	floe_free(t->rstats);
	t->rstats = NULL;
	for (size_t i = 0; t->inbox && i < t->in_len; i++)
		stream_shared_unref(t->inbox[(t->in_head + i) % t->in_cap].sb);
	for (size_t i = 0; i < t->n_held; i++)
		stream_shared_unref(t->held[i].sb);
	floe_free(t->held);
	floe_free(t->deltas);
	floe_free(t->kinds);
	floe_free(t->kinds_cap);
	floe_free(t->cdc);
	floe_free(t->next_seq);
	stream_task__close_value_decoders(t);
	floe_free(t->inbox);
	floe_free(t->sinks);
	floe_free(t->roots);
	floe_free(t->csv);
	floe_free(t->csv_header);
	floe_free(t->pre_roots);
	floe_free(t->pre_csv);
	floe_free(t->pre_csv_header);
	floe_free(t->bad);
	floe_buf_reset(&t->bad_text);
	floe_free(t->ckpt_files);
	floe_free(t->ckpt_n);
	floe_free(t->rowidx);
	floe_free(t->owner_cache);
	floe_free(t->dest);
	floe_arena_free(t->ckpt_arena);
	floe_buf_reset(&t->dlq);
	stream_json_dec_reset(&t->json);
	floe_arena_reset(&t->route_arena);
	floe_cond_destroy(&t->cv);
	memset(t, 0, sizeof(*t));
}

/* ---- dead letters ------------------------------------------------------------------- */

int stream_dlq_flush(floe_pipeline *p, floe_buf *lines, bool sync, floe_error *err)
{
	int rc = FLOE_OK;
	if (!lines->len && !sync)
		return FLOE_OK;
	floe_mutex_lock(&p->dlq_lock);
	if (p->dlq_fd < 0 && lines->len) {
		p->dlq_fd = open(p->dlq_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (p->dlq_fd < 0)
			rc = floe_error_set(err, FLOE_EIO, "dead-letter file '%s': %s", p->dlq_path,
					    strerror(errno));
	}
	size_t off = 0;
	while (!rc && off < lines->len) {
		ssize_t w = write(p->dlq_fd, lines->data + off, lines->len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = floe_error_set(err, FLOE_EIO, "dead-letter file '%s': %s", p->dlq_path,
					    strerror(errno));
			break;
		}
		off += (size_t)w;
	}
	if (!rc && sync && p->dlq_fd >= 0 && fsync(p->dlq_fd) != 0)
		rc = floe_error_set(err, FLOE_EIO, "dead-letter file '%s': fsync: %s", p->dlq_path,
				    strerror(errno));
	floe_mutex_unlock(&p->dlq_lock);
	floe_buf_clear(lines);
	return rc;
}

/* A record of the block being decoded that did not fit a table. */
struct bad_rec {
	int64_t off;
	const char *rec; /* into the block */
	size_t n;
	size_t table;      /* index into p->tables */
	size_t reason_at;  /* into t->bad_text */
};

int stream_task__note_bad(rt_task *t, size_t ti, const char *rec, size_t n, int64_t off,
			  const char *reason, floe_error *err)
{
	if (FLOE_ARRAY_RESERVE(t->bad, t->cap_bad, t->n_bad + 1))
		return floe_error_oom(err);
	struct bad_rec *r = &t->bad[t->n_bad++];
	r->off = off;
	r->rec = rec;
	r->n = n;
	r->table = ti;
	r->reason_at = t->bad_text.len;
	if (floe_buf_puts(&t->bad_text, reason) || floe_buf_putc(&t->bad_text, '\0'))
		return floe_error_oom(err);
	return FLOE_OK;
}

static int by_offset(const void *x, const void *y)
{
	const struct bad_rec *a = x, *b = y;
	if (a->off != b->off)
		return a->off < b->off ? -1 : 1;
	return a->table < b->table ? -1 : a->table > b->table;
}

/* A dead letter's table: one of p->tables, or a name template's route. */
static const char *bad_ident(const floe_pipeline *p, size_t i)
{
	return i < p->n_tables ? p->tables[i].ident : p->routes[i - p->n_tables].tpl->name;
}

/*
 * One dead-letter line per bad record of block b, naming every table it was
 * meant for ("tables", "reasons"; "table"/"reason" are the first, as before).
 */
static int flush_bad(rt_task *t, const stream_block *b, floe_error *err)
{
	floe_pipeline *p = t->p;
	int rc = FLOE_OK;
	if (!t->n_bad)
		return FLOE_OK;
	if (atomic_load(&p->evolve_req) && p->cfg->errors != STREAM_ERRORS_FAIL) {
		/* no checkpoint commits after a record that needs a schema update or
		 * a new table: this block is read again by the next run, which
		 * writes its dead letters */
		t->n_bad = 0;
		floe_buf_clear(&t->bad_text);
		return FLOE_OK;
	}
	qsort(t->bad, t->n_bad, sizeof(*t->bad), by_offset);
	char when[48];
	size_t k = floe_format_timestamp_us(when, sizeof(when) - 1, floe_now_us(), 3);
	when[k++] = 'Z';
	when[k] = 0;
	for (size_t i = 0; i < t->n_bad && !rc;) {
		size_t j = i;
		while (j < t->n_bad && t->bad[j].off == t->bad[i].off)
			j++;
		const struct bad_rec *r = &t->bad[i];
		const char *ident0 = bad_ident(p, r->table);
		rt_source *s = &p->sources[r->table < p->n_tables ? p->tables[r->table].src
								 : p->routes[r->table - p->n_tables].src];
		const char *rec = r->rec;
		size_t n = r->n;
		while (n && (rec[n - 1] == '\n' || rec[n - 1] == '\r'))
			n--;
		floe_metric_add(s->m_dead, 1);
		atomic_fetch_add(&p->dead, 1);
		for (size_t x = i; x < j; x++) {
			if (t->bad[x].table < p->n_tables)
				floe_metric_add(p->tables[t->bad[x].table].m_dead, 1);
			/* the web console shows each table's latest reason */
			char key[300], note[768];
			snprintf(key, sizeof(key), "dead-letter:%s", bad_ident(p, t->bad[x].table));
			snprintf(note, sizeof(note), "%s %s offset %lld: %s", when,
				 b->split_name ? b->split_name : "", (long long)r->off,
				 t->bad_text.data ? (const char *)t->bad_text.data + t->bad[x].reason_at : "");
			floe_metrics_note(p->metrics, key, note);
		}
		floe_jw w;
		floe_jw_init(&w, &t->dlq, 0);
		floe_jw_obj_begin(&w);
		floe_jw_kv_str(&w, "time", when);
		floe_jw_kv_str(&w, "pipeline", p->pipeline_id);
		floe_jw_kv_str(&w, "source", s->cfg->name);
		floe_jw_kv_str(&w, "split", b->split_name ? b->split_name : "");
		floe_jw_kv_i64(&w, "offset", r->off);
		if (b->shard_id) {
			/* Kinesis: offsets count a shard's records, one message each */
			floe_jw_kv_str(&w, "stream", b->topic);
			floe_jw_kv_str(&w, "shard", b->shard_id);
			int64_t at = r->off - b->start;
			if (b->msgs && at >= 0 && (size_t)at < b->n_msgs && b->msgs[at].seq_len) {
				floe_jw_key(&w, "sequence-number");
				floe_jw_strn(&w, (const char *)b->data + b->msgs[at].seq_off,
					     b->msgs[at].seq_len);
			}
		} else if (b->topic) {
			floe_jw_kv_str(&w, "topic", b->topic);
			floe_jw_kv_i64(&w, "partition", b->partition);
		}
		floe_jw_kv_str(&w, "table", ident0);
		floe_jw_kv_str(&w, "reason", t->bad_text.data ? (const char *)t->bad_text.data + r->reason_at : "");
		floe_jw_key(&w, "tables");
		floe_jw_arr_begin(&w);
		for (size_t x = i; x < j; x++)
			floe_jw_str(&w, bad_ident(p, t->bad[x].table));
		floe_jw_arr_end(&w);
		floe_jw_key(&w, "reasons");
		floe_jw_obj_begin(&w);
		for (size_t x = i; x < j; x++)
			floe_jw_kv_str(&w, bad_ident(p, t->bad[x].table),
				       (const char *)t->bad_text.data + t->bad[x].reason_at);
		floe_jw_obj_end(&w);
		if (stream_utf8_valid((const uint8_t *)rec, n)) {
			floe_jw_key(&w, "record");
			floe_jw_strn(&w, rec, n);
		} else {
			floe_buf b64;
			floe_buf_init(&b64, 0);
			if (floe_base64_encode(&b64, (const uint8_t *)rec, n)) {
				floe_buf_reset(&b64);
				rc = floe_error_oom(err);
				break;
			}
			floe_jw_kv_str(&w, "record_base64", floe_buf_cstr(&b64));
			floe_buf_reset(&b64);
		}
		floe_jw_obj_end(&w);
		if (floe_jw_finish(&w) || floe_buf_putc(&t->dlq, '\n')) {
			rc = floe_error_oom(err);
			break;
		}
		if (p->cfg->errors == STREAM_ERRORS_FAIL) {
			/* the offending record is in the dead-letter file too */
			floe_error ferr;
			floe_error_clear(&ferr);
			if (stream_dlq_flush(p, &t->dlq, true, &ferr))
				FLOE_WARN("%s", ferr.msg);
			rc = floe_error_corrupt(err,
						"table %s: record at offset %lld of '%s' does not fit: "
						"%s (errors: fail; the record is in %s)",
						ident0, (long long)r->off,
						b->split_name ? b->split_name : "?",
						(const char *)t->bad_text.data + r->reason_at,
						p->dlq_path);
			break;
		}
		i = j;
	}
	t->n_bad = 0;
	floe_buf_clear(&t->bad_text);
	if (!rc && t->dlq.len >= DLQ_FLUSH_BYTES)
		rc = stream_dlq_flush(p, &t->dlq, false, err);
	return rc;
}

/* ---- writing ------------------------------------------------------------------------- */

static int write_batch(rt_task *t, size_t ti, struct ArrowArray *batch, const uint8_t *kinds,
		       floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	int rc;
	if (tb->delta) {
		if (!t->deltas[ti]) {
			floe_delta_writer_opts o = FLOE_DELTA_WRITER_OPTS_INIT;
			o.partition_id = t->idx;
			o.task_id = p->run_id;
			o.operation_id = p->op_id;
			o.budget = p->budget;
			o.equality_ids = tb->eq_ids;
			o.n_equality_ids = tb->n_eq;
			o.upsert = tb->upsert;
			o.index = tb->index;
			if ((rc = floe_delta_writer_new(&t->deltas[ti], floe_table_io(tb->write_t),
							tb->meta, &tb->wcfg, &o, err)))
				return floe_error_prefix(err, rc, "table %s: ", tb->ident);
		}
		if ((rc = floe_delta_writer_write(t->deltas[ti], batch, &tb->aschema, kinds, err)))
			return floe_error_prefix(err, rc, "table %s: ", tb->ident);
		/* the key maps may hold up to memory.budget in all: past a task's
		 * share, the checkpoint comes now (that empties them) */
		if (floe_delta_writer_key_bytes(t->deltas[ti]) >
		    (size_t)p->cfg->memory_budget / (size_t)p->n_tasks)
			atomic_store(&p->ckpt_asap, true);
		t->rows_written += batch->length;
		atomic_fetch_add(&p->rows_written, batch->length);
		return FLOE_OK;
	}
	if (!t->sinks[ti]) {
		floe_task_writer_opts o = FLOE_TASK_WRITER_OPTS_INIT;
		o.partition_id = t->idx;
		o.task_id = p->run_id;
		o.operation_id = p->op_id;
		o.budget = p->budget;
		if ((rc = p->sink->open(&t->sinks[ti], floe_table_io(tb->write_t), tb->meta, &tb->wcfg,
					&o, err)))
			return floe_error_prefix(err, rc, "table %s: ", tb->ident);
	}
	if ((rc = p->sink->write(t->sinks[ti], batch, &tb->aschema, err)))
		return floe_error_prefix(err, rc, "table %s: ", tb->ident);
	t->rows_written += batch->length;
	atomic_fetch_add(&p->rows_written, batch->length);
	return FLOE_OK;
}

void stream_shared_unref(shared_batch *sb)
{
	if (sb && atomic_fetch_sub(&sb->refs, 1) == 1) {
		floe_arrow_array_release(&sb->arr);
		floe_free(sb->kinds);
		floe_free(sb);
	}
}

/* Make room for one more part in a task's inbox (hub lock held): the ring
 * doubles, keeping its order. */
static int inbox_reserve(rt_task *d)
{
	if (d->in_len < d->in_cap)
		return FLOE_OK;
	size_t cap = d->in_cap * 2 + 8;
	part_item *n = floe_calloc(cap, sizeof(*n));
	if (!n)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < d->in_len; i++)
		n[i] = d->inbox[(d->in_head + i) % d->in_cap];
	floe_free(d->inbox);
	d->inbox = n;
	d->in_cap = cap;
	d->in_head = 0;
	return FLOE_OK;
}

/* Push a part to a task's inbox (never blocks: see the unit bound; an
 * ordered table's block markers may need the ring to grow). */
static int push_part(rt_task *t, int dest, size_t ti, shared_batch *sb, int64_t start, int64_t len,
		     bool last, floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_task *d = &p->tasks[dest];
	floe_mutex_lock(&p->lock);
	if (inbox_reserve(d)) {
		floe_mutex_unlock(&p->lock);
		stream_shared_unref(sb);
		return floe_error_oom(err);
	}
	part_item *it = &d->inbox[(d->in_head + d->in_len) % d->in_cap];
	it->table = ti;
	it->sb = sb;
	it->start = start;
	it->len = len;
	it->seq = t->cur_seq;
	it->last = last;
	d->in_len++;
	p->units++;
	floe_cond_signal(&d->cv);
	floe_mutex_unlock(&p->lock);
	return FLOE_OK;
}

/* Write rows [start, start + len) of a shared batch, then drop the reference. */
static int write_part(rt_task *t, size_t ti, shared_batch *sb, int64_t start, int64_t len,
		      floe_error *err)
{
	struct ArrowArray view;
	if (!sb)
		return FLOE_OK; /* a block marker of an ordered table */
	floe_arrow_slice_view(&view, &sb->arr, start, len);
	int rc = write_batch(t, ti, &view, sb->kinds ? sb->kinds + start : NULL, err);
	floe_arrow_array_release(&view);
	stream_shared_unref(sb);
	return rc;
}

static const stream_col *pcol(const stream_col *root, const rt_pfield *f, int64_t r, bool *null)
{
	const stream_col *c = root;
	*null = false;
	for (int i = 0; i < f->depth; i++) {
		c = &c->kids[f->path[i]];
		if (stream_col_is_null(c, r)) {
			*null = true;
			break;
		}
	}
	return c;
}

/* The hash of row r's partition tuple (through the spec's transforms). */
static uint64_t row_partition_hash(const rt_table *tb, const stream_col *root, int64_t r)
{
	uint64_t h = 0x12345;
	for (size_t i = 0; i < tb->n_pplan; i++) {
		const rt_pfield *f = &tb->pplan[i];
		bool null;
		const stream_col *c = pcol(root, f, r, &null);
		floe_value v, out;
		if (null) {
			v = floe_value_null(f->src_type->id);
		} else {
			stream_col_value(c, r, &v);
		}
		if (floe_transform_apply(&out, &f->pf->transform, f->src_type, &v, NULL))
			out = v;
		h = floe_hash_u64(h ^ floe_value_hash(&out)) + i;
	}
	return floe_hash_u64(h);
}

/* RANGE: row r's sort key (the partition tuple, then the sort order's
 * fields, through their transforms), in order-preserving bytes. */
static void row_range_key(const rt_table *tb, const stream_col *root, int64_t r,
			  stream_range_key *k)
{
	stream_range_key_clear(k);
	for (size_t i = 0; i < tb->n_rplan; i++) {
		const rt_pfield *f = &tb->rplan[i];
		bool null;
		const stream_col *c = pcol(root, f, r, &null);
		floe_value v, out;
		if (null)
			v = floe_value_null(f->src_type->id);
		else
			stream_col_value(c, r, &v);
		if (floe_transform_apply(&out, &f->pf->transform, f->src_type, &v, NULL))
			out = v;
		stream_range_key_append(k, &out, f->desc);
	}
}

/*
 * Can row r's partition values be written? A truncated decimal can fall past
 * its precision (truncate[100] of -99999999.99 in decimal(10, 2)): Java
 * refuses such a record, and so do we, with the reason in why.
 */
bool stream_task__row_partition_ok(const rt_table *tb, const stream_col *root, int64_t r,
				   char *why, size_t cap)
{
	for (size_t i = 0; i < tb->n_pcheck; i++) {
		const rt_pfield *f = &tb->pcheck[i];
		bool null;
		const stream_col *c = pcol(root, f, r, &null);
		floe_value v, out;
		floe_error e = {0};
		if (null)
			continue;
		stream_col_value(c, r, &v);
		if (floe_transform_apply(&out, &f->pf->transform, f->src_type, &v, &e)) {
			snprintf(why, cap, "partition field '%.200s': %s", f->pf->name, e.msg);
			return false;
		}
	}
	return true;
}

/*
 * The task that owns a partition: the first task to see it assigns it to
 * the next task in turn (under the owner lock); every task keeps the
 * assignments it has looked up. Partitions thus spread evenly (a plain
 * hash modulo the tasks would put two days of four on one task and none on
 * another), and the owner never changes during the run. A collision of two
 * partitions' 64-bit hashes only puts both on one task.
 */
static int partition_owner(rt_task *t, size_t ti, uint64_t key, uint32_t *out)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	int64_t k = (int64_t)key == INT64_MIN ? INT64_MIN + 1 : (int64_t)key;
	uint64_t v;
	if (t->last_table == ti && t->last_key == key) {
		*out = t->last_owner;
		return FLOE_OK;
	}
	if (!floe_imap_get(&t->owner_cache[ti], k, &v)) {
		floe_mutex_lock(&p->owner_lock);
		if (!floe_imap_get(&tb->owners, k, &v)) {
			v = (uint64_t)(tb->next_owner++ % p->n_tasks);
			if (floe_imap_put(&tb->owners, k, v)) {
				floe_mutex_unlock(&p->owner_lock);
				return FLOE_ENOMEM;
			}
		}
		floe_mutex_unlock(&p->owner_lock);
		if (floe_imap_put(&t->owner_cache[ti], k, v))
			return FLOE_ENOMEM;
	}
	t->last_table = ti;
	t->last_key = key;
	t->last_owner = (uint32_t)v;
	*out = (uint32_t)v;
	return FLOE_OK;
}

/* A view of a builder's rows as a batch of the table's fields (a filter's
 * extra columns are left out); the builder is reused once it is released. */
static int view_batch(const rt_table *tb, stream_col *c, struct ArrowArray *batch,
		      floe_error *err)
{
	int rc = stream_col_view(c, batch);
	if (rc)
		return floe_error_set(err, rc, "out of memory");
	if (tb->n_extra && !tb->project) { /* a projection made the table's rows */
		int64_t keep = batch->n_children - (int64_t)tb->n_extra;
		for (int64_t i = keep; i < batch->n_children; i++)
			floe_arrow_array_release(batch->children[i]);
		batch->n_children = keep;
	}
	return FLOE_OK;
}

/* The hash of row r's key (a delta table's equality columns). */
static uint64_t row_key_hash(const rt_table *tb, const stream_col *root, int64_t r)
{
	uint64_t h = 0x6b6579;
	for (size_t i = 0; i < tb->cdc_plan.n_keys; i++) {
		const stream_col *c = &root->kids[tb->cdc_plan.keys[i]];
		floe_value v;
		if (stream_col_is_null(c, r))
			v = floe_value_null(c->type->id);
		else
			stream_col_value(c, r, &v);
		h = floe_hash_u64(h ^ floe_value_hash(&v)) + i;
	}
	return floe_hash_u64(h);
}

/* An ordered table's block ends: every task that got no rows of it from
 * this block is told so. */
static int send_markers(rt_task *t, size_t ti, const int64_t *counts, floe_error *err)
{
	int rc = FLOE_OK;
	for (int d = 0; d < t->p->n_tasks && !rc; d++)
		if (!counts || counts[d] == 0)
			rc = push_part(t, d, ti, NULL, 0, 0, true, err);
	return rc;
}

/* ---- computed projections ---------------------------------------------------------- */

int stream_task__note_row(rt_task *t, size_t ti, const char *rec, size_t n, int64_t off,
			  floe_error *err)
{
	if (FLOE_ARRAY_RESERVE(t->prec[ti], t->cap_prec[ti], t->n_prec[ti] + 1))
		return floe_error_oom(err);
	t->prec[ti][t->n_prec[ti]++] = (proj_rec){rec, n, off};
	return FLOE_OK;
}

struct proj_bad {
	rt_task *t;
	size_t ti;
	uint8_t *gone; /* per input row: did not project */
	floe_error *err;
};

static int proj_bad_row(void *payload, int64_t row, const char *why)
{
	struct proj_bad *pb = payload;
	rt_task *t = pb->t;
	if (row < 0 || (size_t)row >= t->n_prec[pb->ti])
		return floe_error_set(pb->err, FLOE_EINVAL, "projection: row %lld out of range",
				      (long long)row);
	const proj_rec *r = &t->prec[pb->ti][row];
	pb->gone[row] = 1;
	if (!why) { /* filtered out by the projection's WHERE */
		atomic_fetch_add(&t->p->filtered, 1);
		return FLOE_OK;
	}
	return stream_task__note_bad(t, pb->ti, r->rec, r->n, r->off, why, pb->err);
}

/*
 * A projected table: the decoded rows (the source's columns) become rows of
 * the table's schema in t->proj_out[ti]; rows that do not project, or whose
 * partition values cannot be written, are their records' dead letters.
 */
static int project_rows(rt_task *t, size_t ti, floe_error *err)
{
	rt_table *tb = &t->p->tables[ti];
	stream_col *in = &t->roots[ti];
	int64_t rows = in->len;
	int rc;
	if ((size_t)rows != t->n_prec[ti]) {
		stream_col_truncate(in, 0);
		t->n_prec[ti] = 0;
		return floe_error_set(err, FLOE_EINVAL,
				      "table %s: %lld decoded rows but %zu records (projection)",
				      tb->ident, (long long)rows, t->n_prec[ti]);
	}
	uint8_t *gone = floe_calloc((size_t)rows + 1, 1);
	if (!gone)
		return floe_error_oom(err);
	struct proj_bad pb = {t, ti, gone, err};
	rc = tb->project->apply(tb->project->ctx, in, &t->proj_out[ti], proj_bad_row, &pb, err);
	stream_col_truncate(in, 0);
	if (!rc && tb->n_pcheck) {
		/* out row r is the r-th input row that projected */
		stream_col *out = &t->proj_out[ti], *keep = &t->proj_tmp[ti];
		char pwhy[FLOE_ERROR_MSG_MAX + 256];
		bool dropped = false;
		int64_t src = 0;
		for (int64_t r = 0; !rc && r < out->len; r++, src++) {
			while (src < rows && gone[src])
				src++;
			if (stream_task__row_partition_ok(tb, out, r, pwhy, sizeof(pwhy))) {
				if (dropped && stream_col_copy_row(keep, out, r))
					rc = floe_error_oom(err);
				continue;
			}
			if (!dropped) { /* the rows before it stay */
				for (int64_t k = 0; k < r && !rc; k++)
					if (stream_col_copy_row(keep, out, k))
						rc = floe_error_oom(err);
				dropped = true;
			}
			const proj_rec *pr = &t->prec[ti][src];
			if (!rc)
				rc = stream_task__note_bad(t, ti, pr->rec, pr->n, pr->off, pwhy, err);
		}
		if (dropped) {
			stream_col tmp = *out;
			*out = *keep;
			*keep = tmp;
			stream_col_truncate(keep, 0);
		}
	}
	floe_free(gone);
	t->n_prec[ti] = 0;
	if (rc)
		stream_col_truncate(&t->proj_out[ti], 0);
	return rc;
}

/*
 * Hand the rows decoded for table ti to the writers. final: the block's
 * last rows for this table (an ordered table's parts then say so).
 */
int stream_task__emit(rt_task *t, size_t ti, bool final, floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	stream_col *root = &t->roots[ti];
	const uint8_t *kinds = tb->delta ? t->kinds[ti] : NULL;
	struct ArrowArray batch;
	int rc;
	if (tb->project && root->len) {
		if ((rc = project_rows(t, ti, err)))
			return rc;
		root = &t->proj_out[ti];
	}
	if (root->len == 0)
		return tb->ordered && final ? send_markers(t, ti, NULL, err) : FLOE_OK;
	if ((tb->dist != STREAM_DIST_HASH && tb->dist != STREAM_DIST_RANGE) || p->n_tasks < 2) {
		if (tb->m_task_rows)
			floe_metric_add(tb->m_task_rows[t->idx], root->len);
		if ((rc = view_batch(tb, root, &batch, err)))
			return rc;
		rc = write_batch(t, ti, &batch, kinds, err);
		floe_arrow_array_release(&batch);
		stream_col_truncate(root, 0);
		return rc;
	}
	/* HASH: the rows grouped by the task that owns their partition (a
	 * delta table without partitions: their key), in one gather; each task
	 * writes its slice of the shared result */
	int n = p->n_tasks;
	int64_t rows = root->len, counts[256] = {0}, starts[257];
	if (n > 256)
		return floe_error_set(err, FLOE_EINVAL, "HASH distribution: at most 256 tasks");
	if ((size_t)rows > t->dest_cap) {
		size_t cap = (size_t)rows + 1024;
		uint32_t *nd = floe_realloc(t->dest, cap * sizeof(*nd));
		int64_t *ni = nd ? floe_realloc(t->rowidx, cap * sizeof(*ni)) : NULL;
		if (nd)
			t->dest = nd;
		if (!nd || !ni)
			return floe_error_oom(err);
		t->rowidx = ni;
		t->dest_cap = cap;
	}
	bool by_key = tb->delta && tb->n_pplan == 0;
	bool range = tb->dist == STREAM_DIST_RANGE;
	for (int64_t r = 0; r < rows; r++) {
		uint32_t d;
		if (range) {
			/* counted for the next assignment; routed by this one (the
			 * first checkpoint: as HASH) */
			stream_range_key k;
			row_range_key(tb, root, r, &k);
			if (stream_range_stats_add(&t->rstats[ti], &k, 1))
				return floe_error_oom(err);
			if (tb->range)
				d = (uint32_t)stream_range_route(tb->range, &k, &t->rseq);
			else if (partition_owner(t, ti, row_partition_hash(tb, root, r), &d))
				return floe_error_oom(err);
		} else if (by_key)
			d = (uint32_t)(row_key_hash(tb, root, r) % (uint64_t)n);
		else if (partition_owner(t, ti, row_partition_hash(tb, root, r), &d))
			return floe_error_oom(err);
		t->dest[r] = d;
		counts[d]++;
	}
	starts[0] = 0;
	for (int d = 0; d < n; d++)
		starts[d + 1] = starts[d] + counts[d];
	if (tb->m_task_rows)
		for (int d = 0; d < n; d++)
			floe_metric_add(tb->m_task_rows[d], counts[d]);
	int64_t fill[256];
	memcpy(fill, starts, sizeof(int64_t) * (size_t)n);
	for (int64_t r = 0; r < rows; r++)
		t->rowidx[fill[t->dest[r]]++] = r;
	if ((rc = view_batch(tb, root, &batch, err)))
		return rc;
	shared_batch *sb = floe_calloc(1, sizeof(*sb));
	if (sb && kinds && !(sb->kinds = floe_malloc((size_t)rows))) {
		floe_free(sb);
		sb = NULL;
	}
	if (!sb) {
		floe_arrow_array_release(&batch);
		stream_col_truncate(root, 0);
		return floe_error_oom(err);
	}
	if (kinds)
		for (int64_t k = 0; k < rows; k++)
			sb->kinds[k] = kinds[t->rowidx[k]];
	rc = floe_arrow_take(&sb->arr, &tb->aschema, &batch, t->rowidx, rows, err);
	floe_arrow_array_release(&batch);
	stream_col_truncate(root, 0);
	if (rc) {
		floe_free(sb->kinds);
		floe_free(sb);
		return floe_error_prefix(err, rc, "table %s: ", tb->ident);
	}
	int users = 0;
	for (int d = 0; d < n; d++)
		users += counts[d] > 0;
	atomic_store(&sb->refs, users + 1); /* + this function's own */
	for (int d = 0; d < n && !rc; d++) {
		/* an ordered table's own rows queue up too: they wait their turn */
		if (counts[d] == 0 || (d == t->idx && !tb->ordered))
			continue;
		rc = push_part(t, d, ti, sb, starts[d], counts[d], final, err);
		users--;
	}
	if (!rc && !tb->ordered && counts[t->idx] > 0) {
		rc = write_part(t, ti, sb, starts[t->idx], counts[t->idx], err);
		users--;
	}
	/* references of parts never handed out, and our own */
	for (int k = 0; k <= users; k++)
		stream_shared_unref(sb);
	if (!rc && tb->ordered && final)
		rc = send_markers(t, ti, counts, err);
	return rc;
}

static bool blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r' && p[i] != '\n')
			return false;
	return true;
}

/*
 * A record did not decode for table ti: decode only the fields its filter
 * reads and evaluate the filter. *wanted is false when the filter excludes
 * the record; true when it matches or its own fields do not decode (then
 * the table cannot tell, and the record is its dead letter; a routed
 * table's record is the route's, stream_route.c).
 */
int stream_task__wanted_by_filter(rt_task *t, size_t ti, const stream_block *b, bool csv,
				  const char *rec, size_t n, bool *wanted, floe_error *err)
{
	rt_table *tb = &t->p->tables[ti];
	stream_col *pre = &t->pre_roots[ti];
	int rc;
	*wanted = true;
	if (csv) {
		stream_csv_dec *cd = &t->pre_csv[ti];
		const stream_source_cfg *sc = t->p->sources[tb->src].cfg;
		if (sc->csv_header && b->header && t->pre_csv_header[ti] != b->header) {
			if (stream_csv_set_header(cd, pre, b->header, b->header_len))
				return FLOE_OK; /* the main decoder reports the header */
			t->pre_csv_header[ti] = b->header;
		} else if (!sc->csv_header && !cd->have_map && stream_csv_set_positional(cd, pre)) {
			return floe_error_oom(err);
		}
		rc = stream_csv_decode(cd, pre, rec, n);
	} else {
		rc = stream_json_decode(&t->json, pre, rec, n);
	}
	if (rc == FLOE_EINVAL) {
		/* a routed table's field did not decode: the route's dead letter */
		*wanted = !tb->cfg->route_template;
		return FLOE_OK;
	}
	if (rc)
		return floe_error_oom(err);
	*wanted = stream_filter_match(tb->pre_filter, pre, pre->len - 1);
	stream_col_truncate(pre, pre->len - 1);
	return FLOE_OK;
}

int stream_task__evolve(rt_task *t, size_t ti, const stream_block *b, const char *rec, size_t n,
			bool *taken, floe_error *err)
{
	rt_table *tb = &t->p->tables[ti];
	bool wanted = true;
	int rc;
	*taken = false;
	if (tb->cfg->unknown_fields == STREAM_UNKNOWN_EVOLVE) {
		/* another table's record says nothing of this one */
		if (tb->pre_filter && !tb->cdc &&
		    (rc = stream_task__wanted_by_filter(t, ti, b, false, rec, n, &wanted, err)))
			return rc;
		if (wanted && (rc = stream_evolve_note(t, ti, rec, n, taken, err)))
			return rc;
	}
	return *taken ? FLOE_OK : FLOE_EINVAL;
}

/* Decode one block for one table. */
static int decode_for_table(rt_task *t, size_t ti, const stream_block *b, bool count,
			    int64_t *records, floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	const stream_source_cfg *sc = p->sources[tb->src].cfg;
	stream_col *root = &t->roots[ti];
	bool csv = sc->format == STREAM_FMT_CSV && sc->type != STREAM_SRC_GENERATOR;
	/* row-numbered splits: the generator's, an Iceberg source's (a hybrid's bootstrap) */
	bool rows_pos = sc->type == STREAM_SRC_GENERATOR || sc->type == STREAM_SRC_ICEBERG ||
			(sc->type == STREAM_SRC_HYBRID && b->split_name &&
			 !strcmp(b->split_name, "iceberg"));
	int64_t skip = 0;
	int rc;
	if (tb->skipping && b->split_name) {
		skip = stream_offsets_get(&tb->skip, b->split_name, 0);
		if (skip >= b->end) /* committed already */
			return tb->ordered ? send_markers(t, ti, NULL, err) : FLOE_OK;
	}
	if (csv) {
		stream_csv_dec *cd = &t->csv[ti];
		if (sc->csv_header && b->header && t->csv_header[ti] != b->header) {
			if ((rc = stream_csv_set_header(cd, root, b->header, b->header_len))) {
				if (rc == FLOE_ENOMEM)
					return floe_error_set(err, rc, "out of memory");
				return floe_error_set(err, FLOE_EINVAL, "table %s: '%s': CSV header: %s",
						      tb->ident, b->split_name, cd->why.msg);
			}
			t->csv_header[ti] = b->header;
		} else if (!sc->csv_header && !cd->have_map) {
			if (stream_csv_set_positional(cd, root))
				return floe_error_oom(err);
		}
	}
	const char *data = (const char *)b->data, *end = data + b->len, *rec = data;
	int64_t ordinal = 0;
	while (rec < end) {
		size_t n;
		if (csv) {
			bool complete;
			n = stream_csv_record_len(rec, (size_t)(end - rec), sc->csv_quote, &complete);
		} else {
			const char *nl = memchr(rec, '\n', (size_t)(end - rec));
			n = nl ? (size_t)(nl - rec) + 1 : (size_t)(end - rec);
		}
		const char *cur = rec;
		rec += n;
		int64_t off = rows_pos ? b->start + ordinal : b->start + (int64_t)(cur - data);
		if (blank(cur, n) || (csv && sc->csv_allow_comments && cur[0] == '#'))
			continue;
		ordinal++;
		if (count)
			(*records)++;
		if (off < skip) {
			if (count)
				atomic_fetch_add(&t->p->skipped, 1);
			continue;
		}
		int64_t len0 = root->len;
		int n_rows = 1;
		uint8_t kinds[2] = {FLOE_ROW_INSERT, FLOE_ROW_INSERT};
		const char *why = NULL;
		bool taken = false;
		if (tb->cdc == STREAM_CDC_DEBEZIUM) {
			t->json.reject_unknown = tb->cfg->unknown_fields != STREAM_UNKNOWN_DROP;
			rc = stream_cdc_decode_debezium(&t->cdc[ti], root, cur, n, kinds, &n_rows);
			t->json.reject_unknown = false;
			why = t->cdc[ti].why.msg;
			if (rc == FLOE_EINVAL &&
			    (rc = stream_task__evolve(t, ti, b, cur, n, &taken, err)) &&
			    rc != FLOE_EINVAL)
				return rc;
			if (taken)
				continue; /* replayed after the schema update */
		} else {
			if (csv) {
				rc = stream_csv_decode(&t->csv[ti], root, cur, n);
			} else {
				t->json.reject_unknown = tb->cfg->unknown_fields != STREAM_UNKNOWN_DROP;
				rc = stream_json_decode(&t->json, root, cur, n);
				t->json.reject_unknown = false;
				if (rc == FLOE_EINVAL &&
				    (rc = stream_task__evolve(t, ti, b, cur, n, &taken, err)) &&
				    rc != FLOE_EINVAL)
					return rc;
				if (taken)
					continue; /* replayed after the schema update */
			}
			why = csv ? t->csv[ti].why.msg : t->json.why.msg;
			if (rc == FLOE_OK && tb->delta) {
				/* the row's kind, its key, its required columns */
				if (tb->cdc_plan.kind_field >= 0)
					rc = stream_cdc_row_kind(&t->cdc[ti], root, len0, &kinds[0]);
				else
					rc = stream_cdc_check_row(&t->cdc[ti], root, len0, kinds[0]);
				if (rc == FLOE_EINVAL) {
					stream_col_truncate(root, len0);
					why = t->cdc[ti].why.msg;
				}
			}
		}
		if (rc == FLOE_OK && tb->delta) {
			size_t need = (size_t)root->len;
			if (need > t->kinds_cap[ti]) {
				size_t cap = need * 2 + 1024;
				uint8_t *nk = floe_realloc(t->kinds[ti], cap);
				if (!nk)
					return floe_error_oom(err);
				t->kinds[ti] = nk;
				t->kinds_cap[ti] = cap;
			}
			for (int k = 0; k < n_rows; k++)
				t->kinds[ti][len0 + k] = kinds[k];
		}
		if (rc == FLOE_EINVAL) {
			if ((rc = stream_task__note_bad(t, ti, cur, n, off, why, err)))
				return rc;
			if (tb->pre_filter) {
				/* was the record meant for this table at all? */
				bool wanted;
				if ((rc = stream_task__wanted_by_filter(t, ti, b, csv, cur, n, &wanted, err)))
					return rc;
				if (!wanted)
					t->n_bad--; /* another table's business */
			}
			continue;
		}
		if (rc)
			return floe_error_set(err, rc, "table %s: out of memory decoding", tb->ident);
		if (tb->filter && !stream_filter_match(tb->filter, root, root->len - 1)) {
			stream_col_truncate(root, root->len - 1);
			if (!tb->cfg->route_template) /* another routed table's record */
				atomic_fetch_add(&t->p->filtered, 1);
			continue;
		}
		char pwhy[FLOE_ERROR_MSG_MAX + 256];
		bool pok = true;
		/* a projected table checks its projected rows (project_rows) */
		for (int64_t r = len0; tb->n_pcheck && !tb->project && pok && r < root->len; r++)
			pok = stream_task__row_partition_ok(tb, root, r, pwhy, sizeof(pwhy));
		if (!pok) {
			/* every row of the record goes (a change's delete half too) */
			stream_col_truncate(root, len0);
			if ((rc = stream_task__note_bad(t, ti, cur, n, off, pwhy, err)))
				return rc;
			continue;
		}
		if (tb->project && (rc = stream_task__note_row(t, ti, cur, n, off, err)))
			return rc;
		if ((root->len & 255) < (int64_t)n_rows && stream_col_bytes(root) >= STREAM_BATCH_BYTES &&
		    (rc = stream_task__emit(t, ti, false, err)))
			return rc;
	}
	return stream_task__emit(t, ti, true, err);
}

static int process_block(rt_task *t, raw_item *it, floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_source *s = &p->sources[it->src];
	int64_t records = 0;
	int rc;
	t->cur_seq = it->seq;
	if (it->b.msgs) {
		for (size_t k = 0; k < s->n_tables; k++)
			if ((rc = stream_task__decode_msgs(t, s->tables[k], &it->b, k == 0, &records,
							   err))) {
				t->n_bad = 0;
				floe_buf_clear(&t->bad_text);
				return rc;
			}
	} else if (it->b.oversize) {
		char why[128];
		snprintf(why, sizeof(why), "record longer than max-record-size (%lld)",
			 (long long)s->cfg->max_record_bytes);
		for (size_t k = 0; k < s->n_tables; k++) {
			rt_table *tb = &p->tables[s->tables[k]];
			if (tb->skipping && it->b.start < stream_offsets_get(&tb->skip, it->b.split_name, 0))
				continue;
			if ((rc = stream_task__note_bad(t, s->tables[k], (const char *)it->b.data, it->b.len,
					   it->b.start, why, err)))
				return rc;
		}
		for (size_t k = 0; k < s->n_tables; k++)
			if (p->tables[s->tables[k]].ordered &&
			    (rc = send_markers(t, s->tables[k], NULL, err)))
				return rc;
		records = 1;
	} else {
		for (size_t k = 0; k < s->n_tables; k++)
			if ((rc = decode_for_table(t, s->tables[k], &it->b, k == 0, &records, err))) {
				t->n_bad = 0;
				floe_buf_clear(&t->bad_text);
				return rc;
			}
	}
	/* name templates: records whose table is still to be created */
	if (p->n_routes && !it->b.oversize &&
	    (rc = stream_route__scan(t, it->src, &it->b, s->n_tables ? NULL : &records, err))) {
		t->n_bad = 0;
		floe_buf_clear(&t->bad_text);
		return rc;
	}
	/* one dead letter per bad record, with every table it was meant for */
	if ((rc = flush_bad(t, &it->b, err)))
		return rc;
	floe_metric_add(s->m_in, records);
	floe_metric_add(s->m_bytes, (int64_t)(it->b.len + it->b.held_bytes));
	atomic_fetch_add(&p->records_in, records);
	atomic_fetch_add(&p->bytes_in, (int64_t)(it->b.len + it->b.held_bytes));
	return FLOE_OK;
}

/* Close every open file of the task (the checkpoint barrier). */
static int complete_all(rt_task *t, floe_error *err)
{
	floe_pipeline *p = t->p;
	int rc;
	if (!t->ckpt_arena && !(t->ckpt_arena = floe_arena_new(65536)))
		return floe_error_oom(err);
	for (size_t i = 0; i < p->n_tables; i++) {
		t->ckpt_n[i] = 0;
		if (t->deltas[i]) {
			floe_data_file *files = t->ckpt_files[i], *rep = NULL;
			size_t n = 0, n_rep = 0;
			rc = floe_delta_writer_complete(t->deltas[i], &files, &n, &rep, &n_rep,
							t->ckpt_arena, err);
			floe_free(rep);
			t->ckpt_files[i] = files;
			t->ckpt_n[i] = n;
			if (!rc && n_rep)
				rc = floe_error_set(err, FLOE_EINVAL, "internal: a delta writer replaced "
						    "%zu deletion vectors",
						    n_rep);
			if (rc)
				return floe_error_prefix(err, rc, "table %s: ", p->tables[i].ident);
			continue;
		}
		if (!t->sinks[i])
			continue;
		floe_data_file *files = t->ckpt_files[i];
		size_t n = 0;
		rc = p->sink->complete(t->sinks[i], &files, &n, t->ckpt_arena, err);
		t->ckpt_files[i] = files;
		t->ckpt_n[i] = n;
		if (rc)
			return floe_error_prefix(err, rc, "table %s: ", p->tables[i].ident);
	}
	return stream_dlq_flush(p, &t->dlq, false, err);
}

/* The first held part whose block's turn has come (arrival order kept). */
static bool take_held(rt_task *t, part_item *out)
{
	for (size_t i = 0; i < t->n_held; i++) {
		if (t->held[i].seq != t->next_seq[t->held[i].table])
			continue;
		*out = t->held[i];
		memmove(&t->held[i], &t->held[i + 1], (t->n_held - i - 1) * sizeof(part_item));
		t->n_held--;
		return true;
	}
	return false;
}

void *stream_task_main(void *arg)
{
	rt_task *t = arg;
	floe_pipeline *p = t->p;
	floe_error err;
	int rc;
	floe_error_clear(&err);
	floe_mutex_lock(&p->lock);
	for (;;) {
		if (atomic_load(&p->cancel))
			break;
		part_item it;
		bool have = take_held(t, &it);
		if (!have && t->in_len) {
			it = t->inbox[t->in_head];
			t->in_head = (t->in_head + 1) % t->in_cap;
			t->in_len--;
			if (p->tables[it.table].ordered && it.seq != t->next_seq[it.table]) {
				/* a later block's part: it waits (still a unit) */
				if (FLOE_ARRAY_RESERVE(t->held, t->cap_held, t->n_held + 1)) {
					floe_error_oom(&err);
					stream_shared_unref(it.sb);
					p->units--;
					stream_fail_locked(p, &err);
					continue;
				}
				t->held[t->n_held++] = it;
				continue;
			}
			have = true;
		}
		if (have) {
			floe_mutex_unlock(&p->lock);
			rc = write_part(t, it.table, it.sb, it.start, it.len, &err);
			if (p->tables[it.table].ordered && it.last)
				t->next_seq[it.table]++;
			floe_mutex_lock(&p->lock);
			p->units--;
			if (rc)
				stream_fail_locked(p, &err);
			if (p->units == 0)
				floe_cond_broadcast(&p->hub_cv);
			continue;
		}
		if (p->raw_len) {
			raw_item ri = p->raw[p->raw_head];
			p->raw_head = (p->raw_head + 1) % p->raw_cap;
			p->raw_len--;
			floe_mutex_unlock(&p->lock);
			rc = process_block(t, &ri, &err);
			stream_block_reset(&ri.b);
			floe_mutex_lock(&p->lock);
			p->units--;
			if (rc)
				stream_fail_locked(p, &err);
			floe_cond_broadcast(&p->hub_cv);
			continue;
		}
		if (t->abort_req) {
			/* a rewind: what the open files hold is read again */
			t->abort_req = false;
			floe_mutex_unlock(&p->lock);
			for (size_t i = 0; i < p->n_tables; i++) {
				if (t->sinks[i])
					p->sink->abort(t->sinks[i]);
				t->sinks[i] = NULL;
				stream_col_truncate(&t->roots[i], 0);
				t->ckpt_n[i] = 0;
			}
			floe_mutex_lock(&p->lock);
			t->abort_done = true;
			floe_cond_broadcast(&p->hub_cv);
			continue;
		}
		if (t->ckpt_req) {
			t->ckpt_req = false;
			floe_mutex_unlock(&p->lock);
			rc = complete_all(t, &err);
			floe_mutex_lock(&p->lock);
			t->ckpt_done = true;
			if (rc)
				stream_fail_locked(p, &err);
			floe_cond_broadcast(&p->hub_cv);
			continue;
		}
		if (p->shutdown)
			break;
		t->waiting = true;
		floe_cond_wait(&t->cv, &p->lock);
		t->waiting = false;
	}
	floe_mutex_unlock(&p->lock);
	return NULL;
}
