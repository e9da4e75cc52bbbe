/*
 * stream_delta.c — tables a pipeline writes upserts or change records to
 * (delta tables): the rules refused before anything is created or written,
 * and the per-table plan the writer tasks use (equality fields, the decode
 * type with optional columns, the change-kind column, ordering).
 *
 * A table is a delta table when upsert is on (the table key upsert-enabled,
 * else the table property write.upsert.enabled) or its source gives change
 * records (format debezium-json, or rowkind.field). Refused, each message
 * naming the rule and the fix (Iceberg Flink's FlinkSink checks these too):
 *   - format version 1 (no delete files);
 *   - no equality fields (equality-field-columns, else identifier fields);
 *   - an equality field that is not a top-level primitive column;
 *   - a partition source column missing from the equality fields (an
 *     upsert's delete carries the key only and would land in the wrong
 *     partition; with HASH distribution Flink requires it for CDC too);
 *   - distribution NONE: the rows of one key must reach one writer task,
 *     in order — HASH on the partition (partitioned) or on the key
 *     (unpartitioned). Unset, floe chooses HASH and says so;
 *   - a routing filter (an update moving a row out of the filter would
 *     never delete it).
 * Kafka and Kinesis feed them too (stream_decode_msgs.c: kinds per row,
 * tombstones of upsert tables as deletes by key).
 * There is no overwrite mode in pipelines, so "upsert together with
 * overwrite" cannot be configured (docs/operations.md).
 */
#include <string.h>
#include <strings.h>

#include "json/json.h"
#include "arrow/arrow_build.h"
#include "scan/scan_select.h"
#include "util/timeutil.h"
#include "stream/stream_runtime.h"
#include "util/log.h"

static bool truthy(const char *v)
{
	return v && (!strcmp(v, "true") || !strcmp(v, "TRUE") || !strcmp(v, "True"));
}

typedef struct delta_in {
	const stream_table_cfg *tc;
	const stream_source_cfg *sc;
	const floe_schema *schema;
	const floe_partition_spec *spec;
	int fv;
	const char *prop_upsert, *prop_dist;
} delta_in;

typedef struct delta_out {
	bool delta, upsert, choose_hash;
	int32_t ids[64];
	size_t n_ids;
} delta_out;

/*
 * The first column of the table a routing filter's text names, or NULL. A
 * filter on the table's own columns would strand a row an update moves out of
 * it; one on fields only the source has (the event type of a stream that
 * carries several) picks which records are changes, as Flink's filtered
 * upsert INSERT does. Words in quotes and the filter's keywords are not
 * names.
 */
static const char *filter_table_column(const char *f, const floe_schema *schema)
{
	static const char *const kw[] = {"and", "or", "not", "in", "is", "null", "like", "between", "true", "false"};
	for (const char *p = f; *p;) {
		if (*p == '\'' || *p == '"' || *p == '`') {
			char q = *p++;
			const char *b = p;
			while (*p && *p != q)
				p++;
			size_t n = (size_t)(p - b);
			for (size_t i = 0; q == '`' && i < schema->root->n_fields; i++) {
				/* `name`: a quoted name */
				const char *name = schema->root->fields[i].name;
				if (strlen(name) == n && !strncmp(name, b, n))
					return name;
			}
			if (*p)
				p++;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_')) {
			p++;
			continue;
		}
		const char *b = p;
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_')
			p++;
		size_t n = (size_t)(p - b);
		bool is_kw = false;
		for (size_t k = 0; k < sizeof(kw) / sizeof(kw[0]) && !is_kw; k++)
			is_kw = strlen(kw[k]) == n && !strncasecmp(kw[k], b, n);
		if (is_kw)
			continue;
		for (size_t i = 0; i < schema->root->n_fields; i++) {
			const char *name = schema->root->fields[i].name;
			if (strlen(name) == n && !strncasecmp(name, b, n))
				return name;
		}
	}
	return NULL;
}

