/*
 * stream_source.h — sources with replayable offsets, behind one vtable.
 *
 * A source is a set of splits (a file, stdin, the generator's row
 * sequence, a Kafka partition), each with an int64 position (byte offset,
 * row number, Kafka offset). next() hands out blocks of whole records of
 * one split with the byte range they cover; the source's position is the
 * end of the last block handed out. A checkpoint records every split's
 * position in the table's snapshot summary; a restart seeks there. Nothing
 * else is kept anywhere: the table is the durable state.
 *
 * Sources implemented: files and folders (JSON lines, CSV; follow mode
 * picks up new files and appended data), stdin (not replayable:
 * at-least-once when the producer re-sends from the committed byte
 * count), and the generator (deterministic rows: replayable). Kafka
 * plugs in here (splits = topic partitions, ack = offset commit), and
 * Kinesis (splits = shards; a position token holds the sequence number).
 *
 * Thread-safety: a source is driven by the coordinator thread; ack() is
 * called from the committer thread and must be safe against next().
 */
#ifndef FLOE_STREAM_SOURCE_H
#define FLOE_STREAM_SOURCE_H

#include "iceberg/types.h"
#include "util/buf.h"
#include "util/hmap.h"
#include "util/str.h"
#include "util/thread.h"

/* ---- offsets: split name -> position ------------------------------------------- */

typedef struct stream_offset {
	char *split;
	int64_t pos;
	/* optional, source-defined: what seeking needs besides pos (a Kinesis
	 * sequence number: pos counts the shard's records, tok says where the
	 * next one is); written as {"n": pos, "seq": tok} */
	char *tok;
} stream_offset;

typedef struct stream_offsets {
	stream_offset *items; /* insertion order */
	size_t n, cap;
	floe_hmap index; /* split -> item index */
} stream_offsets;

void stream_offsets_init(stream_offsets *o);
void stream_offsets_reset(stream_offsets *o);
/* set() clears the split's token; set_tok() sets both (tok may be NULL). */
int stream_offsets_set(stream_offsets *o, const char *split, int64_t pos) FLOE_WUR;
int stream_offsets_set_tok(stream_offsets *o, const char *split, int64_t pos, const char *tok) FLOE_WUR;
/* The split's token, NULL when it has none or is absent. */
const char *stream_offsets_tok(const stream_offsets *o, const char *split);
/* Position of split, or dflt when absent. */
int64_t stream_offsets_get(const stream_offsets *o, const char *split, int64_t dflt);
bool stream_offsets_has(const stream_offsets *o, const char *split);
int stream_offsets_copy(stream_offsets *dst, const stream_offsets *src) FLOE_WUR;
/* Keep the smaller position of each split with its token (absent counts as 0,
 * no token). */
int stream_offsets_min(stream_offsets *acc, const stream_offsets *o) FLOE_WUR;
/* {"split": pos, "split2": {"n": pos, "seq": "tok"}, ...} */
int stream_offsets_write_json(const stream_offsets *o, floe_buf *out) FLOE_WUR;
int stream_offsets_parse_json(stream_offsets *o, const char *p, size_t n, floe_error *err) FLOE_WUR;

/* ---- blocks ------------------------------------------------------------------------ */

typedef enum stream_format {
	STREAM_FMT_JSONL = 0,
	STREAM_FMT_CSV = 1,
	STREAM_FMT_RAW = 2,            /* message sources: the value is one column */
	STREAM_FMT_AVRO_CONFLUENT = 3, /* Confluent wire format, schema from a registry */
	STREAM_FMT_OTHER = 4,          /* a value format named in stream_value_formats */
} stream_format;

/*
 * One record of a message source (Kafka): where its parts are in the
 * block's data, or (val_p, key_p non-NULL) in memory the block holds
 * (stream_block.held: the client library's own buffers, not copied).
 * Read them through stream_msg_val() / stream_msg_key(). Offsets are the
 * record's position in its split (a Kafka offset), so "records before the
 * committed position" is exact per record.
 */
enum {
	STREAM_MSG_NULL_VALUE = 1, /* a tombstone */
	STREAM_MSG_NULL_KEY = 2,
	STREAM_MSG_OVERSIZE = 4,   /* longer than max-record-size: the value holds its start */
};

