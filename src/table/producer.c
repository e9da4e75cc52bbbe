/*
 * append.c — the fast-append snapshot producer and the commit loop.
 *
 * spec: "Snapshots", "Sequence Numbers", "Row Lineage"; summary keys as
 * Java's SnapshotSummary (../shared/iceberg-notes.md section 6).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "table/commit.h"
#include "util/alloc.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/rand.h"
#include "util/timeutil.h"

typedef struct spec_group {
	int32_t spec_id;
	floe_data_file *files;
	size_t n, cap;
} spec_group;

struct floe_append {
	floe_table *t;
	char *branch;
	floe_arena arena; /* copies of the files, written manifests */
	spec_group *groups;
	size_t n_groups, cap_groups;
	floe_strmap extra;
	char commit_uuid[37];
	int64_t snapshot_id;
	/* written once */
	floe_manifest_file *manifests;
	size_t n_manifests;
	bool manifests_written;
	/* totals of the added files */
	int64_t added_files, added_records, added_size;
	int64_t changed_partitions;
};

void floe_retry_policy_from(floe_retry_policy *p, const floe_metadata *m)
{
	/* Java's defaults are 4 retries, 100 ms .. 60 s, 30 min; floe waits for
	 * more attempts by default because streaming writers commit often */
	p->num_retries = (int)floe_metadata_property_i64(m, "commit.retry.num-retries", 10);
	p->min_wait_ms = floe_metadata_property_i64(m, "commit.retry.min-wait-ms", 100);
	p->max_wait_ms = floe_metadata_property_i64(m, "commit.retry.max-wait-ms", 60000);
	p->total_timeout_ms = floe_metadata_property_i64(m, "commit.retry.total-timeout-ms", 1800000);
	if (p->num_retries < 0)
		p->num_retries = 0;
	if (p->min_wait_ms < 1)
		p->min_wait_ms = 1;
	if (p->max_wait_ms < p->min_wait_ms)
		p->max_wait_ms = p->min_wait_ms;
}

int floe_append_new(floe_append **out, floe_table *t, const char *branch, floe_error *err)
{
	floe_append *ap = floe_calloc(1, sizeof(*ap));
	if (!ap || !(ap->branch = floe_strdup(branch ? branch : "main"))) {
		floe_free(ap);
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	}
	ap->t = t;
	floe_arena_init(&ap->arena, 65536);
	floe_strmap_init(&ap->extra);
	floe_uuid_v4_str(ap->commit_uuid);
	ap->snapshot_id = floe_new_snapshot_id();
	*out = ap;
	return FLOE_OK;
}

void floe_append_free(floe_append *ap)
{
	if (!ap)
		return;
	for (size_t i = 0; i < ap->n_groups; i++)
		floe_free(ap->groups[i].files);
	floe_free(ap->groups);
	floe_strmap_reset(&ap->extra);
	floe_arena_reset(&ap->arena);
	floe_free(ap->branch);
	floe_free(ap);
}

int floe_append_add_file(floe_append *ap, const floe_data_file *f, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(ap->t);
	const floe_partition_spec *spec = floe_metadata_spec(m, f->spec_id);
	spec_group *g = NULL;
	if (ap->manifests_written)
		return floe_error_set(err, FLOE_EINVAL, "files cannot be added after commit started");
	if (f->content != FLOE_CONTENT_DATA)
		return floe_error_set(err, FLOE_EINVAL, "an append adds data files only ('%s' holds %s)",
				      f->file_path, floe_content_name(f->content));
	if (!spec)
		return floe_error_set(err, FLOE_EINVAL, "'%s': partition spec %d is not in the table",
				      f->file_path, f->spec_id);
	if (f->partition.n != spec->n_fields)
		return floe_error_set(err, FLOE_EINVAL,
				      "'%s': %zu partition values for a spec with %zu fields",
				      f->file_path, f->partition.n, spec->n_fields);
	for (size_t i = 0; i < ap->n_groups; i++)
		if (ap->groups[i].spec_id == f->spec_id)
			g = &ap->groups[i];
	if (!g) {
		if (FLOE_ARRAY_RESERVE(ap->groups, ap->cap_groups, ap->n_groups + 1))
			return floe_error_set(err, FLOE_ENOMEM, "out of memory");
		g = &ap->groups[ap->n_groups++];
		memset(g, 0, sizeof(*g));
		g->spec_id = f->spec_id;
	}
	if (FLOE_ARRAY_RESERVE(g->files, g->cap, g->n + 1) ||
	    floe_data_file_copy(&g->files[g->n], &ap->arena, f))
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	g->n++;
	ap->added_files++;
	ap->added_records += f->record_count;
	ap->added_size += f->file_size_in_bytes;
	return FLOE_OK;
}

