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
	metrics_http_stop(a->metrics.http);
	metrics_free(a->metrics.reg);
	a->metrics.http = NULL;
	a->metrics.reg = NULL;
}

static void publish_kernel(struct agent *a)
{
	uint64_t drops[SPANPROF_DROP__COUNT], events[SPANPROF_EVENT__COUNT];
	struct drain_stats ds;
	unsigned int i;

	struct span_names_stats ns = { 0 };

	metrics_set(a->metrics.reg, METRIC_THREAD_CTX_PROCESSES, agent_thread_ctx_count(a));
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_TCTX_DEFERRED,
		       agent_thread_ctx_deferred(a));
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
		metrics_set_at(a->metrics.reg, METRIC_SPAN_EVENTS, METRIC_SPAN_SET,
			       events[SPANPROF_EVENT_SPAN_SET]);
		metrics_set_at(a->metrics.reg, METRIC_SPAN_EVENTS, METRIC_SPAN_CLEAR,
			       events[SPANPROF_EVENT_SPAN_CLEAR]);
		metrics_set_at(a->metrics.reg, METRIC_USER_STACKS, METRIC_UNWINDER_CFI,
			       events[SPANPROF_EVENT_UNWIND_CFI]);
		metrics_set_at(a->metrics.reg, METRIC_USER_STACKS, METRIC_UNWINDER_FP,
			       events[SPANPROF_EVENT_UNWIND_FP]);
		metrics_set(a->metrics.reg, METRIC_UNWIND_FP_FRAMES,
			    events[SPANPROF_EVENT_UNWIND_FP_FRAMES]);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_PERIODS, METRIC_OFF_CPU_COUNTED,
			       events[SPANPROF_EVENT_OFF_CPU]);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_PERIODS, METRIC_OFF_CPU_SHORT,
			       events[SPANPROF_EVENT_OFF_CPU_SHORT]);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_STACKS, METRIC_UNWINDER_CFI,
			       events[SPANPROF_EVENT_OFF_CPU_UNWIND_CFI]);
		metrics_set_at(a->metrics.reg, METRIC_OFF_CPU_STACKS, METRIC_UNWINDER_FP,
			       events[SPANPROF_EVENT_OFF_CPU_UNWIND_FP]);
		metrics_set_at(a->metrics.reg, METRIC_OTHER_SPAN_SAMPLES, METRIC_SOURCE_THREAD_CTX,
			       events[SPANPROF_EVENT_TCTX_SPAN]);
		metrics_set_at(a->metrics.reg, METRIC_OTHER_SPAN_SAMPLES, METRIC_SOURCE_OBI,
			       events[SPANPROF_EVENT_OBI_SPAN]);
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

	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_REFUSED,
		       ss->perf_maps_refused);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_CAPPED, ss->perf_maps_capped);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_LOAD_DEFERRED, ss->loads_deferred);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_LOAD_OVERRUN, ss->load_overruns);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_DWARF_REFUSED, ss->dwarf_refused);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_DWARF_EVICTED, ss->dwarf_evictions);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_BUDGET,
		       ss->perf_maps_over_budget);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_PERF_MAP_SKIPPED,
		       ss->perf_map_rereads_skipped);
	metrics_set_at(m, METRIC_INPUT_GUARDS, METRIC_GUARD_SYMBOL_EVICTED, ss->symbol_evictions);
	metrics_set(m, METRIC_DWARF_BYTES, ss->dwarf_bytes);
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
	metrics_set_at(a->metrics.reg, METRIC_UNWIND_TABLE_BYTES, METRIC_TABLE_BYTES_USED,
		       (uint64_t)st.store.chunks_used * sizeof(struct spanprof_unwind_chunk));
	metrics_set_at(a->metrics.reg, METRIC_UNWIND_TABLE_BYTES, METRIC_TABLE_BYTES_BUDGET,
		       (uint64_t)st.store.chunks_total * sizeof(struct spanprof_unwind_chunk));
	metrics_set(a->metrics.reg, METRIC_UNWIND_EVICTIONS, st.files.evicted);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_UNWIND_REFUSED,
		       st.files.fair_refused);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_CFI_BUDGET,
		       st.files.budget_spent);
	metrics_set(a->metrics.reg, METRIC_UNWIND_BUILD_MS, st.files.build_us / 1000);
	metrics_set(a->metrics.reg, METRIC_UNWIND_TEXT_BYTES, st.files.text_bytes);
	metrics_set_at(a->metrics.reg, METRIC_UNWIND_MAPPINGS_DROPPED, METRIC_MAPPING_FILE,
		       st.mappings_dropped);
	metrics_set_at(a->metrics.reg, METRIC_UNWIND_MAPPINGS_DROPPED, METRIC_MAPPING_ANONYMOUS,
		       st.anon_dropped);
}

