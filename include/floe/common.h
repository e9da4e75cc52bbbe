/*
 * floe/common.h — status codes, the caller-owned error record, the allocator
 * hook and the log callback. Every other public header includes this one.
 *
 * Conventions (see docs/conventions.md):
 *  - functions return 0 (FLOE_OK) or a negative FLOE_E* code;
 *  - they take an optional `floe_error *err` (may be NULL) that receives a
 *    message; callers add context with floe_error_prefix() as the error rises;
 *  - `**out` parameters come first; the caller owns what they receive;
 *  - free functions accept NULL.
 *
 * Thread-safety: floe_error records are plain caller storage. The allocator
 * and log hooks are process-wide and must be set before any other call.
 */
#ifndef FLOE_COMMON_H
#define FLOE_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* FLOE_EXPORT marks the public API: the library is compiled with
 * -fvisibility=hidden, so a shared object built from it exports only these. */
#if defined(__GNUC__) || defined(__clang__)
#define FLOE_EXPORT __attribute__((visibility("default")))
#define FLOE_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#define FLOE_WUR __attribute__((warn_unused_result))
#define FLOE_UNUSED __attribute__((unused))
#define FLOE_FALLTHROUGH __attribute__((fallthrough)) /* gcc and clang both check it */
#else
#define FLOE_EXPORT
#define FLOE_PRINTF(fmt_idx, args_idx)
#define FLOE_WUR
#define FLOE_UNUSED
#define FLOE_FALLTHROUGH ((void)0)
#endif

/* Status codes. Few, and each one something a caller acts on. */
enum {
	FLOE_OK = 0,
	FLOE_ENOMEM = -1,       /* allocation failed or a buffer cap was reached */
	FLOE_EINVAL = -2,       /* bad argument, bad configuration, misuse */
	FLOE_ECORRUPT = -3,     /* input (file, response) violates its format */
	FLOE_EUNSUPPORTED = -4, /* valid, but floe does not do it (yet) */
	FLOE_ENOTFOUND = -5,    /* no such table, namespace, file, key */
	FLOE_EEXISTS = -6,      /* already exists */
	FLOE_ECONFLICT = -7,    /* lost a commit race: refresh and retry */
	FLOE_EIO = -8,          /* the operating system or a server said no */
	FLOE_ETIMEDOUT = -9,
	FLOE_ECANCELED = -10,
	/* The operation was sent but its outcome is unknown (a connection lost
	 * after the request reached the server, a timeout after sending, a 5xx
	 * answering a commit). For a commit: the new metadata may or may not be
	 * current; nothing it wrote may be deleted, and only re-reading the
	 * catalog can tell. */
	FLOE_ECOMMITUNKNOWN = -11,
};

#define FLOE_ERROR_MSG_MAX 1024

/* A caller-owned error record. Zero-initialise it (or floe_error_clear). */
typedef struct floe_error {
	int code;       /* 0 or a FLOE_E* code */
	bool retryable; /* true when the same call may succeed later */
	char msg[FLOE_ERROR_MSG_MAX];
} floe_error;

/* Name of a status code ("ECORRUPT"). Never NULL. */
FLOE_EXPORT const char *floe_strerror(int code);

FLOE_EXPORT void floe_error_clear(floe_error *err);

/* Durations as options spell them: "10s", "500ms", "2m", "1h", "3d" or a
 * bare number of milliseconds. */
FLOE_EXPORT bool floe_parse_duration_ms(const char *s, int64_t *ms);
/* A point in time: epoch milliseconds, or ISO-8601 "2024-01-01",
 * "2024-01-01T10:00:00[.fff][Z|+02:00]" (UTC without a zone). Calendar
 * dates are checked: "2026-02-30" and hour 24 are not times. */
FLOE_EXPORT bool floe_parse_time_ms(const char *s, int64_t *ms);
/* Sizes: "128MB", "1 GiB", "512k" or a bare number of bytes (binary units). */
FLOE_EXPORT bool floe_parse_size(const char *s, int64_t *bytes);

/*
 * Set err to code and a formatted message; returns code so that
 * `return floe_error_set(err, FLOE_EINVAL, "...")` reads naturally.
 * err may be NULL. The error is not retryable: code that knows a retry may
 * succeed (a lost compare-and-swap, a busy database, a throttled request)
 * says so with floe_error_set_retryable. A NULL fmt gives a message naming
 * the code ("out of memory" for ENOMEM).
 */
