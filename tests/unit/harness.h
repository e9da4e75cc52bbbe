/*
 * harness.h — a very small test harness for floe's C tests.
 *
 * A test file defines `static void test_x(void)` functions and a main that
 * runs them with T_RUN(test_x); failures are counted and printed with file and
 * line; the process exits non-zero if any check failed.
 */
#ifndef FLOE_TEST_HARNESS_H
#define FLOE_TEST_HARNESS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "floe/common.h"

extern int t_failures;
extern int t_checks;
extern const char *t_current;

void t_fail(const char *file, int line, const char *fmt, ...) FLOE_PRINTF(3, 4);
int t_finish(void);
static inline const char *t_errmsg(const floe_error *err)
{
	return err ? err->msg : "";
}
/* Absolute path of a file under the shared testdata root (static buffer ring). */
const char *t_testdata(const char *rel);
/* Fresh empty temporary directory (removed at exit unless FLOE_KEEP_TMP). */
const char *t_tmpdir(void);
/* Read a whole file into a malloc'd buffer (caller frees with free()). */
unsigned char *t_read_file(const char *path, size_t *len);

#define T_RUN(fn)                                                                             \
	do {                                                                                  \
		t_current = #fn;                                                              \
		int before_ = t_failures;                                                     \
		fn();                                                                         \
		printf("%s %s\n", t_failures == before_ ? "ok  " : "FAIL", #fn);              \
		fflush(stdout);                                                               \
	} while (0)

#define T_CHECK(cond)                                                                         \
	do {                                                                                  \
		t_checks++;                                                                   \
		if (!(cond))                                                                  \
			t_fail(__FILE__, __LINE__, "check failed: %s", #cond);                \
	} while (0)

#define T_EQ_INT(a, b)                                                                        \
	do {                                                                                  \
		long long a_ = (long long)(a), b_ = (long long)(b);                           \
		t_checks++;                                                                   \
		if (a_ != b_)                                                                 \
			t_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, a_, b_);  \
	} while (0)

#define T_EQ_STR(a, b)                                                                        \
	do {                                                                                  \
		const char *a_ = (a), *b_ = (b);                                              \
		t_checks++;                                                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                        \
			t_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,       \
			       a_ ? a_ : "(null)", b_ ? b_ : "(null)");                       \
	} while (0)

/* An error message, ignoring the " [src/file.c:123]" that corruption and
 * out-of-memory errors carry in builds with FLOE_ERROR_SOURCE. */
#define T_EQ_MSG(a, b)                                                                        \
	do {                                                                                  \
		const char *a_ = (a), *b_ = (b);                                              \
		size_t n_ = a_ ? strlen(a_) : 0;                                              \
		const char *w_ = a_ ? strstr(a_, " [src/") : NULL;                           \
		if (w_ && a_[n_ - 1] == ']')                                                 \
			n_ = (size_t)(w_ - a_);                                               \
		t_checks++;                                                                   \
		if (!a_ || !b_ || strlen(b_) != n_ || strncmp(a_, b_, n_) != 0)              \
			t_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", #a, #b,     \
			       a_ ? a_ : "(null)", b_ ? b_ : "(null)");                       \
	} while (0)

#define T_EQ_MEM(a, b, n)                                                                     \
	do {                                                                                  \
		t_checks++;                                                                   \
		if (memcmp((a), (b), (n)) != 0)                                               \
			t_fail(__FILE__, __LINE__, "memory %s != %s", #a, #b);                 \
	} while (0)

/* Expect a floe status 0; print the error message otherwise. */
#define T_OK(expr, errp)                                                                      \
	do {                                                                                  \
		int rc_ = (expr);                                                             \
		t_checks++;                                                                   \
		if (rc_ != 0)                                                                 \
			t_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, floe_strerror(rc_),  \
			       t_errmsg(errp));                                               \
	} while (0)

#define T_ERR(expr, code)                                                                     \
	do {                                                                                  \
		int rc_ = (expr);                                                             \
		t_checks++;                                                                   \
		if (rc_ != (code))                                                            \
			t_fail(__FILE__, __LINE__, "%s -> %s, expected %s", #expr,             \
			       floe_strerror(rc_), floe_strerror(code));                      \
	} while (0)

#endif
