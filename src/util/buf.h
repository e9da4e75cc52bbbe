/*
 * buf.h — bounded growable byte buffers.
 *
 * Every buffer has a maximum (curl's dynbuf rule): appending past it fails with
 * FLOE_ENOMEM and leaves the buffer as it was. The data is always followed by
 * a NUL byte (not counted in len) so text can be used as a C string.
 */
#ifndef FLOE_UTIL_BUF_H
#define FLOE_UTIL_BUF_H

#include "floe/common.h"

#define FLOE_BUF_MAX_DEFAULT ((size_t)1 << 30) /* 1 GiB */

typedef struct floe_buf {
	uint8_t *data; /* NULL until the first append */
	size_t len;
	size_t cap;
	size_t max; /* hard cap on len */
} floe_buf;

/* max 0 = FLOE_BUF_MAX_DEFAULT. */
void floe_buf_init(floe_buf *b, size_t max);
void floe_buf_reset(floe_buf *b); /* frees the memory */
void floe_buf_clear(floe_buf *b); /* len = 0, keeps memory */
int floe_buf_reserve(floe_buf *b, size_t extra) FLOE_WUR;
int floe_buf_append(floe_buf *b, const void *p, size_t n) FLOE_WUR;
int floe_buf_putc(floe_buf *b, char c) FLOE_WUR;
int floe_buf_puts(floe_buf *b, const char *s) FLOE_WUR;
int floe_buf_printf(floe_buf *b, const char *fmt, ...) FLOE_PRINTF(2, 3) FLOE_WUR;
int floe_buf_vprintf(floe_buf *b, const char *fmt, va_list ap) FLOE_PRINTF(2, 0) FLOE_WUR;
/* Append n zero bytes and return a pointer to them (NULL on failure). */
uint8_t *floe_buf_extend(floe_buf *b, size_t n) FLOE_WUR;
/* Hand the memory to the caller (free with floe_free); buffer becomes empty.
 * Returns a valid pointer (to "") even for an empty buffer, or NULL on ENOMEM. */
char *floe_buf_detach(floe_buf *b, size_t *len_out) FLOE_WUR;
/* Text view ("" when empty). */
const char *floe_buf_cstr(const floe_buf *b);

/* v in decimal, as printf's "%lld" writes it (without printf: scans print millions) */
int floe_buf_put_i64(floe_buf *b, int64_t v) FLOE_WUR;

/* Little-endian / varint helpers for encoders. */
int floe_buf_put_u32le(floe_buf *b, uint32_t v) FLOE_WUR;
int floe_buf_put_u64le(floe_buf *b, uint64_t v) FLOE_WUR;
int floe_buf_put_u32be(floe_buf *b, uint32_t v) FLOE_WUR;
/* Unsigned LEB128 varint. */
int floe_buf_put_uvarint(floe_buf *b, uint64_t v) FLOE_WUR;
/* Zig-zag signed varint (Avro long, Thrift compact i64). */
int floe_buf_put_zigzag(floe_buf *b, int64_t v) FLOE_WUR;

#endif