int floe_append_set_summary(floe_append *ap, const char *key, const char *value, floe_error *err)
{
	if (strcmp(key, "operation") == 0)
		return floe_error_set(err, FLOE_EINVAL, "'operation' is set by the producer");
	if (floe_strmap_set(&ap->extra, key, value))
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	return FLOE_OK;
}

static int count_partitions(floe_append *ap)
{
	floe_hmap seen;
	floe_buf key;
	int rc = FLOE_OK;
	floe_hmap_init(&seen);
	floe_buf_init(&key, 0);
	for (size_t g = 0; g < ap->n_groups && !rc; g++) {
		for (size_t i = 0; i < ap->groups[g].n && !rc; i++) {
			const floe_data_file *f = &ap->groups[g].files[i];
			floe_buf_clear(&key);
			rc = floe_buf_printf(&key, "%d|", f->spec_id);
			for (size_t k = 0; k < f->partition.n && !rc; k++) {
				const floe_value *v = &f->partition.values[k];
				if (v->is_null) {
					rc = floe_buf_puts(&key, "\x01N");
				} else {
					rc = floe_buf_putc(&key, '\x02');
					if (!rc)
						rc = floe_value_to_bytes(&key, v);
				}
				rc = rc ? rc : floe_buf_putc(&key, '\x03');
			}
			rc = rc ? rc : floe_hmap_put(&seen, key.data, key.len, 1, NULL);
		}
	}
	ap->changed_partitions = (int64_t)seen.len;
	floe_hmap_reset(&seen);
	floe_buf_reset(&key);
	return rc;
}

static char *metadata_dir_of(floe_table *t)
{
	return floe_metadata_dir(floe_table_metadata(t));
}

static int write_manifests(floe_append *ap, floe_error *err)
{
	const floe_metadata *m = floe_table_metadata(ap->t);
	floe_fileio *io = floe_table_io(ap->t);
	const floe_schema *schema = floe_metadata_current_schema(m);
	const char *codec = floe_metadata_property(m, "write.manifest.compression-codec");
	char *dir = metadata_dir_of(ap->t);
	int rc = FLOE_OK;
	if (!dir)
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	if (!codec || floe_str_ieq(codec, "gzip"))
		codec = "deflate";
	else if (floe_str_ieq(codec, "zstd"))
		codec = "zstandard";
	else if (floe_str_ieq(codec, "uncompressed") || floe_str_ieq(codec, "none"))
		codec = "null";
	ap->manifests = floe_arena_calloc(&ap->arena, ap->n_groups + 1, sizeof(floe_manifest_file));
	if (!ap->manifests) {
		floe_free(dir);
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	}
	for (size_t g = 0; g < ap->n_groups && !rc; g++) {
		const floe_partition_spec *spec = floe_metadata_spec(m, ap->groups[g].spec_id);
		const char *path = floe_arena_sprintf(&ap->arena, "%s/%s-m%zu.avro", dir,
						      ap->commit_uuid, g);
		floe_output *out;
		floe_manifest_writer *w;
		if (!path) {
			rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
			break;
		}
		if ((rc = floe_io_create(io, path, false, &out, err)))
			break;
		if ((rc = floe_manifest_writer_open(&w, out, path, m->format_version, schema, spec,
						    FLOE_MANIFEST_DATA, ap->snapshot_id, codec, err)))
			break;
		for (size_t i = 0; i < ap->groups[g].n && !rc; i++)
			rc = floe_manifest_writer_add(w, FLOE_ENTRY_ADDED, -1, -1, -1,
						      &ap->groups[g].files[i], err);
		if (rc) {
			floe_manifest_writer_abort(w);
			break;
		}
		if ((rc = floe_manifest_writer_close(w, &ap->manifests[ap->n_manifests], &ap->arena,
						     err)))
			break;
		ap->n_manifests++;
	}
	floe_free(dir);
	ap->manifests_written = true;
	return rc;
}

