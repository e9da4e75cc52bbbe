/*
 * stream_source_file.c — files and folders of JSON lines or CSV, one split
 * per file, with byte offsets.
 *
 * DESIGN: blocks are taken at the split's position and cut at the last
 * record boundary; the partial record after the cut is simply taken again
 * with the next block, so the source keeps no carry-over state and its
 * position is always a record boundary. One-shot mode reads through a
 * mapping of the file (blocks point into it); follow mode reads with
 * pread(), since a watched file may be truncated under a mapping. Files are read one after
 * another in path order; a folder is walked recursively (names starting
 * with '.' or '_' are hidden, as Hadoop and Flink treat them). In follow
 * mode the folders are listed again every monitor interval (new files are
 * appended to the split list) and known files are checked for growth; a
 * last line without its newline waits for it. Split names are absolute
 * paths, so the committed offsets mean the same whatever the working
 * directory of the next run. A file that disappears (archived after it was
 * read) is forgotten: its position leaves the recorded offsets, which stay
 * as small as the folder; were it to reappear it would be read again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/stream_decode.h"
#include "stream/stream_source.h"
#include "util/log.h"
#include "util/thread.h"
#include "util/timeutil.h"

typedef struct fsplit {
	char *path;
	int64_t pos;
	int64_t size;
	char *header; /* CSV header line (with its line end) */
	size_t header_len;
	bool header_done;
	bool gone; /* removed while we ran: forgotten (kept in memory for blocks in flight) */
} fsplit;

typedef struct file_source {
	stream_source base;
	stream_file_opts o;
	char **roots;
	size_t n_roots;
	fsplit *splits;
	size_t n, cap;
	floe_hmap byname;
	size_t cur;
	int fd;
	size_t fd_split;
	stream_map *map; /* the current split's mapping (one-shot mode) */
	size_t map_split;
	stream_offsets seeked; /* positions from the last seek (kept for files not seen) */
	int64_t last_scan_ms;
	char *pattern;
} file_source;

static int io_err(floe_error *err, const char *what, const char *path)
{
	int e = errno;
	return floe_error_set(err, e == ENOENT ? FLOE_ENOTFOUND : FLOE_EIO, "%s '%s': %s", what, path,
			      strerror(e));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct found {
	char **paths;
	size_t n, cap;
} found;

static int add_found(found *f, const char *path)
{
	if (FLOE_ARRAY_RESERVE(f->paths, f->cap, f->n + 1))
		return FLOE_ENOMEM;
	if (!(f->paths[f->n] = floe_strdup(path)))
		return FLOE_ENOMEM;
	f->n++;
	return FLOE_OK;
}

static int walk(file_source *s, const char *dir, found *f, int depth, floe_error *err)
{
	DIR *d;
	struct dirent *e;
	int rc = FLOE_OK;
	floe_buf p;
	if (depth > 32)
		return FLOE_OK;
	if (!(d = opendir(dir)))
		return io_err(err, "cannot list", dir);
	floe_buf_init(&p, PATH_MAX * 2);
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (e->d_name[0] == '.' || e->d_name[0] == '_')
			continue;
		floe_buf_clear(&p);
		if (floe_buf_printf(&p, "%s/%s", dir, e->d_name)) {
			rc = floe_error_oomf(err, "path too long under '%s'", dir);
			break;
		}
		if (stat(floe_buf_cstr(&p), &st) != 0)
			continue; /* vanished meanwhile */
		if (S_ISDIR(st.st_mode)) {
			if ((rc = walk(s, floe_buf_cstr(&p), f, depth + 1, err)))
				break;
		} else if (S_ISREG(st.st_mode)) {
			if (s->pattern && fnmatch(s->pattern, e->d_name, 0) != 0)
				continue;
			if ((rc = add_found(f, floe_buf_cstr(&p)))) {
				floe_error_set(err, rc, "out of memory");
				break;
			}
		}
	}
	closedir(d);
	floe_buf_reset(&p);
	return rc;
}

