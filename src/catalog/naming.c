/*
 * naming.c — metadata file naming, encoding and reading, shared by catalogs.
 *
 * spec: Java names catalog metadata files "<NNNNN>-<uuid>.metadata.json"
 * (5-digit version from 00000) and file-system tables "v<N>.metadata.json"
 * (from v1); ".gz.metadata.json" when gzip-compressed. Java derives the
 * codec from the name, so these suffixes are not cosmetic.
 */
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

int floe_metadata_read(floe_fileio *io, const char *location, floe_metadata **out,
		       floe_error *err)
{
	floe_buf b;
	floe_metadata *m = NULL;
	int rc;
	floe_buf_init(&b, 0);
	rc = floe_io_read_all(io, location, &b, (size_t)1 << 30, err);
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
