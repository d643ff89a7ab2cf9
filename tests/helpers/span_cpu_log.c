// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: a workload's span CPU log and the agent's span records against it (see
 * span_cpu_log.h). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "span_cpu_log.h"

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct logged_span *)a)->id, ((const struct logged_span *)b)->id);
}

void span_cpu_log_read(struct span_cpu_log *log, const char *path, struct logged_span *spans,
		       int max)
{
	char line[256], trace[40], span[20];
	FILE *f = fopen(path, "r");
	long long v, outer;
	int idx, got;

	memset(log, 0, sizeof(*log));
	log->ring_lost_min = log->ring_lost_max = -1;
	assert_non_null(f);
	memset(spans, 0, (size_t)max * sizeof(spans[0]));
	log->spans = spans;
	log->max = max;
	while (fgets(line, sizeof(line), f)) {
		got = sscanf(line, "span %39s %19s %d %lld %lld", trace, span, &idx, &v, &outer);
		if (got >= 4 && log->n < max && idx >= 0 && idx < 2) {
			struct logged_span *s = &log->spans[log->n++];

			snprintf(s->id, sizeof(s->id), "%s%s", trace, span);
			s->name = idx;
			s->cpu_ns = v;
			s->outer_ns = got == 5 ? outer : v;
			log->span_ns[idx] += v;
		} else if (sscanf(line, "total %d %lld %lld", &idx, &v, &outer) == 3 && idx >= 0 &&
			   idx < 2) {
			log->totals[idx] = v;
			log->outer_totals[idx] = outer;
		} else if (sscanf(line, "ring_lost_min %lld", &log->ring_lost_min) != 1 &&
			   sscanf(line, "ring_lost_max %lld", &log->ring_lost_max) != 1) {
			sscanf(line, "outside_tid %d", &log->outside_tid);
		}
	}
	fclose(f);
	qsort(log->spans, log->n, sizeof(log->spans[0]), by_id);
}

/* The raw text of "key": in a JSON line: a string's contents (escapes kept) or a number. */
static int json_field(const char *line, const char *key, char *out, size_t size)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(line, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 2 < size; p++) {
			if (*p == '\\')
				out[n++] = *p++;
			out[n++] = *p;
		}
	} else {
		while ((*p >= '0' && *p <= '9') && n + 1 < size)
			out[n++] = *p++;
	}
	out[n] = '\0';
	return 0;
}

static long long json_num(const char *line, const char *key)
{
	char v[32];

	return json_field(line, key, v, sizeof(v)) || !v[0] ? -1 : atoll(v);
}

/* One record, counted against its logged span (a burst's span's against the span it is in). */
static void census_record(struct span_cpu_census *c, struct span_cpu_log *log, const char *line,
			  const char *const json_names[2], int pid)
{
	char trace[40], span[20], name[300];
	struct logged_span key, *l;
	int burst = 0;
	long long cpu;

	c->records++;
	cpu = json_num(line, "cpu_ns");
	if (json_field(line, "trace_id", trace, sizeof(trace)) ||
	    json_field(line, "span_id", span, sizeof(span)) ||
	    json_field(line, "name", name, sizeof(name)) || cpu < 0) {
		c->unknown++;
		return;
	}
	c->wrong_pid += json_num(line, "pid") != pid;
	c->outside += log->outside_tid && json_num(line, "tid") == log->outside_tid;
	if (!strncmp(span, "b0", 2) && strlen(span) == 16) {
		/* A burst's span: its enclosing span is c0, with no change number. */
		burst = 1;
		memcpy(span, "c0", 2);
		memcpy(span + 4, "0000", 4);
	}
	snprintf(key.id, sizeof(key.id), "%s%s", trace, span);
	l = bsearch(&key, log->spans, log->n, sizeof(log->spans[0]), by_id);
	if (!l) {
		c->unknown++;
		return;
	}
	if (burst) {
		c->burst_records++;
		c->burst_by_name[l->name]++;
	} else {
		c->dup += l->seen++ > 0;
	}
	c->wrong_name += strcmp(name, json_names[l->name]) != 0;
	c->agent_ns[l->name] += cpu;
	l->agent_ns += cpu;
	c->wall_short += json_num(line, "wall_ns") < cpu;
}

/* One logged span's records (its own and its burst's): they run from the hook's change in the
 * set to its change in the clear, so their CPU time lies within the readings inside and around
 * the hook calls, up to the clocks' differences (SPAN_CPU_TOLERANCE_NS). */
static void census_span(struct span_cpu_census *c, const struct logged_span *l)
{
	long long cpu = l->agent_ns, diff;

	if (!l->seen)
		return;
	diff = cpu < l->cpu_ns ? cpu - l->cpu_ns : cpu > l->outer_ns ? cpu - l->outer_ns : 0;
	c->sum_diff_ns += diff;
	if (llabs(diff) > c->max_diff_ns)
		c->max_diff_ns = llabs(diff);
	c->cpu_wrong += llabs(diff) > SPAN_CPU_LIMIT_NS;
	c->cpu_short += diff < -SPAN_CPU_TOLERANCE_NS(l->cpu_ns);
	if (llabs(diff) <= SPAN_CPU_TOLERANCE_NS(l->cpu_ns))
		return;
	c->off_agent_ns[l->name] += cpu;
	c->off_inner_ns[l->name] += l->cpu_ns;
	c->off_outer_ns[l->name] += l->outer_ns;
	if (c->cpu_off++ < 5)
		printf("  span %s: CPU %lld ns by the agent, %lld-%lld ns by the workload\n", l->id,
		       cpu, l->cpu_ns, l->outer_ns);
}

void span_cpu_census_read(struct span_cpu_census *c, struct span_cpu_log *log,
			  const char *jsonl_path, const char *const json_names[2], int pid)
{
	char line[1024];
	FILE *f = fopen(jsonl_path, "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		census_record(c, log, line, json_names, pid);
	for (int i = 0; i < log->n; i++)
		census_span(c, &log->spans[i]);
	fclose(f);
}
