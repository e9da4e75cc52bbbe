/*
 * codec.c — compression adapters.
 */
#include "codec/codec.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <libdeflate.h>
#include <lz4.h>
#include <pthread.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <string.h>
#include <zstd.h>

#include "util/alloc.h"
#include "util/cursor.h"

const char *floe_codec_name(floe_codec c)
{
	switch (c) {
	case FLOE_CODEC_NONE: return "uncompressed";
	case FLOE_CODEC_SNAPPY: return "snappy";
	case FLOE_CODEC_GZIP: return "gzip";
	case FLOE_CODEC_DEFLATE: return "deflate";
	case FLOE_CODEC_ZLIB: return "zlib";
	case FLOE_CODEC_ZSTD: return "zstd";
	case FLOE_CODEC_LZ4_RAW: return "lz4_raw";
	case FLOE_CODEC_LZ4_HADOOP: return "lz4";
	case FLOE_CODEC_LZ4_FRAME: return "lz4_frame";
	case FLOE_CODEC_BROTLI: return "brotli";
	}
	return "unknown";
}

/*
 * libdeflate and zstd contexts are costly to create: keep them per thread,
 * in a pthread key whose destructor frees them when the thread exits (a
 * _Thread_local pointer would leak them with every writer thread).
 */
typedef struct codec_tls {
	struct libdeflate_compressor *deflate[13];
	struct libdeflate_decompressor *inflate;
	ZSTD_CCtx *zc;
	ZSTD_DCtx *zd;
} codec_tls;

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void tls_free(void *p)
{
	codec_tls *t = p;
	if (!t)
		return;
	for (int i = 0; i < 13; i++)
		if (t->deflate[i])
			libdeflate_free_compressor(t->deflate[i]);
	if (t->inflate)
		libdeflate_free_decompressor(t->inflate);
	ZSTD_freeCCtx(t->zc);
	ZSTD_freeDCtx(t->zd);
	floe_free(t);
}

static void tls_init(void)
{
	pthread_key_create(&tls_key, tls_free);
}

static codec_tls *tls(void)
{
	codec_tls *t;
	pthread_once(&tls_once, tls_init);
	t = pthread_getspecific(tls_key);
	if (!t) {
		t = floe_calloc(1, sizeof(*t));
		if (t && pthread_setspecific(tls_key, t) != 0) {
			floe_free(t);
			t = NULL;
		}
	}
	return t;
}

void floe_codec_thread_cleanup(void)
{
	codec_tls *t;
	pthread_once(&tls_once, tls_init);
	t = pthread_getspecific(tls_key);
	if (t) {
		pthread_setspecific(tls_key, NULL);
		tls_free(t);
	}
}

static struct libdeflate_compressor *deflate_for(int level)
{
	codec_tls *t = tls();
	if (level <= 0 || level > 12)
		level = 6;
	if (!t)
		return NULL;
	if (!t->deflate[level])
		t->deflate[level] = libdeflate_alloc_compressor(level);
	return t->deflate[level];
}

static struct libdeflate_decompressor *inflater(void)
{
	codec_tls *t = tls();
	if (!t)
		return NULL;
	if (!t->inflate)
		t->inflate = libdeflate_alloc_decompressor();
	return t->inflate;
}

static ZSTD_CCtx *zstd_cctx(void)
{
	codec_tls *t = tls();
	if (t && !t->zc)
		t->zc = ZSTD_createCCtx();
	return t ? t->zc : NULL;
}

static ZSTD_DCtx *zstd_dctx(void)
{
	codec_tls *t = tls();
	if (t && !t->zd)
		t->zd = ZSTD_createDCtx();
	return t ? t->zd : NULL;
}

