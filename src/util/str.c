/*
 * str.c — string helpers.
 */
#include "util/str.h"
#include "util/timeutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool floe_parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		uint64_t d = (uint64_t)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool floe_parse_i64(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	uint64_t v;
	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (!floe_parse_u64(s, n, &v))
		return false;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return false;
		*out = (int64_t)v;
	}
	return true;
}

bool floe_parse_i32(const char *s, size_t n, int32_t *out)
{
	int64_t v;
	if (!floe_parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

bool floe_parse_double(const char *s, size_t n, double *out)
{
	char tmp[128];
	char *end;
	if (n == 0 || n >= sizeof(tmp))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = 0;
	if (tmp[0] == ' ' || tmp[0] == '\t')
		return false;
	errno = 0;
	double v = strtod(tmp, &end);
	if (end != tmp + n)
		return false;
	*out = v;
	return true;
}

static bool parse_scaled(const char *s, int64_t *out, const char *const *units,
			 const int64_t *scale, size_t nunits)
{
	size_t n = strlen(s), i = 0;
	double v;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	if (i == 0 || !floe_parse_double(s, i, &v))
		return false;
	while (i < n && s[i] == ' ')
		i++;
	if (i == n) {
		if (v > 9.2e18)
			return false;
		*out = (int64_t)v;
		return true;
	}
	for (size_t k = 0; k < nunits; k++) {
		if (floe_str_ieq(s + i, units[k])) {
			double r = v * (double)scale[k];
			if (r > 9.2e18)
				return false;
			*out = (int64_t)llround(r);
			return true;
		}
	}
	return false;
}

bool floe_parse_duration_ms(const char *s, int64_t *ms)
{
	static const char *const units[] = {"ms", "s", "sec", "m", "min", "h", "d"};
	static const int64_t scale[] = {1, 1000, 1000, 60000, 60000, 3600000, 86400000};
	return s && parse_scaled(s, ms, units, scale, sizeof(scale) / sizeof(scale[0]));
}

bool floe_parse_time_ms(const char *s, int64_t *ms)
{
	int64_t v, us, days;
	bool zone;
	size_t n = s ? strlen(s) : 0;
	if (!n)
		return false;
	if (floe_parse_i64(s, n, &v)) {
		*ms = v;
		return true;
	}
	if (floe_parse_timestamp_us(s, n, &us, &zone)) {
		*ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
		return true;
	}
	if (floe_parse_date(s, n, &days) && days > -106751991 && days < 106751991) {
		*ms = days * INT64_C(86400000);
		return true;
	}
	return false;
}

bool floe_parse_size(const char *s, int64_t *bytes)
{
	static const char *const units[] = {"b",  "k",   "kb", "kib", "m",  "mb",
					    "mib", "g",  "gb", "gib", "t",  "tb"};
	static const int64_t scale[] = {1,
					1024,
					1024,
					1024,
					1048576,
					1048576,
					1048576,
					1073741824,
					1073741824,
					1073741824,
					INT64_C(1099511627776),
					INT64_C(1099511627776)};
	return s && parse_scaled(s, bytes, units, scale, sizeof(scale) / sizeof(scale[0]));
}

bool floe_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

bool floe_str_ieq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	while (*a && *b) {
		char x = *a >= 'A' && *a <= 'Z' ? (char)(*a + 32) : *a;
		char y = *b >= 'A' && *b <= 'Z' ? (char)(*b + 32) : *b;
		if (x != y)
			return false;
		a++;
		b++;
	}
	return *a == *b;
}

bool floe_str_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool floe_str_endswith(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

bool floe_slice_eq(const char *s, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	return n == m && memcmp(s, lit, n) == 0;
}

static const char HEXU[] = "0123456789ABCDEF";

int floe_urlencode_form(floe_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int rc;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '*' || c == '_')
			rc = floe_buf_putc(out, (char)c);
		else if (c == ' ')
			rc = floe_buf_putc(out, '+');
		else {
			char t[3] = {'%', HEXU[c >> 4], HEXU[c & 15]};
			rc = floe_buf_append(out, t, 3);
		}
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

int floe_urlencode_path(floe_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int rc;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '~' || c == '_')
			rc = floe_buf_putc(out, (char)c);
		else {
			char t[3] = {'%', HEXU[c >> 4], HEXU[c & 15]};
			rc = floe_buf_append(out, t, 3);
		}
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int floe_base64_encode(floe_buf *out, const uint8_t *p, size_t n)
{
	size_t i = 0;
	int rc;
	while (i + 3 <= n) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
		char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], B64[(v >> 6) & 63], B64[v & 63]};
		if ((rc = floe_buf_append(out, t, 4)))
			return rc;
		i += 3;
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;
		char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], '=', '='};
		return floe_buf_append(out, t, 4);
	}
	if (n - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
		char t[4] = {B64[v >> 18], B64[(v >> 12) & 63], B64[(v >> 6) & 63], '='};
		return floe_buf_append(out, t, 4);
	}
	return FLOE_OK;
}

