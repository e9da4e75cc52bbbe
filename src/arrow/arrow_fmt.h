/*
 * arrow_fmt.h — Arrow C Data Interface format strings: parse them into a
 * small typed description, and print one back.
 *
 * spec: Arrow C Data Interface, "Data type description — format strings".
 * Parsing never relies on more than the NUL-terminated format string; a
 * timestamp's zone points into that string (not copied).
 */
#ifndef FLOE_ARROW_FMT_H
#define FLOE_ARROW_FMT_H

#include "floe/arrow.h"
#include "floe/common.h"

typedef enum floe_arrow_type {
	FLOE_ARROW_NA = 0,
	FLOE_ARROW_BOOL,
	FLOE_ARROW_INT8,
	FLOE_ARROW_UINT8,
	FLOE_ARROW_INT16,
	FLOE_ARROW_UINT16,
	FLOE_ARROW_INT32,
	FLOE_ARROW_UINT32,
	FLOE_ARROW_INT64,
	FLOE_ARROW_UINT64,
	FLOE_ARROW_HALF_FLOAT,
	FLOE_ARROW_FLOAT,
	FLOE_ARROW_DOUBLE,
	FLOE_ARROW_STRING,       /* "u" */
	FLOE_ARROW_LARGE_STRING, /* "U" */
	FLOE_ARROW_BINARY,       /* "z" */
	FLOE_ARROW_LARGE_BINARY, /* "Z" */
	FLOE_ARROW_FIXED_BINARY, /* "w:N" */
	FLOE_ARROW_DECIMAL128,   /* "d:P,S" */
	FLOE_ARROW_DECIMAL256,   /* "d:P,S,256" */
	FLOE_ARROW_DATE32,       /* "tdD" */
	FLOE_ARROW_DATE64,       /* "tdm" */
	FLOE_ARROW_TIME32,       /* "tts" / "ttm" */
	FLOE_ARROW_TIME64,       /* "ttu" / "ttn" */
	FLOE_ARROW_TIMESTAMP,    /* "ts?:TZ" */
	FLOE_ARROW_DURATION,     /* "tD?" */
	FLOE_ARROW_STRUCT,       /* "+s" */
	FLOE_ARROW_LIST,         /* "+l" */
	FLOE_ARROW_LARGE_LIST,   /* "+L" */
	FLOE_ARROW_FIXED_LIST,   /* "+w:N" */
	FLOE_ARROW_MAP,          /* "+m" */
} floe_arrow_type;

typedef enum floe_arrow_unit {
	FLOE_ARROW_SECOND = 0,
	FLOE_ARROW_MILLI,
	FLOE_ARROW_MICRO,
	FLOE_ARROW_NANO,
} floe_arrow_unit;

typedef struct floe_arrow_fmt {
	floe_arrow_type type;
	floe_arrow_unit unit; /* time, timestamp, duration */
	int32_t width;        /* fixed binary bytes, fixed list size, decimal bits */
	int32_t precision;    /* decimal */
	int32_t scale;        /* decimal */
	const char *tz;       /* timestamp zone ("" when naive); points into the format */
} floe_arrow_fmt;

/*
 * Parse a format string. Unknown or unsupported formats (unions, views,
 * run-end, dictionaries are described elsewhere) are FLOE_EUNSUPPORTED;
 * malformed ones (a decimal without scale) are FLOE_EINVAL.
 */
int floe_arrow_fmt_parse(floe_arrow_fmt *out, const char *format, floe_error *err) FLOE_WUR;

/* Write the format string of f into buf (NUL-terminated, truncated to cap).
 * Returns the length it needs (as snprintf). */
size_t floe_arrow_fmt_print(char *buf, size_t cap, const floe_arrow_fmt *f);

/* Number of buffers the layout of a type has (validity included). */
int floe_arrow_fmt_n_buffers(floe_arrow_type t);

/* Byte width of one value of a fixed-width type (bool: 0, variable: 0). */
int floe_arrow_fmt_byte_width(const floe_arrow_fmt *f);

/* Human name of a type ("int32", "timestamp[us, UTC]" is not produced: just
 * "timestamp"). */
const char *floe_arrow_type_name(floe_arrow_type t);

#endif
