// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /api/status: the store's counters and the skipped files. */
#include "view/json_out.h"
#include "view/view_status.h"

static void write_problems(const struct problems *pr, FILE *f)
{
	size_t i;

	fprintf(f, "\"problems_total\":%llu,\"problems\":[", (unsigned long long)pr->total);
	for (i = 0; i < pr->n; i++) {
		fputs(i ? ",{\"file\":" : "{\"file\":", f);
		json_out_str(f, pr->list[i].file);
		fputs(",\"why\":", f);
		json_out_str(f, pr->list[i].why);
		putc('}', f);
	}
	putc(']', f);
}

void view_status_write(const struct view_store *vs, FILE *f)
{
	const struct view_limits *l = &vs->limits;
	struct profile_cache_stats cs = { 0 };

	if (vs->cache)
		profile_cache_get_stats(vs->cache, &cs);
	fputs("{\"dir\":", f);
	json_out_str(f, vs->dir);
	fprintf(f,
		",\"profiles\":%zu,\"span_logs\":%zu,\"span_log_bytes\":%llu,\"spans\":%zu,"
		"\"spans_dropped\":%llu,\"files_skipped\":%llu,\"load_ms\":%llu,"
		"\"loaded_at_ns\":%llu,\"memory_bytes\":%zu,",
		vs->dd.nprofiles, vs->dd.nlogs, (unsigned long long)vs->span_log_bytes, vs->spans.n,
		(unsigned long long)vs->spans.dropped, (unsigned long long)vs->dd.skipped,
		(unsigned long long)vs->load_ms, (unsigned long long)vs->loaded_at_ns,
		span_table_bytes(&vs->spans) + cs.bytes);
	fprintf(f,
		"\"cache\":{\"bytes\":%zu,\"max_bytes\":%zu,\"loads\":%llu,\"hits\":%llu,"
		"\"evictions\":%llu,\"failed\":%llu},",
		cs.bytes, cs.max_bytes, (unsigned long long)cs.loads, (unsigned long long)cs.hits,
		(unsigned long long)cs.evictions, (unsigned long long)cs.failed);
	fprintf(f,
		"\"limits\":{\"max_files\":%zu,\"max_spans\":%zu,\"max_file_bytes\":%zu,"
		"\"max_cache_bytes\":%zu,\"max_name_files\":%zu,\"max_nodes\":%zu},",
		l->max_files, l->max_spans, l->max_file_bytes, l->max_cache_bytes,
		l->max_name_files, l->max_nodes);
	write_problems(&vs->problems, f);
	putc('}', f);
}
