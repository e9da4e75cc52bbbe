/*
 * codec.h — thin adapters over the compression libraries (zstd, snappy,
 * libdeflate, lz4, brotli) with one calling convention and bounded output.
 */
#ifndef FLOE_CODEC_H
#define FLOE_CODEC_H

#include "floe/common.h"
#include "util/buf.h"

typedef enum floe_codec {
	FLOE_CODEC_NONE = 0,
	FLOE_CODEC_SNAPPY,      /* raw snappy block */
	FLOE_CODEC_GZIP,        /* gzip member(s) (RFC 1952) */
	FLOE_CODEC_DEFLATE,     /* raw deflate (RFC 1951), Avro "deflate" */
	FLOE_CODEC_ZLIB,        /* zlib wrapper (RFC 1950) */
	FLOE_CODEC_ZSTD,        /* zstd frame(s) */
	FLOE_CODEC_LZ4_RAW,     /* lz4 block, no framing (Parquet LZ4_RAW) */
	FLOE_CODEC_LZ4_HADOOP,  /* Parquet's deprecated LZ4: Hadoop framing, or raw */
	FLOE_CODEC_LZ4_FRAME,   /* lz4 frame format (Puffin) */
	FLOE_CODEC_BROTLI,
} floe_codec;

const char *floe_codec_name(floe_codec c);

/* Append the compressed form of src to out. level <= 0 means the default. */
int floe_codec_compress(floe_codec c, int level, const uint8_t *src, size_t n, floe_buf *out,
			floe_error *err) FLOE_WUR;

/*
 * Decompress src into exactly dst_len bytes at dst (sizes known up front, as
 * in Parquet pages). A size mismatch is FLOE_ECORRUPT.
 */
int floe_codec_decompress(floe_codec c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
			  floe_error *err) FLOE_WUR;

/*
 * Decompress src when the output size is not known (Avro blocks, gzip
 * metadata); appends to out, failing with FLOE_ECORRUPT past max_out bytes.
 */
int floe_codec_decompress_any(floe_codec c, const uint8_t *src, size_t n, floe_buf *out,
			      size_t max_out, floe_error *err) FLOE_WUR;

/* Free this thread's cached codec contexts now (they are also freed when the
 * thread exits). */
void floe_codec_thread_cleanup(void);

#endif
