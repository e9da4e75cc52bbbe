/*
 * test_avro_files.c — the Avro reader on the shared reference files:
 * every arrow-testing Avro file against tests/data/avro/expected.json
 * (DuckDB's reading, see gen_expected.py), and every Iceberg manifest and
 * manifest list under $FLOE_TESTDATA against iceberg_expected.tsv (record
 * counts and first-record values, resolved by field id).
 */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>

#include "avro/avro_reader.h"
#include "harness.h"
#include "json/json.h"

static floe_input *open_file(const char *path, unsigned char **data)
{
	size_t n = 0;
	*data = t_read_file(path, &n);
	if (!*data)
		return NULL;
	return floe_input_memory(*data, n, path);
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", p[i]);
	out[2 * n] = 0;
}

/* Compare a decoded value with its expected JSON (see gen_expected.py). */
static bool match(const floe_avro_schema *s, const floe_avro_value *v, const floe_json *j,
		  char *path, size_t cap)
{
	char buf[512];
	if (s->type == FLOE_AVRO_UNION)
		s = s->branches[v->branch];
	switch (v->type) {
	case FLOE_AVRO_NULL: return j->type == FLOE_JSON_NULL;
	case FLOE_AVRO_BOOLEAN: return j->type == FLOE_JSON_BOOL && j->b == v->u.b;
	case FLOE_AVRO_INT: return j->type == FLOE_JSON_NUMBER && j->is_int && j->i == v->u.i;
	case FLOE_AVRO_LONG: return j->type == FLOE_JSON_NUMBER && j->is_int && j->i == v->u.l;
	case FLOE_AVRO_FLOAT:
	case FLOE_AVRO_DOUBLE: {
		double d = v->type == FLOE_AVRO_FLOAT ? (double)v->u.f : v->u.d;
		if (isnan(d))
			return j->type == FLOE_JSON_STRING && strcmp(j->s, "NaN") == 0;
		return j->type == FLOE_JSON_NUMBER && j->d == d;
	}
	case FLOE_AVRO_STRING:
		return j->type == FLOE_JSON_STRING && j->len == v->u.bytes.len &&
		       memcmp(j->s, v->u.bytes.p, j->len) == 0;
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_FIXED:
		if (v->u.bytes.len * 2 >= sizeof(buf))
			return false;
		hex(buf, v->u.bytes.p, v->u.bytes.len);
		return j->type == FLOE_JSON_STRING && strcmp(j->s, buf) == 0;
	case FLOE_AVRO_ENUM:
		return j->type == FLOE_JSON_STRING && strcmp(j->s, s->symbols[v->u.i]) == 0;
	case FLOE_AVRO_ARRAY:
		if (j->type != FLOE_JSON_ARRAY || j->len != v->u.list.n)
			return false;
		for (size_t i = 0; i < v->u.list.n; i++)
			if (!match(s->items, &v->u.list.items[i], floe_json_at(j, i), path, cap))
				return false;
		return true;
	case FLOE_AVRO_MAP: {
		const floe_json *c = j->child;
		if (j->type != FLOE_JSON_OBJECT || j->len != v->u.map.n)
			return false;
		for (size_t i = 0; i < v->u.map.n; i++, c = c->next) {
			const floe_avro_map_entry *e = &v->u.map.entries[i];
			if (c->key_len != e->key_len || memcmp(c->key, e->key, e->key_len) != 0 ||
			    !match(s->items, &e->value, c, path, cap))
				return false;
		}
		return true;
	}
	case FLOE_AVRO_RECORD:
		if (j->type != FLOE_JSON_OBJECT || j->len != s->n_fields)
			return false;
		for (size_t i = 0; i < s->n_fields; i++) {
			const floe_json *f = floe_json_get(j, s->fields[i].name);
			if (!f || !match(s->fields[i].type, &v->u.list.items[i], f, path, cap)) {
				size_t n = strlen(path);
				snprintf(path + n, cap - n, ".%s", s->fields[i].name);
				return false;
			}
		}
		return true;
	default: return false;
	}
}

