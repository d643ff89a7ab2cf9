/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's own counters and gauges: a fixed registry written by the agent's threads and
 * rendered in the Prometheus text format (0.0.4) for the metrics server (metrics_http.h). */
#ifndef SPANPROF_METRICS_H
#define SPANPROF_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "util/spanprof_types.h"

/* Every metric the agent publishes. Names and HELP texts are in metrics.c. */
enum metric_id {
	METRIC_BUILD_INFO = 0, /* gauge 1, label version */
	METRIC_SAMPLES, /* counter: samples drained from the kernel */
	METRIC_SAMPLES_DROPPED, /* counter, label reason: enum spanprof_drop, metric_drop */
	METRIC_SPAN_EVENTS, /* counter, label event: enum metric_span_event */
	METRIC_HOOK_UPROBE_ENTRIES, /* counter: entries of ABI 3 hooks into the uprobe */
	METRIC_HOOKS_ATTACHED, /* gauge: files with the hook that carry a uprobe */
	METRIC_PROCESSES_TRACKED, /* gauge */
	METRIC_PROCESSES_REAPED, /* counter: tracked processes found dead with no exit event */
	METRIC_HOOK_FILES_REFUSED, /* counter: mapped files not opened as a hook (see hook_open.h) */
	METRIC_HOOK_PROCESSES_FULL, /* counter: processes mapping a hook not tracked: table full */
	METRIC_SYMCACHE_ENTRIES, /* gauge, label cache: enum metric_symcache */
	METRIC_SYMCACHE_LOOKUPS, /* counter, label result: enum metric_lookup */
	METRIC_WINDOWS_WRITTEN, /* counter: intervals flushed */
	METRIC_PROFILES_WRITTEN, /* counter: profiles written or queued for upload */
	METRIC_PROFILE_WRITE_ERRORS, /* counter: profiles lost to an encode or write error */
	METRIC_UPLOADS, /* counter, label result: enum metric_upload */
	METRIC_UPLOAD_RETRIES, /* counter: failed attempts that were retried */
	METRIC_QUEUE_BYTES, /* gauge: bytes waiting in the upload queue (memory) */
	METRIC_SPOOL_BYTES, /* gauge: bytes in the spool directory */
	METRIC_LABELS_DROPPED, /* counter: static labels left out to fit the series limit */
	METRIC_OUTPUT_DIR_RECREATED, /* counter: the output directory vanished and was made again */
	METRIC_TEMP_FILES_REMOVED, /* counter: temp files of a killed run removed at start */
	METRIC_INPUT_GUARDS, /* counter, label guard: enum metric_guard */
	METRIC_DWARF_BYTES, /* gauge: DWARF bytes held by the symbol cache */
	METRIC_LAST_WINDOW_AGE, /* gauge: seconds since a window was last written */
	METRIC_USER_STACKS, /* counter, label unwinder: enum metric_unwinder */
	METRIC_UNWIND_FP_FRAMES, /* counter: frames walked by frame pointer (files without CFI) */
	METRIC_UNWIND_FILES, /* gauge, label state: enum unwind_file_state */
	METRIC_UNWIND_TABLE_BYTES, /* gauge, label kind: enum metric_table_bytes */
	METRIC_UNWIND_EVICTIONS, /* counter: tables evicted for the memory budget (LRU) */
	METRIC_UNWIND_BUILD_MS, /* counter: worker milliseconds spent building tables */
	METRIC_UNWIND_TEXT_BYTES, /* counter: executable bytes of the files whose table was built */
	METRIC_UNWIND_MAPPINGS_DROPPED, /* counter, label kind: enum metric_mapping_kind */
	METRIC_OFF_CPU_PERIODS, /* counter, label result: enum metric_off_cpu */
	METRIC_OFF_CPU_STACKS, /* counter, label unwinder: enum metric_unwinder */
	METRIC_OFF_CPU_MAP_ENTRIES, /* gauge, label map: enum metric_off_cpu_map */
	METRIC_SWITCH_INS_CAUGHT_UP, /* counter, label kind: enum metric_caught_up */
	METRIC_INTERP_PROCESSES, /* gauge, label interpreter: enum metric_interp */
	METRIC_INTERP_UNREAD, /* counter, label reason: enum metric_interp_unread */
	METRIC_FAIR_SHARE, /* counter, label bound: enum metric_fair_bound */
	METRIC_LOG_SUPPRESSED, /* counter, label reason: enum log_suppressed_reason (util/log.h) */
	METRIC_MEMORY_BYTES, /* gauge, label part: enum metric_memory_part */
	METRIC_OTHER_SPAN_SAMPLES, /* counter, label source: enum metric_span_source */
	METRIC_THREAD_CTX_PROCESSES, /* gauge: processes whose thread context is read or awaited */
	METRIC_RESCAN_PROCESSES, /* counter, label result: enum metric_rescan */
	METRIC_RESCANS, /* counter: periodic rescans */
	METRIC_RESCAN_CPU_US, /* counter: the loop thread's CPU microseconds in periodic rescans */
	METRIC_INTERP_FRAMES_DROPPED, /* counter, label interpreter: enum metric_interp */
	METRIC_PYTHON_CODE_CACHE, /* counter, label result: enum metric_interp_cache */
	METRIC_RUBY_ISEQ_CACHE, /* counter, label result: enum metric_interp_cache */
	METRIC_GO_SPAN_MAP, /* gauge, label kind: enum metric_map_use (goroutine_spans) */
	METRIC_GO_SPAN_MAP_GROWN, /* counter: goroutine_spans replaced by a bigger map */
	METRIC_GO_SPAN_MAP_FULL, /* counter: checks finding goroutine_spans at its limit, 3/4 full */
	METRIC_BPF_MAP_FULL, /* counter, label map: enum metric_bpf_map_full */
	METRIC__COUNT,
};

