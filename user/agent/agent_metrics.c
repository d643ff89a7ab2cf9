// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Publishes the counters kept by the BPF programs, the caches, the aggregator and the uploader
 * into the agent's metrics registry (read by the /metrics endpoint). */
#include <errno.h>

#include "agent/agent_int.h"
#include "output/upload.h"
#include "util/log.h"
#include "util/self_memory.h"

int agent_open_metrics(struct agent *a)
{
	int err;

	errno = 0;
	a->metrics.reg = metrics_new();
	if (!a->metrics.reg)
		return log_err(errno ? -errno : -ENOMEM, "set up the metrics registry");
	err = agent_span_cpu_open_stats(a); /* before the server shows it */
	if (err)
		return err; /* logged */
	if (a->cfg->metrics_addr) {
		a->metrics.http = metrics_http_start(a->metrics.reg, a->cfg->metrics_addr);
		if (!a->metrics.http)
			return -errno; /* logged: --metrics-addr, start the HTTP server, why */
	}
	return 0;
}

void agent_close_metrics(struct agent *a)
{
	metrics_set_ready(a->metrics.reg, 0);
	http_server_stop(a->metrics.http);
	metrics_free(a->metrics.reg);
	self_memory_file_close(&a->metrics.status);
	a->metrics.http = NULL;
	a->metrics.reg = NULL;
}

/* A value and where it shows in /metrics: the metric and its label (0 for a metric without). */
struct metric_row {
	enum metric_id id;
	unsigned int label;
	uint64_t value;
};

#define ROWS(rows) (sizeof(rows) / sizeof((rows)[0]))

static void set_rows(struct metrics *m, const struct metric_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		metrics_set_at(m, rows[i].id, rows[i].label, rows[i].value);
}

/* Where each of the BPF programs' event counters shows. */
static const struct {
	enum metric_id id;
	unsigned int label;
	enum spanprof_event event;
} event_rows[] = {
	{ METRIC_SPAN_EVENTS, METRIC_SPAN_SET, SPANPROF_EVENT_SPAN_SET },
	{ METRIC_SPAN_EVENTS, METRIC_SPAN_CLEAR, SPANPROF_EVENT_SPAN_CLEAR },
	{ METRIC_HOOK_UPROBE_ENTRIES, 0, SPANPROF_EVENT_HOOK_ENTRY },
	{ METRIC_USER_STACKS, METRIC_UNWINDER_CFI, SPANPROF_EVENT_UNWIND_CFI },
	{ METRIC_USER_STACKS, METRIC_UNWINDER_FP, SPANPROF_EVENT_UNWIND_FP },
	{ METRIC_UNWIND_FP_FRAMES, 0, SPANPROF_EVENT_UNWIND_FP_FRAMES },
	{ METRIC_OFF_CPU_PERIODS, METRIC_OFF_CPU_COUNTED, SPANPROF_EVENT_OFF_CPU },
	{ METRIC_OFF_CPU_PERIODS, METRIC_OFF_CPU_SHORT, SPANPROF_EVENT_OFF_CPU_SHORT },
	{ METRIC_OFF_CPU_STACKS, METRIC_UNWINDER_CFI, SPANPROF_EVENT_OFF_CPU_UNWIND_CFI },
	{ METRIC_OFF_CPU_STACKS, METRIC_UNWINDER_FP, SPANPROF_EVENT_OFF_CPU_UNWIND_FP },
	{ METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_SPAN, SPANPROF_EVENT_CAUGHT_UP_SPAN },
	{ METRIC_SWITCH_INS_CAUGHT_UP, METRIC_CAUGHT_UP_THREAD_CTX, SPANPROF_EVENT_CAUGHT_UP_TCTX },
	{ METRIC_OTHER_SPAN_SAMPLES, METRIC_SOURCE_THREAD_CTX, SPANPROF_EVENT_TCTX_SPAN },
	{ METRIC_OTHER_SPAN_SAMPLES, METRIC_SOURCE_OBI, SPANPROF_EVENT_OBI_SPAN },
	{ METRIC_BPF_MAP_FULL, METRIC_MAP_FULL_PENDING_SCANS, SPANPROF_EVENT_PENDING_SCANS_FULL },
};