static void test_arrow_testing_files(void)
{
	size_t n = 0;
	unsigned char *text = t_read_file("tests/data/avro/expected.json", &n);
	floe_arena a;
	floe_error err = {0};
	floe_json *exp = NULL;
	int files = 0;
	T_CHECK(text != NULL);
	if (!text)
		return;
	floe_arena_init(&a, 0);
	T_OK(floe_json_parse(&exp, &a, (const char *)text, n, NULL, &err), &err);
	for (const floe_json *e = exp ? exp->child : NULL; e; e = e->next) {
		char rel[256];
		unsigned char *data = NULL;
		floe_avro_reader *r = NULL;
		const floe_json *rows = floe_json_get(e, "rows");
		snprintf(rel, sizeof(rel), "arrow-testing/data/avro/%.*s", (int)e->key_len, e->key);
		floe_input *in = open_file(t_testdata(rel), &data);
		T_CHECK(in != NULL);
		if (!in)
			continue;
		files++;
		int rc = floe_avro_reader_open(&r, in, NULL, &err);
		if (floe_json_get(e, "error")) {
			/* bzip2 / xz: a clear unsupported error naming the codec */
			T_ERR(rc, FLOE_EUNSUPPORTED);
			T_CHECK(strstr(err.msg, floe_json_get(e, "codec")->s) != NULL);
			T_CHECK(strstr(err.msg, e->key) != NULL);
		} else {
			T_OK(rc, &err);
			const floe_json *codec = floe_json_get(e, "codec");
			if (r && codec)
				T_EQ_STR(floe_avro_reader_codec(r), codec->s);
			size_t k = 0;
			for (; r; k++) {
				floe_avro_value v;
				bool eof;
				char path[256] = "";
				rc = floe_avro_reader_next(&v, &eof, r, &err);
				T_OK(rc, &err);
				if (rc || eof)
					break;
				const floe_json *want = floe_json_at(rows, k);
				if (!want || !match(floe_avro_reader_schema(r), &v, want, path,
						    sizeof(path))) {
					t_fail(__FILE__, __LINE__, "%s: record %zu differs at '%s'",
					       e->key, k, path);
					break;
				}
			}
			T_EQ_INT(k, rows ? rows->len : 0);
		}
		floe_avro_reader_free(r);
		floe_input_close(in);
		free(data);
	}
	/* every file of the directory is covered */
	{
		DIR *d = opendir(t_testdata("arrow-testing/data/avro"));
		int on_disk = 0;
		struct dirent *de;
		while (d && (de = readdir(d)))
			on_disk += strstr(de->d_name, ".avro") != NULL;
		if (d)
			closedir(d);
		T_EQ_INT(files, on_disk);
		T_CHECK(files >= 31);
	}
	floe_arena_reset(&a);
	free(text);
}

/* Reader schemas with only the fields the check needs: fields are matched by
 * field id, so Java 1.4's added_data_files_count and Java 1.5's
 * added_files_count (both id 504) read the same. */
static const char LIST_READER[] =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
	"{\"name\":\"manifest_path\",\"type\":\"string\",\"field-id\":500},"
	"{\"name\":\"added_files_count\",\"type\":[\"null\",\"int\"],\"field-id\":504},"
	"{\"name\":\"content\",\"type\":\"int\",\"default\":0,\"field-id\":517}]}";
static const char MANIFEST_READER[] =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
	"{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
	"{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
	"{\"name\":\"file_path\",\"type\":\"string\",\"field-id\":100},"
	"{\"name\":\"record_count\",\"type\":\"long\",\"field-id\":103}]},\"field-id\":2}]}";

