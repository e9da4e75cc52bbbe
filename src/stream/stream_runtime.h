/*
 * stream_runtime.h — the streaming runtime's internals, shared by the
 * coordinator (stream_coord.c), the writer tasks (stream_task.c) and the
 * public API (stream_api.c).
 *
 * DESIGN (threads and messages):
 *
 *   coordinator ──raw blocks──► shared queue ──► task ×N ──parts──► task inboxes
 *   (reads the sources,                          decode, route,   (HASH: rows of a
 *    triggers checkpoints)                       write files       partition to one task)
 *        │ barrier: wait until drained, ask every task to complete()
 *        └──checkpoint (files + offsets)──► committer ──► catalog (one snapshot per table)
 *
 * One mutex (the hub) guards every queue and counter; each thread waits on
 * its own condition variable. Work is counted in units: a raw block is one
 * unit until a task has decoded it; every part it hands to another task is
 * one more; a unit ends when its rows are in a file. The coordinator admits
 * a block only while units < max_units, which bounds memory and every inbox
 * (an inbox never holds more than max_units + N*N parts), so a push never
 * blocks and tasks cannot deadlock on each other. A checkpoint barrier is
 * "units == 0": every block read before it is in a task writer, none after.
 * Errors travel as the hub's first error plus the cancel flag, which every
 * loop and wait checks.
 */
#ifndef FLOE_STREAM_RUNTIME_H
#define FLOE_STREAM_RUNTIME_H

#include <stdatomic.h>

#include "floe/pipeline.h"
#include "maintain/maintain_runner.h"
#include "obs/obs_metrics.h"
#include "parquet/writer.h"
#include "stream/stream_range.h"
#include "stream/stream_config.h"
#include "stream/stream_decode.h"
#include "stream/stream_decode_cdc.h"
#include "stream/stream_filter.h"
#include "stream/stream_project.h"
#include "stream/stream_source.h"
#include "stream/stream_split_fence.h"
#include "table/table_impl.h"
#include "util/thread.h"
#include "write/write.h"

struct floe_snapshot_op;

/* How tasks write files: the task writers of src/write, or a test double. */
typedef struct stream_sink_ops {
	int (*open)(void **out, floe_fileio *io, const floe_metadata *m, const floe_write_config *cfg,
		    const floe_task_writer_opts *o, floe_error *err);
	int (*write)(void *w, const struct ArrowArray *batch, const struct ArrowSchema *schema,
		     floe_error *err);
	/* Close the open files; append their entries (strings in a) to files/n. */
	int (*complete)(void *w, floe_data_file **files, size_t *n, floe_arena *a, floe_error *err);
	void (*abort)(void *w);
	void (*free)(void *w);
} stream_sink_ops;

extern const stream_sink_ops stream_sink_task_writers;

/* A batch is cut when its columns hold this many bytes. */
#define STREAM_BATCH_BYTES ((size_t)8 << 20)

/* Record metadata a message source's table can take as columns
 * (metadata.<name>: <column>). */
enum {
	STREAM_META_NONE = 0,
	STREAM_META_TOPIC,
	STREAM_META_PARTITION,
	STREAM_META_OFFSET,
	STREAM_META_TIMESTAMP,
	STREAM_META_TS_TYPE,
	STREAM_META_KEY,
	STREAM_META_HEADERS,
	STREAM_META_SHARD, /* Kinesis: shard-id */
	STREAM_META_SEQ,   /* Kinesis: sequence-number */
	STREAM_META_STREAM, /* Kinesis: the stream's name */
	STREAM_META_COUNT,
};
/* STREAM_META_* of a metadata name, STREAM_META_NONE when unknown. */
int stream_meta_kind(const char *name);
/*
 * Append one row of record m's metadata of kind (STREAM_META_*) to the
 * top-level column c (null when the record has none and c is nullable).
 * scratch holds the headers' JSON on the way into a map or string column;
 * json decodes it. FLOE_EINVAL with why when it does not fit c; FLOE_ENOMEM.
 */