static int add_split(file_source *s, const char *path)
{
	if (floe_hmap_has(&s->byname, path, strlen(path)))
		return FLOE_OK;
	if (FLOE_ARRAY_RESERVE(s->splits, s->cap, s->n + 1))
		return FLOE_ENOMEM;
	fsplit *sp = &s->splits[s->n];
	memset(sp, 0, sizeof(*sp));
	if (!(sp->path = floe_strdup(path)))
		return FLOE_ENOMEM;
	if (floe_hmap_put(&s->byname, path, strlen(path), s->n, NULL)) {
		floe_free(sp->path);
		return FLOE_ENOMEM;
	}
	sp->pos = stream_offsets_get(&s->seeked, path, 0);
	sp->size = -1;
	s->n++;
	return FLOE_OK;
}

/* List the roots; new files are appended in path order. */
static int scan(file_source *s, floe_error *err)
{
	found f = {0};
	int rc = FLOE_OK;
	for (size_t i = 0; i < s->n_roots && !rc; i++) {
		struct stat st;
		if (stat(s->roots[i], &st) != 0) {
			rc = io_err(err, "cannot read", s->roots[i]);
			break;
		}
		if (S_ISDIR(st.st_mode))
			rc = walk(s, s->roots[i], &f, 0, err);
		else if ((rc = add_found(&f, s->roots[i])))
			floe_error_set(err, rc, "out of memory");
	}
	if (!rc && f.n) {
		qsort(f.paths, f.n, sizeof(char *), cmp_str);
		for (size_t i = 0; i < f.n && !rc; i++)
			if ((rc = add_split(s, f.paths[i])))
				floe_error_set(err, rc, "out of memory");
	}
	for (size_t i = 0; i < f.n; i++)
		floe_free(f.paths[i]);
	floe_free(f.paths);
	s->last_scan_ms = floe_monotonic_ns() / 1000000;
	return rc;
}

static void close_fd(file_source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	stream_map_unref(s->map);
	s->map = NULL;
}

static int open_split(file_source *s, size_t i, floe_error *err)
{
	if (s->fd >= 0 && s->fd_split == i)
		return FLOE_OK;
	close_fd(s);
	s->fd = open(s->splits[i].path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0)
		return io_err(err, "cannot open", s->splits[i].path);
	s->fd_split = i;
	return FLOE_OK;
}

static int refresh_size(file_source *s, fsplit *sp, floe_error *err)
{
	struct stat st;
	if (fstat(s->fd, &st) != 0)
		return io_err(err, "cannot stat", sp->path);
	sp->size = (int64_t)st.st_size;
	return FLOE_OK;
}

static int read_at(file_source *s, fsplit *sp, uint8_t *buf, size_t n, int64_t off, size_t *got,
		   floe_error *err)
{
	size_t k = 0;
	while (k < n) {
		ssize_t r = pread(s->fd, buf + k, n - k, (off_t)(off + (int64_t)k));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return io_err(err, "cannot read", sp->path);
		}
		if (r == 0)
			break;
		k += (size_t)r;
	}
	*got = k;
	return FLOE_OK;
}

/* Read the CSV header of a split (once). */
static int read_header(file_source *s, fsplit *sp, bool *ready, floe_error *err)
{
	size_t cap = 65536, got = 0;
	uint8_t *buf;
	int rc;
	*ready = true;
	if (sp->header_done || s->o.format != STREAM_FMT_CSV || !s->o.csv_header)
		return FLOE_OK;
	for (;;) {
		bool complete;
		if (!(buf = floe_malloc(cap)))
			return floe_error_oom(err);
		if ((rc = read_at(s, sp, buf, cap, 0, &got, err))) {
			floe_free(buf);
			return rc;
		}
		size_t len = stream_csv_record_len((const char *)buf, got, s->o.csv_quote, &complete);
		if (complete || (got < cap && !s->o.follow && got > 0)) {
			sp->header = floe_strndup((const char *)buf, len);
			floe_free(buf);
			if (!sp->header)
				return floe_error_oom(err);
			sp->header_len = len;
			sp->header_done = true;
			if (sp->pos < (int64_t)len)
				sp->pos = (int64_t)len;
			return FLOE_OK;
		}
		floe_free(buf);
		if (got < cap) { /* no header yet (follow: wait) or an empty file */
			*ready = false;
			return FLOE_OK;
		}
		if (cap >= s->o.max_record_bytes)
			return floe_error_corrupt(err, "'%s': the CSV header is longer than %zu bytes", sp->path,
					      s->o.max_record_bytes);
		cap *= 2;
	}
}