static void test_iceberg_files(void)
{
	size_t n = 0;
	char *text = (char *)t_read_file("tests/data/avro/iceberg_expected.tsv", &n);
	floe_arena a;
	floe_error err = {0};
	floe_avro_schema *list_rs = NULL, *man_rs = NULL;
	int files = 0;
	long long total = 0;
	T_CHECK(text != NULL);
	if (!text)
		return;
	floe_arena_init(&a, 0);
	T_OK(floe_avro_schema_parse(&list_rs, &a, LIST_READER, strlen(LIST_READER), NULL, &err),
	     &err);
	T_OK(floe_avro_schema_parse(&man_rs, &a, MANIFEST_READER, strlen(MANIFEST_READER), NULL,
				    &err),
	     &err);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *f[5];
		int nf = 0;
		if (line[0] == '#')
			continue;
		for (char *p = line; nf < 5; nf++) {
			f[nf] = p;
			p = strchr(p, '\t');
			if (!p) {
				nf++;
				break;
			}
			*p++ = 0;
		}
		T_EQ_INT(nf, 5);
		if (nf != 5)
			continue;
		long long want = atoll(f[1]);
		unsigned char *data = NULL;
		floe_input *in = open_file(t_testdata(f[0]), &data);
		floe_avro_reader *r = NULL;
		T_CHECK(in != NULL);
		if (!in)
			continue;
		files++;
		int rc = floe_avro_reader_open(&r, in, NULL, &err);
		if (want < 0) {
			T_ERR(rc, FLOE_ECORRUPT); /* the AES-GCM encrypted list */
			T_CHECK(strstr(err.msg, "bad magic") != NULL);
			floe_input_close(in);
			free(data);
			continue;
		}
		T_OK(rc, &err);
		/* generic decode of every record with the writer schema */
		long long got = 0;
		for (; r;) {
			floe_avro_value v;
			bool eof;
			rc = floe_avro_reader_next(&v, &eof, r, &err);
			T_OK(rc, &err);
			if (rc || eof)
				break;
			got++;
		}
		if (got != want)
			t_fail(__FILE__, __LINE__, "%s: %lld records, expected %lld", f[0], got, want);
		total += got;
		floe_avro_reader_free(r);
		r = NULL;
		/* again with a projecting reader schema, resolved by field id */
		bool is_list = strcmp(f[2], "list") == 0, is_man = strcmp(f[2], "manifest") == 0;
		if ((is_list || is_man) && want > 0) {
			floe_avro_value v;
			bool eof = false;
			T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
			T_OK(floe_avro_reader_set_schema(r, is_list ? list_rs : man_rs, &err), &err);
			T_OK(floe_avro_reader_next(&v, &eof, r, &err), &err);
			if (!eof && v.type == FLOE_AVRO_RECORD) {
				const floe_avro_value *x = &v.u.list.items[0], *y = &v.u.list.items[1];
				if (is_list) {
					T_CHECK(x->u.bytes.len == strlen(f[3]) &&
						memcmp(x->u.bytes.p, f[3], x->u.bytes.len) == 0);
					if (strcmp(f[4], "null") == 0)
						T_EQ_INT(y->type, FLOE_AVRO_NULL);
					else
						T_CHECK(y->type == FLOE_AVRO_INT && y->u.i == atoi(f[4]));
				} else {
					T_EQ_INT(x->u.i, atoi(f[3]));
					const floe_avro_value *fp = &y->u.list.items[0];
					T_CHECK(fp->u.bytes.len == strlen(f[4]) &&
						memcmp(fp->u.bytes.p, f[4], fp->u.bytes.len) == 0);
				}
			}
			/* the rest of the file resolves as well */
			while (floe_avro_reader_next(&v, &eof, r, &err) == 0 && !eof)
				;
			T_EQ_INT(floe_avro_reader_records_read(r), want);
			floe_avro_reader_free(r);
		}
		floe_input_close(in);
		free(data);
	}
	T_CHECK(files >= 420);
	printf("    %d Iceberg Avro files, %lld records\n", files, total);
	floe_arena_reset(&a);
	free(text);
}

/* The two Java manifest lists of iceberg-rust name field 504 differently. */
static void test_manifest_list_java_versions(void)
{
	static const char *files[] = {
		"iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v2-1.avro",
		"iceberg-rust/crates/iceberg/testdata/manifests_lists/manifest-list-v2-2.avro",
	};
	static const char *names[] = {"added_data_files_count", "added_files_count"};
	floe_arena a;
	floe_error err = {0};
	floe_avro_schema *rs = NULL;
	floe_arena_init(&a, 0);
	T_OK(floe_avro_schema_parse(&rs, &a, LIST_READER, strlen(LIST_READER), NULL, &err), &err);
	for (int i = 0; i < 2; i++) {
		unsigned char *data = NULL;
		floe_input *in = open_file(t_testdata(files[i]), &data);
		floe_avro_reader *r = NULL;
		floe_avro_value v;
		bool eof = true;
		T_CHECK(in != NULL);
		if (!in)
			continue;
		T_OK(floe_avro_reader_open(&r, in, NULL, &err), &err);
		if (r) {
			const floe_avro_schema *ws = floe_avro_reader_schema(r);
			T_CHECK(floe_avro_field_by_name(ws, names[i]) != NULL);
			T_EQ_INT(floe_avro_field_by_name(ws, names[i])->field_id, 504);
			T_EQ_STR(floe_avro_reader_codec(r), "deflate");
			T_EQ_STR(floe_avro_reader_meta(r, "format-version", NULL), "2");
			T_CHECK(floe_avro_reader_meta(r, "snapshot-id", NULL) != NULL);
			T_OK(floe_avro_reader_set_schema(r, rs, &err), &err);
			T_OK(floe_avro_reader_next(&v, &eof, r, &err), &err);
			T_CHECK(!eof);
			T_CHECK(v.u.list.items[1].type == FLOE_AVRO_INT);
			T_EQ_INT(v.u.list.items[1].branch, 1);
			T_EQ_INT(v.u.list.items[1].u.i, 1);
			T_EQ_INT(v.u.list.items[2].u.i, 0); /* content */
		}
		floe_avro_reader_free(r);
		floe_input_close(in);
		free(data);
	}
	floe_arena_reset(&a);
}

int main(void)
{
	T_RUN(test_arrow_testing_files);
	T_RUN(test_iceberg_files);
	T_RUN(test_manifest_list_java_versions);
	return t_finish();
}