static void publish_kernel(struct agent *a)
{
	uint64_t drops[SPANPROF_DROP__COUNT], events[SPANPROF_EVENT__COUNT];
	struct drain_stats ds;
	unsigned int i;

	struct span_names_stats ns = { 0 };
	struct file_verdicts_stats tp;

	metrics_set(a->metrics.reg, METRIC_THREAD_CTX_PROCESSES, agent_thread_ctx_count(a));
	metrics_set_at(a->metrics.reg, METRIC_BPF_MAP_FULL, METRIC_MAP_FULL_TCTX_PROCS,
		       agent_thread_ctx_full(a));
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_TCTX_DEFERRED,
		       agent_thread_ctx_deferred(a));
	agent_thread_ctx_parse_stats(a, &tp);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_TCTX_FILE_DEFERRED,
		       tp.deferred);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_TCTX_FILE_EVICTED,
		       tp.evicted);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_TCTX_PARSE_DEFERRED,
		       tp.refused);
	drain_get_stats(a->drain, &ds);
	if (a->span_cpu.names)
		span_names_get_stats(a->span_cpu.names, &ns);
	if (!loader_read_drops(a->loader, drops, SPANPROF_DROP__COUNT)) {
		/* Names lost in the kernel or evicted before the drain (of a sample or of an ended
		 * span's record): one metric for all. */
		drops[SPANPROF_DROP_SPAN_NAME] += ds.span_names_lost + ns.lost;
		for (i = 0; i < SPANPROF_DROP__COUNT; i++)
			metrics_set_at(a->metrics.reg, METRIC_SAMPLES_DROPPED, i, drops[i]);
		metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_SPAN_NAMES,
			       drops[SPANPROF_DROP_SPAN_NAME_BUDGET]);
		metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_SPAN_RECORDS,
			       drops[SPANPROF_DROP_SPAN_END_BUDGET]);
	}
	if (!loader_read_events(a->loader, events, SPANPROF_EVENT__COUNT)) {
		for (i = 0; i < ROWS(event_rows); i++)
			metrics_set_at(a->metrics.reg, event_rows[i].id, event_rows[i].label,
				       events[event_rows[i].event]);
		if (events[SPANPROF_EVENT_PENDING_SCANS_FULL] && !a->metrics.pending_full_logged) {
			a->metrics.pending_full_logged = 1;
			log_warn(
				-E2BIG,
				"pending_scans is full (--pending-scan-entries %u): rescan requests "
				"are sent unmarked, so a process may be scanned twice (counted in "
				"spanprof_bpf_map_full_total{map=\"pending_scans\"}, logged once)",
				a->cfg->pending_scan_entries);
		}
		if ((events[SPANPROF_EVENT_CAUGHT_UP_SPAN] ||
		     events[SPANPROF_EVENT_CAUGHT_UP_TCTX]) &&
		    !a->metrics.caught_up_logged) {
			a->metrics.caught_up_logged = 1;
			log_info(
				"sched_switch missed switches in on this kernel; caught up at the end "
				"of __schedule() (counted in spanprof_switch_ins_caught_up_total, "
				"logged once)");
		}
	}
	if (a->off_cpu.drain) {
		drain_get_stats(a->off_cpu.drain, &ds);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_MAP_ENTRIES,
			       METRIC_OFF_CPU_MAP_COUNTS, ds.last_keys);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_MAP_ENTRIES,
			       METRIC_OFF_CPU_MAP_STACKS, ds.last_stacks);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_MAP_ENTRIES,
			       METRIC_OFF_CPU_MAP_INTERP_STACKS, ds.last_interp_stacks);
	}
}

static void publish_guards(struct metrics *m, const struct symcache_stats *ss)
{
	uint64_t now = clock_mono_ns(), age = 0;
	const struct metric_row rows[] = {
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_REFUSED, ss->perf_maps_refused },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_CAPPED, ss->perf_maps_capped },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_LOAD_DEFERRED, ss->loads_deferred },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_LOAD_OVERRUN, ss->load_overruns },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_DWARF_REFUSED, ss->dwarf_refused },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_DWARF_EVICTED, ss->dwarf_evictions },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_BUDGET, ss->perf_maps_over_budget },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_SKIPPED,
		  ss->perf_map_rereads_skipped },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_SYMBOL_EVICTED, ss->symbol_evictions },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_SYMBOL_DEFERRED, ss->symbol_deferred },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_SYMBOL_REFUSED, ss->symbol_refused },
		{ METRIC_DWARF_BYTES, 0, ss->dwarf_bytes },
	};

	set_rows(m, rows, ROWS(rows));
	metrics_is_healthy(m, now, &age);
	metrics_set(m, METRIC_LAST_WINDOW_AGE, age / NS_PER_S);
}

