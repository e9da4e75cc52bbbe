/*
 * sigv4.c — AWS Signature Version 4 over OpenSSL's SHA-256 and HMAC.
 *
 * spec (AWS "Create a signed AWS API request"): canonical request =
 *   method \n canonical URI \n canonical query \n canonical headers \n
 *   signed headers \n payload hash;
 * string to sign = "AWS4-HMAC-SHA256" \n amz-date \n scope \n hex(sha256(creq));
 * key = HMAC chain over "AWS4"+secret, date, region, service, "aws4_request".
 */
#include "io/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>
#include <time.h>

#include "util/alloc.h"
#include "util/str.h"

#define MAX_SIGNED 64
#define MAX_QUERY 256

void floe_sha256(uint8_t out[32], const void *p, size_t n)
{
	unsigned int len = 32;
	if (!EVP_Digest(p, n, out, &len, EVP_sha256(), NULL))
		memset(out, 0, 32);
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	static const char H[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = H[p[i] >> 4];
		out[2 * i + 1] = H[p[i] & 15];
	}
	out[2 * n] = 0;
}

void floe_sha256_hex(char out[65], const void *p, size_t n)
{
	uint8_t d[32];
	floe_sha256(d, p, n);
	hex(out, d, 32);
}

void floe_hmac_sha256(uint8_t out[32], const void *key, size_t key_len, const void *p, size_t n)
{
	unsigned int len = 32;
	if (!HMAC(EVP_sha256(), key, (int)key_len, p, n, out, &len))
		memset(out, 0, 32);
}

void floe_amz_date(char out[17], int64_t epoch_s)
{
	time_t t = (time_t)epoch_s;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

int floe_aws_uri_encode(floe_buf *out, const char *s, size_t n, bool keep_slash)
{
	static const char H[] = "0123456789ABCDEF";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int rc;
		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '_' || c == '.' || c == '~' || (keep_slash && c == '/'))
			rc = floe_buf_putc(out, (char)c);
		else {
			char t[3] = {'%', H[c >> 4], H[c & 15]};
			rc = floe_buf_append(out, t, 3);
		}
		if (rc)
			return rc;
	}
	return FLOE_OK;
}

typedef struct span {
	const char *p;
	size_t n;
} span;

typedef struct qparam {
	span key, value;
} qparam;

static int span_cmp(span a, span b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = memcmp(a.p, b.p, n);
	return c ? c : (a.n < b.n ? -1 : a.n > b.n ? 1 : 0);
}

typedef struct hdr {
	char name[128];
	const char *value;
	size_t value_len;
} hdr;

/* lower-cased name; the value trimmed (inner runs of spaces collapse when written) */
static int put_value(floe_buf *out, const char *v, size_t n)
{
	size_t i = 0;
	bool space = false, any = false;
	while (i < n && (v[i] == ' ' || v[i] == '\t'))
		i++;
	for (; i < n; i++) {
		if (v[i] == ' ' || v[i] == '\t') {
			space = true;
			continue;
		}
		if (space && any && floe_buf_putc(out, ' '))
			return FLOE_ENOMEM;
		space = false;
		any = true;
		if (floe_buf_putc(out, v[i]))
			return FLOE_ENOMEM;
	}
	return FLOE_OK;
}