static int rules(const delta_in *in, delta_out *out, floe_error *err)
{
	const stream_table_cfg *tc = in->tc;
	const stream_source_cfg *sc = in->sc;
	int rc;
	memset(out, 0, sizeof(*out));
	out->upsert = tc->upsert >= 0 ? tc->upsert == 1 : truthy(in->prop_upsert);
	bool cdc = sc && (sc->cdc || sc->rowkind_field);
	out->delta = out->upsert || cdc;
	if (!out->delta)
		return FLOE_OK;
	const char *what = out->upsert ? "upsert" : "change records";
	if ((rc = floe_delta_equality_ids(in->schema, tc->equality_fields, out->ids, 64, &out->n_ids,
					  err)))
		return floe_error_prefix(err, rc, "equality-field-columns: ");
	if ((rc = floe_delta_check(in->schema, in->spec, in->fv, out->ids, out->n_ids, true, err)))
		return rc;
	const char *col = tc->filter ? filter_table_column(tc->filter, in->schema) : NULL;
	if (col)
		return floe_error_set(err, FLOE_EINVAL,
				      "%s and a routing filter on the table's column '%s' cannot be "
				      "combined: an update that moves a row out of the filter would never "
				      "delete it; route the changes before floe, or filter on a field the "
				      "table does not keep (an event type)",
				      what, col);
	int dist = tc->distribution;
	if (dist == STREAM_DIST_UNSET && in->prop_dist) {
		if (!strcmp(in->prop_dist, "none"))
			return floe_error_set(err, FLOE_EINVAL,
					      "%s with distribution NONE: the changes of one key must "
					      "reach one writer, in order — HASH on the equality fields "
					      "is required (the table's write.distribution-mode is "
					      "none); set distribution-mode: hash (--distribution hash) "
					      "or the table property to hash",
					      what);
		dist = STREAM_DIST_HASH;
	}
	if (dist == STREAM_DIST_NONE)
		return floe_error_set(err, FLOE_EINVAL,
				      "%s with distribution-mode none: the changes of one key must "
				      "reach one writer, in order — HASH on the equality fields is "
				      "required; set distribution-mode: hash (--distribution hash) or "
				      "leave it unset",
				      what);
	out->choose_hash = dist == STREAM_DIST_UNSET;
	return FLOE_OK;
}

static const char *prop(const floe_strmap *m, const char *k)
{
	for (size_t i = 0; m && i < m->len; i++)
		if (!strcmp(m->items[i].key, k))
			return m->items[i].value;
	return NULL;
}

