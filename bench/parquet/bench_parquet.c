/*
 * bench_parquet.c — floe's Parquet writer and reader on the benchmark's
 * 10-column event table (see bench/parquet/README.md). One thread.
 *
 *   bench_parquet <rows> <codec> <out.parquet>
 *   bench_parquet <rows> source <out.parquet>
 *
 * Generates the table in memory as Arrow arrays (splitmix64 of the row
 * number), times one floe_parquet_writer_write of the whole table plus
 * close (zstd level 1, as pyarrow's default, or snappy), then times reading
 * the file back into Arrow batches. Prints one JSON line. With "source" it
 * only writes the table uncompressed and without dictionaries, for
 * bench_pyarrow.py to load the very same values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "arrow/arrow_build.h"
#include "parquet/reader.h"
#include "parquet/schema.h"
#include "parquet/writer.h"
#include "util/alloc.h"
#include "util/stream.h"

static uint64_t mix(uint64_t i, uint64_t salt)
{
	uint64_t z = (i + salt * 0x632BE59BD9B4E019ULL) * 0x9E3779B97F4A7C15ULL;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU seconds of this process, user and sys: on a shared machine the wall
 * time depends on the other jobs, the CPU time much less. */
static void cpu(double *user, double *sys)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static const char *countries[] = {"US", "DE", "FR", "GB", "JP", "BR", "IN", "CN", "CA", "AU",
				  "ES", "IT", "NL", "SE", "NO", "PL", "MX", "AR", "ZA", "KR"};
static const char *types[] = {"click", "view", "purchase", "signup", "logout",
			      "search", "share", "like", "comment", "scroll"};

static size_t data_bytes;

static uint8_t *validity(int64_t n, uint64_t salt, int every, int64_t *nulls)
{
	uint8_t *b = floe_calloc(1, (size_t)(n + 7) / 8);
	*nulls = 0;
	for (int64_t i = 0; i < n; i++) {
		if (mix((uint64_t)i, salt) % (uint64_t)every)
			b[i >> 3] |= (uint8_t)(1 << (i & 7));
		else
			(*nulls)++;
	}
	data_bytes += (size_t)(n + 7) / 8;
	return b;
}

static void fixed(struct ArrowSchema *s, struct ArrowArray *a, const char *fmt, const char *name,
		  void *vals, size_t width, int64_t n, int null_every, uint64_t salt)
{
	int64_t nulls = 0;
	if (floe_arrow_schema_init(s, fmt, name, null_every ? ARROW_FLAG_NULLABLE : 0, 0) ||
	    floe_arrow_array_init(a, 2, 0))
		abort();
	a->length = n;
	if (null_every)
		floe_arrow_array_set_buffer(a, 0, validity(n, salt, null_every, &nulls));
	a->null_count = nulls;
	floe_arrow_array_set_buffer(a, 1, vals);
	data_bytes += width * (size_t)n;
}

static void strings(struct ArrowSchema *s, struct ArrowArray *a, const char *name, int64_t n,
		    int kind)
{
	int32_t *off = floe_malloc(sizeof(int32_t) * (size_t)(n + 1));
	size_t cap = (size_t)n * (kind >= 2 ? 48 : 10) + 64;
	char *d = floe_malloc(cap);
	off[0] = 0;
	for (int64_t i = 0; i < n; i++) {
		char *p = d + off[i];
		int len;
		uint64_t r = mix((uint64_t)i, 10 + (uint64_t)kind);
		if (kind == 0) {
			const char *c = countries[r % 20];
			len = (int)strlen(c);
			memcpy(p, c, (size_t)len);
		} else if (kind == 1) {
			const char *c = types[r % 10];
			len = (int)strlen(c);
			memcpy(p, c, (size_t)len);
		} else if (kind == 2) {
			/* session id: 32 hex digits */
			static const char hex[] = "0123456789abcdef";
			uint64_t r2 = mix((uint64_t)i, 99);
			for (int k = 0; k < 16; k++) {
				p[k] = hex[(r >> (4 * k)) & 15];
				p[16 + k] = hex[(r2 >> (4 * k)) & 15];
			}
			len = 32;
		} else {
			len = snprintf(p, 48, "/product/%llu/item?ref=%llu",
				       (unsigned long long)(r % 100000),
				       (unsigned long long)(mix((uint64_t)i, 77) % 1000));
		}
		off[i + 1] = off[i] + len;
	}
	if (floe_arrow_schema_init(s, "u", name, 0, 0) || floe_arrow_array_init(a, 3, 0))
		abort();
	a->length = n;
	floe_arrow_array_set_buffer(a, 1, off);
	floe_arrow_array_set_buffer(a, 2, d);
	data_bytes += sizeof(int32_t) * (size_t)(n + 1) + (size_t)off[n];
}