static void remove_manifests(floe_append *ap)
{
	for (size_t i = 0; i < ap->n_manifests; i++)
		floe_io_remove_quiet(floe_table_io(ap->t), ap->manifests[i].path);
}

/* parent's total + delta, as Java: omitted when the parent's value is bad. */
static int put_total(floe_strmap *s, const floe_snapshot *parent, const char *key, int64_t delta)
{
	int64_t base = 0;
	if (parent) {
		const char *v = floe_snapshot_summary(parent, key);
		if (!v || !floe_parse_i64(v, strlen(v), &base))
			return FLOE_OK;
	}
	if (base + delta < 0)
		return FLOE_OK;
	return floe_strmap_setf(s, key, "%lld", (long long)(base + delta));
}

static int build_summary(floe_append *ap, const floe_snapshot *parent, floe_strmap *s)
{
	int rc = floe_strmap_set(s, "operation", "append");
	if (ap->added_files) {
		rc = rc ? rc : floe_strmap_setf(s, "added-data-files", "%lld", (long long)ap->added_files);
		rc = rc ? rc : floe_strmap_setf(s, "added-records", "%lld", (long long)ap->added_records);
		rc = rc ? rc : floe_strmap_setf(s, "added-files-size", "%lld", (long long)ap->added_size);
	}
	rc = rc ? rc : floe_strmap_setf(s, "changed-partition-count", "%lld",
				    (long long)ap->changed_partitions);
	rc = rc ? rc : put_total(s, parent, "total-records", ap->added_records);
	rc = rc ? rc : put_total(s, parent, "total-files-size", ap->added_size);
	rc = rc ? rc : put_total(s, parent, "total-data-files", ap->added_files);
	rc = rc ? rc : put_total(s, parent, "total-delete-files", 0);
	rc = rc ? rc : put_total(s, parent, "total-position-deletes", 0);
	rc = rc ? rc : put_total(s, parent, "total-equality-deletes", 0);
	rc = rc ? rc : floe_strmap_set(s, "engine-name", "floe");
	rc = rc ? rc : floe_strmap_set(s, "engine-version", FLOE_VERSION);
	for (size_t i = 0; i < ap->extra.len && !rc; i++)
		rc = floe_strmap_set(s, ap->extra.items[i].key, ap->extra.items[i].value);
	return rc;
}

/* One attempt against the table's current metadata. *written receives the
 * manifest list path (to delete on failure). */