typedef struct stream_msg {
	int64_t offset;
	int64_t timestamp_ms;      /* -1: none */
	uint32_t val_off, val_len; /* into the block's data */
	uint32_t key_off, key_len;
	uint32_t hdr_off, hdr_len; /* headers: (u32 name length, name, i32 value length or -1, value)... */
	uint32_t n_hdrs;
	uint32_t seq_off, seq_len; /* Kinesis: the sequence number's digits */
	uint32_t size;             /* the value's real length (oversize records) */
	uint8_t flags;
	uint8_t ts_type;           /* 0 none, 1 create time, 2 log-append time */
	const uint8_t *val_p;      /* non-NULL: the value is here (val_off unused) */
	const uint8_t *key_p;      /* non-NULL: the key is here (key_off unused) */
} stream_msg;

/*
 * A read-only file mapping shared by the blocks that point into it. Blocks
 * are cut one after another from `done` on; as they are consumed (in any
 * order) the contiguous consumed prefix grows and its pages leave the
 * resident set, edges included (a block's own edges are shared with its
 * neighbours, so they can only go once both are consumed).
 */
#define STREAM_MAP_PENDING 64
typedef struct stream_map {
	uint8_t *base;
	size_t len;
	_Atomic int refs;
	floe_mutex mu;
	int64_t done; /* every byte before this offset is consumed */
	struct {
		int64_t a, b;
	} pend[STREAM_MAP_PENDING]; /* consumed ranges past done */
	size_t n_pend;
} stream_map;

/* Map len bytes of fd (one reference); blocks start at offset `from`.
 * NULL when it cannot be mapped. */
stream_map *stream_map_file(int fd, size_t len, int64_t from);
void stream_map_ref(stream_map *m);
void stream_map_unref(stream_map *m); /* unmaps with the last reference */
/* Bytes [a, b) of the file are consumed (a block, or a skipped record). */
void stream_map_consumed(stream_map *m, int64_t a, int64_t b);

typedef struct stream_block {
	uint8_t *data;          /* whole records: floe_malloc'd (the block owns it), or
				   inside map (which the block holds a reference to) */
	stream_map *map;
	size_t len;
	int32_t split;          /* index of the split in its source */
	const char *split_name; /* owned by the source, stable while it lives */
	int64_t start, end;     /* byte range of the split the records cover */
	const char *header;     /* CSV header line of the split (source-owned) or NULL */
	size_t header_len;
	bool oversize;          /* one record longer than the maximum: data is its start */
	/* message sources: the records (data holds their bytes); NULL for line sources */
	stream_msg *msgs;
	size_t n_msgs;
	const char *topic;      /* source-owned (Kinesis: the stream) */
	int32_t partition;
	const char *shard_id;   /* Kinesis: the shard (source-owned) */
	/* message sources, zero-copy: the client library's messages whose bytes
	 * msgs[].val_p/key_p point into; release(held, n_held) gives them back
	 * (from any thread; before the source is freed). held_bytes: their
	 * values' and keys' bytes (len counts only data). */
	void **held;
	size_t n_held;
	size_t held_bytes;
	void (*release)(void **held, size_t n);
} stream_block;

/* frees data or drops its mapping, releases held messages */
void stream_block_reset(stream_block *b);

static inline const uint8_t *stream_msg_val(const stream_block *b, const stream_msg *m)
{
	return m->val_p ? m->val_p : b->data ? b->data + m->val_off : (const uint8_t *)"";
}

static inline const uint8_t *stream_msg_key(const stream_block *b, const stream_msg *m)
{
	return m->key_p ? m->key_p : b->data ? b->data + m->key_off : (const uint8_t *)"";
}

/* ---- the vtable ------------------------------------------------------------------------ */

typedef struct stream_source stream_source;

typedef struct stream_source_ops {
	/* Start every split at its position in pos (absent: the beginning). */
	int (*seek)(stream_source *s, const stream_offsets *pos, floe_error *err);
	/*
	 * Hand out the next block (*got). Nothing now: *got false (follow mode:
	 * idle; *eof true when the source has ended for good).
	 */
	int (*next)(stream_source *s, stream_block *b, bool *got, bool *eof, floe_error *err);
	/* Positions after the last block handed out (for the checkpoint). */
	int (*position)(stream_source *s, stream_offsets *out, floe_error *err);
	/* Wait until data may be there, at most ms (the source may return earlier). */
	void (*wait)(stream_source *s, int64_t ms);
	/* After a commit that recorded `committed` (may be NULL). */
	void (*ack)(stream_source *s, const stream_offsets *committed);
	void (*free)(stream_source *s);
} stream_source_ops;

struct stream_source {
	const stream_source_ops *ops;
	char *name;
	stream_format format;
	bool replayable; /* false: stdin from a pipe */
};

/* ---- the sources -------------------------------------------------------------------------- */

