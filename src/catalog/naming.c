/*
 * naming.c — metadata file naming, encoding and reading, shared by catalogs.
 *
 * spec: Java names catalog metadata files "<NNNNN>-<uuid>.metadata.json"
 * (5-digit version from 00000) and file-system tables "v<N>.metadata.json"
 * (from v1); ".gz.metadata.json" when gzip-compressed. Java derives the
 * codec from the name, so these suffixes are not cosmetic.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "catalog/catalog_impl.h"
#include "codec/codec.h"
#include "util/alloc.h"

int64_t floe_metadata_file_version(const char *location)
{
	const char *base = location ? strrchr(location, '/') : NULL;
	int64_t v = 0;
	const char *p;
	base = base ? base + 1 : location;
	if (!base)
		return -1;
	p = base;
	if (*p == 'v')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	while (*p >= '0' && *p <= '9') {
		if (v > INT64_MAX / 10 - 10)
			return -1;
		v = v * 10 + (*p - '0');
		p++;
	}
	if (base[0] == 'v' ? *p != '.' : *p != '-')
		return -1;
	return v;
}

char *floe_metadata_dir(const floe_metadata *m)
{
	const char *p = floe_metadata_property(m, "write.metadata.path");
	if (p && *p) {
		size_t n = strlen(p);
		while (n > 1 && p[n - 1] == '/')
			n--;
		return floe_strndup(p, n);
	}
	size_t n = strlen(m->location) + 16;
	char *out = floe_malloc(n);
	if (out)
		snprintf(out, n, "%s/metadata", m->location);
	return out;
}

const char *floe_metadata_file_suffix(const floe_metadata *m)
{
	const char *c = floe_metadata_property(m, "write.metadata.compression-codec");
	return c && floe_str_ieq(c, "gzip") ? ".gz.metadata.json" : ".metadata.json";
}

int floe_metadata_encode(floe_buf *out, const floe_metadata *m, floe_error *err)
{
	floe_buf json;
	int rc;
	floe_buf_init(&json, 0);
	rc = floe_metadata_write(&json, m, 0);
	if (rc) {
		floe_buf_reset(&json);
		return floe_error_set(err, rc, "cannot serialise table metadata");
	}
	if (strcmp(floe_metadata_file_suffix(m), ".gz.metadata.json") == 0)
		rc = floe_codec_compress(FLOE_CODEC_GZIP, 6, json.data, json.len, out, err);
	else
		rc = floe_buf_append(out, json.data, json.len)
			     ? floe_error_oom(err)
			     : FLOE_OK;
	floe_buf_reset(&json);
	return rc;
}

/*
 * Metadata files on object stores that this process wrote or read lately,
 * by location. DESIGN: a metadata file is never changed once written (a
 * catalog names each one with a fresh UUID and writes it no-replace), so
 * its bytes can be kept: the table handles a command opens one after the
 * other, and the reload after a create, then read nothing again (on S3 each
 * read is a request). Only object-store locations with a UUID-bearing name
 * ("NNNNN-<uuid>.metadata.json") are kept: a local file costs nothing to
 * read again, and a "vN.metadata.json" name comes back when a table is
 * dropped and created again. A few entries, bounded in bytes; a miss only
 * costs the read.
 */
#define MEMO_SLOTS 8
#define MEMO_FILE_MAX ((size_t)4 << 20)

typedef struct memo_entry {
	char *loc;
	uint8_t *data;
	size_t len;
	uint64_t used;
} memo_entry;

static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;
static memo_entry memo[MEMO_SLOTS];
static uint64_t memo_tick;

static bool memo_eligible(const char *loc)
{
	char scheme[16];
	floe_io_scheme(loc, scheme, sizeof(scheme));
	if (!scheme[0] || !strcmp(scheme, "file") || !strcmp(scheme, "mem"))
		return false;
	const char *base = strrchr(loc, '/');
	base = base ? base + 1 : loc;
	/* NNNNN-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.metadata.json (or .gz...) */
	const char *dash = strchr(base, '-');
	return floe_metadata_file_version(loc) >= 0 && dash && strlen(dash + 1) > 36 &&
	       dash[9] == '-' && dash[14] == '-' && dash[19] == '-' && dash[24] == '-' &&
	       dash[37] == '.';
}

static void memo_put(const char *loc, const void *p, size_t n)
{
	if (n > MEMO_FILE_MAX || !memo_eligible(loc))
		return;
	char *l = floe_strdup(loc);
	uint8_t *d = floe_malloc(n ? n : 1);
	if (!l || !d) {
		floe_free(l);
		floe_free(d);
		return; /* only a cache */
	}
	memcpy(d, p, n);
	pthread_mutex_lock(&memo_lock);
	/* the same location, else a free slot, else the least recently used */
	memo_entry *victim = NULL;
	for (size_t i = 0; i < MEMO_SLOTS && !victim; i++)
		if (memo[i].loc && !strcmp(memo[i].loc, loc))
			victim = &memo[i];
	for (size_t i = 0; i < MEMO_SLOTS && !victim; i++)
		if (!memo[i].loc)
			victim = &memo[i];
	if (!victim) {
		victim = &memo[0];
		for (size_t i = 1; i < MEMO_SLOTS; i++)
			if (memo[i].used < victim->used)
				victim = &memo[i];
	}
	floe_free(victim->loc);
	floe_free(victim->data);
	victim->loc = l;
	victim->data = d;
	victim->len = n;
	victim->used = ++memo_tick;
	pthread_mutex_unlock(&memo_lock);
}

/* 1 and a copy of the bytes in out when loc is remembered, 0 when not, < 0 ENOMEM */
static int memo_get(const char *loc, floe_buf *out)
{
	int found = 0;
	if (!memo_eligible(loc))
		return 0;
	pthread_mutex_lock(&memo_lock);
	for (size_t i = 0; i < MEMO_SLOTS && !found; i++) {
		if (!memo[i].loc || strcmp(memo[i].loc, loc))
			continue;
		memo[i].used = ++memo_tick;
		found = floe_buf_append(out, memo[i].data, memo[i].len) ? FLOE_ENOMEM : 1;
	}
	pthread_mutex_unlock(&memo_lock);
	return found;
}

int floe_metadata_write_file(floe_fileio *io, const char *location, const floe_metadata *m,
			     floe_error *err)
{
	floe_buf data;
	floe_buf_init(&data, 0);
	int rc = floe_metadata_encode(&data, m, err);
	if (!rc)
		rc = floe_io_write_all(io, location, data.data, data.len, false, err);
	if (!rc)
		memo_put(location, data.data, data.len);
	floe_buf_reset(&data);
	return rc;
}

int floe_metadata_read(floe_fileio *io, const char *location, floe_metadata **out,
		       floe_error *err)
{
	floe_buf b;
	floe_metadata *m = NULL;
	int rc;
	floe_buf_init(&b, 0);
	int hit = memo_get(location, &b);
	if (hit < 0)
		rc = floe_error_oom(err);
	else if (hit)
		rc = FLOE_OK;
	else if (!(rc = floe_io_read_all(io, location, &b, (size_t)1 << 30, err)))
		memo_put(location, b.data, b.len);
	if (!rc)
		rc = floe_metadata_parse_file_bytes(&m, b.data, b.len, err);
	floe_buf_reset(&b);
	if (rc)
		return floe_error_prefix(err, rc, "metadata '%s': ", location);
	m->metadata_location = floe_arena_strdup(&m->arena, location);
	if (!m->metadata_location) {
		floe_metadata_free(m);
		return floe_error_oom(err);
	}
	*out = m;
	return FLOE_OK;
}
