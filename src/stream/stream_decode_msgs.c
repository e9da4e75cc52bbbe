/*
 * stream_decode_msgs.c — the writer tasks' decoding of message blocks
 * (Kafka): each record's value through the table's value format
 * (stream_value_format.h), then the metadata columns (metadata.<field>:
 * <column>) from the record itself, then the routing filter.
 *
 * Records below the table's committed offset for the partition are
 * skipped (the table has them); a record that does not fit goes to the
 * dead letters with its topic, partition and offset; a tombstone (null
 * value) is skipped by formats without deletes (json, csv: as Flink's JSON
 * format does), and is a null value for raw.
 *
 * Delta tables (upserts, change records) get a row kind per row as the
 * file path gives them (stream_task.c): debezium-json values through the
 * change-event decoder (0, 1 or 2 rows: -U/+U), rowkind.field from the
 * decoded row, plain values as inserts; the metadata columns are filled
 * before the key and required-column checks, so metadata.key may be the
 * key column. In an upsert table a tombstone deletes its key (Flink's
 * upsert-kafka): the key decoded as JSON (key.format: json; Kafka Connect's
 * envelope allowed), or the raw key into the metadata.key column. Debezium
 * tombstones (the compaction marker after a 'd' event) are no change, as
 * in Flink's debezium-json.
 */
#include <stdio.h>
#include <string.h>

#include "json/json.h"
#include "stream/stream_runtime.h"
#include "stream/stream_value_format.h"

static const char *const meta_names[] = {
	[STREAM_META_TOPIC] = "topic",	     [STREAM_META_PARTITION] = "partition",
	[STREAM_META_OFFSET] = "offset",     [STREAM_META_TIMESTAMP] = "timestamp",
	[STREAM_META_TS_TYPE] = "timestamp-type", [STREAM_META_KEY] = "key",
	[STREAM_META_HEADERS] = "headers", [STREAM_META_SHARD] = "shard-id",
	[STREAM_META_SEQ] = "sequence-number", [STREAM_META_STREAM] = "stream",
};