/* Drop reasons: the BPF ones are enum spanprof_drop (spanprof_abi.h) as they are; those that
 * user space counts follow. */
enum metric_drop {
	METRIC_DROP_SERVICE_OVERFLOW = SPANPROF_DROP__COUNT, /* too many services in a window */
	METRIC_DROP_ENCODE_ERROR, /* the profile builder failed */
	METRIC_DROP_SPAN_LOG, /* an ended span's record not written to its .spans.jsonl */
	METRIC_DROP__COUNT,
};

enum metric_span_event { METRIC_SPAN_SET = 0, METRIC_SPAN_CLEAR };
enum metric_off_cpu { METRIC_OFF_CPU_COUNTED = 0, METRIC_OFF_CPU_SHORT };
/* Whose switch in sched_switch missed was caught up: a hook span's segment, a wait under a
 * thread context record. */
enum metric_caught_up { METRIC_CAUGHT_UP_SPAN = 0, METRIC_CAUGHT_UP_THREAD_CTX };
enum metric_symcache { METRIC_SYMCACHE_MODULES = 0, METRIC_SYMCACHE_PIDS };
enum metric_lookup { METRIC_LOOKUP_HIT = 0, METRIC_LOOKUP_MISS };
enum metric_unwinder { METRIC_UNWINDER_CFI = 0, METRIC_UNWINDER_FP };
/* The off-CPU maps of the last drained window, by what they hold. */
enum metric_off_cpu_map {
	METRIC_OFF_CPU_MAP_COUNTS = 0, /* (stacks, span) keys; --off-cpu-map-entries at most */
	METRIC_OFF_CPU_MAP_STACKS, /* kernel and user stacks (the shared map in frame-pointer mode) */
	METRIC_OFF_CPU_MAP_INTERP_STACKS, /* Python and Ruby stacks */
};
enum metric_table_bytes { METRIC_TABLE_BYTES_USED = 0, METRIC_TABLE_BYTES_BUDGET };
/* A map that grows as it fills: entries in use, its size now, the size it stops at. */
enum metric_map_use { METRIC_MAP_USE_ENTRIES = 0, METRIC_MAP_USE_CAPACITY, METRIC_MAP_USE_LIMIT };
enum metric_interp { METRIC_INTERP_PYTHON = 0, METRIC_INTERP_RUBY };
enum metric_span_source { METRIC_SOURCE_THREAD_CTX = 0, METRIC_SOURCE_OBI };
/* Lookups in the caches of Python code objects and Ruby iseqs (python_symbols_stats,
 * ruby_symbols_stats), by result; evictions are entries dropped to stay within the byte budget,
 * refusals entries the budget would not take (named, not cached). */
enum metric_interp_cache {
	METRIC_ICACHE_HIT = 0,
	METRIC_ICACHE_MISS,
	METRIC_ICACHE_STALE,
	METRIC_ICACHE_READ_ERROR,
	METRIC_ICACHE_EVICTION,
	METRIC_ICACHE_REFUSED,
	METRIC_ICACHE__COUNT,
};
/* Scans that found an interpreter whose frames are not read: per interpreter, unsupported (its
 * version or build) or not tracked (--max-procs processes were). */
enum metric_interp_unread {
	METRIC_UNREAD_PYTHON_UNSUPPORTED = 0,
	METRIC_UNREAD_PYTHON_FULL,
	METRIC_UNREAD_RUBY_UNSUPPORTED,
	METRIC_UNREAD_RUBY_FULL,
};
/* Bounds on tables shared by every process that bit, so that one user's flood does not take
 * another's share (docs/security.md). */
