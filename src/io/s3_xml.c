/*
 * s3_xml.c — the bounded XML reader (s3_xml.h).
 *
 * DESIGN: a recursive-descent reader over (p, n) with an explicit depth
 * limit; text is decoded into arena memory as it is read. Nothing relies on
 * a NUL terminator; every error names the offset where it was found.
 */
#include "io/s3_xml.h"

#include <string.h>

typedef struct xp {
	const char *p;
	size_t n, i;
	floe_arena *a;
	size_t nodes;
	floe_error *err;
} xp;

static int bad(xp *x, const char *what)
{
	return floe_error_corrupt(x->err, "XML at offset %zu: %s", x->i, what);
}

static bool starts(const xp *x, const char *lit)
{
	size_t l = strlen(lit);
	return x->n - x->i >= l && memcmp(x->p + x->i, lit, l) == 0;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_name(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ':' || (unsigned char)c >= 0x80;
}

/* skip up to and including the literal end; error when absent */
static int skip_past(xp *x, const char *end, const char *what)
{
	size_t l = strlen(end);
	while (x->n - x->i >= l) {
		if (memcmp(x->p + x->i, end, l) == 0) {
			x->i += l;
			return FLOE_OK;
		}
		x->i++;
	}
	return bad(x, what);
}

/* skip comments, processing instructions, doctype and white space */
static int skip_misc(xp *x)
{
	for (;;) {
		while (x->i < x->n && is_space(x->p[x->i]))
			x->i++;
		int rc;
		if (starts(x, "<?"))
			rc = skip_past(x, "?>", "unterminated processing instruction");
		else if (starts(x, "<!--"))
			rc = skip_past(x, "-->", "unterminated comment");
		else if (starts(x, "<!DOCTYPE"))
			rc = skip_past(x, ">", "unterminated DOCTYPE");
		else
			return FLOE_OK;
		if (rc)
			return rc;
	}
}

static int put_utf8(char *out, size_t *o, uint32_t cp)
{
	if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	if (cp < 0x80) {
		out[(*o)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*o)++] = (char)(0xC0 | cp >> 6);
		out[(*o)++] = (char)(0x80 | (cp & 63));
	} else if (cp < 0x10000) {
		out[(*o)++] = (char)(0xE0 | cp >> 12);
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 63));
		out[(*o)++] = (char)(0x80 | (cp & 63));
	} else {
		out[(*o)++] = (char)(0xF0 | cp >> 18);
		out[(*o)++] = (char)(0x80 | ((cp >> 12) & 63));
		out[(*o)++] = (char)(0x80 | ((cp >> 6) & 63));
		out[(*o)++] = (char)(0x80 | (cp & 63));
	}
	return 0;
}

/* decode character data s[0..len) (entities) into out (capacity >= len) */
static int decode_text(xp *x, const char *s, size_t len, char *out, size_t *olen)
{
	size_t o = *olen;
	for (size_t i = 0; i < len;) {
		if (s[i] != '&') {
			out[o++] = s[i++];
			continue;
		}
		const char *semi = memchr(s + i, ';', len - i < 12 ? len - i : 12);
		if (!semi)
			return bad(x, "unterminated entity");
		size_t el = (size_t)(semi - (s + i)) + 1;
		const char *e = s + i + 1;
		size_t en = el - 2;
		if (en == 2 && !memcmp(e, "lt", 2))
			out[o++] = '<';
		else if (en == 2 && !memcmp(e, "gt", 2))
			out[o++] = '>';
		else if (en == 3 && !memcmp(e, "amp", 3))
			out[o++] = '&';
		else if (en == 4 && !memcmp(e, "quot", 4))
			out[o++] = '"';
		else if (en == 4 && !memcmp(e, "apos", 4))
			out[o++] = '\'';
		else if (en >= 2 && e[0] == '#') {
			uint32_t cp = 0;
			bool hexa = e[1] == 'x' || e[1] == 'X';
			size_t k = hexa ? 2 : 1;
			if (k >= en)
				return bad(x, "empty character reference");
			for (; k < en; k++) {
				char c = e[k];
				int d = c >= '0' && c <= '9'	      ? c - '0'
					: hexa && c >= 'a' && c <= 'f' ? c - 'a' + 10
					: hexa && c >= 'A' && c <= 'F' ? c - 'A' + 10
								       : -1;
				if (d < 0 || cp > 0x10FFFF)
					return bad(x, "bad character reference");
				cp = cp * (hexa ? 16 : 10) + (uint32_t)d;
			}
			/* a reference is at least 4 bytes ("&#9;"), its UTF-8 at most 4 */
			if (put_utf8(out, &o, cp))
				return bad(x, "character reference out of range");
		} else {
			return bad(x, "unknown entity");
		}
		i += el;
	}
	*olen = o;
	return FLOE_OK;
}

static int parse_element(xp *x, floe_xml **out, int depth);

