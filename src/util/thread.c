/*
 * thread.c — the pthread shim.
 */
#include "util/thread.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int floe_mutex_init(floe_mutex *m)
{
	return pthread_mutex_init(&m->m, NULL) ? FLOE_ENOMEM : FLOE_OK;
}

void floe_mutex_destroy(floe_mutex *m)
{
	pthread_mutex_destroy(&m->m);
}

void floe_mutex_lock(floe_mutex *m)
{
	pthread_mutex_lock(&m->m);
}

void floe_mutex_unlock(floe_mutex *m)
{
	pthread_mutex_unlock(&m->m);
}

int floe_cond_init(floe_cond *c)
{
	pthread_condattr_t attr;
	int rc;
	if (pthread_condattr_init(&attr))
		return FLOE_ENOMEM;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&c->c, &attr);
	pthread_condattr_destroy(&attr);
	return rc ? FLOE_ENOMEM : FLOE_OK;
}

void floe_cond_destroy(floe_cond *c)
{
	pthread_cond_destroy(&c->c);
}

void floe_cond_wait(floe_cond *c, floe_mutex *m)
{
	pthread_cond_wait(&c->c, &m->m);
}

bool floe_cond_timedwait(floe_cond *c, floe_mutex *m, int64_t timeout_ms)
{
	struct timespec ts;
	if (timeout_ms < 0)
		timeout_ms = 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(timeout_ms / 1000);
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_cond_timedwait(&c->c, &m->m, &ts) != ETIMEDOUT;
}

void floe_cond_signal(floe_cond *c)
{
	pthread_cond_signal(&c->c);
}

void floe_cond_broadcast(floe_cond *c)
{
	pthread_cond_broadcast(&c->c);
}

int floe_thread_start(floe_thread *t, const char *name, floe_thread_fn fn, void *arg)
{
	t->started = false;
	if (pthread_create(&t->t, NULL, fn, arg))
		return FLOE_ENOMEM;
	t->started = true;
#if defined(__linux__) && defined(_GNU_SOURCE)
	if (name)
		pthread_setname_np(t->t, name);
#else
	(void)name;
#endif
	return FLOE_OK;
}

void floe_thread_join(floe_thread *t)
{
	if (t && t->started) {
		pthread_join(t->t, NULL);
		t->started = false;
	}
}

void floe_sleep_ms(int64_t ms)
{
	struct timespec ts;
	if (ms <= 0)
		return;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int floe_cpu_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (int)n;
}