int stream_meta_put(stream_col *c, int kind, const stream_block *b, const stream_msg *m,
		    floe_buf *scratch, stream_json_dec *json, stream_reason *why) FLOE_WUR;

/* Split names starting with '@' are source parameters (the generator's base
 * time), not positions: merged by taking any table's value, never skipped. */
#define STREAM_PARAM_PREFIX '@'

typedef struct rt_pfield {
	int path[8];
	int depth;
	const floe_type *src_type;
	const floe_partition_field *pf;
	bool desc; /* RANGE: a descending sort field */
} rt_pfield;

typedef struct stream_ow_filter stream_ow_filter;

typedef struct rt_table {
	const stream_table_cfg *cfg;
	char *ns, *name, *ident;
	floe_table *commit_t; /* the committer's handle (refreshed by commits) */
	floe_table *write_t;  /* frozen metadata the tasks write with */
	const floe_metadata *meta;
	const floe_schema *schema;
	const floe_partition_spec *spec;
	struct ArrowSchema aschema;
	floe_write_config wcfg;
	floe_arena warena;
	stream_filter *filter;
	/* The filter again, on a struct of only the fields it reads: a record
	 * that does not decode for the table is decoded with it to learn
	 * whether the table wanted it at all (a record the filter excludes is
	 * not the table's dead letter). */
	stream_filter *pre_filter;
	const floe_type *pre_type;
	const floe_type *decode_type; /* the schema's root, plus the filter's extra fields */
	const stream_project *project; /* computed projection: decode_type is its input */
	size_t n_extra;               /* extra (string) fields at the end, not written */
	int dist; /* stream_dist */
	size_t src;
	stream_offsets skip; /* committed positions: records before them are in the table */
	/* a routed table (stream_route.c): the positions its source started from
	 * in the run that created it (table property floe.route-start.<pipeline>),
	 * its positions until it commits */
	stream_offsets route_start;
	bool skipping;
	int64_t last_ckpt; /* last committed checkpoint id (0: none) */
	/* message sources: per top-level field of decode_type, STREAM_META_* */
	uint8_t *meta_kind;
	bool *meta_cols;
	/* Kafka (consumer groups): every process of the pipeline commits only
	 * its partitions' offsets, so the table's position of a split is the
	 * newest snapshot of the pipeline that names it (stream_split_fence.c) */
	bool split_fence;
	stream_split_state *splits;
	/* the pipeline's newest snapshot in this table as this process knows it
	 * (resumed from or committed; FLOE_NO_SNAPSHOT): every commit is fenced
	 * on it (floe_op_fence_pipeline) */
	int64_t fence_snap;
	/* write.mode: overwrite — the load's base (the branch head when it
	 * started, kept in every checkpoint's floe.overwrite-base) and, for
	 * overwrite-where, its filter */
	bool overwrite;
	int64_t ow_base, ow_base_seq;
	stream_ow_filter *ow_filter;
	/* unknown-fields: evolve — records that need a wider schema (u32 length
	 * + bytes each, under the hub lock), committed as a schema update at
	 * the end of the run (stream_evolve.c) */
	floe_buf evo_recs;
	size_t n_evo_recs;
	rt_pfield *pplan;
	size_t n_pplan;
	/* partition fields whose value a record can make unwritable (truncate of a
	 * decimal past its precision): checked per record, dead-lettered */
	rt_pfield *pcheck;
	size_t n_pcheck;
	floe_imap owners; /* HASH: partition hash -> task (hub's owner_lock) */
	/* RANGE (stream_range.h): the key's fields (the partition tuple, then the
	 * sort order's), and the assignment of the last checkpoint's statistics
	 * (NULL until the first: HASH's owners route) */
	rt_pfield *rplan;
	size_t n_rplan;
	stream_range_assign *range;
	floe_metric **m_task_rows; /* per task: floe_writer_records_total */
	int64_t next_owner;
	/* metrics */
	floe_metric *m_files, *m_records, *m_bytes, *m_commit_ms, *m_flush_ms, *m_hist;
	floe_metric *m_elapsed, *m_out, *m_dead;
	_Atomic int64_t last_commit_ms; /* wall clock of the last successful commit */
	floe_maint_runner *maint;       /* embedded maintenance (maintenance.mode: auto) */
	floe_maint_runner_stats maint_last; /* its totals once stopped */
	floe_mutex *maint_lock;         /* the pipeline's lock: guards maint against scrapes */
	floe_metric *m_maint[5];
	/* upserts and change records: written by delta writers (src/write) */
	bool delta;
	bool upsert;
	bool ordered;  /* several tasks: each applies its parts in the source's block order */
	int cdc;       /* the source's stream_cdc_kind */
	int32_t eq_ids[64];
	size_t n_eq;
	stream_cdc_plan cdc_plan;
	int32_t *plan_keys, *plan_required;
	floe_metric *m_del_files, *m_del_records, *m_del_bytes;
	/* the source offsets the table last committed for the pipeline: a
	 * message source's empty checkpoint commits when a split it holds moved
	 * from these (committer thread; read by the coordinator once no commit
	 * is pending) */
	stream_offsets committed;
	/* index mode (write.upsert.mode=index; stream_delta.c) */
	bool index_mode;
	floe_delta_index *index;
	size_t index_memory;
	int64_t idx_expect; /* the snapshot the index describes: head must be it */
	bool idx_stale;     /* another commit landed: rebuilt after the next commit */
	int64_t idx_dv_commits, idx_fallbacks;
	/* persisted index (helper-idxpersist: stream_index_persist.c) */
	bool idx_persist;          /* write.upsert.index.persist */
	int64_t idx_persist_every; /* write.upsert.index.persist-interval (DV commits) */
	int64_t idx_commits_since; /* DV commits since the last persisted one */
	bool idx_persist_due;      /* persist at the next DV commit (after a rebuild) */
	int64_t idx_loads, idx_refreshes;
} rt_table;