static void make_table(struct ArrowSchema *s, struct ArrowArray *a, int64_t n)
{
	int64_t *event_id = floe_malloc(8 * (size_t)n), *user_id = floe_malloc(8 * (size_t)n),
		*ts = floe_malloc(8 * (size_t)n);
	double *amount = floe_malloc(8 * (size_t)n), *score = floe_malloc(8 * (size_t)n);
	int32_t *qty = floe_malloc(4 * (size_t)n);
	int64_t t = 1700000000000000LL;
	for (int64_t i = 0; i < n; i++) {
		event_id[i] = i;
		user_id[i] = (int64_t)(mix((uint64_t)i, 1) % 1000000);
		t += (int64_t)(mix((uint64_t)i, 2) % 2000);
		ts[i] = t;
		amount[i] = (double)(mix((uint64_t)i, 3) % 1000000) / 100.0;
		score[i] = (double)(mix((uint64_t)i, 4) >> 11) * 0x1.0p-53;
		qty[i] = (int32_t)(mix((uint64_t)i, 5) % 100);
	}
	if (floe_arrow_schema_init(s, "+s", "", 0, 10) || floe_arrow_array_init(a, 1, 10))
		abort();
	a->length = n;
	fixed(s->children[0], a->children[0], "l", "event_id", event_id, 8, n, 0, 0);
	fixed(s->children[1], a->children[1], "l", "user_id", user_id, 8, n, 0, 0);
	fixed(s->children[2], a->children[2], "tsu:UTC", "ts", ts, 8, n, 0, 0);
	fixed(s->children[3], a->children[3], "g", "amount", amount, 8, n, 20, 6);
	fixed(s->children[4], a->children[4], "g", "score", score, 8, n, 0, 0);
	fixed(s->children[5], a->children[5], "i", "qty", qty, 4, n, 20, 7);
	strings(s->children[6], a->children[6], "country", n, 0);
	strings(s->children[7], a->children[7], "event_type", n, 1);
	strings(s->children[8], a->children[8], "session_id", n, 2);
	strings(s->children[9], a->children[9], "url", n, 3);
}

/* A file output (stdio buffered). */
typedef struct file_out {
	floe_output base;
	FILE *f;
} file_out;

static int fo_write(floe_output *o, const void *p, size_t n, floe_error *err)
{
	return fwrite(p, 1, n, ((file_out *)o)->f) == n ? 0 : floe_error_set(err, FLOE_EIO, "write");
}
static int fo_close(floe_output *o, floe_error *err)
{
	return fclose(((file_out *)o)->f) == 0 ? 0 : floe_error_set(err, FLOE_EIO, "close");
}
static void fo_abort(floe_output *o)
{
	fclose(((file_out *)o)->f);
}
static const floe_output_ops fo_ops = {fo_write, fo_close, fo_abort};

typedef struct file_in {
	floe_input base;
	FILE *f;
} file_in;

static int fi_read(floe_input *in, uint64_t off, void *buf, size_t n, size_t *got, floe_error *err)
{
	file_in *fi = (file_in *)in;
	(void)err;
	if (fseeko(fi->f, (off_t)off, SEEK_SET) != 0)
		return FLOE_EIO;
	*got = fread(buf, 1, n, fi->f);
	return 0;
}
static void fi_close(floe_input *in)
{
	fclose(((file_in *)in)->f);
}
static const floe_input_ops fi_ops = {fi_read, fi_close, NULL};

static void die(const char *what, const floe_error *err)
{
	fprintf(stderr, "%s: %s\n", what, err->msg);
	exit(1);
}