/* Length of the whole records at the start of buf[0..n). */
static size_t cut_records(const file_source *s, const uint8_t *buf, size_t n)
{
	if (s->o.format == STREAM_FMT_CSV && s->o.csv_quote) {
		size_t off = 0;
		while (off < n) {
			bool complete;
			size_t k = stream_csv_record_len((const char *)buf + off, n - off,
							 s->o.csv_quote, &complete);
			if (!complete)
				break;
			off += k;
		}
		return off;
	}
	for (size_t i = n; i > 0; i--)
		if (buf[i - 1] == '\n')
			return i;
	return 0;
}

/* Skip an oversize record: move past the next newline (or to the end). */
static int skip_record(file_source *s, fsplit *sp, int64_t from, floe_error *err)
{
	uint8_t tmp[65536];
	int64_t off = from;
	for (;;) {
		size_t got = 0;
		int rc = read_at(s, sp, tmp, sizeof(tmp), off, &got, err);
		if (rc)
			return rc;
		const uint8_t *nl = got ? memchr(tmp, '\n', got) : NULL;
		if (nl) {
			sp->pos = off + (int64_t)(nl - tmp) + 1;
			return FLOE_OK;
		}
		off += (int64_t)got;
		if (got < sizeof(tmp)) {
			sp->pos = off;
			return FLOE_OK;
		}
	}
}

/*
 * One-shot mode reads through a mapping of the file: blocks point into it
 * (no copy, no buffer per block) and hold a reference. Follow mode uses
 * pread, since a watched file may be truncated under a mapping (SIGBUS).
 * FLOE_EUNSUPPORTED: the file cannot be mapped; the caller reads it.
 */
/* b becomes the cut bytes at data: the next records of split sp. */
static void set_block(file_source *s, fsplit *sp, stream_block *b, uint8_t *data, size_t cut)
{
	memset(b, 0, sizeof(*b));
	b->data = data;
	b->len = cut;
	b->split = (int32_t)s->cur;
	b->split_name = sp->path;
	b->start = sp->pos;
	b->end = sp->pos + (int64_t)cut;
	b->header = sp->header;
	b->header_len = sp->header_len;
	sp->pos = b->end;
}

static int next_mapped(file_source *s, fsplit *sp, stream_block *b, bool *got, floe_error *err)
{
	int rc;
	if (s->map && (s->map_split != s->cur || s->map->len < (size_t)sp->size)) {
		stream_map_unref(s->map);
		s->map = NULL;
	}
	if (!s->map) {
		if (!(s->map = stream_map_file(s->fd, (size_t)sp->size, sp->pos)))
			return FLOE_EUNSUPPORTED;
		s->map_split = s->cur;
	}
	const uint8_t *base = s->map->base + sp->pos;
	size_t left = (size_t)(sp->size - sp->pos), want = s->o.block_bytes;
	for (;;) {
		size_t n = want < left ? want : left;
		size_t cut = cut_records(s, base, n);
		if (cut == 0 && n == left)
			cut = n; /* the last record has no line end */
		if (cut > 0) {
			set_block(s, sp, b, (uint8_t *)base, cut);
			b->map = s->map;
			stream_map_ref(s->map);
			*got = true;
			return FLOE_OK;
		}
		if (want >= s->o.max_record_bytes) {
			/* one record longer than the maximum: its start goes to the dead letters */
			memset(b, 0, sizeof(*b));
			b->len = n < 1024 ? n : 1024;
			if (!(b->data = floe_memdup(base, b->len)))
				return floe_error_oom(err);
			b->oversize = true;
			b->split = (int32_t)s->cur;
			b->split_name = sp->path;
			b->start = sp->pos;
			b->header = sp->header;
			b->header_len = sp->header_len;
			if ((rc = skip_record(s, sp, sp->pos + (int64_t)n, err)))
				return rc;
			b->end = sp->pos;
			stream_map_consumed(s->map, b->start, b->end); /* no block points there */
			*got = true;
			return FLOE_OK;
		}
		want = want * 2 > s->o.max_record_bytes ? s->o.max_record_bytes : want * 2;
	}
}

