/*
 * props.h — the table properties floe knows: one declarative table (key,
 * type, default, range or choices, what floe does with it) that parsing,
 * validation, `floe table show` and the configuration reference all read,
 * as librdkafka's rdkafka_conf.c drives its configuration.
 *
 * Iceberg lets a table hold any property, so an unknown key is accepted;
 * a known key must hold a value of its type, and a value floe cannot honour
 * (write.format.default=orc) is refused rather than stored and ignored.
 *
 * Thread-safety: the table is constant; every function is reentrant.
 */
#ifndef FLOE_ICEBERG_PROPS_H
#define FLOE_ICEBERG_PROPS_H

#include "iceberg/metadata.h"

typedef enum floe_prop_type {
	FLOE_PROP_INT,     /* a decimal integer within [min, max] */
	FLOE_PROP_BOOL,    /* true | false */
	FLOE_PROP_CHOICE,  /* one of `choices` ("a|b|c", case-insensitive) */
	FLOE_PROP_STRING,  /* any text (paths, JSON checked elsewhere) */
	FLOE_PROP_METRICS, /* none | counts | truncate(N) | full */
	FLOE_PROP_DURATION, /* 500ms, 10s, 5m, 12h, 7d, or milliseconds */
} floe_prop_type;

enum {
	FLOE_PROP_HONOURED = 1, /* floe acts on it (else: known, stored, passed on) */
	FLOE_PROP_PREFIX = 2,   /* the key is a prefix ("write.metadata.metrics.column.") */
	FLOE_PROP_CREATE = 4,   /* written at table creation when absent, as Java does */
	FLOE_PROP_RESERVED = 8, /* not stored in properties (format-version, ...) */
};

typedef struct floe_prop_def {
	const char *key;
	floe_prop_type type;
	const char *dflt; /* the effective default, as text (NULL: unset) */
	int64_t min, max; /* FLOE_PROP_INT */
	const char *choices;
	/* values of `choices` floe refuses, with why ("orc|avro" for
	 * write.format.default: floe writes Parquet only) */
	const char *refused, *refused_why;
	unsigned flags;
	const char *doc;
} floe_prop_def;

/* The definition of key (exact, or the longest prefix entry); NULL when
 * floe does not know it. */
const floe_prop_def *floe_prop_find(const char *key);
/* Every definition, in reference order; *n receives the count. */
const floe_prop_def *floe_prop_all(size_t *n);

/* Check one key = value: FLOE_EINVAL naming the key, the value and what is
 * allowed; unknown keys pass. */
int floe_prop_check(const char *key, const char *value, floe_error *err) FLOE_WUR;

/* The value of a property of m, or its registry default (key must be in the
 * registry with a default of the right type; a bad stored value reads as
 * the default — validation refuses it at write time). */
int64_t floe_prop_i64(const floe_metadata *m, const char *key);
bool floe_prop_bool(const floe_metadata *m, const char *key);
const char *floe_prop_str(const floe_metadata *m, const char *key);

#endif