static int attempt(floe_append *ap, int n_attempt, char **list_path, floe_error *err)
{
	floe_table *t = ap->t;
	const floe_metadata *base = floe_table_metadata(t);
	floe_fileio *io = floe_table_io(t);
	const floe_snapshot_ref *ref = floe_metadata_ref(base, ap->branch);
	const floe_snapshot *parent = ref ? floe_metadata_snapshot(base, ref->snapshot_id)
					  : floe_metadata_current_snapshot(base);
	floe_arena a;
	floe_manifest_file *old = NULL, *all;
	size_t n_old = 0;
	floe_strmap summary;
	floe_metadata_builder *b = NULL;
	floe_metadata *next = NULL;
	char *loc = NULL;
	int rc;
	int fv = base->format_version;

	floe_arena_init(&a, 65536);
	floe_strmap_init(&summary);
	*list_path = NULL;
	if (parent && (rc = floe_table_manifests(&old, &n_old, &a, t, parent, err)))
		goto done;
	all = floe_arena_calloc(&a, ap->n_manifests + n_old + 1, sizeof(*all));
	if (!all) {
		rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
		goto done;
	}
	/* new manifests first, then the parent's, as Java's fast append does */
	memcpy(all, ap->manifests, ap->n_manifests * sizeof(*all));
	if (n_old)
		memcpy(all + ap->n_manifests, old, n_old * sizeof(*all));
	for (size_t i = 0; i < ap->n_manifests; i++) {
		all[i].sequence_number = -1;
		all[i].min_sequence_number = ap->manifests[i].min_sequence_number;
		all[i].first_row_id = -1;
	}
	int64_t seq = fv >= 2 ? base->last_sequence_number + 1 : 0;
	int64_t first_row_id = fv >= 3 ? base->next_row_id : -1;
	int64_t next_row_id = first_row_id;
	char *dir = metadata_dir_of(t);
	if (!dir) {
		rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
		goto done;
	}
	size_t plen = strlen(dir) + 128;
	*list_path = floe_malloc(plen);
	if (!*list_path) {
		floe_free(dir);
		rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
		goto done;
	}
	snprintf(*list_path, plen, "%s/snap-%lld-%d-%s.avro", dir, (long long)ap->snapshot_id,
		 n_attempt, ap->commit_uuid);
	floe_free(dir);
	floe_output *out;
	int64_t list_len = 0;
	if ((rc = floe_io_create(io, *list_path, false, &out, err)))
		goto done;
	if ((rc = floe_manifest_list_write(out, fv, ap->snapshot_id,
					   parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT, seq,
					   first_row_id, all, ap->n_manifests + n_old, &next_row_id,
					   &list_len, err)))
		goto done;

	if ((rc = build_summary(ap, parent, &summary))) {
		rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
		goto done;
	}
	floe_kv *kvs = floe_arena_calloc(&a, summary.len + 1, sizeof(floe_kv));
	if (!kvs) {
		rc = floe_error_set(err, FLOE_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < summary.len; i++) {
		kvs[i].key = summary.items[i].key;
		kvs[i].value = summary.items[i].value;
	}
	floe_snapshot snap = {0};
	snap.snapshot_id = ap->snapshot_id;
	snap.parent_id = parent ? parent->snapshot_id : FLOE_NO_SNAPSHOT;
	snap.sequence_number = seq;
	snap.timestamp_ms = floe_now_ms();
	if (snap.timestamp_ms <= base->last_updated_ms)
		snap.timestamp_ms = base->last_updated_ms + 1;
	snap.manifest_list = *list_path;
	snap.summary = kvs;
	snap.n_summary = summary.len;
	snap.schema_id = base->current_schema_id;
	snap.first_row_id = fv >= 3 ? first_row_id : -1;
	snap.added_rows = fv >= 3 ? next_row_id - first_row_id : -1;
	floe_snapshot_ref nref = {ap->branch, ap->snapshot_id, false, -1, -1, -1};
	if (ref) {
		nref.min_snapshots_to_keep = ref->min_snapshots_to_keep;
		nref.max_snapshot_age_ms = ref->max_snapshot_age_ms;
		nref.max_ref_age_ms = ref->max_ref_age_ms;
		if (ref->is_tag) {
			rc = floe_error_set(err, FLOE_EINVAL, "'%s' is a tag, not a branch", ap->branch);
			goto done;
		}
	}
	if ((rc = floe_metadata_builder_from(&b, base, err)) ||
	    (rc = floe_mb_add_snapshot(b, &snap, err)) || (rc = floe_mb_set_ref(b, &nref, err)))
		goto done;
	if (fv >= 3)
		floe_mb_set_next_row_id(b, next_row_id);
	rc = floe_metadata_builder_finish(&next, b, base->metadata_location, base->last_updated_ms,
					  err);
	b = NULL;
	if (rc)
		goto done;
	rc = floe_catalog_commit_table(floe_table_catalog(t), floe_table_namespace(t),
				       floe_table_name(t), base, next, &loc, err);
	if (rc)
		goto done;
	next->metadata_location = floe_arena_strdup(&next->arena, loc);
	if (!next->metadata_location) {
		/* committed: keep going with a reload later */
		floe_free(loc);
		loc = NULL;
		floe_metadata_free(next);
		next = NULL;
		rc = floe_table_refresh(t, err);
		goto done;
	}
	floe_table__set_metadata(t, next);
	next = NULL;
done:
	floe_free(loc);
	floe_metadata_builder_free(b);
	floe_metadata_free(next);
	floe_strmap_reset(&summary);
	floe_arena_reset(&a);
	return rc;
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The catalog reports "the commit may or may not have happened" (a timeout or
 * a 5xx from a REST server) as a non-retryable EIO: then nothing the commit
 * wrote may be deleted, since the table may already reference it. */
static bool outcome_unknown(int rc, const floe_error *err)
{
	return rc == FLOE_EIO && !err->retryable;
}

int floe_append_commit(floe_append *ap, int64_t *snapshot_id, floe_error *err_out)
{
	floe_table *t = ap->t;
	floe_retry_policy pol;
	floe_error local, *err = err_out ? err_out : &local;
	int rc;
	int64_t start = floe_monotonic_ns();
	floe_error_clear(&local);
	if (snapshot_id)
		*snapshot_id = -1;
	if (!floe_table_catalog(t))
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "this table was opened by path: commit through a catalog");
	if (ap->added_files == 0)
		return FLOE_OK;
	if ((rc = count_partitions(ap)))
		return floe_error_set(err, FLOE_ENOMEM, "out of memory");
	if (!ap->manifests_written && (rc = write_manifests(ap, err))) {
		remove_manifests(ap);
		return floe_error_prefix(err, "append to %s.%s: ", floe_table_namespace(t),
					 floe_table_name(t));
	}
	floe_retry_policy_from(&pol, floe_table_metadata(t));
	int64_t wait = pol.min_wait_ms;
	for (int n = 1;; n++) {
		char *list_path = NULL;
		rc = attempt(ap, n, &list_path, err);
		if (rc == FLOE_OK) {
			floe_free(list_path);
			break;
		}
		bool unknown = outcome_unknown(rc, err);
		bool retry = rc == FLOE_ECONFLICT || rc == FLOE_ETIMEDOUT;
		if (list_path && !unknown)
			floe_io_remove_quiet(floe_table_io(t), list_path);
		floe_free(list_path);
		int64_t elapsed_ms = (floe_monotonic_ns() - start) / 1000000;
		if (!retry || n > pol.num_retries || elapsed_ms > pol.total_timeout_ms) {
			if (!unknown)
				remove_manifests(ap);
			return floe_error_prefix(err, "append to %s.%s (attempt %d): ",
						 floe_table_namespace(t), floe_table_name(t), n);
		}
		FLOE_DEBUG("commit to %s.%s lost a race (attempt %d): %s", floe_table_namespace(t),
			   floe_table_name(t), n, err->msg);
		/* exponential backoff with jitter */
		sleep_ms(wait / 2 + (int64_t)(floe_random_u64() % (uint64_t)(wait / 2 + 1)));
		wait = wait * 2 > pol.max_wait_ms ? pol.max_wait_ms : wait * 2;
		floe_error_clear(err);
		if ((rc = floe_table_refresh(t, err))) {
			remove_manifests(ap);
			return rc;
		}
	}
	if (snapshot_id)
		*snapshot_id = ap->snapshot_id;
	return FLOE_OK;
}
