/*
 * meta_write.c — serialising the Parquet footer and page headers (Thrift
 * compact). Field ids follow parquet.thrift; optional fields are written
 * only when their has_ flag (or pointer) says they are present.
 */
#include "parquet/meta.h"

#include <string.h>

#include "parquet/thrift.h"

static void put_stats(floe_thrift_writer *w, int16_t fid, const floe_parquet_stats *s)
{
	floe_thrift_put_struct_begin(w, fid);
	if (s->has_max)
		floe_thrift_put_binary(w, 1, s->max.p, s->max.n);
	if (s->has_min)
		floe_thrift_put_binary(w, 2, s->min.p, s->min.n);
	if (s->has_null_count)
		floe_thrift_put_i64(w, 3, s->null_count);
	if (s->has_distinct_count)
		floe_thrift_put_i64(w, 4, s->distinct_count);
	if (s->has_max_value)
		floe_thrift_put_binary(w, 5, s->max_value.p, s->max_value.n);
	if (s->has_min_value)
		floe_thrift_put_binary(w, 6, s->min_value.p, s->min_value.n);
	if (s->has_is_max_value_exact)
		floe_thrift_put_bool(w, 7, s->is_max_value_exact);
	if (s->has_is_min_value_exact)
		floe_thrift_put_bool(w, 8, s->is_min_value_exact);
	if (s->has_nan_count)
		floe_thrift_put_i64(w, 9, s->nan_count);
	floe_thrift_struct_end(w);
}

static void put_empty_struct(floe_thrift_writer *w, int16_t fid)
{
	floe_thrift_put_struct_begin(w, fid);
	floe_thrift_struct_end(w);
}

static void put_logical(floe_thrift_writer *w, const floe_parquet_logical *lt)
{
	floe_thrift_put_struct_begin(w, 10);
	switch (lt->kind) {
	case FLOE_PARQUET_LT_DECIMAL:
		floe_thrift_put_struct_begin(w, 5);
		floe_thrift_put_i32(w, 1, lt->scale);
		floe_thrift_put_i32(w, 2, lt->precision);
		floe_thrift_struct_end(w);
		break;
	case FLOE_PARQUET_LT_TIME:
	case FLOE_PARQUET_LT_TIMESTAMP:
		floe_thrift_put_struct_begin(w, (int16_t)lt->kind);
		floe_thrift_put_bool(w, 1, lt->utc);
		floe_thrift_put_struct_begin(w, 2);
		put_empty_struct(w, (int16_t)(lt->unit + 1));
		floe_thrift_struct_end(w);
		floe_thrift_struct_end(w);
		break;
	case FLOE_PARQUET_LT_INTEGER:
		floe_thrift_put_struct_begin(w, 10);
		floe_thrift_put_i8(w, 1, lt->bit_width);
		floe_thrift_put_bool(w, 2, lt->is_signed);
		floe_thrift_struct_end(w);
		break;
	case FLOE_PARQUET_LT_GEOMETRY:
	case FLOE_PARQUET_LT_GEOGRAPHY:
		floe_thrift_put_struct_begin(w, (int16_t)lt->kind);
		if (lt->crs)
			floe_thrift_put_string(w, 1, lt->crs);
		if (lt->kind == FLOE_PARQUET_LT_GEOGRAPHY && lt->algorithm >= 0)
			floe_thrift_put_i32(w, 2, lt->algorithm);
		floe_thrift_struct_end(w);
		break;
	default: put_empty_struct(w, (int16_t)lt->kind); break;
	}
	floe_thrift_struct_end(w);
}

static void put_schema_elem(floe_thrift_writer *w, const floe_parquet_schema_elem *e)
{
	floe_thrift_struct_begin_w(w);
	if (e->type >= 0)
		floe_thrift_put_i32(w, 1, e->type);
	if (e->has_type_length)
		floe_thrift_put_i32(w, 2, e->type_length);
	if (e->repetition >= 0)
		floe_thrift_put_i32(w, 3, e->repetition);
	floe_thrift_put_string(w, 4, e->name ? e->name : "");
	if (e->has_num_children)
		floe_thrift_put_i32(w, 5, e->num_children);
	if (e->converted != FLOE_PARQUET_CT_NONE)
		floe_thrift_put_i32(w, 6, e->converted);
	if (e->has_scale)
		floe_thrift_put_i32(w, 7, e->scale);
	if (e->has_precision)
		floe_thrift_put_i32(w, 8, e->precision);
	if (e->has_field_id)
		floe_thrift_put_i32(w, 9, e->field_id);
	if (e->logical.kind != FLOE_PARQUET_LT_NONE && e->logical.kind != FLOE_PARQUET_LT_OTHER)
		put_logical(w, &e->logical);
	floe_thrift_struct_end(w);
}

