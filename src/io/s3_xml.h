/*
 * s3_xml.h — a small bounded XML reader for S3 (and STS) responses.
 *
 * It reads the subset those responses use: a prolog, elements with
 * attributes (skipped), text with the five named entities and numeric
 * character references, comments, CDATA. It builds an element tree in an
 * arena; depth, element count and text sizes are bounded, and every error
 * names the byte offset. Namespaces are ignored (names keep any prefix).
 */
#ifndef FLOE_IO_S3_XML_H
#define FLOE_IO_S3_XML_H

#include "floe/common.h"
#include "util/alloc.h"

typedef struct floe_xml {
	const char *name;
	const char *text; /* concatenated character data directly inside ("" if none) */
	size_t text_len;
	struct floe_xml *child, *next; /* first child, next sibling */
} floe_xml;

#define FLOE_XML_MAX_DEPTH 32
#define FLOE_XML_MAX_NODES 200000

/* Parse p[0..n) into a tree in a; *root is the document element. */
int floe_xml_parse(floe_xml **root, floe_arena *a, const char *p, size_t n,
		   floe_error *err) FLOE_WUR;
/* First child element named name (NULL: none). */
const floe_xml *floe_xml_child(const floe_xml *x, const char *name);
/* Text of the first child named name, or NULL. */
const char *floe_xml_child_text(const floe_xml *x, const char *name);
/* Next sibling with the same name as x. */
const floe_xml *floe_xml_next_same(const floe_xml *x);

#endif
