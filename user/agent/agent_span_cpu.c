// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Exact CPU time per span in the agent: each record of the span_ends ring buffer (one ended
 * span) gets its service and name, goes into the (service, span name) sums of /metrics and,
 * with --output, into the service's .spans.jsonl. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "agent/agent_int.h"
#include "util/log.h"

/* Bytes of span records held between two drains (about 80,000 records). */
#define SPAN_LOG_BUFFER (16u << 20)
/* Buffered records are written once they take this much, not only at the drain: a flood of
 * span ends (thousands a second from each user's processes) held up to the bound above in
 * memory (8 MB at once in a whole-node heap profile here). */
#define SPAN_LOG_WRITE_AT (1u << 20)
/* All services' span logs together, in --span-log-max-bytes: eight services' worth of a file
 * and its .1, whatever the number of services. */
#define SPAN_LOG_TOTAL_FILES 16
#define SPAN_NAME_SLOTS 1024

static int span_times_on(const struct spanprof_config *cfg)
{
	return cfg->off_cpu && cfg->span_stats_max > 0;
}

int agent_span_cpu_open_stats(struct agent *a)
{
	if (!span_times_on(a->cfg))
		return 0;
	a->span_cpu.stats = span_stats_new(a->cfg->span_stats_max);
	if (!a->span_cpu.stats)
		return log_err(errno ? -errno : -ENOMEM, "set up the span time table (%u pairs)",
			       a->cfg->span_stats_max);
	metrics_set_extra(a->metrics.reg, span_stats_render, a->span_cpu.stats);
	return 0;
}

/* The Unix time, in ns, of a CLOCK_MONOTONIC time mono_ns (what bpf_ktime_get_ns() gives); 0
 * when it cannot be told. Both clocks are read now: a record read a second after its span ended
 * is dated by the span's own end, not by the read. */
static uint64_t unix_ns_of(uint64_t mono_ns)
{
	int64_t offset;

	if (!mono_ns)
		return 0;
	offset = (int64_t)clock_real_ns() - (int64_t)clock_mono_ns();
	return offset + (int64_t)mono_ns > 0 ? (uint64_t)(offset + (int64_t)mono_ns) : 0;
}

/* One ended span. */
static void span_end_add(struct agent *a, const struct spanprof_span_end *e)
{
	struct span_record r = { 0 };
	struct proc_info scratch;

	r.service = proc_table_get(a->procs, e->pid, &scratch)->service;
	r.name = span_names_get(a->span_cpu.names, loader_span_names_fd(a->loader), e->name_id);
	memcpy(r.trace_id, e->trace_id, sizeof(r.trace_id));
	memcpy(r.span_id, e->span_id, sizeof(r.span_id));
	r.cpu_ns = e->cpu_ns;
	r.off_cpu_ns = e->off_cpu_ns;
	r.wall_ns = e->wall_ns;
	r.start_ns = e->end_ns > e->wall_ns ? unix_ns_of(e->end_ns - e->wall_ns) : 0;
	r.pid = e->pid;
	r.tid = e->tid;
	span_stats_add(a->span_cpu.stats, r.service, r.name, r.cpu_ns, r.off_cpu_ns);
	if (a->span_cpu.log && !span_log_add(a->span_cpu.log, &r) &&
	    span_log_buffered(a->span_cpu.log) >= SPAN_LOG_WRITE_AT)
		span_log_flush(a->span_cpu.log);
}

/* One entry of span_ends: one record, or the records of one ring read back to back. */
static int on_span_end(void *ctx, void *data, size_t size)
{
	const struct spanprof_span_end *e = data;

	for (size_t i = 0; i < size / sizeof(*e); i++)
		span_end_add(ctx, &e[i]);
	return 0;
}

int agent_span_cpu_open(struct agent *a)
{
	struct span_log_limits limits = {
		.max_file_bytes = a->cfg->span_log_max_bytes,
		.max_total_bytes = SPAN_LOG_TOTAL_FILES * a->cfg->span_log_max_bytes,
		.max_buffered = SPAN_LOG_BUFFER,
		.max_services = a->cfg->max_services,
	};
	int err;

	if (!a->span_cpu.stats)
		return 0;
	errno = 0;
	a->span_cpu.names = span_names_new(SPAN_NAME_SLOTS);
	if (!a->span_cpu.names)
		return log_err(errno ? -errno : -ENOMEM, "set up the span name cache");
	if (a->cfg->output_dir) {
		a->span_cpu.log = span_log_new(a->cfg->output_dir, &limits);
		if (!a->span_cpu.log)
			return log_err(errno ? -errno : -ENOMEM, "set up the span log in %s",
				       a->cfg->output_dir);
	}
	err = loader_add_span_ends(a->loader, a->events, on_span_end, a);
	return err ? log_err(err, "set up the span_ends ring buffer") : 0;
}

void agent_span_cpu_drain(struct agent *a)
{
	struct span_log_stats ls;

	if (a->span_cpu.stats)
		metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_SPAN_STATS,
			       span_stats_fair_share(a->span_cpu.stats));
	if (!a->span_cpu.log)
		return;
	span_log_flush(a->span_cpu.log);
	span_log_get_stats(a->span_cpu.log, &ls);
	metrics_set_at(a->metrics.reg, METRIC_SAMPLES_DROPPED, METRIC_DROP_SPAN_LOG, ls.dropped);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_SPAN_LOG_BUFFER,
		       ls.fair_share_drops);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_SPAN_LOG_REMOVED,
		       ls.total_removals);
}

void agent_span_cpu_close(struct agent *a)
{
	/* The table /metrics renders: the metrics server is stopped before this. */
	span_stats_free(a->span_cpu.stats);
	span_log_free(a->span_cpu.log);
	span_names_free(a->span_cpu.names);
	a->span_cpu = (struct agent_span_cpu){ 0 };
}
