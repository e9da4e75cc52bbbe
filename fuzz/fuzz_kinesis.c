/*
 * fuzz_kinesis.c — what the Kinesis source reads from the network and from
 * disk: GetRecords answers (the first byte picks max-record-size) and AWS
 * error bodies (the credential documents are io/aws.c's, shared with S3 and
 * Glue). Every parsed record must lie inside the reply's data.
 */
#include <stdlib.h>
#include <string.h>

#include "stream/stream_aws.h"
#include "stream/stream_kinesis.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t max = (size_t)(data[0] & 15) * 16 + 1;
	const char *p = (const char *)data + 1;
	size_t n = size - 1;
	stream_kinesis_reply r;
	stream_kinesis_reply_init(&r);
	if (!stream_kinesis_parse_records(&r, p, n, max, NULL)) {
		for (size_t i = 0; i < r.n; i++) {
			const stream_msg *m = &r.msgs[i];
			if ((size_t)m->val_off + m->val_len > r.data.len ||
			    (size_t)m->key_off + m->key_len > r.data.len ||
			    (size_t)m->seq_off + m->seq_len > r.data.len || m->seq_len == 0 ||
			    (m->val_len > max && !(m->flags & STREAM_MSG_OVERSIZE)))
				abort();
		}
	}
	stream_kinesis_reply_reset(&r);
	char t[64], msg[128];
	stream_aws_error_of((const uint8_t *)p, n, t, sizeof(t), msg, sizeof(msg));
	return 0;
}