/* content of an element up to its end tag */
static int parse_content(xp *x, floe_xml *el, int depth)
{
	floe_xml **tail = &el->child;
	/* text pieces are decoded into one growing arena string */
	char *text = NULL;
	size_t tlen = 0, tcap = 0;
	for (;;) {
		if (x->i >= x->n)
			return bad(x, "unexpected end inside an element");
		if (starts(x, "</")) {
			x->i += 2;
			size_t s = x->i;
			while (x->i < x->n && is_name(x->p[x->i]))
				x->i++;
			size_t nl = x->i - s;
			if (nl != strlen(el->name) || memcmp(x->p + s, el->name, nl) != 0)
				return bad(x, "end tag does not match its start tag");
			while (x->i < x->n && is_space(x->p[x->i]))
				x->i++;
			if (x->i >= x->n || x->p[x->i] != '>')
				return bad(x, "bad end tag");
			x->i++;
			break;
		}
		if (starts(x, "<!--")) {
			int rc = skip_past(x, "-->", "unterminated comment");
			if (rc)
				return rc;
			continue;
		}
		if (starts(x, "<?")) {
			int rc = skip_past(x, "?>", "unterminated processing instruction");
			if (rc)
				return rc;
			continue;
		}
		const char *piece;
		size_t plen;
		bool raw = false;
		if (starts(x, "<![CDATA[")) {
			x->i += 9;
			size_t s = x->i;
			int rc = skip_past(x, "]]>", "unterminated CDATA");
			if (rc)
				return rc;
			piece = x->p + s;
			plen = x->i - 3 - s;
			raw = true;
		} else if (x->p[x->i] == '<') {
			floe_xml *c;
			int rc = parse_element(x, &c, depth + 1);
			if (rc)
				return rc;
			*tail = c;
			tail = &c->next;
			continue;
		} else {
			size_t s = x->i;
			while (x->i < x->n && x->p[x->i] != '<')
				x->i++;
			piece = x->p + s;
			plen = x->i - s;
		}
		if (plen == 0)
			continue;
		if (tlen + plen + 1 > tcap) {
			size_t ncap = (tlen + plen + 1) * 2;
			char *nt = floe_arena_alloc(x->a, ncap);
			if (!nt)
				return floe_error_oom(x->err);
			if (tlen)
				memcpy(nt, text, tlen);
			text = nt;
			tcap = ncap;
		}
		if (raw) {
			memcpy(text + tlen, piece, plen);
			tlen += plen;
		} else {
			int rc = decode_text(x, piece, plen, text, &tlen);
			if (rc)
				return rc;
		}
		text[tlen] = 0;
	}
	el->text = text ? text : "";
	el->text_len = tlen;
	return FLOE_OK;
}

static int parse_element(xp *x, floe_xml **out, int depth)
{
	if (depth > FLOE_XML_MAX_DEPTH)
		return bad(x, "elements nested too deeply");
	if (++x->nodes > FLOE_XML_MAX_NODES)
		return bad(x, "too many elements");
	if (x->i >= x->n || x->p[x->i] != '<')
		return bad(x, "expected an element");
	x->i++;
	size_t s = x->i;
	while (x->i < x->n && is_name(x->p[x->i]))
		x->i++;
	if (x->i == s)
		return bad(x, "element without a name");
	floe_xml *el = floe_arena_calloc(x->a, 1, sizeof(*el));
	char *name = el ? floe_arena_strndup(x->a, x->p + s, x->i - s) : NULL;
	if (!name)
		return floe_error_oom(x->err);
	el->name = name;
	el->text = "";
	/* attributes: name = "value" | 'value' (skipped) */
	for (;;) {
		while (x->i < x->n && is_space(x->p[x->i]))
			x->i++;
		if (x->i >= x->n)
			return bad(x, "unterminated start tag");
		char c = x->p[x->i];
		if (c == '>') {
			x->i++;
			break;
		}
		if (c == '/') {
			if (x->n - x->i < 2 || x->p[x->i + 1] != '>')
				return bad(x, "bad empty-element tag");
			x->i += 2;
			*out = el;
			return FLOE_OK;
		}
		size_t as = x->i;
		while (x->i < x->n && is_name(x->p[x->i]))
			x->i++;
		if (x->i == as)
			return bad(x, "bad attribute");
		while (x->i < x->n && is_space(x->p[x->i]))
			x->i++;
		if (x->i >= x->n || x->p[x->i] != '=')
			return bad(x, "attribute without a value");
		x->i++;
		while (x->i < x->n && is_space(x->p[x->i]))
			x->i++;
		if (x->i >= x->n || (x->p[x->i] != '"' && x->p[x->i] != '\''))
			return bad(x, "attribute value without quotes");
		char q = x->p[x->i++];
		const char *e = memchr(x->p + x->i, q, x->n - x->i);
		if (!e)
			return bad(x, "unterminated attribute value");
		x->i = (size_t)(e - x->p) + 1;
	}
	int rc = parse_content(x, el, depth);
	if (rc)
		return rc;
	*out = el;
	return FLOE_OK;
}

int floe_xml_parse(floe_xml **root, floe_arena *a, const char *p, size_t n, floe_error *err)
{
	xp x = {p, n, 0, a, 0, err};
	int rc;
	*root = NULL;
	/* a UTF-8 byte order mark */
	if (n >= 3 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB &&
	    (unsigned char)p[2] == 0xBF)
		x.i = 3;
	if ((rc = skip_misc(&x)) || (rc = parse_element(&x, root, 0)) || (rc = skip_misc(&x)))
		return rc;
	if (x.i != x.n) {
		*root = NULL;
		return bad(&x, "content after the document element");
	}
	return FLOE_OK;
}

const floe_xml *floe_xml_child(const floe_xml *x, const char *name)
{
	for (const floe_xml *c = x ? x->child : NULL; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

const char *floe_xml_child_text(const floe_xml *x, const char *name)
{
	const floe_xml *c = floe_xml_child(x, name);
	return c ? c->text : NULL;
}

const floe_xml *floe_xml_next_same(const floe_xml *x)
{
	for (const floe_xml *c = x->next; c; c = c->next)
		if (strcmp(c->name, x->name) == 0)
			return c;
	return NULL;
}