static int b64val(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

int floe_base64_decode(floe_buf *out, const char *s, size_t n)
{
	uint32_t acc = 0;
	int bits = 0;
	size_t i;
	for (i = 0; i < n; i++) {
		if (s[i] == '=')
			break;
		int v = b64val(s[i]);
		if (v < 0)
			return FLOE_ECORRUPT;
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			int rc = floe_buf_putc(out, (char)(acc >> bits));
			if (rc)
				return rc;
		}
	}
	for (; i < n; i++)
		if (s[i] != '=')
			return FLOE_ECORRUPT;
	return FLOE_OK;
}

int floe_hex_encode(floe_buf *out, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		char t[2] = {hex[p[i] >> 4], hex[p[i] & 15]};
		int rc = floe_buf_append(out, t, 2);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

static int hexv(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int floe_hex_decode(floe_buf *out, const char *s, size_t n)
{
	if (n % 2)
		return FLOE_ECORRUPT;
	for (size_t i = 0; i < n; i += 2) {
		int a = hexv(s[i]), b = hexv(s[i + 1]);
		if (a < 0 || b < 0)
			return FLOE_ECORRUPT;
		int rc = floe_buf_putc(out, (char)(a << 4 | b));
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

size_t floe_levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[128];
	if (lb >= 127 || la >= 127)
		return la > lb ? la : lb;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = prev + cost;
			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			prev = cur;
		}
	}
	return row[lb];
}

/* ---- ordered string map ------------------------------------------------ */

void floe_strmap_init(floe_strmap *m)
{
	m->items = NULL;
	m->len = 0;
	m->cap = 0;
}

void floe_strmap_reset(floe_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->len; i++) {
		floe_free(m->items[i].key);
		floe_free(m->items[i].value);
	}
	floe_free(m->items);
	floe_strmap_init(m);
}

static floe_strmap_entry *find(const floe_strmap *m, const char *key)
{
	for (size_t i = 0; i < m->len; i++)
		if (strcmp(m->items[i].key, key) == 0)
			return &m->items[i];
	return NULL;
}

const char *floe_strmap_get(const floe_strmap *m, const char *key)
{
	floe_strmap_entry *e = find(m, key);
	return e ? e->value : NULL;
}

int floe_strmap_set(floe_strmap *m, const char *key, const char *value)
{
	floe_strmap_entry *e = find(m, key);
	char *v = floe_strdup(value ? value : "");
	if (!v)
		return FLOE_ENOMEM;
	if (e) {
		floe_free(e->value);
		e->value = v;
		return FLOE_OK;
	}
	char *k = floe_strdup(key);
	if (!k || FLOE_ARRAY_RESERVE(m->items, m->cap, m->len + 1)) {
		floe_free(k);
		floe_free(v);
		return FLOE_ENOMEM;
	}
	m->items[m->len].key = k;
	m->items[m->len].value = v;
	m->len++;
	return FLOE_OK;
}

int floe_strmap_setf(floe_strmap *m, const char *key, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	return floe_strmap_set(m, key, tmp);
}

bool floe_strmap_remove(floe_strmap *m, const char *key)
{
	floe_strmap_entry *e = find(m, key);
	if (!e)
		return false;
	floe_free(e->key);
	floe_free(e->value);
	size_t idx = (size_t)(e - m->items);
	memmove(e, e + 1, (m->len - idx - 1) * sizeof(*e));
	m->len--;
	return true;
}

int floe_strmap_copy(floe_strmap *dst, const floe_strmap *src)
{
	for (size_t i = 0; i < src->len; i++) {
		int rc = floe_strmap_set(dst, src->items[i].key, src->items[i].value);
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

int64_t floe_strmap_get_i64(const floe_strmap *m, const char *key, int64_t dflt)
{
	const char *v = floe_strmap_get(m, key);
	int64_t x;
	if (!v || !floe_parse_i64(v, strlen(v), &x))
		return dflt;
	return x;
}

bool floe_strmap_get_bool(const floe_strmap *m, const char *key, bool dflt)
{
	const char *v = floe_strmap_get(m, key);
	if (!v)
		return dflt;
	if (floe_str_ieq(v, "true"))
		return true;
	if (floe_str_ieq(v, "false"))
		return false;
	return dflt;
}

bool floe_utf8_valid(const void *s, size_t n)
{
	const uint8_t *p = s;
	size_t i = 0;
	while (i < n) {
		/* ASCII fast path, 8 bytes at a time */
		while (i + 8 <= n) {
			uint64_t w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ULL)
				break;
			i += 8;
		}
		if (i >= n)
			break;
		uint8_t c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp, min;
		if ((c & 0xe0) == 0xc0) {
			len = 2;
			cp = c & 0x1f;
			min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			len = 3;
			cp = c & 0x0f;
			min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			len = 4;
			cp = c & 0x07;
			min = 0x10000;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}