typedef struct stream_file_opts {
	const char *const *paths; /* files or folders */
	size_t n_paths;
	const char *pattern;      /* fnmatch on the file name (NULL: every file) */
	bool follow;              /* keep watching for new files and appended data */
	int64_t monitor_interval_ms;
	stream_format format;
	size_t block_bytes;       /* read size (1 MiB) */
	size_t max_record_bytes;  /* a longer record goes to the dead letters (16 MiB) */
	char csv_quote;           /* for record boundaries ('"', 0 = none) */
	bool csv_header;          /* first line of each file names the columns */
} stream_file_opts;

int stream_source_files_new(stream_source **out, const char *name, const stream_file_opts *o,
			    floe_error *err) FLOE_WUR;

typedef struct stream_stdin_opts {
	int fd;                   /* 0 */
	stream_format format;
	size_t block_bytes;
	size_t max_record_bytes;
	char csv_quote;
	bool csv_header;
} stream_stdin_opts;

int stream_source_stdin_new(stream_source **out, const char *name, const stream_stdin_opts *o,
			    floe_error *err) FLOE_WUR;

/*
 * The generator (Flink's datagen): JSON lines of rows of `schema`, row i a
 * pure function of (seed, i, base time), so replays are exact. Options use
 * Flink's names: rows-per-second, number-of-rows, fields.<name>.kind
 * (random|sequence), .min, .max, .max-past, .length, .start, .end,
 * .null-rate, and floe's .values (a comma-separated list to pick from).
 */
typedef struct stream_gen_opts {
	const floe_schema *schema;
	int64_t rows_per_second;  /* 0 = as fast as possible */
	int64_t number_of_rows;   /* -1 = unbounded */
	uint64_t seed;
	const floe_strmap *fields; /* "fields.<name>.<option>" -> value */
	size_t block_rows;        /* rows per block (4096) */
} stream_gen_opts;

int stream_source_gen_new(stream_source **out, const char *name, const stream_gen_opts *o,
			  floe_error *err) FLOE_WUR;

/*
 * An Iceberg table (stream_source_iceberg.c): append mode hands out the rows
 * each snapshot appended, changelog mode each snapshot's changes with the
 * columns _change_type, _change_ordinal, _commit_snapshot_id (floe/scan.h);
 * JSON lines. Start: Flink's starting strategies (floe_scan_start; NONE is
 * TABLE_SCAN_THEN_INCREMENTAL). Bounded (up to the snapshot current at the
 * start) unless streaming. One split, "iceberg", and with a watermark column
 * the parameter @watermark.
 */
typedef enum stream_iceberg_mode {
	STREAM_ICEBERG_APPEND = 0,
	STREAM_ICEBERG_CHANGELOG = 1,
} stream_iceberg_mode;

struct floe_catalog;
typedef struct stream_iceberg_opts {
	struct floe_catalog *cat; /* borrowed; outlives the source */
	const char *table;        /* "namespace.table" */
	int mode;                 /* stream_iceberg_mode */
	int start;                /* floe_scan_start */
	int64_t start_snapshot_id, start_timestamp_ms;
	bool streaming;
	bool skip_overwrites;     /* append mode: skip overwrite/delete snapshots */
	int64_t monitor_interval_ms;
	size_t block_bytes;
	int64_t table_snapshot_id; /* > 0: the table scan start reads this snapshot (0: current) */
	/* watermarks (Flink's watermark-column): the data files of each unit are
	 * read in the order of this column's lower bound (a long or timestamp
	 * column), and the position carries @watermark, the smallest lower bound
	 * (epoch ms) of the files with rows not yet handed out, never going back */
	const char *watermark_column; /* NULL: none */
	int64_t watermark_unit_ns;    /* long columns: nanoseconds per unit (0: microseconds) */
} stream_iceberg_opts;

int stream_source_iceberg_new(stream_source **out, const char *name, const stream_iceberg_opts *o,
			      floe_error *err) FLOE_WUR;

/*
 * The hybrid source (stream_source_hybrid.c): the table scan of the Iceberg
 * table's current snapshot, then `then` (files, Kafka or Kinesis; owned;
 * freed on failure too) from the source offsets recorded with that snapshot.
 * Positions carry @hybrid-phase and @hybrid-snapshot.
 */
int stream_source_hybrid_new(stream_source **out, const char *name, const stream_iceberg_opts *boot,
			     stream_source *then, floe_error *err) FLOE_WUR;
/* Where the hybrid's second source starts split (a Kafka partition being
 * assigned): the bootstrap's recorded offset, or the table's after the
 * switch; -1 when neither has it. Coordinator thread. */
int64_t stream_source_hybrid_start(stream_source *s, const char *split);

#endif