int floe_codec_compress(floe_codec c, int level, const uint8_t *src, size_t n, floe_buf *out,
			floe_error *err)
{
	size_t bound = 0, got = 0;
	uint8_t *dst;
	size_t start = out->len;

	switch (c) {
	case FLOE_CODEC_NONE:
		if (floe_buf_append(out, src, n))
			return floe_error_oom(err);
		return FLOE_OK;
	case FLOE_CODEC_SNAPPY: bound = snappy_max_compressed_length(n); break;
	case FLOE_CODEC_GZIP:
	case FLOE_CODEC_DEFLATE:
	case FLOE_CODEC_ZLIB: {
		struct libdeflate_compressor *z = deflate_for(level);
		if (!z)
			return floe_error_oom(err);
		bound = c == FLOE_CODEC_GZIP	  ? libdeflate_gzip_compress_bound(z, n)
			: c == FLOE_CODEC_ZLIB ? libdeflate_zlib_compress_bound(z, n)
					       : libdeflate_deflate_compress_bound(z, n);
		break;
	}
	case FLOE_CODEC_ZSTD: bound = ZSTD_compressBound(n); break;
	case FLOE_CODEC_LZ4_RAW:
		if (n > LZ4_MAX_INPUT_SIZE)
			return floe_error_set(err, FLOE_EINVAL, "lz4: input too large");
		bound = (size_t)LZ4_compressBound((int)n);
		break;
	case FLOE_CODEC_LZ4_FRAME: bound = LZ4F_compressFrameBound(n, NULL); break;
	case FLOE_CODEC_BROTLI: bound = BrotliEncoderMaxCompressedSize(n); break;
	case FLOE_CODEC_LZ4_HADOOP:
		return floe_error_set(err, FLOE_EUNSUPPORTED,
				      "writing the deprecated Hadoop LZ4 codec is not supported");
	}
	if (bound == 0 && n > 0)
		return floe_error_set(err, FLOE_EINVAL, "%s: input too large", floe_codec_name(c));
	/* reserve, not extend: zeroing the whole bound would touch (and fault
	 * in) up to several times the memory the compressed data needs */
	if (floe_buf_reserve(out, bound))
		return floe_error_oom(err);
	dst = out->data + start;

	switch (c) {
	case FLOE_CODEC_SNAPPY:
		got = bound;
		if (snappy_compress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK)
			goto fail;
		break;
	case FLOE_CODEC_GZIP: got = libdeflate_gzip_compress(deflate_for(level), src, n, dst, bound); break;
	case FLOE_CODEC_ZLIB: got = libdeflate_zlib_compress(deflate_for(level), src, n, dst, bound); break;
	case FLOE_CODEC_DEFLATE:
		got = libdeflate_deflate_compress(deflate_for(level), src, n, dst, bound);
		break;
	case FLOE_CODEC_ZSTD:
		if (!zstd_cctx())
			goto fail;
		got = ZSTD_compressCCtx(zstd_cctx(), dst, bound, src, n, level > 0 ? level : 3);
		if (ZSTD_isError(got))
			goto fail;
		break;
	case FLOE_CODEC_LZ4_RAW: {
		int r = LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)bound);
		if (r <= 0)
			goto fail;
		got = (size_t)r;
		break;
	}
	case FLOE_CODEC_LZ4_FRAME: {
		LZ4F_preferences_t prefs;
		memset(&prefs, 0, sizeof(prefs));
		prefs.frameInfo.contentSize = n;
		got = LZ4F_compressFrame(dst, bound, src, n, &prefs);
		if (LZ4F_isError(got))
			goto fail;
		break;
	}
	case FLOE_CODEC_BROTLI:
		got = bound;
		if (!BrotliEncoderCompress(level > 0 ? level : 4, BROTLI_DEFAULT_WINDOW,
					   BROTLI_MODE_GENERIC, n, src, &got, dst))
			goto fail;
		break;
	default: goto fail;
	}
	if (got == 0 && n > 0 && c != FLOE_CODEC_SNAPPY)
		goto fail;
	out->len = start + got;
	out->data[out->len] = 0;
	return FLOE_OK;
fail:
	out->len = start;
	return floe_error_set(err, FLOE_EIO, "%s: compression failed", floe_codec_name(c));
}

static int corrupt(floe_error *err, floe_codec c, const char *what)
{
	return floe_error_corrupt(err, "%s: %s", floe_codec_name(c), what);
}

/* Parquet's deprecated LZ4 codec: Hadoop block framing (BE u32 decompressed
 * size, BE u32 compressed size, block...), or — from some writers — a raw
 * lz4 block. Try the framing first, like Arrow does. */
static int lz4_hadoop(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len)
{
	size_t in = 0, outp = 0;
	while (n - in >= 8) {
		uint32_t dsize = floe_load_u32be(src + in), csize = floe_load_u32be(src + in + 4);
		in += 8;
		if (csize > n - in || dsize > dst_len - outp)
			return -1;
		int r = LZ4_decompress_safe((const char *)src + in, (char *)dst + outp, (int)csize,
					    (int)dsize);
		if (r < 0 || (uint32_t)r != dsize)
			return -1;
		in += csize;
		outp += dsize;
	}
	return in == n && outp == dst_len ? 0 : -1;
}