static void publish_interp_cache(struct metrics *m, enum metric_id id, uint64_t hits,
				 uint64_t misses, uint64_t stale, uint64_t read_errors,
				 uint64_t evictions)
{
	metrics_set_at(m, id, METRIC_ICACHE_HIT, hits);
	metrics_set_at(m, id, METRIC_ICACHE_MISS, misses);
	metrics_set_at(m, id, METRIC_ICACHE_STALE, stale);
	metrics_set_at(m, id, METRIC_ICACHE_READ_ERROR, read_errors);
	metrics_set_at(m, id, METRIC_ICACHE_EVICTION, evictions);
}

static void publish_interp_caches(struct agent *a)
{
	struct python_symbols_stats py;
	struct ruby_symbols_stats rb;

	python_symbols_get_stats(a->interp.pysyms, &py);
	ruby_symbols_get_stats(a->interp.rbsyms, &rb);
	publish_interp_cache(a->metrics.reg, METRIC_PYTHON_CODE_CACHE, py.hits, py.misses, py.stale,
			     py.read_errors, py.evictions);
	publish_interp_cache(a->metrics.reg, METRIC_RUBY_ISEQ_CACHE, rb.hits, rb.misses, rb.stale,
			     rb.read_errors, rb.evictions);
}

static void publish_interpreters(struct agent *a)
{
	struct interp_procs_stats py, rb;

	interp_procs_get_stats(a->interp.pyprocs, &py);
	interp_procs_get_stats(a->interp.rbprocs, &rb);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_PROCESSES, METRIC_INTERP_PYTHON, py.supported);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_PROCESSES, METRIC_INTERP_RUBY, rb.supported);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_UNREAD, METRIC_UNREAD_PYTHON_UNSUPPORTED,
		       py.unsupported);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_UNREAD, METRIC_UNREAD_PYTHON_FULL, py.full);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_UNREAD, METRIC_UNREAD_RUBY_UNSUPPORTED,
		       rb.unsupported);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_UNREAD, METRIC_UNREAD_RUBY_FULL, rb.full);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_FRAMES_DROPPED, METRIC_INTERP_PYTHON,
		       a->interp.py_frames_dropped);
	metrics_set_at(a->metrics.reg, METRIC_INTERP_FRAMES_DROPPED, METRIC_INTERP_RUBY,
		       a->interp.rb_frames_dropped);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_INTERP_DEFERRED,
		       py.files.deferred + rb.files.deferred);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_INTERP_EVICTED,
		       py.files.evicted + rb.files.evicted);
	publish_interp_caches(a);
}