int floe_sigv4_canonical(floe_buf *out, floe_buf *signed_headers, const floe_sigv4_req *r,
			 floe_error *err)
{
	hdr h[MAX_SIGNED];
	qparam q[MAX_QUERY];
	size_t nh = 0, nq = 0;
	floe_buf own;
	floe_buf_init(&own, 1 << 16);
	if (!signed_headers)
		signed_headers = &own;
	const char *path = r->path && *r->path ? r->path : "/";
	int rc = 0;

	if (r->n_headers > MAX_SIGNED)
		return floe_error_set(err, FLOE_EINVAL, "sigv4: %zu headers to sign (at most %d)",
				      r->n_headers, MAX_SIGNED);
	for (size_t i = 0; i < r->n_headers; i++) {
		const char *nm = r->headers[i].name, *v = r->headers[i].value ? r->headers[i].value : "";
		size_t len = strlen(nm);
		if (len == 0 || len >= sizeof(h[0].name))
			return floe_error_set(err, FLOE_EINVAL, "sigv4: bad header name");
		if (strchr(v, '\n') || strchr(v, '\r'))
			return floe_error_set(err, FLOE_EINVAL, "sigv4: header '%s' has a line break",
					      nm);
		hdr x;
		for (size_t k = 0; k <= len; k++)
			x.name[k] = nm[k] >= 'A' && nm[k] <= 'Z' ? (char)(nm[k] + 32) : nm[k];
		x.value = v;
		x.value_len = strlen(v);
		/* insertion sort by name, stable for repeated names */
		size_t at = nh;
		while (at > 0 && strcmp(h[at - 1].name, x.name) > 0) {
			h[at] = h[at - 1];
			at--;
		}
		h[at] = x;
		nh++;
	}
	const char *qs = r->query ? r->query : "";
	while (*qs) {
		const char *amp = strchr(qs, '&');
		size_t len = amp ? (size_t)(amp - qs) : strlen(qs);
		if (len) {
			if (nq == MAX_QUERY)
				return floe_error_set(err, FLOE_EINVAL, "sigv4: too many query parameters");
			const char *eq = memchr(qs, '=', len);
			qparam x;
			x.key.p = qs;
			x.key.n = eq ? (size_t)(eq - qs) : len;
			x.value.p = eq ? eq + 1 : "";
			x.value.n = eq ? len - x.key.n - 1 : 0;
			size_t at = nq;
			while (at > 0 && (span_cmp(q[at - 1].key, x.key) > 0 ||
					  (span_cmp(q[at - 1].key, x.key) == 0 &&
					   span_cmp(q[at - 1].value, x.value) > 0))) {
				q[at] = q[at - 1];
				at--;
			}
			q[at] = x;
			nq++;
		}
		qs += len + (amp ? 1 : 0);
	}

	rc |= floe_buf_puts(out, r->method);
	rc |= floe_buf_putc(out, '\n');
	if (r->s3)
		rc |= floe_buf_puts(out, path);
	else
		rc |= floe_aws_uri_encode(out, path, strlen(path), true);
	rc |= floe_buf_putc(out, '\n');
	for (size_t i = 0; i < nq; i++) {
		if (i)
			rc |= floe_buf_putc(out, '&');
		rc |= floe_buf_append(out, q[i].key.p, q[i].key.n);
		rc |= floe_buf_putc(out, '=');
		rc |= floe_buf_append(out, q[i].value.p, q[i].value.n);
	}
	rc |= floe_buf_putc(out, '\n');
	for (size_t i = 0; i < nh; i++) {
		if (i && strcmp(h[i - 1].name, h[i].name) == 0) {
			rc |= floe_buf_putc(out, ',');
		} else {
			if (i)
				rc |= floe_buf_putc(out, '\n');
			rc |= floe_buf_puts(out, h[i].name);
			rc |= floe_buf_putc(out, ':');
			if (signed_headers->len)
				rc |= floe_buf_putc(signed_headers, ';');
			rc |= floe_buf_puts(signed_headers, h[i].name);
		}
		rc |= put_value(out, h[i].value, h[i].value_len);
	}
	rc |= floe_buf_puts(out, nh ? "\n\n" : "\n");
	rc |= floe_buf_append(out, signed_headers->data ? (const char *)signed_headers->data : "",
			      signed_headers->len);
	rc |= floe_buf_putc(out, '\n');
	rc |= floe_buf_puts(out, r->payload_hash ? r->payload_hash : "UNSIGNED-PAYLOAD");
	floe_buf_reset(&own);
	if (rc)
		return floe_error_oom(err);
	return FLOE_OK;
}

int floe_sigv4_sign(floe_buf *out, const floe_sigv4_req *r, const char *access_key,
		    const char *secret_key, floe_error *err)
{
	floe_buf creq, sh, sts, key;
	char date[9], creq_hash[65], sig[65];
	uint8_t k[32], k2[32];
	int rc;
	if (!r->region || !*r->region || !r->service || !*r->service)
		return floe_error_set(err, FLOE_EINVAL, "sigv4: a request needs a region and a service");
	if (!r->amz_date || strlen(r->amz_date) != 16)
		return floe_error_set(err, FLOE_EINVAL, "sigv4: bad x-amz-date");
	if (!access_key || !secret_key)
		return floe_error_set(err, FLOE_EINVAL, "sigv4: no credentials");
	memcpy(date, r->amz_date, 8);
	date[8] = 0;
	floe_buf_init(&creq, 1 << 20);
	floe_buf_init(&sh, 1 << 16);
	floe_buf_init(&sts, 1 << 16);
	floe_buf_init(&key, 1 << 12);
	if ((rc = floe_sigv4_canonical(&creq, &sh, r, err)))
		goto done;
	floe_sha256_hex(creq_hash, creq.data, creq.len);
	if (floe_buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", r->amz_date, date,
			    r->region, r->service, creq_hash) ||
	    floe_buf_printf(&key, "AWS4%s", secret_key)) {
		rc = floe_error_oom(err);
		goto done;
	}
	floe_hmac_sha256(k, key.data, key.len, date, strlen(date));
	floe_hmac_sha256(k2, k, 32, r->region, strlen(r->region));
	floe_hmac_sha256(k, k2, 32, r->service, strlen(r->service));
	floe_hmac_sha256(k2, k, 32, "aws4_request", 12);
	floe_hmac_sha256(k, k2, 32, sts.data, sts.len);
	hex(sig, k, 32);
	if (floe_buf_printf(out,
			    "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
			    "Signature=%s",
			    access_key, date, r->region, r->service, floe_buf_cstr(&sh), sig))
		rc = floe_error_oom(err);
done:
	/* the derived key and the secret copy do not outlive the call */
	if (key.data)
		memset(key.data, 0, key.len);
	memset(k, 0, sizeof(k));
	memset(k2, 0, sizeof(k2));
	floe_buf_reset(&creq);
	floe_buf_reset(&sh);
	floe_buf_reset(&sts);
	floe_buf_reset(&key);
	return rc;
}