int floe_codec_decompress(floe_codec c, const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len,
			  floe_error *err)
{
	size_t got = 0;
	switch (c) {
	case FLOE_CODEC_NONE:
		if (n != dst_len)
			return corrupt(err, c, "size mismatch");
		memcpy(dst, src, n);
		return FLOE_OK;
	case FLOE_CODEC_SNAPPY: {
		size_t ulen;
		if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK ||
		    ulen != dst_len)
			return corrupt(err, c, "bad block header or size mismatch");
		got = dst_len;
		if (snappy_uncompress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK)
			return corrupt(err, c, "corrupt block");
		break;
	}
	case FLOE_CODEC_GZIP:
	case FLOE_CODEC_DEFLATE:
	case FLOE_CODEC_ZLIB: {
		struct libdeflate_decompressor *d = inflater();
		enum libdeflate_result r;
		if (!d)
			return floe_error_oom(err);
		if (c == FLOE_CODEC_GZIP) {
			/* Hadoop's gzip codec may concatenate members. */
			size_t in_used = 0, off_in = 0, off_out = 0;
			while (off_in < n) {
				size_t out_got = 0;
				r = libdeflate_gzip_decompress_ex(d, src + off_in, n - off_in,
								  dst + off_out, dst_len - off_out,
								  &in_used, &out_got);
				if (r != LIBDEFLATE_SUCCESS)
					return corrupt(err, c, "corrupt stream");
				off_in += in_used;
				off_out += out_got;
				if (off_out == dst_len)
					break;
			}
			got = off_out;
		} else if (c == FLOE_CODEC_ZLIB) {
			r = libdeflate_zlib_decompress(d, src, n, dst, dst_len, &got);
			if (r != LIBDEFLATE_SUCCESS)
				return corrupt(err, c, "corrupt stream");
		} else {
			r = libdeflate_deflate_decompress(d, src, n, dst, dst_len, &got);
			if (r != LIBDEFLATE_SUCCESS)
				return corrupt(err, c, "corrupt stream");
		}
		break;
	}
	case FLOE_CODEC_ZSTD:
		if (!zstd_dctx())
			return floe_error_oom(err);
		got = ZSTD_decompressDCtx(zstd_dctx(), dst, dst_len, src, n);
		if (ZSTD_isError(got))
			return corrupt(err, c, ZSTD_getErrorName(got));
		break;
	case FLOE_CODEC_LZ4_RAW: {
		if (n > INT32_MAX || dst_len > INT32_MAX)
			return corrupt(err, c, "block too large");
		int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dst_len);
		if (r < 0)
			return corrupt(err, c, "corrupt block");
		got = (size_t)r;
		break;
	}
	case FLOE_CODEC_LZ4_HADOOP:
		if (lz4_hadoop(src, n, dst, dst_len) == 0)
			return FLOE_OK;
		if (n <= INT32_MAX && dst_len <= INT32_MAX) {
			int r = LZ4_decompress_safe((const char *)src, (char *)dst, (int)n, (int)dst_len);
			if (r >= 0 && (size_t)r == dst_len)
				return FLOE_OK;
		}
		return corrupt(err, c, "corrupt block");
	case FLOE_CODEC_LZ4_FRAME: {
		floe_buf b;
		int rc;
		floe_buf_init(&b, dst_len);
		rc = floe_codec_decompress_any(c, src, n, &b, dst_len, err);
		if (rc == 0 && b.len != dst_len)
			rc = corrupt(err, c, "size mismatch");
		if (rc == 0)
			memcpy(dst, b.data, dst_len);
		floe_buf_reset(&b);
		return rc;
	}
	case FLOE_CODEC_BROTLI:
		got = dst_len;
		if (BrotliDecoderDecompress(n, src, &got, dst) != BROTLI_DECODER_RESULT_SUCCESS)
			return corrupt(err, c, "corrupt stream");
		break;
	}
	if (got != dst_len)
		return corrupt(err, c, "decompressed size mismatch");
	return FLOE_OK;
}