static int file_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	file_source *s = (file_source *)base;
	int rc;
	*got = false;
	*eof = false;
	for (;;) {
		if (s->cur >= s->n) {
			if (!s->o.follow) {
				*eof = true;
				close_fd(s);
				return FLOE_OK;
			}
			int64_t now = floe_monotonic_ns() / 1000000;
			if (now - s->last_scan_ms < s->o.monitor_interval_ms)
				return FLOE_OK;
			size_t before = s->n;
			if ((rc = scan(s, err)))
				return rc;
			/* new files, or growth of a known one */
			s->cur = before < s->n ? before : s->n;
			for (size_t i = 0; i < before; i++) {
				struct stat st;
				if (stat(s->splits[i].path, &st) == 0 && (int64_t)st.st_size > s->splits[i].pos &&
				    (int64_t)st.st_size != s->splits[i].size) {
					s->cur = i;
					break;
				}
			}
			if (s->cur >= s->n)
				return FLOE_OK;
		}
		fsplit *sp = &s->splits[s->cur];
		bool ready;
		if (sp->gone) {
			s->cur++;
			continue;
		}
		rc = open_split(s, s->cur, err);
		if (rc == FLOE_ENOTFOUND) {
			/* removed (archived, rotated away): forgotten from now on */
			FLOE_WARN("source '%s': '%s' was removed; it is forgotten", s->base.name,
				  sp->path);
			floe_error_clear(err);
			sp->gone = true;
			s->cur++;
			continue;
		}
		if (rc || (rc = refresh_size(s, sp, err)) || (rc = read_header(s, sp, &ready, err)))
			return rc;
		if (!ready || sp->pos >= sp->size) {
			s->cur++;
			continue;
		}
		if (!s->o.follow && (rc = next_mapped(s, sp, b, got, err)) != FLOE_EUNSUPPORTED)
			return rc;
		size_t want = s->o.block_bytes;
		for (;;) {
			int64_t left = sp->size - sp->pos;
			size_t n = (int64_t)want < left ? want : (size_t)left, rd = 0;
			uint8_t *buf = floe_malloc(n ? n : 1);
			if (!buf)
				return floe_error_oom(err);
			if ((rc = read_at(s, sp, buf, n, sp->pos, &rd, err))) {
				floe_free(buf);
				return rc;
			}
			bool at_end = sp->pos + (int64_t)rd >= sp->size;
			size_t cut = cut_records(s, buf, rd);
			if (cut == 0 && at_end && !s->o.follow)
				cut = rd; /* the last record has no line end */
			if (cut > 0) {
				set_block(s, sp, b, buf, cut);
				*got = true;
				return FLOE_OK;
			}
			if (at_end) {
				/* follow mode: wait for the rest of the record */
				floe_free(buf);
				s->cur++;
				break;
			}
			if (want >= s->o.max_record_bytes) {
				/* one record longer than the maximum: its start goes to the dead letters */
				memset(b, 0, sizeof(*b));
				b->len = rd < 1024 ? rd : 1024;
				b->data = buf;
				b->oversize = true;
				b->split = (int32_t)s->cur;
				b->split_name = sp->path;
				b->start = sp->pos;
				b->header = sp->header;
				b->header_len = sp->header_len;
				if ((rc = skip_record(s, sp, sp->pos + (int64_t)rd, err)))
					return rc;
				b->end = sp->pos;
				*got = true;
				return FLOE_OK;
			}
			floe_free(buf);
			want = want * 2 > s->o.max_record_bytes ? s->o.max_record_bytes : want * 2;
		}
	}
}

