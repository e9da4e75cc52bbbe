/*
 * buf.c — bounded growable byte buffers.
 */
#include "util/buf.h"

#include <stdio.h>
#include <string.h>

#include "util/alloc.h"

void floe_buf_init(floe_buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : FLOE_BUF_MAX_DEFAULT;
}

void floe_buf_reset(floe_buf *b)
{
	if (!b)
		return;
	floe_free(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void floe_buf_clear(floe_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = 0;
}

int floe_buf_reserve(floe_buf *b, size_t extra)
{
	size_t need, ncap;
	uint8_t *p;
	if (!floe_size_add(&need, b->len, extra) || need > b->max)
		return FLOE_ENOMEM;
	if (need + 1 <= b->cap)
		return FLOE_OK;
	ncap = b->cap ? b->cap : 64;
	while (ncap < need + 1) {
		if (ncap > SIZE_MAX / 2)
			return FLOE_ENOMEM;
		ncap *= 2;
	}
	if (ncap > b->max + 1)
		ncap = b->max + 1;
	p = floe_realloc(b->data, ncap);
	if (!p)
		return FLOE_ENOMEM;
	b->data = p;
	b->cap = ncap;
	return FLOE_OK;
}

int floe_buf_append(floe_buf *b, const void *p, size_t n)
{
	int rc = floe_buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = 0;
	return FLOE_OK;
}

uint8_t *floe_buf_extend(floe_buf *b, size_t n)
{
	uint8_t *p;
	if (floe_buf_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	memset(p, 0, n);
	b->len += n;
	b->data[b->len] = 0;
	return p;
}

int floe_buf_putc(floe_buf *b, char c)
{
	if (b->len + 1 < b->cap && b->len < b->max) {
		b->data[b->len++] = (uint8_t)c;
		b->data[b->len] = 0;
		return FLOE_OK;
	}
	return floe_buf_append(b, &c, 1);
}

int floe_buf_puts(floe_buf *b, const char *s)
{
	return floe_buf_append(b, s, strlen(s));
}

int floe_buf_vprintf(floe_buf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	int rc;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return FLOE_EINVAL;
	rc = floe_buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return FLOE_OK;
}

int floe_buf_printf(floe_buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;
	va_start(ap, fmt);
	rc = floe_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

char *floe_buf_detach(floe_buf *b, size_t *len_out)
{
	char *p;
	if (!b->data) {
		p = floe_malloc(1);
		if (!p)
			return NULL;
		p[0] = 0;
	} else {
		p = (char *)b->data;
	}
	if (len_out)
		*len_out = b->len;
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	return p;
}

const char *floe_buf_cstr(const floe_buf *b)
{
	return b->data ? (const char *)b->data : "";
}

int floe_buf_put_i64(floe_buf *b, int64_t v)
{
	static const char pairs[201] = "00010203040506070809101112131415161718192021222324"
				       "25262728293031323334353637383940414243444546474849"
				       "50515253545556575859606162636465666768697071727374"
				       "75767778798081828384858687888990919293949596979899";
	char t[20]; /* "-9223372036854775808" */
	size_t i = sizeof(t);
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	while (u >= 100) {
		unsigned d = (unsigned)(u % 100) * 2;
		u /= 100;
		t[--i] = pairs[d + 1];
		t[--i] = pairs[d];
	}
	if (u >= 10) {
		t[--i] = pairs[u * 2 + 1];
		t[--i] = pairs[u * 2];
	} else {
		t[--i] = (char)('0' + u);
	}
	if (v < 0)
		t[--i] = '-';
	return floe_buf_append(b, t + i, sizeof(t) - i);
}

int floe_buf_put_u32le(floe_buf *b, uint32_t v)
{
	uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	return floe_buf_append(b, t, 4);
}

int floe_buf_put_u32be(floe_buf *b, uint32_t v)
{
	uint8_t t[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	return floe_buf_append(b, t, 4);
}

int floe_buf_put_u64le(floe_buf *b, uint64_t v)
{
	uint8_t t[8];
	for (int i = 0; i < 8; i++)
		t[i] = (uint8_t)(v >> (8 * i));
	return floe_buf_append(b, t, 8);
}

int floe_buf_put_uvarint(floe_buf *b, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	while (v >= 0x80) {
		t[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	t[n++] = (uint8_t)v;
	return floe_buf_append(b, t, n);
}

int floe_buf_put_zigzag(floe_buf *b, int64_t v)
{
	return floe_buf_put_uvarint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}