static void publish_unwind(struct agent *a)
{
	struct unwind_stats st;
	unsigned int i;

	unwind_get_stats(a->unwind, &st);
	for (i = 0; i < UNWIND_FILE__COUNT; i++)
		metrics_set_at(a->metrics.reg, METRIC_UNWIND_FILES, i, st.files.files[i]);

	const struct metric_row rows[] = {
		{ METRIC_UNWIND_TABLE_BYTES, METRIC_TABLE_BYTES_USED,
		  (uint64_t)st.store.chunks_used * sizeof(struct spanprof_unwind_chunk) },
		{ METRIC_UNWIND_TABLE_BYTES, METRIC_TABLE_BYTES_BUDGET,
		  (uint64_t)st.store.chunks_total * sizeof(struct spanprof_unwind_chunk) },
		{ METRIC_UNWIND_EVICTIONS, 0, st.files.evicted },
		{ METRIC_BPF_MAP_FULL, METRIC_MAP_FULL_UNWIND_RULES, st.store.rules_full },
		{ METRIC_BPF_MAP_FULL, METRIC_MAP_FULL_UNWIND_PROCS, st.publish_errors },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_UNWIND_REFUSED, st.files.fair_refused },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_CFI_BUDGET, st.files.budget_spent },
		{ METRIC_UNWIND_BUILD_MS, 0, st.files.build_us / 1000 },
		{ METRIC_UNWIND_TEXT_BYTES, 0, st.files.text_bytes },
		{ METRIC_UNWIND_MAPPINGS_DROPPED, METRIC_MAPPING_FILE, st.mappings_dropped },
		{ METRIC_UNWIND_MAPPINGS_DROPPED, METRIC_MAPPING_ANONYMOUS, st.anon_dropped },
	};

	set_rows(a->metrics.reg, rows, ROWS(rows));
}

static void publish_interp_cache(struct metrics *m, enum metric_id id, uint64_t hits,
				 uint64_t misses, uint64_t stale, uint64_t read_errors,
				 uint64_t evictions, uint64_t refused)
{
	metrics_set_at(m, id, METRIC_ICACHE_HIT, hits);
	metrics_set_at(m, id, METRIC_ICACHE_MISS, misses);
	metrics_set_at(m, id, METRIC_ICACHE_STALE, stale);
	metrics_set_at(m, id, METRIC_ICACHE_READ_ERROR, read_errors);
	metrics_set_at(m, id, METRIC_ICACHE_EVICTION, evictions);
	metrics_set_at(m, id, METRIC_ICACHE_REFUSED, refused);
}

static void publish_interp_caches(struct agent *a)
{
	struct python_symbols_stats py;
	struct ruby_symbols_stats rb;
	struct interp_budget_stats bs;

	python_symbols_get_stats(a->interp.pysyms, &py);
	ruby_symbols_get_stats(a->interp.rbsyms, &rb);
	interp_budget_get_stats(a->interp.budget, &bs);
	publish_interp_cache(a->metrics.reg, METRIC_PYTHON_CODE_CACHE, py.hits, py.misses, py.stale,
			     py.read_errors, py.evictions, py.refused);
	publish_interp_cache(a->metrics.reg, METRIC_RUBY_ISEQ_CACHE, rb.hits, rb.misses, rb.stale,
			     rb.read_errors, rb.evictions, rb.refused);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_INTERP_CACHE_REFUSED,
		       bs.fair_refused);
}

/* The symbol cache's counters, and the files refused for size by any reader: hook discovery
 * (hs), symbolization, unwind tables. */
static void publish_symbols(struct agent *a, const struct hook_registry_stats *hs)
{
	struct symcache_stats ss;
	struct unwind_stats us;

	symcache_get_stats(a->symcache, &ss);
	unwind_get_stats(a->unwind, &us);

	const struct metric_row rows[] = {
		{ METRIC_SYMCACHE_ENTRIES, METRIC_SYMCACHE_MODULES, ss.modules },
		{ METRIC_SYMCACHE_ENTRIES, METRIC_SYMCACHE_PIDS, ss.pids },
		{ METRIC_SYMCACHE_LOOKUPS, METRIC_LOOKUP_HIT, ss.hits },
		{ METRIC_SYMCACHE_LOOKUPS, METRIC_LOOKUP_MISS, ss.misses },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_SECTION_REFUSED,
		  hs->oversized + ss.sections_refused + us.files.oversized },
	};

	set_rows(a->metrics.reg, rows, ROWS(rows));
	publish_guards(a->metrics.reg, &ss);
}