static int file_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	file_source *s = (file_source *)base;
	stream_offsets_reset(&s->seeked);
	if (pos && stream_offsets_copy(&s->seeked, pos))
		return floe_error_oom(err);
	for (size_t i = 0; i < s->n; i++)
		s->splits[i].pos = stream_offsets_get(&s->seeked, s->splits[i].path, 0);
	s->cur = 0;
	close_fd(s);
	return FLOE_OK;
}

static int file_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	file_source *s = (file_source *)base;
	/* files that no longer exist (archived after they were read) leave the
	 * positions, so the recorded offsets stay as small as the folder */
	for (size_t i = 0; i < s->n; i++)
		if (!s->splits[i].gone && stream_offsets_set(out, s->splits[i].path, s->splits[i].pos))
			return floe_error_oom(err);
	return FLOE_OK;
}

static void file_wait(stream_source *base, int64_t ms)
{
	file_source *s = (file_source *)base;
	int64_t now = floe_monotonic_ns() / 1000000;
	int64_t due = s->last_scan_ms + s->o.monitor_interval_ms - now;
	if (due < 1)
		due = 1;
	floe_sleep_ms(ms < due ? ms : due);
}

static void file_free(stream_source *base)
{
	file_source *s = (file_source *)base;
	if (!s)
		return;
	close_fd(s);
	for (size_t i = 0; i < s->n; i++) {
		floe_free(s->splits[i].path);
		floe_free(s->splits[i].header);
	}
	floe_free(s->splits);
	for (size_t i = 0; i < s->n_roots; i++)
		floe_free(s->roots[i]);
	floe_free(s->roots);
	floe_free(s->pattern);
	floe_hmap_reset(&s->byname);
	stream_offsets_reset(&s->seeked);
	floe_free(s->base.name);
	floe_free(s);
}

static const stream_source_ops file_ops = {
	file_seek, file_next, file_position, file_wait, NULL, file_free,
};

int stream_source_files_new(stream_source **out, const char *name, const stream_file_opts *o,
			    floe_error *err)
{
	file_source *s;
	int rc;
	*out = NULL;
	if (!o->n_paths)
		return floe_error_set(err, FLOE_EINVAL, "source '%s': no path given", name);
	s = floe_calloc(1, sizeof(*s));
	if (!s)
		return floe_error_oom(err);
	s->base.ops = &file_ops;
	s->base.format = o->format;
	s->base.replayable = true;
	s->fd = -1;
	s->o = *o;
	s->o.paths = NULL;
	if (!s->o.block_bytes)
		s->o.block_bytes = (size_t)1 << 20;
	if (!s->o.max_record_bytes)
		s->o.max_record_bytes = (size_t)16 << 20;
	if (s->o.max_record_bytes < s->o.block_bytes)
		s->o.max_record_bytes = s->o.block_bytes;
	if (s->o.monitor_interval_ms <= 0)
		s->o.monitor_interval_ms = 1000;
	floe_hmap_init(&s->byname);
	stream_offsets_init(&s->seeked);
	s->roots = floe_calloc(o->n_paths, sizeof(char *));
	if (!(s->base.name = floe_strdup(name)) || !s->roots ||
	    (o->pattern && !(s->pattern = floe_strdup(o->pattern)))) {
		file_free(&s->base);
		return floe_error_oom(err);
	}
	for (size_t i = 0; i < o->n_paths; i++) {
		char abs[PATH_MAX];
		if (!realpath(o->paths[i], abs)) {
			rc = io_err(err, "cannot read", o->paths[i]);
			file_free(&s->base);
			return rc;
		}
		if (!(s->roots[i] = floe_strdup(abs))) {
			file_free(&s->base);
			return floe_error_oom(err);
		}
		s->n_roots++;
	}
	if ((rc = scan(s, err))) {
		file_free(&s->base);
		return floe_error_prefix(err, rc, "source '%s': ", name);
	}
	*out = &s->base;
	return FLOE_OK;
}