int stream_delta_precheck(const stream_config *cfg, floe_catalog *cat, floe_error *err)
{
	int rc = FLOE_OK;
	for (size_t i = 0; i < cfg->n_tables && !rc; i++) {
		const stream_table_cfg *tc = &cfg->tables[i];
		const stream_source_cfg *sc = stream_config_source(cfg, tc->source);
		bool maybe = tc->upsert == 1 || (sc && (sc->cdc || sc->rowkind_field)) ||
			     tc->upsert == -1;
		if (!maybe)
			continue;
		char *ns = NULL, *name = NULL;
		floe_table *t = NULL;
		floe_arena a;
		floe_arena_init(&a, 4096);
		delta_in in = {tc, sc, NULL, NULL, 0, NULL, NULL};
		delta_out out;
		if ((rc = floe_catalog_split_ident(tc->name, NULL, &ns, &name, err)))
			goto next;
		rc = floe_table_load(&t, cat, ns, name, err);
		if (rc == FLOE_OK) {
			const floe_metadata *m = floe_table_metadata(t);
			in.schema = floe_metadata_current_schema(m);
			in.spec = floe_metadata_default_spec(m);
			in.fv = m->format_version;
			in.prop_upsert = floe_metadata_property(m, "write.upsert.enabled");
			in.prop_dist = floe_metadata_property(m, "write.distribution-mode");
		} else if (rc == FLOE_ENOTFOUND) {
			floe_error_clear(err);
			rc = FLOE_OK;
			in.prop_upsert = prop(&tc->properties, "write.upsert.enabled");
			in.prop_dist = prop(&tc->properties, "write.distribution-mode");
			bool upsert = tc->upsert >= 0 ? tc->upsert == 1 : truthy(in.prop_upsert);
			if ((!upsert && !(sc && (sc->cdc || sc->rowkind_field))) || !tc->schema)
				goto next; /* not a delta table, or "does not exist" later */
			/* the table floe would create */
			floe_schema *s = NULL;
			const char *st = tc->schema;
			while (*st == ' ' || *st == '\n' || *st == '\t')
				st++;
			if (*st == '{') {
				floe_json *j;
				rc = floe_json_parse(&j, &a, st, strlen(st), NULL, err);
				if (!rc)
					rc = floe_schema_from_json(&s, &a, j, err);
			} else {
				rc = floe_schema_parse_compact(&s, &a, st, err);
			}
			floe_partition_spec *spec = NULL;
			int32_t lp = FLOE_PARTITION_FIELD_ID_START - 1;
			if (!rc && tc->partition_by && *tc->partition_by)
				rc = floe_spec_parse_expr(&spec, &a, tc->partition_by, s, 0, &lp, err);
			if (rc)
				goto next; /* creating it reports this */
			in.schema = s;
			in.spec = spec;
			const char *pfv = prop(&tc->properties, "format-version");
			int64_t fv = 2;
			if (tc->format_version)
				fv = tc->format_version;
			else if (pfv && !floe_parse_i64(pfv, strlen(pfv), &fv))
				fv = 2;
			in.fv = (int)fv;
		} else {
			/* opening the table reports it */
			floe_error_clear(err);
			rc = FLOE_OK;
			goto next;
		}
		if (tc->write_mode == 1 &&
		    (tc->upsert >= 0 ? tc->upsert == 1 : truthy(in.prop_upsert))) {
			rc = floe_error_set(err, FLOE_EINVAL,
					    "write.mode: overwrite and upserts (write.upsert.enabled) "
					    "together are refused: an overwrite replaces rows, an upsert "
					    "merges them");
			goto next;
		}
		rc = rules(&in, &out, err);
next:
		if (rc)
			floe_error_prefix(err, rc, "table %s: ", tc->name);
		floe_table_free(t);
		floe_free(ns);
		floe_free(name);
		floe_arena_reset(&a);
	}
	return rc;
}

