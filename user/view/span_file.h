/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reads one <stem>.spans.jsonl (or a rotated .spans.jsonl.N) into the span table. */
#ifndef SPANPROF_VIEW_SPAN_FILE_H
#define SPANPROF_VIEW_SPAN_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "view/span_table.h"

struct span_file_result {
	uint64_t lines; /* complete lines seen */
	uint64_t added; /* spans added to the table */
	uint64_t bad; /* complete lines that were not a span record */
	uint64_t first_bad; /* line number of the first bad one (1-based); 0: none */
	int partial; /* the file ends in a line without its line feed (being written) */
};

/* Parses buf (len bytes, a file's content) line by line: each complete line must be a JSON
 * object with the span log's fields (service, name, trace_id, span_id, cpu_ns, off_cpu_ns,
 * wall_ns; start_ns, pid and tid optional). Other lines are counted in bad and skipped; a last
 * line without a line feed is left alone (the agent is appending it). stem is the file's name
 * stem (the service as the agent names its files). Returns 0, or -ENOMEM. A full table is not
 * an error: its drops are counted there. */
int span_file_parse(struct span_table *t, const char *stem, const char *buf, size_t len,
		    struct span_file_result *res);

#endif /* SPANPROF_VIEW_SPAN_FILE_H */
