/*
 * stream_source_stdin.c — records from standard input (or any file
 * descriptor), one split "stdin" whose position is the byte count.
 *
 * DESIGN: stdin redirected from a regular file is seekable, so a restart
 * resumes exactly at the committed byte count. A pipe cannot be rewound:
 * then the position continues counting from the committed offset and the
 * producer decides what it sends again — from the committed byte count
 * for exactly-once, from its own checkpoint for at-least-once (documented
 * in docs/operations.md). Reads poll with a timeout so that an idle pipe
 * never holds up a checkpoint.
 */
#include <errno.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/stream_decode.h"
#include "stream/stream_source.h"
#include "util/log.h"

#define STDIN_SPLIT "stdin"

typedef struct stdin_source {
	stream_source base;
	stream_stdin_opts o;
	uint8_t *buf;
	size_t len, cap;
	int64_t pos; /* split offset of buf[0] */
	bool eof;
	bool discarding; /* skipping the rest of an oversize record */
	char *header;
	size_t header_len;
	bool header_done;
} stdin_source;

static int stdin_seek(stream_source *base, const stream_offsets *pos, floe_error *err)
{
	stdin_source *s = (stdin_source *)base;
	struct stat st;
	int64_t off = pos ? stream_offsets_get(pos, STDIN_SPLIT, 0) : 0;
	s->len = 0;
	s->eof = false;
	if (fstat(s->o.fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if (s->o.format == STREAM_FMT_CSV && s->o.csv_header && off > 0) {
			/* the header still names the columns */
			char tmp[65536];
			ssize_t r = pread(s->o.fd, tmp, sizeof(tmp), 0);
			bool complete = false;
			size_t k = r > 0 ? stream_csv_record_len(tmp, (size_t)r, s->o.csv_quote, &complete)
					 : 0;
			if (complete) {
				floe_free(s->header);
				if (!(s->header = floe_strndup(tmp, k)))
					return floe_error_oom(err);
				s->header_len = k;
				s->header_done = true;
			}
		}
		if (lseek(s->o.fd, (off_t)off, SEEK_SET) < 0)
			return floe_error_set(err, FLOE_EIO, "stdin: cannot seek to %lld: %s",
					      (long long)off, strerror(errno));
		s->pos = off;
		return FLOE_OK;
	}
	if (off > 0) {
		FLOE_WARN("stdin is a pipe and cannot be rewound: the last checkpoint committed its "
			  "first %lld bytes; reading on from what the producer sends now",
			  (long long)off);
		s->header_done = true; /* a resumed stream carries no header */
	}
	s->pos = off;
	return FLOE_OK;
}

/* Read what is available (waiting at most timeout_ms). */
static int fill(stdin_source *s, int timeout_ms, floe_error *err)
{
	struct pollfd p = {s->o.fd, POLLIN, 0};
	if (s->eof)
		return FLOE_OK;
	int pr = poll(&p, 1, timeout_ms);
	if (pr < 0 && errno != EINTR)
		return floe_error_set(err, FLOE_EIO, "stdin: %s", strerror(errno));
	if (pr <= 0)
		return FLOE_OK;
	size_t want = s->o.block_bytes;
	if (s->cap - s->len < want) {
		size_t ncap = s->len + want;
		uint8_t *nb = floe_realloc(s->buf, ncap);
		if (!nb)
			return floe_error_oom(err);
		s->buf = nb;
		s->cap = ncap;
	}
	ssize_t r = read(s->o.fd, s->buf + s->len, want);
	if (r < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return FLOE_OK;
		return floe_error_set(err, FLOE_EIO, "stdin: %s", strerror(errno));
	}
	if (r == 0)
		s->eof = true;
	s->len += (size_t)r;
	return FLOE_OK;
}

static void consume(stdin_source *s, size_t n)
{
	memmove(s->buf, s->buf + n, s->len - n);
	s->len -= n;
	s->pos += (int64_t)n;
}

static size_t cut(const stdin_source *s)
{
	if (s->o.format == STREAM_FMT_CSV && s->o.csv_quote) {
		size_t off = 0;
		while (off < s->len) {
			bool complete;
			size_t k = stream_csv_record_len((const char *)s->buf + off, s->len - off,
							 s->o.csv_quote, &complete);
			if (!complete)
				break;
			off += k;
		}
		return off;
	}
	for (size_t i = s->len; i > 0; i--)
		if (s->buf[i - 1] == '\n')
			return i;
	return 0;
}

static int emit(stdin_source *s, stream_block *b, size_t n, bool oversize)
{
	memset(b, 0, sizeof(*b));
	size_t keep = oversize ? (n < 1024 ? n : 1024) : n;
	b->data = floe_memdup(s->buf, keep ? keep : 1);
	if (!b->data)
		return FLOE_ENOMEM;
	b->len = keep;
	b->split_name = STDIN_SPLIT;
	b->start = s->pos;
	b->end = s->pos + (int64_t)n;
	b->header = s->header;
	b->header_len = s->header_len;
	b->oversize = oversize;
	consume(s, n);
	return FLOE_OK;
}

static int stdin_next(stream_source *base, stream_block *b, bool *got, bool *eof, floe_error *err)
{
	stdin_source *s = (stdin_source *)base;
	int rc;
	*got = false;
	*eof = false;
	if ((rc = fill(s, 0, err)))
		return rc;
	if (s->discarding) {
		uint8_t *nl = s->len ? memchr(s->buf, '\n', s->len) : NULL;
		size_t n = nl ? (size_t)(nl - s->buf) + 1 : s->len;
		consume(s, n);
		s->discarding = !nl && !s->eof;
		if (s->discarding)
			return FLOE_OK;
	}
	if (!s->header_done && s->o.format == STREAM_FMT_CSV && s->o.csv_header) {
		bool complete;
		size_t k = stream_csv_record_len((const char *)s->buf, s->len, s->o.csv_quote, &complete);
		if (!complete && !(s->eof && s->len))
			goto maybe_end;
		if (!(s->header = floe_strndup((const char *)s->buf, k)))
			return floe_error_oom(err);
		s->header_len = k;
		s->header_done = true;
		consume(s, k);
	}
	size_t n = cut(s);
	if (n == 0 && s->eof && s->len)
		n = s->len;
	if (n > 0) {
		if (emit(s, b, n, false))
			return floe_error_oom(err);
		*got = true;
		return FLOE_OK;
	}
	if (s->len >= s->o.max_record_bytes) {
		if (emit(s, b, s->len, true))
			return floe_error_oom(err);
		s->discarding = true;
		*got = true;
		return FLOE_OK;
	}
maybe_end:
	*eof = s->eof && s->len == 0;
	return FLOE_OK;
}

static int stdin_position(stream_source *base, stream_offsets *out, floe_error *err)
{
	stdin_source *s = (stdin_source *)base;
	if (stream_offsets_set(out, STDIN_SPLIT, s->pos))
		return floe_error_oom(err);
	return FLOE_OK;
}

static void stdin_wait(stream_source *base, int64_t ms)
{
	stdin_source *s = (stdin_source *)base;
	struct pollfd p = {s->o.fd, POLLIN, 0};
	if (s->eof)
		return;
	(void)poll(&p, 1, (int)(ms > 1000 ? 1000 : ms));
}

static void stdin_free(stream_source *base)
{
	stdin_source *s = (stdin_source *)base;
	if (!s)
		return;
	floe_free(s->buf);
	floe_free(s->header);
	floe_free(s->base.name);
	floe_free(s);
}

static const stream_source_ops stdin_ops = {
	stdin_seek, stdin_next, stdin_position, stdin_wait, NULL, stdin_free,
};

int stream_source_stdin_new(stream_source **out, const char *name, const stream_stdin_opts *o,
			    floe_error *err)
{
	stdin_source *s = floe_calloc(1, sizeof(*s));
	struct stat st;
	*out = NULL;
	if (!s || !(s->base.name = floe_strdup(name))) {
		floe_free(s);
		return floe_error_oom(err);
	}
	s->base.ops = &stdin_ops;
	s->base.format = o->format;
	s->o = *o;
	if (!s->o.block_bytes)
		s->o.block_bytes = (size_t)1 << 20;
	if (!s->o.max_record_bytes)
		s->o.max_record_bytes = (size_t)16 << 20;
	s->base.replayable = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
	*out = &s->base;
	return FLOE_OK;
}