int stream_delta_setup(floe_pipeline *p, rt_table *t, floe_error *err)
{
	const stream_table_cfg *tc = t->cfg;
	const stream_source_cfg *sc = stream_config_source(p->cfg, tc->source);
	delta_in in = {tc, sc, t->schema, t->spec, t->meta->format_version,
		       floe_metadata_property(t->meta, "write.upsert.enabled"),
		       floe_metadata_property(t->meta, "write.distribution-mode")};
	delta_out out;
	int rc;
	if ((rc = rules(&in, &out, err)))
		return floe_error_prefix(err, rc, "table %s: ", t->ident);
	if (!out.delta)
		return FLOE_OK;
	t->delta = true;
	t->upsert = out.upsert;
	t->cdc = sc ? sc->cdc : STREAM_CDC_NONE;
	memcpy(t->eq_ids, out.ids, out.n_ids * sizeof(int32_t));
	t->n_eq = out.n_ids;
	if (out.choose_hash && p->cfg->parallelism > 1)
		FLOE_WARN("table %s: %s needs HASH distribution on the equality fields; using "
			  "distribution-mode hash (none was set)",
			  t->ident, out.upsert ? "upsert" : "a change stream");
	t->dist = STREAM_DIST_HASH;
	t->ordered = p->cfg->parallelism > 1;

	/* the decode type: the table's columns, all optional at the top (a
	 * delete may carry the key alone; stream_cdc_check_row asks whole rows
	 * for their required columns), plus the change-kind column when the
	 * table has none of that name */
	const floe_type *root = t->schema->root;
	const char *kf = sc ? sc->rowkind_field : NULL;
	int32_t kind_field = -1, ts_field = -1;
	size_t extra = 0;
	for (size_t i = 0; kf && i < root->n_fields; i++)
		if (!strcmp(root->fields[i].name, kf)) {
			if (root->fields[i].type->id != FLOE_T_STRING)
				return floe_error_set(err, FLOE_EINVAL,
						      "table %s: rowkind.field '%s' must be a string "
						      "column (it is %s)",
						      t->ident, kf,
						      floe_type_is_primitive(root->fields[i].type)
							      ? "not a string"
							      : "nested");
			kind_field = (int32_t)i;
		}
	/* the routing filter's extra fields (source fields the table lacks, decoded
	 * as strings after the table's columns; stream_coord.c) stay where the
	 * compiled filter reads them, before the change-kind column */
	size_t fx = !t->project && t->decode_type && t->decode_type != root &&
				    t->decode_type->n_fields == root->n_fields + t->n_extra
			    ? t->n_extra
			    : 0;
	if (kf && kind_field < 0) {
		kind_field = (int32_t)(root->n_fields + fx);
		extra = 1;
	}
	if (sc && sc->debezium_ts_column) {
		for (size_t i = 0; i < root->n_fields; i++)
			if (!strcmp(root->fields[i].name, sc->debezium_ts_column))
				ts_field = (int32_t)i;
		floe_type_id tid = ts_field >= 0 ? root->fields[ts_field].type->id : FLOE_T_UNKNOWN;
		if (tid != FLOE_T_TIMESTAMP && tid != FLOE_T_TIMESTAMPTZ && tid != FLOE_T_LONG &&
		    tid != FLOE_T_TIMESTAMP_NS && tid != FLOE_T_TIMESTAMPTZ_NS)
			return floe_error_set(err, FLOE_EINVAL,
					      "table %s: debezium-json.source-timestamp-column '%s' "
					      "must be a timestamp or long column of the table",
					      t->ident, sc->debezium_ts_column);
	}
	floe_type *dt = floe_arena_calloc(&t->warena, 1, sizeof(*dt));
	floe_field *fs = floe_arena_calloc(&t->warena, root->n_fields + fx + 1, sizeof(*fs));
	t->plan_keys = floe_arena_calloc(&t->warena, t->n_eq + 1, sizeof(int32_t));
	t->plan_required = floe_arena_calloc(&t->warena, root->n_fields + 1, sizeof(int32_t));
	if (!dt || !fs || !t->plan_keys || !t->plan_required)
		return floe_error_oom(err);
	*dt = *root;
	memcpy(fs, root->fields, root->n_fields * sizeof(*fs));
	size_t n_req = 0;
	for (size_t i = 0; i < root->n_fields; i++) {
		if (fs[i].required)
			t->plan_required[n_req++] = (int32_t)i;
		fs[i].required = false;
	}
	if (fx)
		memcpy(fs + root->n_fields, t->decode_type->fields + root->n_fields, fx * sizeof(*fs));
	if (extra) {
		floe_field *f = &fs[root->n_fields + fx];
		f->id = INT32_MAX - 4096; /* apart from the filter's extra fields' ids */
		f->type = floe_type_primitive(FLOE_T_STRING);
		if (!(f->name = floe_arena_strdup(&t->warena, kf)))
			return floe_error_oom(err);
	}
	dt->fields = fs;
	dt->n_fields = root->n_fields + fx + extra;
	t->decode_type = dt;
	t->n_extra = fx + extra;
	for (size_t k = 0; k < t->n_eq; k++)
		for (size_t i = 0; i < root->n_fields; i++)
			if (root->fields[i].id == t->eq_ids[k])
				t->plan_keys[k] = (int32_t)i;
	stream_cdc_plan *pl = &t->cdc_plan;
	pl->upsert = t->upsert;
	pl->schema_include = sc && sc->debezium_schema_include;
	pl->keys = t->plan_keys;
	pl->n_keys = t->n_eq;
	pl->required = t->plan_required;
	pl->n_required = n_req;
	pl->ts_field = ts_field;
	pl->kind_field = kind_field;
	const char *mode = floe_metadata_property(t->meta, "write.upsert.mode");
	const char *mode_cfg = prop(&tc->properties, "write.upsert.mode");
	if (mode_cfg)
		mode = mode_cfg;
	/* index mode is for upserts (a change stream's insert does not replace its key) */
	t->index_mode = mode && !strcmp(mode, "index") && t->upsert;
	t->index_memory = (size_t)256 << 20;
	const char *mem = prop(&tc->properties, "write.upsert.index.memory");
	if (!mem)
		mem = floe_metadata_property(t->meta, "write.upsert.index.memory");
	int64_t mv;
	if (mem && floe_parse_i64(mem, strlen(mem), &mv) && mv > 0)
		t->index_memory = (size_t)mv;
	stream_index_persist_setup(t); /* helper-idxpersist */
	FLOE_INFO("table %s: %s on %zu equality field(s)%s%s", t->ident,
		  t->upsert ? "upserts" : "change records", t->n_eq,
		  t->cdc == STREAM_CDC_DEBEZIUM ? " from Debezium JSON" : "",
		  t->index_mode ? " (index mode)" : "");
	return FLOE_OK;
}