typedef struct rt_source {
	const stream_source_cfg *cfg;
	stream_source *src;
	size_t *tables;
	size_t n_tables;
	bool eof;
	int64_t next_seq; /* blocks admitted (hub lock): the next block's sequence number */
	/* where this run started reading (the tables' minimum; Kafka: as assigned):
	 * a table the route creates starts there */
	stream_offsets run_start;
	floe_metric *m_in, *m_dead, *m_bytes;
} rt_source;

/* A name template (dynamic routing, stream_route.c). */
typedef struct rt_route {
	const stream_table_cfg *tpl; /* in cfg->routes */
	size_t src;
	/* values of tables to create at the end of the run (hub lock) */
	char **fresh;
	size_t n_fresh, cap_fresh;
} rt_route;

typedef struct raw_item {
	stream_block b;
	size_t src;
	int64_t seq; /* the block's number in its source */
} raw_item;

/* A batch shared by the tasks that write slices of it (HASH). */
typedef struct shared_batch {
	struct ArrowArray arr;
	uint8_t *kinds; /* delta tables: each row's floe_row_kind */
	atomic_int refs;
} shared_batch;

/*
 * Rows [start, start + len) of a shared batch for one table. For an
 * ordered table (a delta table written by several tasks) every part also
 * names the block it came from (seq), and the block's last part for each
 * task says so (last; an empty part with sb NULL when the block had no
 * rows for that task): a task applies an ordered table's parts block by
 * block, so the changes of one key are applied in the order they were read
 * whichever task decoded them.
 */
typedef struct part_item {
	size_t table;
	shared_batch *sb;
	int64_t start, len;
	int64_t seq;
	bool last;
} part_item;

/* A decoded row's record (a projected table's dead letters point at it). */
typedef struct proj_rec {
	const char *rec; /* into the block */
	size_t n;
	int64_t off;
} proj_rec;