enum metric_fair_bound {
	METRIC_FAIR_HOOK_SLOT_RECLAIMED = 0, /* a hook file detached for another user's */
	METRIC_FAIR_HOOK_SLOT_REFUSED, /* a hook file not attached: its user holds its share */
	METRIC_FAIR_SPAN_NAMES, /* span names not interned: the process's rate was spent */
	METRIC_FAIR_SPAN_RECORDS, /* span records not sent: the process's rate was spent */
	METRIC_FAIR_SPAN_STATS, /* span times put under the service's own "other" */
	METRIC_FAIR_SPAN_LOG_BUFFER, /* span records dropped: the service held its buffer share */
	METRIC_FAIR_SPAN_LOG_REMOVED, /* span log files removed to keep the total bound */
	METRIC_FAIR_UNWIND_REFUSED, /* unwind tables not built: the user holds its budget share */
	METRIC_FAIR_HOOK_PARSE_DEFERRED, /* hook files not queued for parsing: queue or share full */
	METRIC_FAIR_INTERP_PARSE_DEFERRED, /* interpreter files not queued: queue or share full */
	METRIC_FAIR_TCTX_PARSE_DEFERRED, /* thread-context module files not queued: the same */
	METRIC_FAIR_SERVICE_SLOT_REFUSED, /* samples dropped: their user held its window share */
	METRIC_FAIR_INTERP_CACHE_REFUSED, /* interpreter names not cached: user at its share */
	METRIC_FAIR__COUNT,
};
/* What a periodic rescan did with a process (scan_known.h). */
enum metric_rescan {
	METRIC_RESCAN_SKIPPED = 0, /* left alone: read since its last exec, no event lost */
	METRIC_RESCAN_UNTRACKED, /* read again each rescan: the set of read processes was full */
	METRIC_RESCAN_FULL, /* rescans that read every process (counts rescans, not processes) */
	METRIC_RESCAN_READ, /* read: new, changed, unknown, or in the rescan's slice */
};
enum metric_mapping_kind { METRIC_MAPPING_FILE = 0, METRIC_MAPPING_ANONYMOUS };
/* The agent's memory by part. total = rss + every bpf_* part (what its cgroup is charged);
 * heap is inside rss; dwarf, kernel_symbols, perf_maps, symbols and interpreters inside heap;
 * bpf_* are kernel
 * memory of BPF map groups (memlock in fdinfo), in the order of enum loader_map_group (loader.h).
 */
/* Fixed-size BPF maps (and the agent tables that mirror them) that refused an entry. */
enum metric_bpf_map_full {
	METRIC_MAP_FULL_PENDING_SCANS = 0, /* a rescan request sent unmarked */
	METRIC_MAP_FULL_UNWIND_RULES, /* CFI rows stored as "cannot unwind here" */
	METRIC_MAP_FULL_GO_PIDS, /* a Go process not marked: its goroutine spans are missing */
	METRIC_MAP_FULL_TCTX_PROCS, /* a process's thread context not read */
	METRIC_MAP_FULL_UNWIND_PROCS, /* a process's mappings not written: CFI unwinding off for it */
	METRIC_MAP_FULL__COUNT,
};
enum metric_memory_part {
	METRIC_MEM_TOTAL = 0,
	METRIC_MEM_RSS,
	METRIC_MEM_HEAP,
	METRIC_MEM_DWARF,
	METRIC_MEM_KERNEL_SYMBOLS,
	METRIC_MEM_PERF_MAPS,
	METRIC_MEM_SYMBOLS,
	METRIC_MEM_INTERPRETERS,
	METRIC_MEM_BPF_WINDOWS,
	METRIC_MEM_BPF_UNWIND,
	METRIC_MEM_BPF_SPANS,
	METRIC_MEM_BPF_OFF_CPU,
	METRIC_MEM_BPF_PROCESSES,
	METRIC_MEM_BPF_OTHER,
	METRIC_MEM__COUNT,
};

