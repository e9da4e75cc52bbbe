/*
 * fuzz_puffin_footer.c — the Puffin footer parser and blob reader on
 * arbitrary bytes taken as a whole file: whatever parses must name blobs that
 * lie inside the file, and reading each blob must succeed or fail cleanly.
 */
#include <stdlib.h>
#include <string.h>

#include "puffin/puffin_dv.h"
#include "puffin/puffin_file.h"
#include "util/alloc.h"

const char *const *floe_fuzz_seeds(void);
const char *const *floe_fuzz_seeds(void)
{
	static const char *const seeds[] = {
		"apache-iceberg/core/src/test/resources/org/apache/iceberg/puffin",
		"iceberg-go/puffin/testdata",
		"iceberg-go/table/dv/testdata/deletes",
		"impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/data",
		NULL,
	};
	return seeds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	floe_arena a;
	floe_puffin_footer f;
	if (size > (4 << 20))
		return 0;
	floe_arena_init(&a, 0);
	floe_input *in = floe_input_memory(data, size, "fuzz.puffin");
	if (in && floe_puffin_read_footer(&f, &a, in, NULL) == 0) {
		for (size_t i = 0; i < f.n_blobs; i++) {
			const floe_puffin_blob *b = &f.blobs[i];
			if (b->offset < 4 || (uint64_t)(b->offset + b->length) > size)
				abort();
			floe_buf out;
			floe_buf_init(&out, 0);
			if (floe_puffin_read_blob(&out, in, b, 1 << 20, NULL) == 0 &&
			    b->type && !strcmp(b->type, "deletion-vector-v1")) {
				uint64_t *pos = NULL;
				size_t n = 0;
				if (floe_dv_decode(&pos, &n, out.data, out.len, -1, 1 << 16, NULL) == 0)
					floe_free(pos);
			}
			floe_buf_reset(&out);
		}
	}
	floe_input_close(in);
	floe_arena_reset(&a);
	return 0;
}