static void publish_interpreters(struct agent *a)
{
	struct interp_procs_stats py, rb;

	interp_procs_get_stats(a->interp.pyprocs, &py);
	interp_procs_get_stats(a->interp.rbprocs, &rb);

	const struct metric_row rows[] = {
		{ METRIC_INTERP_PROCESSES, METRIC_INTERP_PYTHON, py.supported },
		{ METRIC_INTERP_PROCESSES, METRIC_INTERP_RUBY, rb.supported },
		{ METRIC_INTERP_UNREAD, METRIC_UNREAD_PYTHON_UNSUPPORTED, py.unsupported },
		{ METRIC_INTERP_UNREAD, METRIC_UNREAD_PYTHON_FULL, py.full },
		{ METRIC_INTERP_UNREAD, METRIC_UNREAD_RUBY_UNSUPPORTED, rb.unsupported },
		{ METRIC_INTERP_UNREAD, METRIC_UNREAD_RUBY_FULL, rb.full },
		{ METRIC_INTERP_FRAMES_DROPPED, METRIC_INTERP_PYTHON, a->interp.py_frames_dropped },
		{ METRIC_INTERP_FRAMES_DROPPED, METRIC_INTERP_RUBY, a->interp.rb_frames_dropped },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_INTERP_DEFERRED,
		  py.files.deferred + rb.files.deferred },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_INTERP_EVICTED,
		  py.files.evicted + rb.files.evicted },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_INTERP_PARSE_DEFERRED,
		  py.files.refused + rb.files.refused },
	};

	set_rows(a->metrics.reg, rows, ROWS(rows));
	publish_interp_caches(a);
}

/* The aggregator's, the hook registry's, the process table's and the output's counters. */
static void publish_user(struct agent *a)
{
	struct hook_registry_stats hs;
	struct aggregate_stats as;

	aggregate_get_stats(a->agg, &as);
	hook_registry_get_stats(a->hooks, &hs);

	const struct metric_row rows[] = {
		{ METRIC_SAMPLES, 0, as.samples },
		{ METRIC_SAMPLES_DROPPED, METRIC_DROP_SERVICE_OVERFLOW, as.service_overflow },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_SERVICE_SLOT_REFUSED, as.service_fair_refused },
		{ METRIC_SAMPLES_DROPPED, METRIC_DROP_ENCODE_ERROR, as.encode_errors },
		{ METRIC_BPF_MAP_FULL, METRIC_MAP_FULL_GO_PIDS, hs.go_pids_full },
		{ METRIC_HOOKS_ATTACHED, 0, hs.files_attached },
		{ METRIC_HOOK_FILES_REFUSED, 0, hs.open_refused },
		{ METRIC_HOOK_PROCESSES_FULL, 0, hs.pid_table_full },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_HOOK_VERDICTS_RESET, hs.negative_resets },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_SLOT_RECLAIMED, hs.slot_reclaims },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_SLOT_REFUSED, hs.slot_refusals },
		{ METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_PARSE_DEFERRED, hs.parse_deferred },
		{ METRIC_LOG_SUPPRESSED, LOG_SUPPRESSED_RATE,
		  log_suppressed_total(LOG_SUPPRESSED_RATE) },
		{ METRIC_LOG_SUPPRESSED, LOG_SUPPRESSED_SOURCES_FULL,
		  log_suppressed_total(LOG_SUPPRESSED_SOURCES_FULL) },
		{ METRIC_PROCESSES_TRACKED, 0, proc_table_count(a->procs) },
		{ METRIC_PROCESSES_REAPED, 0, proc_table_reaped(a->procs) },
		{ METRIC_RESCAN_PROCESSES, METRIC_RESCAN_SKIPPED, a->known.skipped },
		{ METRIC_RESCAN_PROCESSES, METRIC_RESCAN_UNTRACKED, a->known.untracked },
		{ METRIC_RESCAN_PROCESSES, METRIC_RESCAN_FULL, a->known.full_rescans },
		{ METRIC_RESCAN_PROCESSES, METRIC_RESCAN_READ, a->known.read },
		{ METRIC_RESCANS, 0, a->known.rescans },
		{ METRIC_RESCAN_CPU_US, 0, a->rescan_cpu_ns / NS_PER_US },
		{ METRIC_INPUT_GUARDS, METRIC_GUARD_PIDS_UNPREPARED, a->pids_unprepared },
		{ METRIC_PROFILES_WRITTEN, 0, a->output.profiles_written },
		{ METRIC_PROFILE_WRITE_ERRORS, 0, a->output.write_errors },
		{ METRIC_OUTPUT_DIR_RECREATED, 0, a->output.out.dir_recreated },
		{ METRIC_TEMP_FILES_REMOVED, 0, a->output.out.temp_removed },
	};

	set_rows(a->metrics.reg, rows, ROWS(rows));
	publish_symbols(a, &hs);
}