static void publish_user(struct agent *a)
{
	struct hook_registry_stats hs;
	struct symcache_stats ss;
	struct aggregate_stats as;
	struct unwind_stats us;

	aggregate_get_stats(a->agg, &as);
	metrics_set(a->metrics.reg, METRIC_SAMPLES, as.samples);
	metrics_set_at(a->metrics.reg, METRIC_SAMPLES_DROPPED, METRIC_DROP_SERVICE_OVERFLOW,
		       as.service_overflow);
	metrics_set_at(a->metrics.reg, METRIC_SAMPLES_DROPPED, METRIC_DROP_ENCODE_ERROR,
		       as.encode_errors);
	hook_registry_get_stats(a->hooks, &hs);
	metrics_set(a->metrics.reg, METRIC_HOOKS_ATTACHED, hs.files_attached);
	metrics_set(a->metrics.reg, METRIC_HOOK_FILES_REFUSED, hs.open_refused);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_SLOT_RECLAIMED,
		       hs.slot_reclaims);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_SLOT_REFUSED,
		       hs.slot_refusals);
	metrics_set_at(a->metrics.reg, METRIC_FAIR_SHARE, METRIC_FAIR_HOOK_PARSE_DEFERRED,
		       hs.parse_deferred);
	metrics_set_at(a->metrics.reg, METRIC_LOG_SUPPRESSED, LOG_SUPPRESSED_RATE,
		       log_suppressed_total(LOG_SUPPRESSED_RATE));
	metrics_set_at(a->metrics.reg, METRIC_LOG_SUPPRESSED, LOG_SUPPRESSED_SOURCES_FULL,
		       log_suppressed_total(LOG_SUPPRESSED_SOURCES_FULL));
	metrics_set(a->metrics.reg, METRIC_PROCESSES_TRACKED, proc_table_count(a->procs));
	metrics_set(a->metrics.reg, METRIC_PROCESSES_REAPED, proc_table_reaped(a->procs));
	metrics_set_at(a->metrics.reg, METRIC_RESCAN_PROCESSES, METRIC_RESCAN_SKIPPED,
		       a->known.skipped);
	metrics_set_at(a->metrics.reg, METRIC_RESCAN_PROCESSES, METRIC_RESCAN_UNTRACKED,
		       a->known.untracked);
	metrics_set_at(a->metrics.reg, METRIC_RESCAN_PROCESSES, METRIC_RESCAN_FULL,
		       a->known.full_rescans);
	symcache_get_stats(a->symcache, &ss);
	metrics_set_at(a->metrics.reg, METRIC_SYMCACHE_ENTRIES, METRIC_SYMCACHE_MODULES,
		       ss.modules);
	metrics_set_at(a->metrics.reg, METRIC_SYMCACHE_ENTRIES, METRIC_SYMCACHE_PIDS, ss.pids);
	metrics_set_at(a->metrics.reg, METRIC_SYMCACHE_LOOKUPS, METRIC_LOOKUP_HIT, ss.hits);
	metrics_set_at(a->metrics.reg, METRIC_SYMCACHE_LOOKUPS, METRIC_LOOKUP_MISS, ss.misses);
	publish_guards(a->metrics.reg, &ss);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_PIDS_UNPREPARED,
		       a->pids_unprepared);
	/* Refused for size by any reader: hook discovery, symbolization, unwind tables. */
	unwind_get_stats(a->unwind, &us);
	metrics_set_at(a->metrics.reg, METRIC_INPUT_GUARDS, METRIC_GUARD_SECTION_REFUSED,
		       hs.oversized + ss.sections_refused + us.files.oversized);
	metrics_set(a->metrics.reg, METRIC_PROFILES_WRITTEN, a->output.profiles_written);
	metrics_set(a->metrics.reg, METRIC_PROFILE_WRITE_ERRORS, a->output.write_errors);
	metrics_set(a->metrics.reg, METRIC_OUTPUT_DIR_RECREATED, a->output.out.dir_recreated);
	metrics_set(a->metrics.reg, METRIC_TEMP_FILES_REMOVED, a->output.out.temp_removed);
}

static void publish_upload(struct agent *a)
{
	struct upload_stats us;

	if (!a->output.uploader)
		return;
	uploader_get_stats(a->output.uploader, &us);
	metrics_set_at(a->metrics.reg, METRIC_UPLOADS, METRIC_UPLOAD_OK, us.requests_ok);
	metrics_set_at(a->metrics.reg, METRIC_UPLOADS, METRIC_UPLOAD_RETRIED, us.requests_retried);
	metrics_set_at(a->metrics.reg, METRIC_UPLOADS, METRIC_UPLOAD_REJECTED,
		       us.requests_failed_4xx);
	metrics_set_at(a->metrics.reg, METRIC_UPLOADS, METRIC_UPLOAD_FAILED,
		       us.dropped_queue_full + us.dropped_spool_full + us.dropped_too_old +
			       us.dropped_spool_error + us.dropped_shutdown);
	metrics_set(a->metrics.reg, METRIC_UPLOAD_RETRIES, us.retries);
	metrics_set(a->metrics.reg, METRIC_LABELS_DROPPED, us.labels_dropped);
	metrics_set(a->metrics.reg, METRIC_QUEUE_BYTES, us.queue_bytes);
	metrics_set(a->metrics.reg, METRIC_SPOOL_BYTES, us.spool_bytes);
}

_Static_assert(METRIC_MEM_BPF_OTHER - METRIC_MEM_BPF_WINDOWS + 1 == LOADER_MAPS__COUNT,
	       "a memory part per map group");

/* What the agent holds: its resident memory and the kernel memory of its maps (read from
 * /proc/self, a few dozen small reads: only when /metrics is served). */
static void publish_memory(struct agent *a)
{
	uint64_t maps[LOADER_MAPS__COUNT], rss, total;
	struct symcache_stats ss;
	unsigned int i;

	if (!a->metrics.http || self_memory_rss(&rss) || loader_map_memory(a->loader, maps))
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