int floe_codec_decompress_any(floe_codec c, const uint8_t *src, size_t n, floe_buf *out,
			      size_t max_out, floe_error *err)
{
	size_t start = out->len;
	switch (c) {
	case FLOE_CODEC_NONE:
		if (n > max_out || floe_buf_append(out, src, n))
			return corrupt(err, c, "output too large");
		return FLOE_OK;
	case FLOE_CODEC_SNAPPY: {
		size_t ulen;
		uint8_t *dst;
		if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK)
			return corrupt(err, c, "bad block header");
		if (ulen > max_out)
			return corrupt(err, c, "output too large");
		if (!(dst = floe_buf_extend(out, ulen)))
			return floe_error_oom(err);
		if (snappy_uncompress((const char *)src, n, (char *)dst, &ulen) != SNAPPY_OK) {
			out->len = start;
			return corrupt(err, c, "corrupt block");
		}
		return FLOE_OK;
	}
	case FLOE_CODEC_ZSTD: {
		ZSTD_DStream *ds = ZSTD_createDStream();
		ZSTD_inBuffer in = {src, n, 0};
		int rc = FLOE_OK;
		if (!ds)
			return floe_error_oom(err);
		ZSTD_initDStream(ds);
		for (;;) {
			uint8_t tmp[65536];
			ZSTD_outBuffer o = {tmp, sizeof(tmp), 0};
			size_t r = ZSTD_decompressStream(ds, &o, &in);
			if (ZSTD_isError(r)) {
				rc = corrupt(err, c, ZSTD_getErrorName(r));
				break;
			}
			if (out->len - start + o.pos > max_out) {
				rc = corrupt(err, c, "output too large");
				break;
			}
			if (floe_buf_append(out, tmp, o.pos)) {
				rc = floe_error_oom(err);
				break;
			}
			/* r == 0: the frame is decoded and flushed; with the input
			 * used up that is the end, even when the output filled tmp
			 * exactly (asking again would wait for another frame) */
			if (r == 0 && in.pos == in.size)
				break;
			if (in.pos == in.size && o.pos < o.size) {
				if (r != 0)
					rc = corrupt(err, c, "truncated frame");
				break;
			}
		}
		ZSTD_freeDStream(ds);
		if (rc)
			out->len = start;
		return rc;
	}
	case FLOE_CODEC_LZ4_FRAME: {
		LZ4F_dctx *dctx;
		size_t in_off = 0;
		int rc = FLOE_OK;
		if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
			return floe_error_oom(err);
		while (in_off < n) {
			uint8_t tmp[65536];
			size_t osz = sizeof(tmp), isz = n - in_off;
			size_t r = LZ4F_decompress(dctx, tmp, &osz, src + in_off, &isz, NULL);
			if (LZ4F_isError(r)) {
				rc = corrupt(err, c, LZ4F_getErrorName(r));
				break;
			}
			in_off += isz;
			if (out->len - start + osz > max_out) {
				rc = corrupt(err, c, "output too large");
				break;
			}
			if (floe_buf_append(out, tmp, osz)) {
				rc = floe_error_oom(err);
				break;
			}
			if (r == 0)
				break;
			if (isz == 0 && osz == 0) {
				rc = corrupt(err, c, "truncated frame");
				break;
			}
		}
		LZ4F_freeDecompressionContext(dctx);
		if (rc)
			out->len = start;
		return rc;
	}
	default: break;
	}
	/* deflate family and others: grow the output until it fits. The first
	 * guess is the room the buffer already has when that is more (a reused
	 * block buffer); the room is not cleared, the codec writes it. */
	size_t guess = n * 4 + 1024;
	if (out->cap > out->len + 1 && out->cap - out->len - 1 > guess)
		guess = out->cap - out->len - 1;
	for (;;) {
		if (guess > max_out)
			guess = max_out;
		uint8_t *dst = floe_buf_reserve(out, guess) ? NULL : out->data + start;
		size_t got = 0;
		enum libdeflate_result r;
		struct libdeflate_decompressor *d;
		if (!dst)
			return floe_error_oom(err);
		if (c == FLOE_CODEC_BROTLI) {
			size_t o = guess;
			BrotliDecoderResult br = BrotliDecoderDecompress(n, src, &o, dst);
			if (br == BROTLI_DECODER_RESULT_SUCCESS) {
				out->len = start + o;
				out->data[out->len] = 0;
				return FLOE_OK;
			}
			r = LIBDEFLATE_INSUFFICIENT_SPACE;
			out->len = start;
			if (guess >= max_out)
				return corrupt(err, c, "corrupt stream or output too large");
			guess *= 2;
			continue;
		}
		if (c == FLOE_CODEC_LZ4_RAW || c == FLOE_CODEC_LZ4_HADOOP) {
			out->len = start;
			return floe_error_set(err, FLOE_EINVAL, "%s needs a known output size",
					      floe_codec_name(c));
		}
		d = inflater();
		if (!d)
			return floe_error_oom(err);
		if (c == FLOE_CODEC_GZIP)
			r = libdeflate_gzip_decompress(d, src, n, dst, guess, &got);
		else if (c == FLOE_CODEC_ZLIB)
			r = libdeflate_zlib_decompress(d, src, n, dst, guess, &got);
		else
			r = libdeflate_deflate_decompress(d, src, n, dst, guess, &got);
		if (r == LIBDEFLATE_SUCCESS) {
			out->len = start + got;
			out->data[out->len] = 0;
			return FLOE_OK;
		}
		out->len = start;
		if (r != LIBDEFLATE_INSUFFICIENT_SPACE)
			return corrupt(err, c, "corrupt stream");
		if (guess >= max_out)
			return corrupt(err, c, "output too large");
		guess *= 2;
	}
}