typedef struct rt_task {
	floe_pipeline *p;
	int idx;
	floe_thread th;
	floe_cond cv;
	part_item *inbox; /* ring */
	size_t in_head, in_len, in_cap;
	bool ckpt_req, ckpt_done;
	bool abort_req, abort_done; /* a rewind: drop the open files */
	bool waiting; /* asleep on cv (hub lock) */
	floe_arena *ckpt_arena;     /* the finished files' strings, handed to the checkpoint */
	floe_data_file **ckpt_files; /* per table (growable arrays) */
	size_t *ckpt_n;
	/* the task's own state (no lock needed) */
	void **sinks;            /* per table */
	stream_col *roots;       /* per table */
	stream_col *pre_roots;   /* per table with a filter: pre_type */
	stream_csv_dec *pre_csv; /* per table with a filter */
	const char **pre_csv_header;
	/* records of the current block that did not decode, for one dead
	 * letter per record naming every table it was meant for */
	struct bad_rec *bad;
	size_t n_bad, cap_bad;
	floe_buf bad_text; /* their reasons */
	int64_t *rowidx;         /* HASH: rows grouped by task */
	stream_csv_dec *csv;     /* per table */
	const char **csv_header; /* per table: header the decoder is set for */
	stream_json_dec json;
	void **vdec;       /* per table: the value format's decoder (message sources) */
	floe_buf meta_buf; /* headers as JSON */
	uint32_t *dest;
	size_t dest_cap;
	floe_buf dlq;
	int64_t rows_written;
	floe_imap *owner_cache; /* per table: the owners this task has looked up */
	stream_range_stats *rstats; /* per table: RANGE keys of this checkpoint */
	uint64_t rseq;              /* RANGE: rows routed (a split key's turn) */
	uint64_t last_key;      /* the last partition hash and its owner (runs of rows) */
	uint32_t last_owner;
	size_t last_table;
	/* delta tables */
	floe_delta_writer **deltas; /* per table */
	uint8_t **kinds;            /* per table: the kind of each decoded row */
	size_t *kinds_cap;
	stream_cdc_dec *cdc;        /* per table */
	int64_t *next_seq;          /* per ordered table: the block whose parts come next */
	part_item *held;            /* parts of later blocks, in arrival order */
	size_t n_held, cap_held;
	int64_t cur_seq;            /* the block being decoded */
	floe_arena route_arena;     /* a record parsed for its route */
	/* tables with a projection: the projected rows (the table's root), and
	 * each decoded row's record (for its dead letter) */
	stream_col *proj_out, *proj_tmp;
	proj_rec **prec;
	size_t *n_prec, *cap_prec;
} rt_task;

typedef struct ckpt_item {
	int64_t id;
	floe_arena **arenas; /* one per task */
	size_t n_arenas;
	floe_data_file **files; /* per table */
	size_t *n_files;
	char **offsets;      /* per table: its source's positions (JSON) */
	bool *moved;         /* per table: no files but the offsets moved (commit them) */
	stream_offsets *positions; /* per source (for ack) */
	int64_t flush_ms;
	bool complete; /* every source at its end: a one-shot load done */
	int64_t sealed_ms; /* wall clock when its files were closed: later files are the next
			      checkpoint's */
	floe_arena **idx_arenas; /* index-mode tables' delete file entries */
	size_t n_idx_arenas, cap_idx_arenas;
} ckpt_item;

struct floe_pipeline {
	stream_config *cfg;
	floe_catalog *cat;
	bool own_cat;
	char *pipeline_id;
	rt_table *tables;
	size_t n_tables;
	rt_source *sources;
	size_t n_sources;
	rt_route *routes; /* name templates; their dead letters are "tables" n_tables + i */
	size_t n_routes;
	rt_task *tasks;
	int n_tasks;
	const stream_sink_ops *sink;
	floe_parquet_budget *budget;
	char op_id[37];
	floe_fileio *io;

	/* the hub */
	floe_mutex lock;
	floe_cond hub_cv;
	raw_item *raw; /* ring */
	size_t raw_head, raw_len, raw_cap;
	int64_t units, max_units;
	bool shutdown;

	/* the committer */
	floe_thread committer;
	floe_cond commit_cv;
	ckpt_item *pending;
	bool committer_exit;
	bool threads_started;