static void publish_upload(struct agent *a)
{
	struct upload_stats us;

	if (!a->output.uploader)
		return;
	uploader_get_stats(a->output.uploader, &us);

	const struct metric_row rows[] = {
		{ METRIC_UPLOADS, METRIC_UPLOAD_OK, us.requests_ok },
		{ METRIC_UPLOADS, METRIC_UPLOAD_RETRIED, us.requests_retried },
		{ METRIC_UPLOADS, METRIC_UPLOAD_REJECTED, us.requests_failed_4xx },
		{ METRIC_UPLOADS, METRIC_UPLOAD_FAILED,
		  us.dropped_queue_full + us.dropped_spool_full + us.dropped_too_old +
			  us.dropped_spool_error + us.dropped_shutdown },
		{ METRIC_UPLOAD_RETRIES, 0, us.retries },
		{ METRIC_LABELS_DROPPED, 0, us.labels_dropped },
		{ METRIC_QUEUE_BYTES, 0, us.queue_bytes },
		{ METRIC_SPOOL_BYTES, 0, us.spool_bytes },
	};

	set_rows(a->metrics.reg, rows, ROWS(rows));
}

_Static_assert(METRIC_MEM_BPF_OTHER - METRIC_MEM_BPF_WINDOWS + 1 == LOADER_MAPS__COUNT,
	       "a memory part per map group");

/* What the agent holds: its resident memory and the kernel memory of its maps (read from
 * /proc/self, a few dozen small reads: only when /metrics is served). */
static void publish_memory(struct agent *a)
{
	uint64_t maps[LOADER_MAPS__COUNT], rss, total;
	struct python_symbols_stats py;
	struct ruby_symbols_stats rb;
	struct interp_budget_stats bs;
	struct symcache_stats ss;
	unsigned int i;

	if (!a->metrics.http || self_memory_rss_in(&a->metrics.status, &rss) ||
	    loader_map_memory(a->loader, maps))
		return;
	total = rss;
	for (i = 0; i < LOADER_MAPS__COUNT; i++) {
		metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_BPF_WINDOWS + i,
			       maps[i]);
		total += maps[i];
	}
	symcache_get_stats(a->symcache, &ss);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_RSS, rss);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_HEAP, self_memory_heap());
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_DWARF, ss.dwarf_bytes);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_KERNEL_SYMBOLS,
		       ss.kernel_symbol_bytes);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_PERF_MAPS,
		       ss.perf_map_bytes);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_SYMBOLS, ss.symbol_bytes);
	python_symbols_get_stats(a->interp.pysyms, &py);
	ruby_symbols_get_stats(a->interp.rbsyms, &rb);
	interp_budget_get_stats(a->interp.budget, &bs);
	/* The caches and the budget's own records: at most --interp-cache-budget. */
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_INTERPRETERS,
		       py.bytes + rb.bytes + bs.own_bytes);
	metrics_set_at(a->metrics.reg, METRIC_MEMORY_BYTES, METRIC_MEM_TOTAL, total);
}

/* Drains between two checks of the maps that grow as they fill: a check walks a map's keys. */
#define GROW_CHECK_EVERY 5

/* Grows goroutine_spans when it fills (map_grow.h) and publishes how full it is. */
static void grow_maps(struct agent *a)
{
	struct loader_map_use g;

	if (a->metrics.drains++ % GROW_CHECK_EVERY)
		return;
	loader_grow_maps(a->loader, &g);
	metrics_set_at(a->metrics.reg, METRIC_GO_SPAN_MAP, METRIC_MAP_USE_ENTRIES, g.entries);
	metrics_set_at(a->metrics.reg, METRIC_GO_SPAN_MAP, METRIC_MAP_USE_CAPACITY, g.capacity);
	metrics_set_at(a->metrics.reg, METRIC_GO_SPAN_MAP, METRIC_MAP_USE_LIMIT, g.limit);
	metrics_set(a->metrics.reg, METRIC_GO_SPAN_MAP_GROWN, g.grown);
	metrics_set(a->metrics.reg, METRIC_GO_SPAN_MAP_FULL, g.full);
}

void agent_publish_metrics(struct agent *a)
{
	grow_maps(a);
	publish_memory(a);
	publish_kernel(a);
	publish_user(a);
	publish_unwind(a);
	publish_interpreters(a);
	publish_upload(a);
}