/* Caps and budgets on process-controlled input that were hit (symcache_stats). */
enum metric_guard {
	METRIC_GUARD_PERF_MAP_REFUSED = 0, /* symlink, FIFO/device or foreign owner */
	METRIC_GUARD_PERF_MAP_CAPPED, /* byte or line cap */
	METRIC_GUARD_LOAD_DEFERRED, /* load budget of a round spent */
	METRIC_GUARD_LOAD_OVERRUN, /* one load longer than a round's budget */
	METRIC_GUARD_DWARF_REFUSED, /* DWARF larger than the budget */
	METRIC_GUARD_DWARF_EVICTED, /* module closed to stay within the DWARF budget */
	METRIC_GUARD_PERF_MAP_BUDGET, /* perf map not kept: the perf map budget was spent */
	METRIC_GUARD_SECTION_REFUSED, /* ELF section over its stated maximum, or parse budget */
	METRIC_GUARD_CFI_BUDGET, /* unwind table build over its step or time budget */
	METRIC_GUARD_PERF_MAP_SKIPPED, /* perf map re-read skipped: unchanged, or budget spent */
	METRIC_GUARD_TCTX_DEFERRED, /* thread-context work put off: a drain's cap or time spent */
	METRIC_GUARD_SYMBOL_EVICTED, /* module closed to stay within the symbol budget */
	METRIC_GUARD_PIDS_UNPREPARED, /* processes of a drain past --max-pid-snapshots */
	METRIC_GUARD_INTERP_DEFERRED, /* interpreter file parse put off: the parse thread has it */
	METRIC_GUARD_INTERP_EVICTED, /* interpreter file verdict forgotten: the LRU was full */
	METRIC_GUARD_TCTX_FILE_DEFERRED, /* thread-context module parse put off to its thread */
	METRIC_GUARD_TCTX_FILE_EVICTED, /* thread-context module verdict forgotten: LRU full */
	METRIC_GUARD_HOOK_VERDICTS_RESET, /* files known to have no hook all forgotten: set full */
	METRIC_GUARD_SYMBOL_DEFERRED, /* symbol table read put off: the drain's tables fill it */
	METRIC_GUARD_SYMBOL_REFUSED, /* symbol tables alone larger than the symbol budget */
	METRIC_GUARD__COUNT,
};

/* Push requests (one profile each) by outcome; they map onto struct upload_stats. */
enum metric_upload {
	METRIC_UPLOAD_OK = 0, /* accepted (2xx): requests_ok */
	METRIC_UPLOAD_RETRIED, /* needed at least one retry: requests_retried */
	METRIC_UPLOAD_REJECTED, /* refused by the server, not retried: requests_failed_4xx */
	METRIC_UPLOAD_FAILED, /* given up: the dropped_* counts other than rejected/encode */
};

/* Label values per metric: the largest label set is the drop reasons. */
#define METRIC_MAX_LABEL_VALUES METRIC_DROP__COUNT

/* A zeroed registry, not ready. NULL with errno = ENOMEM. */
struct metrics *metrics_new(void);
void metrics_free(struct metrics *m); /* NULL-safe */

/* Setters, safe from any thread. Every one accepts m == NULL (no metrics: nothing happens) and
 * ignores an id or label out of range. `label` indexes the metric's label values (the enums
 * above); metrics without a label take the plain forms. Counters may be set too: to mirror a
 * running total the agent already keeps (BPF drop counts, aggregate stats). */
void metrics_add(struct metrics *m, enum metric_id id, uint64_t delta);
void metrics_set(struct metrics *m, enum metric_id id, uint64_t value);
void metrics_add_at(struct metrics *m, enum metric_id id, unsigned int label, uint64_t delta);
void metrics_set_at(struct metrics *m, enum metric_id id, unsigned int label, uint64_t value);
uint64_t metrics_get(const struct metrics *m, enum metric_id id, unsigned int label);

/* Readiness for /readyz: false until the agent has attached and started sampling. */
/* The label text of a drop reason (enum spanprof_drop or enum metric_drop), e.g.
 * "counts_map_full"; "unknown" out of range. */
const char *metrics_drop_reason_name(unsigned int reason);

void metrics_set_ready(struct metrics *m, int ready);
int metrics_is_ready(const struct metrics *m);

/* Liveness: the agent is healthy while a window was written (metrics_window_written(), times
 * on CLOCK_MONOTONIC in ns) no more than stale_after_ns ago. Until metrics_set_stale_after() is
 * called (0 = never stale) or the first window, the start counts as the last window. */
void metrics_set_stale_after(struct metrics *m, uint64_t now_ns, uint64_t stale_after_ns);
void metrics_window_written(struct metrics *m, uint64_t now_ns);
/* 1 when healthy at now_ns; *age_ns (may be NULL) gets the time since the last window. */
int metrics_is_healthy(const struct metrics *m, uint64_t now_ns, uint64_t *age_ns);

/* Metrics whose label values are data, not a fixed set (span_stats.h): rendered by their owner
 * after the registry's. Returns 0 or -EIO. */
typedef int (*metrics_render_fn)(void *ctx, FILE *out);

/* Adds fn(ctx, out) to every metrics_render(). Call before the metrics server starts (the
 * server's thread reads it unlocked); fn must be safe to call from that thread. */
void metrics_set_extra(struct metrics *m, metrics_render_fn fn, void *ctx);

/* Writes every metric in the Prometheus text exposition format 0.0.4: # HELP, # TYPE, then one
 * line per label value, then the extra renderer's. Returns 0, or -EIO if the stream failed. */
int metrics_render(const struct metrics *m, FILE *out);

#endif /* SPANPROF_METRICS_H */