	/* state */
	atomic_bool stop_req;
	atomic_bool cancel;
	atomic_bool ckpt_asap; /* a delta writer's key map is over its share: checkpoint now */
	bool failed;
	floe_error first_err;
	/* a commit was refused because another process of the pipeline committed
	 * a split of ours (stream_split_fence.c): drop what is held and re-seek */
	bool rewind;
	int64_t rewinds;
	/* a record needs a schema update (unknown-fields: evolve): no
	 * checkpoint commits after it; the run ends, the schema is committed,
	 * and the caller opens the pipeline again (floe_pipeline_restart_wanted) */
	atomic_bool evolve_req;
	bool restart;
	int64_t next_ckpt;
	int64_t run_id; /* first checkpoint id of this run (file names) */

	/* HASH owners: a partition goes to the next task in turn the first time
	 * any task sees it, so partitions spread evenly over the tasks */
	floe_mutex owner_lock;

	/* dead letters */
	floe_mutex dlq_lock;
	int dlq_fd;
	char *dlq_path;

	/* metrics and progress */
	floe_metrics *metrics;
	floe_metrics_http *http;
	int http_port;
	floe_metric *m_ckpts, *m_ckpt_id;
	atomic_llong records_in, records_out, dead, bytes_in, files_committed, checkpoints,
		last_ckpt_id, rows_written, filtered, skipped;
	int64_t resumed_ckpt; /* newest checkpoint restored from the tables; -1: none */
	int wake_next; /* the task admit() tries to wake first (hub lock) */
	int64_t start_ns;
	floe_pipeline_opts opts;
};

/* stream_coord.c: open a pipeline over a parsed config (owned from here on,
 * also on failure) with a sink (NULL: task writers). */
int stream_pipeline_open(floe_pipeline **out, stream_config *cfg, floe_catalog *cat,
			 const stream_sink_ops *sink, const floe_pipeline_opts *opts,
			 floe_error *err) FLOE_WUR;

/* stream_overwrite.c: the row filter of overwrite-where, decided per file
 * (a floe_op_scope_fn over the table's current metadata). */
int stream_ow_filter_new(stream_ow_filter **out, floe_table *t, const char *text,
			 floe_error *err) FLOE_WUR;
void stream_ow_filter_free(stream_ow_filter *f);
int stream_ow_filter_scope(void *payload, const floe_data_file *df);

/* stream_delta.c: the rules of upsert / change-record tables, checked for
 * every table before any is created; the plan of a delta table (t->meta
 * loaded, t->dist computed). */
int stream_delta_precheck(const stream_config *cfg, floe_catalog *cat, floe_error *err) FLOE_WUR;
int stream_delta_setup(floe_pipeline *p, rt_table *t, floe_error *err) FLOE_WUR;
/* index mode: (re)build t->index from the table's current snapshot */
int stream_index_build(floe_pipeline *p, rt_table *t, floe_error *err) FLOE_WUR;
/* persisted index (helper-idxpersist: stream_index_persist.c) */
void stream_index_persist_setup(rt_table *t);
/* Load the persisted index (start) or refresh t->index from its base (a
 * running pipeline) to the head; *done false: build it instead. */
int stream_index_try_load(floe_pipeline *p, rt_table *t, bool *done, floe_error *err) FLOE_WUR;
bool stream_index_persist_wanted(const rt_table *t, bool last);
/* Write the index as of after this commit (files[0..n) its entries) and name
 * it in ap's summary; path[0..cap) receives where ("" when not written). */
int stream_index_persist_write(floe_pipeline *p, rt_table *t, struct floe_snapshot_op *ap,
			       const floe_data_file *files, size_t n, int64_t ckpt, char *path,
			       size_t cap, floe_error *err) FLOE_WUR;
/* After the attempt: committed, or the file is to be deleted (discard). */
void stream_index_persist_after(rt_table *t, const char *path, bool committed, bool discard);