int stream_meta_kind(const char *name)
{
	for (int k = 1; k < STREAM_META_COUNT; k++)
		if (!strcmp(meta_names[k], name))
			return k;
	return STREAM_META_NONE;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The headers as a JSON object (the last of repeated names wins); values
 * as text, or base64 when `b64` (binary map values) or not UTF-8. */
static int headers_json(floe_buf *out, const uint8_t *p, size_t n, uint32_t count, bool b64)
{
	floe_buf tmp;
	size_t at = 0;
	bool first = true;
	floe_buf_clear(out);
	floe_buf_init(&tmp, 0);
	int rc = floe_buf_putc(out, '{');
	for (uint32_t i = 0; !rc && i < count && at + 8 <= n; i++) {
		uint32_t nl = rd32(p + at);
		at += 4;
		if (nl > n - at)
			break;
		const uint8_t *name = p + at;
		at += nl;
		if (at + 4 > n)
			break;
		uint32_t vl = rd32(p + at);
		at += 4;
		bool null = vl == UINT32_MAX;
		if (!null && vl > n - at)
			break;
		/* a later header of the same name replaces this one */
		bool later = false;
		size_t q = at + (null ? 0 : vl);
		for (uint32_t j = i + 1; j < count && q + 8 <= n && !later; j++) {
			uint32_t nl2 = rd32(p + q);
			q += 4;
			if (nl2 > n - q)
				break;
			later = nl2 == nl && !memcmp(p + q, name, nl);
			q += nl2;
			if (q + 4 > n)
				break;
			uint32_t vl2 = rd32(p + q);
			q += 4 + (vl2 == UINT32_MAX ? 0 : vl2);
		}
		if (!later) {
			if (!first)
				rc = floe_buf_putc(out, ',');
			first = false;
			rc = rc ? rc : floe_json_escape(out, (const char *)name, nl);
			rc = rc ? rc : floe_buf_putc(out, ':');
			if (rc) {
			} else if (null) {
				rc = floe_buf_puts(out, "null");
			} else if (b64 || !stream_utf8_valid(p + at, vl)) {
				floe_buf_clear(&tmp);
				rc = floe_base64_encode(&tmp, p + at, vl);
				rc = rc ? rc : floe_json_escape(out, floe_buf_cstr(&tmp), tmp.len);
			} else {
				rc = floe_json_escape(out, (const char *)p + at, vl);
			}
		}
		at += null ? 0 : vl;
	}
	rc = rc ? rc : floe_buf_putc(out, '}');
	floe_buf_reset(&tmp);
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

int stream_meta_put(stream_col *c, int kind, const stream_block *b, const stream_msg *m,
		    floe_buf *scratch, stream_json_dec *json, stream_reason *why)
{
	static const stream_coerce_opts ms = {STREAM_EPOCH_MS};
	char num[32];
	const uint8_t *data = b->data;
	switch (kind) {
	case STREAM_META_TOPIC:
	case STREAM_META_STREAM:
		return stream_coerce_text(c, b->topic, strlen(b->topic), &ms, why);
	case STREAM_META_SHARD:
		if (!b->shard_id)
			goto null;
		return stream_coerce_text(c, b->shard_id, strlen(b->shard_id), &ms, why);
	case STREAM_META_SEQ:
		if (!m->seq_len)
			goto null;
		return stream_coerce_text(c, (const char *)data + m->seq_off, m->seq_len, &ms, why);
	case STREAM_META_PARTITION:
		snprintf(num, sizeof(num), "%d", (int)b->partition);
		return stream_coerce_text(c, num, strlen(num), &ms, why);
	case STREAM_META_OFFSET:
		snprintf(num, sizeof(num), "%lld", (long long)m->offset);
		return stream_coerce_text(c, num, strlen(num), &ms, why);
	case STREAM_META_TIMESTAMP:
		if (m->timestamp_ms < 0)
			goto null;
		snprintf(num, sizeof(num), "%lld", (long long)m->timestamp_ms);
		return stream_coerce_text(c, num, strlen(num), &ms, why);
	case STREAM_META_TS_TYPE: {
		const char *s = m->ts_type == 1	  ? "CreateTime"
				: m->ts_type == 2 ? "LogAppendTime"
						  : "NoTimestampType";
		return stream_coerce_text(c, s, strlen(s), &ms, why);
	}
	case STREAM_META_KEY:
		if (m->flags & STREAM_MSG_NULL_KEY)
			goto null;
		if (c->type->id == FLOE_T_BINARY)
			return stream_col_put_bin(c, stream_msg_key(b, m), m->key_len);
		if (c->type->id == FLOE_T_STRING &&
		    !stream_utf8_valid(stream_msg_key(b, m), m->key_len)) {
			stream_reason_set(why, "the key is not UTF-8 (column '%s' is a string; make "
					       "it binary)",
					  c->name);
			return FLOE_EINVAL;
		}
		return stream_coerce_text(c, (const char *)stream_msg_key(b, m), m->key_len, &ms,
					  why);
	case STREAM_META_HEADERS: {
		bool b64 = c->kind == SB_MAP && c->n_kids == 2 && c->kids[1].type->id == FLOE_T_BINARY;
		/* a zero-copy block has data only when some record has headers */
		const uint8_t *h = data ? data + m->hdr_off : (const uint8_t *)"";
		int rc = headers_json(scratch, h, m->hdr_len, m->n_hdrs, b64);
		if (rc)
			return rc;
		if (c->kind == SB_BIN)
			return stream_col_put_bin(c, scratch->data, scratch->len);
		rc = stream_json_decode_value(json, c, (const char *)scratch->data, scratch->len);
		if (rc == FLOE_EINVAL)
			*why = json->why;
		return rc;
	}
	default:
		break;
	}
null:
	if (!c->nullable) {
		stream_reason_set(why, "the record has no %s for the required column '%s'",
				  meta_names[kind], c->name);
		return FLOE_EINVAL;
	}
	return stream_col_put_null(c);
}

/* Replace the last n_rows rows of top-level column c with record metadata. */
static int put_meta(rt_task *t, stream_col *c, int kind, const stream_block *b,
		    const stream_msg *m, int n_rows, stream_reason *why)
{
	int rc = FLOE_OK;
	stream_col_truncate(c, c->len - n_rows);
	for (int k = 0; k < n_rows && !rc; k++)
		rc = stream_meta_put(c, kind, b, m, &t->meta_buf, &t->json, why);
	return rc;
}

/* The kinds of a delta table's rows [len0, len0 + n_rows). */
static int set_kinds(rt_task *t, size_t ti, int64_t len0, const uint8_t *kinds, int n_rows,
		     floe_error *err)
{
	size_t need = (size_t)(len0 + n_rows);
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
	return FLOE_OK;
}

/* An upsert's tombstone: one row holding the record's key (see the top). */
static int tombstone_row(rt_task *t, size_t ti, stream_col *root, const stream_block *b,
			 const stream_msg *m, stream_reason *why)
{
	rt_table *tb = &t->p->tables[ti];
	const stream_source_cfg *sc = t->p->sources[tb->src].cfg;
	stream_cdc_dec *d = &t->cdc[ti];
	bool key_col = false;
	for (size_t k = 0; tb->meta_kind && k < tb->cdc_plan.n_keys; k++)
		key_col |= tb->meta_kind[tb->cdc_plan.keys[k]] == STREAM_META_KEY;
	int rc;
	if (m->flags & STREAM_MSG_NULL_KEY) {
		stream_reason_set(why, "a tombstone (null value) without a key: nothing to delete");
		return FLOE_EINVAL;
	}
	if (sc->key_format && !strcmp(sc->key_format, "json"))
		rc = stream_cdc_decode_key(d, root, (const char *)stream_msg_key(b, m), m->key_len);
	else if (key_col)
		rc = stream_json_decode(d->json, root, "{}", 2); /* metadata.key fills it */
	else {
		stream_reason_set(why, "a tombstone (null value) deletes by key, but the table "
				       "cannot read the key: set key.format: json (the key's "
				       "members name the key columns) or metadata.key: <a key column>");
		return FLOE_EINVAL;
	}
	if (rc == FLOE_EINVAL)
		*why = key_col && !(sc->key_format && !strcmp(sc->key_format, "json")) ? d->json->why
											: d->why;
	return rc;
}

int stream_task__decode_msgs(rt_task *t, size_t ti, const stream_block *b, bool count,
			     int64_t *records, floe_error *err)
{
	floe_pipeline *p = t->p;
	rt_table *tb = &p->tables[ti];
	const stream_source_cfg *sc = p->sources[tb->src].cfg;
	const stream_value_format *vf = sc->value_format;
	stream_col *root = &t->roots[ti];
	int64_t skip = 0;
	int rc;
	if (tb->skipping && b->split_name) {
		skip = stream_offsets_get(&tb->skip, b->split_name, 0);
		if (skip >= b->end) {
			if (count)
				*records += (int64_t)b->n_msgs;
			return FLOE_OK; /* committed already */
		}
	}
	bool vf_json = !strcmp(vf->name, "json"); /* once a block, not a record */
	for (size_t i = 0; i < b->n_msgs; i++) {
		const stream_msg *m = &b->msgs[i];
		const char *val = (const char *)stream_msg_val(b, m);
		stream_reason why;
		if (count)
			(*records)++;
		if (m->offset < skip)
			continue;
		if (m->flags & STREAM_MSG_OVERSIZE) {
			snprintf(why.msg, sizeof(why.msg),
				 "record of %u bytes is longer than max-record-size (%lld)", m->size,
				 (long long)sc->max_record_bytes);
			if ((rc = stream_task__note_bad(t, ti, val, m->val_len, m->offset, why.msg, err)))
				return rc;
			continue;
		}
		bool tomb = (m->flags & STREAM_MSG_NULL_VALUE) != 0;
		if (tomb && tb->cdc == STREAM_CDC_DEBEZIUM)
			continue; /* the 'd' event before it was the delete */
		if (tomb && tb->delta && !tb->upsert)
			continue; /* a change stream's tombstone: no kind, no change */
		if (tomb && !tb->upsert && vf->format != STREAM_FMT_RAW &&
		    vf->format != STREAM_FMT_OTHER)
			continue; /* a tombstone: no row in a format without deletes */
		stream_msg_view v = {(const uint8_t *)val,
				     m->val_len,
				     (m->flags & STREAM_MSG_NULL_VALUE) != 0,
				     stream_msg_key(b, m),
				     m->key_len,
				     (m->flags & STREAM_MSG_NULL_KEY) != 0,
				     b->topic,
				     b->partition,
				     m->offset,
				     m->timestamp_ms};
		int64_t n0 = root->len;
		int n_rows = 1;
		uint8_t kinds[2] = {FLOE_ROW_INSERT, FLOE_ROW_INSERT};
		if (tomb && tb->upsert) {
			kinds[0] = FLOE_ROW_DELETE;
			rc = tombstone_row(t, ti, root, b, m, &why);
		} else if (tb->cdc == STREAM_CDC_DEBEZIUM) {
			t->json.reject_unknown = tb->cfg->unknown_fields != STREAM_UNKNOWN_DROP;
			rc = stream_cdc_decode_debezium(&t->cdc[ti], root, val, m->val_len, kinds,
							&n_rows);
			t->json.reject_unknown = false;
			if (rc == FLOE_EINVAL)
				why = t->cdc[ti].why;
		} else if (vf_json) { /* its state is a JSON decoder */
			stream_json_dec *jd = t->vdec[ti];
			jd->reject_unknown = tb->cfg->unknown_fields != STREAM_UNKNOWN_DROP;
			rc = vf->decode(t->vdec[ti], root, &v, &why);
			jd->reject_unknown = false;
		} else {
			rc = vf->decode(t->vdec[ti], root, &v, &why);
		}
		if (rc == FLOE_EINVAL && vf->format == STREAM_FMT_JSONL && !tomb) {
			/* unknown-fields: evolve holds it for a schema update */
			bool taken = false;
			if (root->len > n0)
				stream_col_truncate(root, n0);
			if ((rc = stream_task__evolve(t, ti, b, val, m->val_len, &taken, err)) &&
			    rc != FLOE_EINVAL)
				return rc;
			if (taken)
				continue; /* replayed after the schema update */
		}
		if (rc == 0 && n_rows == 0)
			continue; /* a Debezium event that is no change */
		for (size_t k = 0; rc == 0 && tb->meta_kind && k < root->n_kids; k++)
			if (tb->meta_kind[k])
				rc = put_meta(t, &root->kids[k], tb->meta_kind[k], b, m, n_rows, &why);
		if (rc == 0 && tb->delta && tb->cdc != STREAM_CDC_DEBEZIUM) {
			/* the row's kind, its key, its required columns */
			if (!tomb && tb->cdc_plan.kind_field >= 0)
				rc = stream_cdc_row_kind(&t->cdc[ti], root, n0, &kinds[0]);
			else
				rc = stream_cdc_check_row(&t->cdc[ti], root, n0, kinds[0]);
			if (rc == FLOE_EINVAL)
				why = t->cdc[ti].why;
		}
		if (rc == 0 && tb->delta && (rc = set_kinds(t, ti, n0, kinds, n_rows, err)))
			return rc;
		if (rc == FLOE_EINVAL) {
			if (root->len > n0)
				stream_col_truncate(root, n0);
			if ((rc = stream_task__note_bad(t, ti, val, m->val_len, m->offset, why.msg, err)))
				return rc;
			if (tb->pre_filter && vf->format == STREAM_FMT_JSONL) {
				bool wanted;
				if ((rc = stream_task__wanted_by_filter(t, ti, b, false, val, m->val_len,
									&wanted, err)))
					return rc;
				if (!wanted)
					t->n_bad--; /* another table's business */
			}
			continue;
		}
		if (rc == FLOE_EIO) /* a server the format needs (a schema registry) failed */
			return floe_error_set(err, rc, "table %s: topic %s partition %d offset %lld: %s",
					      tb->ident, b->topic ? b->topic : "", (int)b->partition,
					      (long long)m->offset, why.msg);
		if (rc)
			return floe_error_set(err, rc, "table %s: out of memory decoding", tb->ident);
		if (tb->filter && !stream_filter_match(tb->filter, root, root->len - 1)) {
			stream_col_truncate(root, root->len - 1);
			continue;
		}
		char pwhy[FLOE_ERROR_MSG_MAX + 256];
		bool pok = true;
		for (int64_t r = n0; tb->n_pcheck && !tb->project && pok && r < root->len; r++)
			pok = stream_task__row_partition_ok(tb, root, r, pwhy, sizeof(pwhy));
		if (!pok) {
			/* every row of the record goes (a change's delete half too) */
			stream_col_truncate(root, n0);
			if ((rc = stream_task__note_bad(t, ti, val, m->val_len, m->offset, pwhy, err)))
				return rc;
			continue;
		}
		if (tb->project &&
		    (rc = stream_task__note_row(t, ti, val, m->val_len, m->offset, err)))
			return rc;
		if ((root->len & 255) < (int64_t)n_rows && stream_col_bytes(root) >= STREAM_BATCH_BYTES &&
		    (rc = stream_task__emit(t, ti, false, err)))
			return rc;
	}
	return stream_task__emit(t, ti, true, err);
}

int stream_task__open_value_decoders(rt_task *t, floe_error *err)
{
	floe_pipeline *p = t->p;
	int rc;
	for (size_t i = 0; i < p->n_tables; i++) {
		rt_table *tb = &p->tables[i];
		const stream_source_cfg *sc = p->sources[tb->src].cfg;
		if (!sc->value_format)
			continue;
		stream_value_ctx ctx = {sc, tb->decode_type, tb->meta_cols,
					{(stream_epoch_unit)sc->epoch_unit}};
		if ((rc = sc->value_format->open(&t->vdec[i], &ctx, err)))
			return floe_error_prefix(err, rc, "table %s: ", tb->ident);
	}
	return FLOE_OK;
}

void stream_task__close_value_decoders(rt_task *t)
{
	floe_pipeline *p = t->p;
	for (size_t i = 0; t->vdec && i < p->n_tables; i++) {
		const stream_source_cfg *sc = p->sources[p->tables[i].src].cfg;
		if (sc->value_format && t->vdec[i])
			sc->value_format->close(t->vdec[i]);
	}
	floe_free(t->vdec);
	t->vdec = NULL;
	floe_buf_reset(&t->meta_buf);
}