FLOE_EXPORT int floe_error_set(floe_error *err, int code, const char *fmt, ...) FLOE_PRINTF(3, 4);
FLOE_EXPORT int floe_error_setv(floe_error *err, int code, const char *fmt, va_list ap) FLOE_PRINTF(3, 0);
/* The same, marking the error retryable. */
FLOE_EXPORT int floe_error_set_retryable(floe_error *err, int code, const char *fmt, ...) FLOE_PRINTF(3, 4);

/*
 * Add context as an error rises: returns rc, always, so that
 * `return floe_error_prefix(err, rc, "manifest '%s': ", path);` cannot turn
 * a failure into success. rc 0 does nothing. Otherwise err (when given)
 * takes code rc and "manifest 'x.avro': " is prepended to its message (a
 * record that holds no message yet gets the code's name after the prefix).
 */
FLOE_EXPORT int floe_error_prefix(floe_error *err, int rc, const char *fmt, ...) FLOE_PRINTF(3, 4);

/*
 * Corruption and out-of-memory errors carry a message always, and in builds
 * with FLOE_ERROR_SOURCE (every build but Release) the source file and line
 * where they were raised, as SQLite's SQLITE_CORRUPT_BKPT does:
 * "manifest 'm.avro': block 3: bad varint [src/avro/avro_reader.c:211]".
 */
#define floe_error_corrupt(err, ...) floe_error__at((err), FLOE_ECORRUPT, __FILE__, __LINE__, __VA_ARGS__)
#define floe_error_oom(err) floe_error__at((err), FLOE_ENOMEM, __FILE__, __LINE__, "out of memory")
#define floe_error_oomf(err, ...) floe_error__at((err), FLOE_ENOMEM, __FILE__, __LINE__, __VA_ARGS__)
FLOE_EXPORT int floe_error__at(floe_error *err, int code, const char *file, int line, const char *fmt, ...)
	FLOE_PRINTF(5, 6);

/* Allocator hook. All of floe's memory goes through it. */
typedef struct floe_allocator {
	void *(*malloc_fn)(size_t size, void *payload);
	void *(*realloc_fn)(void *ptr, size_t size, void *payload);
	void (*free_fn)(void *ptr, void *payload);
	void *payload;
} floe_allocator;

/* Install a custom allocator (NULL restores the C library's). Not thread-safe:
 * call it before anything else. */
FLOE_EXPORT void floe_set_allocator(const floe_allocator *alloc);

/* Allocate through the hook (free with floe_free, which accepts NULL). */
FLOE_EXPORT void *floe_malloc(size_t n) FLOE_WUR;
FLOE_EXPORT void *floe_calloc(size_t count, size_t size) FLOE_WUR; /* NULL on overflow */
FLOE_EXPORT void *floe_realloc(void *p, size_t n) FLOE_WUR;
FLOE_EXPORT void floe_free(void *p);
FLOE_EXPORT char *floe_strdup(const char *s) FLOE_WUR;

/* Output sink for text the library renders (JSON, tables, file dumps). A
 * non-zero return stops the producer and is returned by it. */
typedef int (*floe_write_fn)(const char *data, size_t n, void *payload);

/* What this build is: "floe <version> (commit <git commit>)" and the versions
 * of the libraries it runs with, as two lines written to fn (floe --version).
 * Returns fn's result. Thread-safe. */
FLOE_EXPORT int floe_build_info(floe_write_fn fn, void *payload);

/* Logging goes through a callback; the library itself never prints. */
typedef enum floe_log_level {
	FLOE_LOG_DEBUG = 0,
	FLOE_LOG_INFO = 1,
	FLOE_LOG_WARN = 2,
	FLOE_LOG_ERROR = 3,
} floe_log_level;

typedef void (*floe_log_fn)(floe_log_level level, const char *msg, void *payload);

/* Set the log sink and the minimum level. fn NULL discards all messages. */
FLOE_EXPORT void floe_set_logger(floe_log_fn fn, void *payload, floe_log_level min_level);

#ifdef __cplusplus
}
#endif
#endif
