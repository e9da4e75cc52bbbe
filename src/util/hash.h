/*
 * hash.h — checksums and hashes: murmur3_x86_32 (Iceberg bucket transform),
 * CRC-32C (Parquet page CRC is CRC-32; some formats use CRC-32C), CRC-32
 * (IEEE, zlib's; Avro snappy blocks and deletion vectors), and a fast 64-bit
 * hash for in-memory tables.
 */
#ifndef FLOE_UTIL_HASH_H
#define FLOE_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

/* MurmurHash3 x86 32-bit. Iceberg reads the result as a signed int32. */
uint32_t floe_murmur3_32(const void *data, size_t len, uint32_t seed);

/* CRC-32C (Castagnoli). Pass 0 as the initial crc; chainable. */
uint32_t floe_crc32c(uint32_t crc, const void *data, size_t len);

/* CRC-32 (IEEE 802.3, as zlib's crc32). Pass 0 initially; chainable. */
uint32_t floe_crc32(uint32_t crc, const void *data, size_t len);

/* 64-bit hash for hash tables (not stable across versions; not for files). */
uint64_t floe_hash64(const void *data, size_t len);

static inline uint64_t floe_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
