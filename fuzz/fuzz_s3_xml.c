/*
 * fuzz_s3_xml.c — the XML reader of S3 and STS responses (io/s3_xml.h) on
 * arbitrary bytes: it parses or refuses, and a parsed tree can be walked the
 * way the S3 FileIO walks ListObjectsV2, error and multipart answers. The
 * same bytes (cut at 127, as the HTTP layer keeps the header) are read as a
 * Content-Range header.
 */
#include <stdlib.h>
#include <string.h>

#include "io/s3.h"
#include "io/s3_xml.h"

static size_t walk(const floe_xml *x, int depth)
{
	size_t n = 0;
	if (depth > FLOE_XML_MAX_DEPTH + 1)
		abort();
	for (const floe_xml *c = x; c; c = c->next) {
		if (!c->name || !c->name[0] || !c->text || c->text[c->text_len] != 0)
			abort();
		n += 1 + walk(c->child, depth + 1);
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_xml *x;
	if (size > (1 << 20))
		return 0;
	floe_arena_init(&a, 0);
	if (floe_xml_parse(&x, &a, (const char *)data, size, NULL) == 0) {
		if (!x || x->next || walk(x, 0) > FLOE_XML_MAX_NODES)
			abort();
		for (const floe_xml *c = floe_xml_child(x, "Contents"); c; c = floe_xml_next_same(c)) {
			(void)floe_xml_child_text(c, "Key");
			(void)floe_xml_child_text(c, "Size");
		}
		(void)floe_xml_child_text(x, "NextContinuationToken");
		(void)floe_xml_child_text(x, "UploadId");
		(void)floe_xml_child_text(floe_xml_child(floe_xml_child(x,
			"AssumeRoleWithWebIdentityResult"), "Credentials"), "AccessKeyId");
	}
	floe_arena_reset(&a);
	char cr[128];
	uint64_t first, last, total;
	size_t k = size < sizeof(cr) - 1 ? size : sizeof(cr) - 1;
	memcpy(cr, data, k);
	cr[k] = 0;
	if (floe_s3__parse_content_range(cr, &first, &last, &total) &&
	    (first > last || last >= total || total > INT64_MAX))
		abort();
	return 0;
}
