/*
 * rand.h — random numbers from the kernel, UUIDs.
 */
#ifndef FLOE_UTIL_RAND_H
#define FLOE_UTIL_RAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Fill buf with cryptographically random bytes (getrandom, then a fallback). */
void floe_random_bytes(void *buf, size_t n);
uint64_t floe_random_u64(void);

/* RFC 4122 version-4 UUID, 16 bytes in big-endian (textual) order. */
void floe_uuid_v4(uint8_t out[16]);
/* Lower-case canonical form, 36 chars + NUL. */
void floe_uuid_format(const uint8_t u[16], char out[37]);
/* Parse the canonical form (case-insensitive); false when malformed. */
bool floe_uuid_parse(const char *s, size_t n, uint8_t out[16]);
/* Convenience: a fresh v4 UUID as text. */
void floe_uuid_v4_str(char out[37]);

#endif