/* ---- index mode ------------------------------------------------------------------- */

/*
 * The key index of an index-mode table, built from the table's current
 * snapshot: every live data file (with its DV) is registered, then the key
 * columns of its live rows are read with _file and _pos (deletes applied:
 * the scan's own rules) into the index partitions. t->idx_expect becomes
 * that snapshot: a checkpoint commits the index's DVs only when the table's
 * head is still it (stream_coord.c commit_table). A table the index cannot
 * describe exactly (a v3 data file with position delete files beside its DV,
 * relocated file paths) runs in equality mode instead, with a warning.
 */
int stream_index_build(floe_pipeline *p, rt_table *t, floe_error *err)
{
	int rc;
	floe_scan *s = NULL;
	floe_delta_index *ix = NULL;
	struct ArrowSchema sch;
	memset(&sch, 0, sizeof(sch));
	int64_t t0 = floe_monotonic_ns(), c0 = floe_process_cpu_ns();
	bool loaded = false; /* helper-idxpersist: a persisted index, or a refresh */
	if ((rc = stream_index_try_load(p, t, &loaded, err)) || loaded)
		return rc;
	t->idx_persist_due = true; /* a rebuild: persist at the next DV commit */
	t->idx_stale = false;
	if ((rc = floe_table_refresh(t->commit_t, err)))
		return rc;
	const floe_metadata *m = floe_table_metadata(t->commit_t);
	const floe_snapshot *head = floe_metadata_current_snapshot(m);
	floe_delta_index_opts o;
	memset(&o, 0, sizeof(o));
	o.equality_ids = t->eq_ids;
	o.n_equality_ids = t->n_eq;
	o.n_parts = (size_t)p->n_tasks;
	o.memory = t->index_memory;
	o.partition_id = p->n_tasks; /* after the tasks' partition ids: its own file names */
	o.task_id = p->run_id;
	o.operation_id = p->op_id;
	if (t->index) { /* a rebuild: the delta writers hold it */
		ix = t->index;
		t->index = NULL;
		if ((rc = floe_delta_index_clear(ix, err)))
			goto done;
	} else if ((rc = floe_delta_index_new(&ix, floe_table_io(t->write_t), t->meta, &t->wcfg,
					      &o, err))) {
		return rc;
	}
	t->idx_expect = head ? head->snapshot_id : FLOE_NO_SNAPSHOT;
	if (!head) {
		t->index = ix;
		return FLOE_OK;
	}
	const char *cols[66];
	const floe_type *root = t->schema->root;
	for (size_t k = 0; k < t->n_eq; k++)
		for (size_t i = 0; i < root->n_fields; i++)
			if (root->fields[i].id == t->eq_ids[k])
				cols[k] = root->fields[i].name;
	cols[t->n_eq] = "_file";
	cols[t->n_eq + 1] = "_pos";
	floe_scan_opts so = FLOE_SCAN_OPTS_INIT;
	so.columns = cols;
	so.n_columns = t->n_eq + 2;
	so.snapshot_id = head->snapshot_id;
	if ((rc = floe_scan_open(&s, t->commit_t, &so, err)))
		goto done;
	scan_file *const *files;
	size_t nf;
	bool usable = true;
	floe_scan__plan_files(s, &files, &nf);
	for (size_t i = 0; i < nf && !rc && usable; i++) {
		const scan_file *f = files[i];
		const scan_file *dv = NULL;
		if (strcmp(f->path, f->raw_path) != 0)
			usable = false;
		for (size_t k = 0; k < f->n_deletes; k++) {
			if (f->deletes[k]->is_dv)
				dv = f->deletes[k];
			else if (f->deletes[k]->content == FLOE_CONTENT_POSITION_DELETES &&
				 m->format_version >= 3)
				usable = false;
		}
		floe_data_file d;
		if (dv) {
			floe_data_file_init(&d);
			d.content = dv->content;
			d.file_path = dv->raw_path;
			d.file_format = dv->format;
			d.spec_id = dv->spec_id;
			d.partition = dv->partition;
			d.record_count = dv->record_count;
			d.file_size_in_bytes = dv->file_size;
			d.referenced_data_file = dv->referenced;
			d.content_offset = dv->content_offset;
			d.content_size_in_bytes = dv->content_size;
		}
		rc = floe_delta_index_add_file(ix, f->raw_path, f->spec_id, &f->partition,
					       dv ? &d : NULL, err);
	}
	if (!rc && !usable) {
		FLOE_WARN("table %s: the key index cannot describe this table (position delete "
			  "files beside deletion vectors, or relocated files): upserts use "
			  "equality deletes in this run (floe maintain compaction removes the cause)",
			  t->ident);
		t->idx_stale = true;
		t->idx_expect = INT64_MIN; /* never trusted: every commit takes the fallback */
		rc = floe_delta_index_clear(ix, err);
		goto done;
	}
	if (!rc) {
		size_t rows = 0;
		for (size_t i = 0; i < nf; i++) { /* live rows: less the DV's (not v2's) deletes */
			int64_t n = files[i]->record_count;
			for (size_t k = 0; k < files[i]->n_deletes; k++)
				if (files[i]->deletes[k]->is_dv)
					n -= files[i]->deletes[k]->record_count;
			rows += n > 0 ? (size_t)n : 0;
		}
		floe_delta_index_reserve(ix, rows);
	}
	if (!rc)
		rc = floe_scan_arrow_schema(s, &sch, err);
	while (!rc) {
		struct ArrowArray b;
		bool eof;
		if ((rc = floe_scan_next(s, &b, &eof, err)) || eof)
			break;
		rc = floe_delta_index_load(ix, &b, &sch, err);
		floe_arrow_array_release(&b);
	}
done:
	if (sch.release)
		sch.release(&sch);
	floe_scan_free(s);
	t->index = ix; /* freed with the table */
	if (rc)
		return floe_error_prefix(err, rc, "table %s: building the key index: ", t->ident);
	if (ix) {
		floe_delta_index_stats st;
		floe_delta_index_get_stats(ix, &st);
		FLOE_INFO("table %s: key index of snapshot %lld: %zu keys in %zu data files, %zu "
			  "bytes in memory, %llu spills (%lld ms, %lld ms CPU)",
			  t->ident, (long long)t->idx_expect, st.entries, st.files, st.memory,
			  (unsigned long long)st.spills,
			  (long long)((floe_monotonic_ns() - t0) / 1000000),
			  (long long)((floe_process_cpu_ns() - c0) / 1000000));
	}
	return FLOE_OK;
}
