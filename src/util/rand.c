/*
 * rand.c — kernel randomness and UUIDs.
 */
#define _GNU_SOURCE
#include "util/rand.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void floe_random_bytes(void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = getrandom(p, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += r;
		n -= (size_t)r;
	}
	if (n > 0) {
		/* No getrandom: mix the clock into a splitmix sequence. Never reached
		 * on supported kernels; kept so a UUID is never all zeros. */
		struct timespec ts;
		uint64_t x;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)getpid();
		while (n--) {
			x += 0x9e3779b97f4a7c15ULL;
			uint64_t z = x;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			*p++ = (uint8_t)(z ^ (z >> 31));
		}
	}
}

uint64_t floe_random_u64(void)
{
	uint64_t v;
	floe_random_bytes(&v, sizeof(v));
	return v;
}

void floe_uuid_v4(uint8_t out[16])
{
	floe_random_bytes(out, 16);
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);
}

void floe_uuid_format(const uint8_t u[16], char out[37])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool floe_uuid_parse(const char *s, size_t n, uint8_t out[16])
{
	size_t i = 0;
	int b = 0;
	if (n != 36)
		return false;
	while (i < n) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return false;
			i++;
			continue;
		}
		int hi = hexval(s[i]), lo = hexval(s[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[b++] = (uint8_t)(hi << 4 | lo);
		i += 2;
	}
	return b == 16;
}

void floe_uuid_v4_str(char out[37])
{
	uint8_t u[16];
	floe_uuid_v4(u);
	floe_uuid_format(u, out);
}
