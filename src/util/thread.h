/*
 * thread.h — a thin shim over POSIX threads: threads, mutexes, condition
 * variables with timed waits on the monotonic clock. Atomics come straight
 * from <stdatomic.h>.
 *
 * DESIGN: the shim exists so that the runtime's code reads the same on every
 * platform and so that the few error paths of pthread calls (which only fail
 * on misuse or resource exhaustion) are handled in one place: mutex and
 * condition operations cannot fail once initialised; creation can
 * (FLOE_ENOMEM).
 *
 * Thread-safety: these are the primitives.
 */
#ifndef FLOE_UTIL_THREAD_H
#define FLOE_UTIL_THREAD_H

#include <pthread.h>

#include "floe/common.h"

typedef struct floe_mutex {
	pthread_mutex_t m;
} floe_mutex;

typedef struct floe_cond {
	pthread_cond_t c;
} floe_cond;

typedef struct floe_thread {
	pthread_t t;
	bool started;
} floe_thread;

int floe_mutex_init(floe_mutex *m) FLOE_WUR;
void floe_mutex_destroy(floe_mutex *m);
void floe_mutex_lock(floe_mutex *m);
void floe_mutex_unlock(floe_mutex *m);

int floe_cond_init(floe_cond *c) FLOE_WUR; /* waits use CLOCK_MONOTONIC */
void floe_cond_destroy(floe_cond *c);
void floe_cond_wait(floe_cond *c, floe_mutex *m);
/* Wait at most timeout_ms; returns false on timeout. */
bool floe_cond_timedwait(floe_cond *c, floe_mutex *m, int64_t timeout_ms);
void floe_cond_signal(floe_cond *c);
void floe_cond_broadcast(floe_cond *c);

typedef void *(*floe_thread_fn)(void *arg);
/* Start a thread (name, at most 15 bytes, shows in ps/top; may be NULL). */
int floe_thread_start(floe_thread *t, const char *name, floe_thread_fn fn, void *arg) FLOE_WUR;
/* Join a started thread; no-op for one that never started. */
void floe_thread_join(floe_thread *t);

/* Sleep for ms milliseconds (restarts after signals). */
void floe_sleep_ms(int64_t ms);
/* Online processors (at least 1). */
int floe_cpu_count(void);

#endif