int main(int argc, char **argv)
{
	int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
	const char *codec = argc > 2 ? argv[2] : "zstd";
	const char *path = argc > 3 ? argv[3] : "/tmp/floe_bench.parquet";
	/* page checksums: "crc" (the writer's default: written, not verified on
	 * read), "verify" (written and verified), "nocrc" (neither) */
	const char *crc = argc > 4 ? argv[4] : "crc";
	bool source = strcmp(codec, "source") == 0;
	floe_error err = {0};
	struct ArrowSchema s = {0};
	struct ArrowArray a = {0};
	double t0, u0, s0, u1, s1, t_write = 0, t_read = 0;
	double wu = 0, ws = 0, ru = 0, rs = 0; /* user and sys CPU seconds */
	int64_t rows_read = 0;
	long fsize = 0;

	{
		floe_parquet_schema *ps = NULL;
		floe_parquet_writer *w = NULL;
		floe_parquet_writer_opts o = FLOE_PARQUET_WRITER_OPTS_INIT;
		file_out fo = {{&fo_ops, 0, path}, fopen(path, "wb")};
		make_table(&s, &a, n);
		if (floe_parquet_schema_from_arrow(&ps, &s, &err))
			die("schema", &err);
		o.codec = strcmp(codec, "snappy") == 0 ? FLOE_PARQUET_SNAPPY
			  : strcmp(codec, "uncompressed") == 0 ? FLOE_PARQUET_UNCOMPRESSED
							       : FLOE_PARQUET_ZSTD;
		o.level = o.codec == FLOE_PARQUET_ZSTD ? 1 : 0;
		o.page_crc = strcmp(crc, "nocrc") != 0;
		if (source) {
			o.codec = FLOE_PARQUET_UNCOMPRESSED;
			o.dictionary = false;
		}
		setvbuf(fo.f, NULL, _IOFBF, 1 << 20);
		t0 = now();
		cpu(&u0, &s0);
		if (floe_parquet_writer_new(&w, &fo.base, ps, &o, &err) ||
		    floe_parquet_writer_write(w, &a, &s, &err) || floe_parquet_writer_close(w, NULL, &err) ||
		    floe_output_close(&fo.base, &err))
			die("write", &err);
		t_write = now() - t0;
		cpu(&u1, &s1);
		wu = u1 - u0;
		ws = s1 - s0;
		floe_parquet_writer_free(w);
		floe_parquet_schema_free(ps);
		floe_arrow_array_release(&a);
		floe_arrow_schema_release(&s);
		if (source)
			return 0;
	}
	{
		FILE *f = fopen(path, "rb");
		file_in fi = {{&fi_ops, 0, path}, f};
		floe_parquet_reader *r = NULL;
		floe_parquet_reader_opts ro = FLOE_PARQUET_READER_OPTS_INIT;
		struct ArrowArray b = {0};
		ro.verify_checksums = strcmp(crc, "verify") == 0;
		fseek(f, 0, SEEK_END);
		fsize = ftell(f);
		fi.base.size = (uint64_t)fsize;
		t0 = now();
		cpu(&u0, &s0);
		if (floe_parquet_reader_open(&r, &fi.base, &ro, &err))
			die("open", &err);
		for (;;) {
			bool eof;
			if (floe_parquet_reader_next(r, &b, &eof, &err))
				die("read", &err);
			if (eof)
				break;
			rows_read += b.length;
			floe_arrow_array_release(&b);
		}
		t_read = now() - t0;
		cpu(&u1, &s1);
		ru = u1 - u0;
		rs = s1 - s0;
		floe_parquet_reader_free(r);
		fclose(f);
	}
	printf("{\"impl\":\"floe\",\"codec\":\"%s\",\"crc\":\"%s\",\"rows\":%lld,\"data_bytes\":%zu,\"file_bytes\":%ld,"
	       "\"write_s\":%.3f,\"read_s\":%.3f,\"write_cpu_s\":%.3f,\"read_cpu_s\":%.3f,"
	       "\"write_sys_s\":%.3f,\"read_sys_s\":%.3f,\"rows_read\":%lld}\n",
	       codec, crc, (long long)n, data_bytes, fsize, t_write, t_read, wu + ws, ru + rs, ws, rs,
	       (long long)rows_read);
	return 0;
}