static void put_kv_list(floe_thrift_writer *w, int16_t fid, const floe_parquet_kv *kv, size_t n)
{
	floe_thrift_put_list_begin(w, fid, FLOE_THRIFT_STRUCT, n);
	for (size_t i = 0; i < n; i++) {
		floe_thrift_struct_begin_w(w);
		floe_thrift_put_string(w, 1, kv[i].key);
		if (kv[i].value)
			floe_thrift_put_binary(w, 2, kv[i].value, kv[i].value_len);
		floe_thrift_struct_end(w);
	}
}

static void put_column_meta(floe_thrift_writer *w, const floe_parquet_column_meta *m)
{
	floe_thrift_put_struct_begin(w, 3);
	floe_thrift_put_i32(w, 1, m->type);
	floe_thrift_put_list_begin(w, 2, FLOE_THRIFT_I32, m->n_encodings);
	for (size_t i = 0; i < m->n_encodings; i++)
		floe_thrift_elem_put_i32(w, m->encodings[i]);
	floe_thrift_put_list_begin(w, 3, FLOE_THRIFT_BINARY, m->path_len);
	for (size_t i = 0; i < m->path_len; i++)
		floe_thrift_elem_put_binary(w, m->path[i], strlen(m->path[i]));
	floe_thrift_put_i32(w, 4, m->codec);
	floe_thrift_put_i64(w, 5, m->num_values);
	floe_thrift_put_i64(w, 6, m->total_uncompressed_size);
	floe_thrift_put_i64(w, 7, m->total_compressed_size);
	if (m->n_kv)
		put_kv_list(w, 8, m->kv, m->n_kv);
	floe_thrift_put_i64(w, 9, m->data_page_offset);
	if (m->has_index_page_offset)
		floe_thrift_put_i64(w, 10, m->index_page_offset);
	if (m->has_dictionary_page_offset)
		floe_thrift_put_i64(w, 11, m->dictionary_page_offset);
	if (m->has_statistics)
		put_stats(w, 12, &m->statistics);
	if (m->has_encoding_stats) {
		floe_thrift_put_list_begin(w, 13, FLOE_THRIFT_STRUCT, m->n_encoding_stats);
		for (size_t i = 0; i < m->n_encoding_stats; i++) {
			floe_thrift_struct_begin_w(w);
			floe_thrift_put_i32(w, 1, m->encoding_stats[i].page_type);
			floe_thrift_put_i32(w, 2, m->encoding_stats[i].encoding);
			floe_thrift_put_i32(w, 3, m->encoding_stats[i].count);
			floe_thrift_struct_end(w);
		}
	}
	if (m->has_bloom_filter_offset)
		floe_thrift_put_i64(w, 14, m->bloom_filter_offset);
	if (m->has_bloom_filter_length)
		floe_thrift_put_i32(w, 15, m->bloom_filter_length);
	floe_thrift_struct_end(w);
}

static void put_row_group(floe_thrift_writer *w, const floe_parquet_row_group *rg)
{
	floe_thrift_struct_begin_w(w);
	floe_thrift_put_list_begin(w, 1, FLOE_THRIFT_STRUCT, rg->n_columns);
	for (size_t i = 0; i < rg->n_columns; i++) {
		const floe_parquet_column_chunk *cc = &rg->columns[i];
		floe_thrift_struct_begin_w(w);
		if (cc->file_path)
			floe_thrift_put_string(w, 1, cc->file_path);
		floe_thrift_put_i64(w, 2, cc->file_offset);
		if (cc->has_meta_data)
			put_column_meta(w, &cc->meta_data);
		if (cc->has_offset_index) {
			floe_thrift_put_i64(w, 4, cc->offset_index_offset);
			floe_thrift_put_i32(w, 5, cc->offset_index_length);
		}
		if (cc->has_column_index) {
			floe_thrift_put_i64(w, 6, cc->column_index_offset);
			floe_thrift_put_i32(w, 7, cc->column_index_length);
		}
		floe_thrift_struct_end(w);
	}
	floe_thrift_put_i64(w, 2, rg->total_byte_size);
	floe_thrift_put_i64(w, 3, rg->num_rows);
	if (rg->n_sorting_columns) {
		floe_thrift_put_list_begin(w, 4, FLOE_THRIFT_STRUCT, rg->n_sorting_columns);
		for (size_t i = 0; i < rg->n_sorting_columns; i++) {
			floe_thrift_struct_begin_w(w);
			floe_thrift_put_i32(w, 1, rg->sorting_columns[i].column_idx);
			floe_thrift_put_bool(w, 2, rg->sorting_columns[i].descending);
			floe_thrift_put_bool(w, 3, rg->sorting_columns[i].nulls_first);
			floe_thrift_struct_end(w);
		}
	}
	if (rg->has_file_offset)
		floe_thrift_put_i64(w, 5, rg->file_offset);
	if (rg->has_total_compressed_size)
		floe_thrift_put_i64(w, 6, rg->total_compressed_size);
	if (rg->has_ordinal)
		floe_thrift_put_i16(w, 7, rg->ordinal);
	floe_thrift_struct_end(w);
}