/* stream_task.c */
void *stream_task_main(void *arg);
int stream_task_init(rt_task *t, floe_pipeline *p, int idx, floe_error *err) FLOE_WUR;
void stream_task_reset(rt_task *t, bool abort);
/* Record a failure (first one wins) and cancel everything. Hub lock held. */
void stream_fail_locked(floe_pipeline *p, const floe_error *err);
void stream_fail(floe_pipeline *p, const floe_error *err);
/* Drop a reference to a shared batch (frees it with the last one). */
void stream_shared_unref(shared_batch *sb);
/* Shared with stream_decode_msgs.c (message blocks). */
int stream_task__note_bad(rt_task *t, size_t ti, const char *rec, size_t n, int64_t off,
			  const char *reason, floe_error *err) FLOE_WUR;
/* final: the block's last rows for the table (an ordered delta table's parts say so) */
int stream_task__emit(rt_task *t, size_t ti, bool final, floe_error *err) FLOE_WUR;
int stream_task__wanted_by_filter(rt_task *t, size_t ti, const stream_block *b, bool csv,
				  const char *rec, size_t n, bool *wanted, floe_error *err) FLOE_WUR;
/* A JSON record (a change event) that did not decode for table ti: under
 * unknown-fields: evolve, *taken when it is held for a schema update
 * (FLOE_OK); else FLOE_EINVAL, the decoder's reason stands. */
int stream_task__evolve(rt_task *t, size_t ti, const stream_block *b, const char *rec, size_t n,
			bool *taken, floe_error *err) FLOE_WUR;
/* A projected table kept the record decoded last (its row's record). */
int stream_task__note_row(rt_task *t, size_t ti, const char *rec, size_t n, int64_t off,
			  floe_error *err) FLOE_WUR;
/* Can row r's partition values be written (why says why not)? */
bool stream_task__row_partition_ok(const rt_table *tb, const stream_col *root, int64_t r,
				   char *why, size_t cap);
int stream_task__decode_msgs(rt_task *t, size_t ti, const stream_block *b, bool count,
			     int64_t *records, floe_error *err) FLOE_WUR;
int stream_task__open_value_decoders(rt_task *t, floe_error *err) FLOE_WUR;
void stream_task__close_value_decoders(rt_task *t);
/* Flush a task's dead-letter lines to the file (fsync when sync). */
/* stream_evolve.c: a record that did not decode for table ti under
 * unknown-fields: evolve; *taken when it needs a schema update (it is then
 * neither written nor dead-lettered: the run ends and replays it). */
int stream_evolve_note(rt_task *t, size_t ti, const char *rec, size_t n, bool *taken,
		       floe_error *err) FLOE_WUR;
/* At the end of a run that asked for it: commit each table's schema update
 * (fenced); FLOE_OK when something changed (p->restart set). */
int stream_evolve_commit(floe_pipeline *p, floe_error *err) FLOE_WUR;

int stream_dlq_flush(floe_pipeline *p, floe_buf *lines, bool sync, floe_error *err) FLOE_WUR;

/* stream_coord.c: create the table tc names with its schema, partitioning,
 * sort order and properties (its namespace too); a table that exists is
 * loaded. extra: one more property (NULL: none). *out: the caller's. */
int stream_table__create(floe_table **out, floe_catalog *cat, const stream_table_cfg *tc,
			 const floe_prop *extra, floe_error *err) FLOE_WUR;

/* stream_route.c (dynamic routing): expand cfg's name templates to the
 * tables that exist (cfg->tables rebuilt, cfg->routes set); the route's
 * table for a template value; scan block b of source src for records whose
 * table does not exist yet (noted, p->evolve_req set) or whose value is no
 * table name (dead letters), counting its records when records is set; at the end of the run, create the noted
 * tables (*created: some were). */
int stream_route_expand(stream_config *cfg, floe_catalog *cat, floe_error *err) FLOE_WUR;
int stream_route_table_cfg(stream_table_cfg *out, floe_arena *a, const stream_table_cfg *tpl,
			   const char *value, floe_error *err) FLOE_WUR;
int stream_route__scan(rt_task *t, size_t src, const stream_block *b, int64_t *records,
		       floe_error *err) FLOE_WUR;
int stream_route_commit(floe_pipeline *p, bool *created, floe_error *err) FLOE_WUR;

#endif