int floe_parquet_meta_write(floe_buf *out, const floe_parquet_file_meta *m, floe_error *err)
{
	floe_thrift_writer w;
	floe_thrift_writer_init(&w, out);
	floe_thrift_struct_begin_w(&w);
	floe_thrift_put_i32(&w, 1, m->version);
	floe_thrift_put_list_begin(&w, 2, FLOE_THRIFT_STRUCT, m->n_schema);
	for (size_t i = 0; i < m->n_schema; i++)
		put_schema_elem(&w, &m->schema[i]);
	floe_thrift_put_i64(&w, 3, m->num_rows);
	floe_thrift_put_list_begin(&w, 4, FLOE_THRIFT_STRUCT, m->n_row_groups);
	for (size_t i = 0; i < m->n_row_groups; i++)
		put_row_group(&w, &m->row_groups[i]);
	if (m->n_kv)
		put_kv_list(&w, 5, m->kv, m->n_kv);
	if (m->created_by)
		floe_thrift_put_string(&w, 6, m->created_by);
	if (m->n_column_orders) {
		floe_thrift_put_list_begin(&w, 7, FLOE_THRIFT_STRUCT, m->n_column_orders);
		for (size_t i = 0; i < m->n_column_orders; i++) {
			floe_thrift_struct_begin_w(&w);
			put_empty_struct(&w, (int16_t)(m->column_orders[i] ? m->column_orders[i] : 1));
			floe_thrift_struct_end(&w);
		}
	}
	floe_thrift_struct_end(&w);
	if (w.rc)
		return floe_error_set(err, w.rc, "parquet footer: %s",
				      w.rc == FLOE_ENOMEM ? "out of memory" : "nested too deeply");
	return FLOE_OK;
}

int floe_parquet_page_header_write(floe_buf *out, const floe_parquet_page_header *h,
				   floe_error *err)
{
	floe_thrift_writer w;
	floe_thrift_writer_init(&w, out);
	floe_thrift_struct_begin_w(&w);
	floe_thrift_put_i32(&w, 1, h->type);
	floe_thrift_put_i32(&w, 2, h->uncompressed_page_size);
	floe_thrift_put_i32(&w, 3, h->compressed_page_size);
	if (h->has_crc)
		floe_thrift_put_i32(&w, 4, h->crc);
	if (h->has_data_page_header) {
		floe_thrift_put_struct_begin(&w, 5);
		floe_thrift_put_i32(&w, 1, h->data_page_header.num_values);
		floe_thrift_put_i32(&w, 2, h->data_page_header.encoding);
		floe_thrift_put_i32(&w, 3, h->data_page_header.definition_level_encoding);
		floe_thrift_put_i32(&w, 4, h->data_page_header.repetition_level_encoding);
		if (h->data_page_header.has_statistics)
			put_stats(&w, 5, &h->data_page_header.statistics);
		floe_thrift_struct_end(&w);
	}
	if (h->has_dictionary_page_header) {
		floe_thrift_put_struct_begin(&w, 7);
		floe_thrift_put_i32(&w, 1, h->dictionary_page_header.num_values);
		floe_thrift_put_i32(&w, 2, h->dictionary_page_header.encoding);
		if (h->dictionary_page_header.has_is_sorted)
			floe_thrift_put_bool(&w, 3, h->dictionary_page_header.is_sorted);
		floe_thrift_struct_end(&w);
	}
	if (h->has_data_page_header_v2) {
		floe_thrift_put_struct_begin(&w, 8);
		floe_thrift_put_i32(&w, 1, h->data_page_header_v2.num_values);
		floe_thrift_put_i32(&w, 2, h->data_page_header_v2.num_nulls);
		floe_thrift_put_i32(&w, 3, h->data_page_header_v2.num_rows);
		floe_thrift_put_i32(&w, 4, h->data_page_header_v2.encoding);
		floe_thrift_put_i32(&w, 5, h->data_page_header_v2.definition_levels_byte_length);
		floe_thrift_put_i32(&w, 6, h->data_page_header_v2.repetition_levels_byte_length);
		if (!h->data_page_header_v2.is_compressed)
			floe_thrift_put_bool(&w, 7, false);
		if (h->data_page_header_v2.has_statistics)
			put_stats(&w, 8, &h->data_page_header_v2.statistics);
		floe_thrift_struct_end(&w);
	}
	floe_thrift_struct_end(&w);
	if (w.rc)
		return floe_error_set(err, w.rc, "parquet page header: out of memory");
	return FLOE_OK;
}
