// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The registry of the agent's metrics: one atomic value per (metric, label value), so the HTTP
 * thread reads whole values while the agent's threads write them; rendering to Prometheus text. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "output/metrics.h"
#include "util/log.h"

#ifndef SPANPROF_VERSION
#define SPANPROF_VERSION "dev"
#endif

enum metric_type { METRIC_COUNTER, METRIC_GAUGE };

struct metric_def {
	const char *name; /* counters end in _total */
	enum metric_type type;
	const char *help;
	const char *label; /* NULL: no label */
	const char *const *values; /* the label's values, indexed by the setters' `label` */
	unsigned int nvalues;
};

struct metrics {
	_Atomic uint64_t values[METRIC__COUNT][METRIC_MAX_LABEL_VALUES];
	atomic_int ready;
	_Atomic uint64_t last_window_ns, stale_after_ns;
	metrics_render_fn extra; /* NULL: none */
	void *extra_ctx;
};

/* A new enum spanprof_drop value needs its name below (and this count raised). */
_Static_assert(SPANPROF_DROP__COUNT == 35, "name every drop reason in drop_reasons");

static const char *const drop_reasons[METRIC_DROP__COUNT] = {
	[SPANPROF_DROP_COUNTS_FULL] = "counts_map_full",
	[SPANPROF_DROP_USER_STACK] = "user_stack_lost",
	[SPANPROF_DROP_KERN_STACK] = "kernel_stack_lost",
	[SPANPROF_DROP_SPAN_READ] = "span_read_failed",
	[SPANPROF_DROP_SPAN_STORAGE] = "span_storage_failed",
	[SPANPROF_DROP_SPAN_VERSION] = "span_bad_version",
	[SPANPROF_DROP_PROC_EVENT] = "proc_event_lost",
	[SPANPROF_DROP_GOROUTINE_FULL] = "goroutine_map_full",
	[SPANPROF_DROP_GOROUTINE_READ] = "goroutine_read_failed",
	[SPANPROF_DROP_GO_LABELS_READ] = "go_labels_read_failed",
	[SPANPROF_DROP_SPAN_NAME] = "span_name_lost",
	[SPANPROF_DROP_UNWIND_NO_MAPPING] = "unwind_no_mapping",
	[SPANPROF_DROP_UNWIND_NO_ROW] = "unwind_no_row",
	[SPANPROF_DROP_UNWIND_BAD_READ] = "unwind_bad_read",
	[SPANPROF_DROP_UNWIND_DEPTH] = "unwind_depth",
	[SPANPROF_DROP_UNWIND_STALE] = "unwind_table_evicted",
	[SPANPROF_DROP_PY_STACK] = "python_stacks_full",
	[SPANPROF_DROP_RB_STACK] = "ruby_stacks_full",
	[SPANPROF_DROP_RB_EC] = "ruby_ec_unreadable",
	[SPANPROF_DROP_OFF_CPU_STORAGE] = "off_cpu_storage_failed",
	[SPANPROF_DROP_OFF_CPU_FULL] = "off_cpu_map_full",
	[SPANPROF_DROP_SPAN_END_FULL] = "span_records_lost",
	[SPANPROF_DROP_SPAN_NAME_BUDGET] = "span_name_over_user_share",
	[SPANPROF_DROP_SPAN_END_BUDGET] = "span_record_over_user_share",
	[SPANPROF_DROP_OFF_CPU_USER_STACK] = "off_cpu_user_stack_lost",
	[SPANPROF_DROP_OFF_CPU_KERN_STACK] = "off_cpu_kernel_stack_lost",
	[SPANPROF_DROP_OFF_CPU_INTERP_STACK] = "off_cpu_interpreter_stacks_full",
	[SPANPROF_DROP_OFF_CPU_UNWIND_NO_MAPPING] = "off_cpu_unwind_no_mapping",
	[SPANPROF_DROP_OFF_CPU_UNWIND_NO_ROW] = "off_cpu_unwind_no_row",
	[SPANPROF_DROP_OFF_CPU_UNWIND_BAD_READ] = "off_cpu_unwind_bad_read",
	[SPANPROF_DROP_OFF_CPU_UNWIND_DEPTH] = "off_cpu_unwind_depth",
	[SPANPROF_DROP_OFF_CPU_UNWIND_STALE] = "off_cpu_unwind_table_evicted",
	[SPANPROF_DROP_TCTX_READ] = "thread_context_unreadable",
	[SPANPROF_DROP_TCTX_ATTRS] = "thread_context_attrs_cut",
	[SPANPROF_DROP_SPAN_RING_LOST] = "span_ring_lost",
	[METRIC_DROP_SERVICE_OVERFLOW] = "service_overflow",
	[METRIC_DROP_ENCODE_ERROR] = "encode_error",
	[METRIC_DROP_SPAN_LOG] = "span_log_dropped",
};

static const char
	*const span_events[] = { [METRIC_SPAN_SET] = "set", [METRIC_SPAN_CLEAR] = "clear" };
static const char *const symcache_kinds
	[] = { [METRIC_SYMCACHE_MODULES] = "modules", [METRIC_SYMCACHE_PIDS] = "pids" };
static const char
	*const lookup_results[] = { [METRIC_LOOKUP_HIT] = "hit", [METRIC_LOOKUP_MISS] = "miss" };
static const char *const upload_results[] = {
	[METRIC_UPLOAD_OK] = "ok",
	[METRIC_UPLOAD_RETRIED] = "retried",
	[METRIC_UPLOAD_REJECTED] = "rejected",
	[METRIC_UPLOAD_FAILED] = "failed",
};
static const char *const guards[] = {
	[METRIC_GUARD_PERF_MAP_REFUSED] = "perf_map_refused",
	[METRIC_GUARD_PERF_MAP_CAPPED] = "perf_map_capped",
	[METRIC_GUARD_LOAD_DEFERRED] = "load_deferred",
	[METRIC_GUARD_LOAD_OVERRUN] = "load_overrun",
	[METRIC_GUARD_DWARF_REFUSED] = "dwarf_refused",
	[METRIC_GUARD_DWARF_EVICTED] = "dwarf_evicted",
	[METRIC_GUARD_PERF_MAP_BUDGET] = "perf_map_budget",
	[METRIC_GUARD_SECTION_REFUSED] = "elf_section_refused",
	[METRIC_GUARD_CFI_BUDGET] = "cfi_budget_spent",
	[METRIC_GUARD_PERF_MAP_SKIPPED] = "perf_map_reread_skipped",
	[METRIC_GUARD_TCTX_DEFERRED] = "thread_ctx_deferred",
	[METRIC_GUARD_SYMBOL_EVICTED] = "symbol_evicted",
	[METRIC_GUARD_PIDS_UNPREPARED] = "pids_unprepared",
	[METRIC_GUARD_INTERP_DEFERRED] = "interp_file_deferred",
	[METRIC_GUARD_INTERP_EVICTED] = "interp_file_evicted",
	[METRIC_GUARD_TCTX_FILE_DEFERRED] = "thread_ctx_file_deferred",
	[METRIC_GUARD_TCTX_FILE_EVICTED] = "thread_ctx_file_evicted",
	[METRIC_GUARD_HOOK_VERDICTS_RESET] = "hook_verdicts_reset",
	[METRIC_GUARD_SYMBOL_DEFERRED] = "symbol_deferred",
	[METRIC_GUARD_SYMBOL_REFUSED] = "symbol_refused",
};
static const char *const
	unwinders[] = { [METRIC_UNWINDER_CFI] = "cfi", [METRIC_UNWINDER_FP] = "frame_pointer" };
/* By enum unwind_file_state (user/unwind/unwind_files.h). */
static const char *const file_states[] = { "building", "ready", "no_cfi", "failed", "evicted" };
static const char *const table_bytes
	[] = { [METRIC_TABLE_BYTES_USED] = "used", [METRIC_TABLE_BYTES_BUDGET] = "budget" };
static const char *const map_uses[] = { [METRIC_MAP_USE_ENTRIES] = "entries",
					[METRIC_MAP_USE_CAPACITY] = "capacity",
					[METRIC_MAP_USE_LIMIT] = "limit" };
static const char *const mapping_kinds
	[] = { [METRIC_MAPPING_FILE] = "file", [METRIC_MAPPING_ANONYMOUS] = "anonymous" };
static const char *const off_cpu_results
	[] = { [METRIC_OFF_CPU_COUNTED] = "counted", [METRIC_OFF_CPU_SHORT] = "short" };
static const char *const caught_up_kinds
	[] = { [METRIC_CAUGHT_UP_SPAN] = "span", [METRIC_CAUGHT_UP_THREAD_CTX] = "thread_context" };
static const char *const off_cpu_maps[] = {
	[METRIC_OFF_CPU_MAP_COUNTS] = "counts",
	[METRIC_OFF_CPU_MAP_STACKS] = "stacks",
	[METRIC_OFF_CPU_MAP_INTERP_STACKS] = "interpreter_stacks",
};
static const char *const
	interpreters[] = { [METRIC_INTERP_PYTHON] = "python", [METRIC_INTERP_RUBY] = "ruby" };
static const char *const interp_unread[] = {
	[METRIC_UNREAD_PYTHON_UNSUPPORTED] = "python_unsupported",
	[METRIC_UNREAD_PYTHON_FULL] = "python_table_full",
	[METRIC_UNREAD_RUBY_UNSUPPORTED] = "ruby_unsupported",
	[METRIC_UNREAD_RUBY_FULL] = "ruby_table_full",
};
/* By enum log_suppressed_reason (util/log.h). */
static const char *const log_reasons[] = {
	[LOG_SUPPRESSED_RATE] = "rate_limit",
	[LOG_SUPPRESSED_SOURCES_FULL] = "sources_full",
};
static const char *const fair_bounds[] = {
	[METRIC_FAIR_HOOK_SLOT_RECLAIMED] = "hook_slot_reclaimed",
	[METRIC_FAIR_HOOK_SLOT_REFUSED] = "hook_slot_refused",
	[METRIC_FAIR_SPAN_NAMES] = "span_names",
	[METRIC_FAIR_SPAN_RECORDS] = "span_records",
	[METRIC_FAIR_SPAN_STATS] = "span_stats",
	[METRIC_FAIR_SPAN_LOG_BUFFER] = "span_log_buffer",
	[METRIC_FAIR_SPAN_LOG_REMOVED] = "span_log_removed",
	[METRIC_FAIR_UNWIND_REFUSED] = "unwind_table_refused",
	[METRIC_FAIR_HOOK_PARSE_DEFERRED] = "hook_parse_deferred",
	[METRIC_FAIR_INTERP_PARSE_DEFERRED] = "interp_parse_deferred",
	[METRIC_FAIR_TCTX_PARSE_DEFERRED] = "thread_ctx_parse_deferred",
	[METRIC_FAIR_SERVICE_SLOT_REFUSED] = "service_slot_refused",
	[METRIC_FAIR_INTERP_CACHE_REFUSED] = "interp_cache_refused",
};
_Static_assert(sizeof(fair_bounds) / sizeof(fair_bounds[0]) == METRIC_FAIR__COUNT, "labels");
static const char *const bpf_maps_full[] = {
	[METRIC_MAP_FULL_PENDING_SCANS] = "pending_scans",
	[METRIC_MAP_FULL_UNWIND_RULES] = "unwind_rules",
	[METRIC_MAP_FULL_GO_PIDS] = "go_pids",
	[METRIC_MAP_FULL_TCTX_PROCS] = "tctx_procs",
	[METRIC_MAP_FULL_UNWIND_PROCS] = "unwind_procs",
};
_Static_assert(sizeof(bpf_maps_full) / sizeof(bpf_maps_full[0]) == METRIC_MAP_FULL__COUNT,
	       "labels");
static const char *const memory_parts[] = {
	[METRIC_MEM_TOTAL] = "total",
	[METRIC_MEM_RSS] = "rss",
	[METRIC_MEM_HEAP] = "heap",
	[METRIC_MEM_DWARF] = "dwarf",
	[METRIC_MEM_KERNEL_SYMBOLS] = "kernel_symbols",
	[METRIC_MEM_PERF_MAPS] = "perf_maps",
	[METRIC_MEM_SYMBOLS] = "symbols",
	[METRIC_MEM_INTERPRETERS] = "interpreters",
	[METRIC_MEM_BPF_WINDOWS] = "bpf_windows",
	[METRIC_MEM_BPF_UNWIND] = "bpf_unwind",
	[METRIC_MEM_BPF_SPANS] = "bpf_spans",
	[METRIC_MEM_BPF_OFF_CPU] = "bpf_off_cpu",
	[METRIC_MEM_BPF_PROCESSES] = "bpf_processes",
	[METRIC_MEM_BPF_OTHER] = "bpf_other",
};
_Static_assert(sizeof(memory_parts) / sizeof(memory_parts[0]) == METRIC_MEM__COUNT, "parts");
_Static_assert((int)METRIC_MEM__COUNT <= (int)METRIC_MAX_LABEL_VALUES, "parts");
static const char *const span_sources
	[] = { [METRIC_SOURCE_THREAD_CTX] = "thread_context", [METRIC_SOURCE_OBI] = "obi" };
static const char *const rescan_results[] = { [METRIC_RESCAN_SKIPPED] = "skipped",
					      [METRIC_RESCAN_UNTRACKED] = "untracked",
					      [METRIC_RESCAN_FULL] = "full_rescan",
					      [METRIC_RESCAN_READ] = "read" };
static const char *const interp_cache_results[] = {
	[METRIC_ICACHE_HIT] = "hit",	       [METRIC_ICACHE_MISS] = "miss",
	[METRIC_ICACHE_STALE] = "stale",       [METRIC_ICACHE_READ_ERROR] = "read_error",
	[METRIC_ICACHE_EVICTION] = "eviction", [METRIC_ICACHE_REFUSED] = "refused",
};
_Static_assert(sizeof(interp_cache_results) / sizeof(interp_cache_results[0]) ==
		       METRIC_ICACHE__COUNT,
	       "labels");
static const char *const versions[] = { SPANPROF_VERSION };

#define LABELLED(label, values) label, values, sizeof(values) / sizeof(values[0])

static const struct metric_def defs[METRIC__COUNT] = {
	[METRIC_BUILD_INFO] = { "spanprof_build_info", METRIC_GAUGE,
				"Always 1; the version label says which spanprof runs.",
				LABELLED("version", versions) },
	[METRIC_SAMPLES] = { "spanprof_samples_total", METRIC_COUNTER,
			     "CPU samples drained from the kernel." },
	[METRIC_SAMPLES_DROPPED] = { "spanprof_samples_dropped_total", METRIC_COUNTER,
				     "Samples or span updates lost or degraded, by reason.",
				     LABELLED("reason", drop_reasons) },
	[METRIC_SPAN_EVENTS] = { "spanprof_span_events_total", METRIC_COUNTER,
				 "Span changes seen from the hook: a span set, or cleared.",
				 LABELLED("event", span_events) },
	[METRIC_HOOK_UPROBE_ENTRIES] = { "spanprof_hook_uprobe_entries_total", METRIC_COUNTER,
					 "Entries of the span hook (ABI 3) into the uprobe: a thread "
					 "registering, a root name not sent yet, every 256 changes, or "
					 "a change 1e9 ticks of its clock after the last entry." },
	[METRIC_HOOKS_ATTACHED] = { "spanprof_hooks_attached", METRIC_GAUGE,
				    "Files carrying the span hook that have a uprobe attached." },
	[METRIC_PROCESSES_TRACKED] = { "spanprof_processes_tracked", METRIC_GAUGE,
				       "Processes the agent keeps state for." },
	[METRIC_PROCESSES_REAPED] = { "spanprof_processes_reaped_total", METRIC_COUNTER,
				      "Tracked processes found gone by the liveness check, whose "
				      "exit event was lost." },
	[METRIC_HOOK_FILES_REFUSED] = { "spanprof_hook_files_refused_total", METRIC_COUNTER,
					"Mapped files not opened as hook candidates: replaced since "
					"maps was read, not regular, or unreadable." },
	[METRIC_HOOK_PROCESSES_FULL] = { "spanprof_hook_processes_full_total", METRIC_COUNTER,
					 "Processes mapping a span hook that were not tracked: the "
					 "agent's process limit was tracked already." },
	[METRIC_SYMCACHE_ENTRIES] = { "spanprof_symcache_entries", METRIC_GAUGE,
				      "Entries in the symbolization caches, by cache.",
				      LABELLED("cache", symcache_kinds) },
	[METRIC_SYMCACHE_LOOKUPS] = { "spanprof_symcache_lookups_total", METRIC_COUNTER,
				      "Symbolization cache lookups, by result.",
				      LABELLED("result", lookup_results) },
	[METRIC_WINDOWS_WRITTEN] = { "spanprof_windows_written_total", METRIC_COUNTER,
				     "Profiling intervals flushed." },
	[METRIC_PROFILES_WRITTEN] = { "spanprof_profiles_written_total", METRIC_COUNTER,
				      "Profiles written to disk or queued for upload." },
	[METRIC_PROFILE_WRITE_ERRORS] = { "spanprof_profile_write_errors_total", METRIC_COUNTER,
					  "Profiles lost to an encoding or write error." },
	[METRIC_UPLOADS] = { "spanprof_uploads_total", METRIC_COUNTER,
			     "Push requests by outcome: ok (accepted), retried (needed a retry), "
			     "rejected (refused by the server), failed (given up).",
			     LABELLED("result", upload_results) },
	[METRIC_UPLOAD_RETRIES] = { "spanprof_upload_retries_total", METRIC_COUNTER,
				    "Failed push attempts that were retried." },
	[METRIC_QUEUE_BYTES] = { "spanprof_upload_queue_bytes", METRIC_GAUGE,
				 "Bytes of profiles waiting in the in-memory upload queue." },
	[METRIC_SPOOL_BYTES] = { "spanprof_spool_bytes", METRIC_GAUGE,
				 "Bytes of profiles waiting in the spool directory." },
	[METRIC_LABELS_DROPPED] = { "spanprof_labels_dropped_total", METRIC_COUNTER,
				    "--label labels left out of pushes so that, with the sample labels "
				    "the server lifts, a series keeps within 30 labels." },
	[METRIC_OUTPUT_DIR_RECREATED] = { "spanprof_output_dir_recreated_total", METRIC_COUNTER,
					  "Times the output directory was gone and was created "
					  "again." },
	[METRIC_TEMP_FILES_REMOVED] = { "spanprof_temp_files_removed_total", METRIC_COUNTER,
					"Temporary files of an interrupted run removed at start." },
	[METRIC_INPUT_GUARDS] = { "spanprof_input_guards_total", METRIC_COUNTER,
				  "Caps and budgets on process-controlled files that were hit.",
				  LABELLED("guard", guards) },
	[METRIC_DWARF_BYTES] = { "spanprof_dwarf_bytes", METRIC_GAUGE,
				 "Decompressed DWARF bytes the symbol cache holds." },
	[METRIC_LAST_WINDOW_AGE] = { "spanprof_last_window_age_seconds", METRIC_GAUGE,
				     "Seconds since a window was last written (at the last drain)." },
	[METRIC_USER_STACKS] = { "spanprof_user_stacks_total", METRIC_COUNTER,
				 "User stacks by unwinder: cfi (the files' .eh_frame tables) or "
				 "frame_pointer (a process with no tables yet).",
				 LABELLED("unwinder", unwinders) },
	[METRIC_UNWIND_FP_FRAMES] = { "spanprof_unwind_fp_frames_total", METRIC_COUNTER,
				      "Frames in files without CFI and in anonymous executable "
				      "memory (JIT code), walked by frame pointer or through a "
				      "plain epilogue." },
	[METRIC_UNWIND_FILES] = { "spanprof_unwind_files", METRIC_GAUGE,
				  "ELF files known to the unwinder, by table state.",
				  LABELLED("state", file_states) },
	[METRIC_UNWIND_TABLE_BYTES] = { "spanprof_unwind_table_bytes", METRIC_GAUGE,
					"Kernel memory for unwind rows: used, and the budget.",
					LABELLED("kind", table_bytes) },
	[METRIC_UNWIND_EVICTIONS] = { "spanprof_unwind_table_evictions_total", METRIC_COUNTER,
				      "Unwind tables evicted (least recently sampled, from the user holding the most) for room." },
	[METRIC_UNWIND_BUILD_MS] = { "spanprof_unwind_build_milliseconds_total", METRIC_COUNTER,
				     "Time the worker thread spent building unwind tables." },
	[METRIC_UNWIND_TEXT_BYTES] = { "spanprof_unwind_text_bytes_total", METRIC_COUNTER,
				       "Executable bytes of the files whose unwind table was built." },
	[METRIC_UNWIND_MAPPINGS_DROPPED] = { "spanprof_unwind_mappings_dropped_total",
					     METRIC_COUNTER,
					     "Executable mappings left out of a process's published "
					     "set (256 at most; files first), per publish.",
					     LABELLED("kind", mapping_kinds) },
	[METRIC_OFF_CPU_PERIODS] = { "spanprof_off_cpu_periods_total", METRIC_COUNTER,
				     "Waits of threads in spans: counted in the off-CPU profile, or "
				     "short (below --off-cpu-min).",
				     LABELLED("result", off_cpu_results) },
	[METRIC_OFF_CPU_STACKS] = { "spanprof_off_cpu_stacks_total", METRIC_COUNTER,
				    "Off-CPU user stacks taken, by unwinder: CFI tables, or frame "
				    "pointers (no tables yet, or --off-cpu-unwind=fp).",
				    LABELLED("unwinder", unwinders) },
	[METRIC_OFF_CPU_MAP_ENTRIES] = { "spanprof_off_cpu_map_entries", METRIC_GAUGE,
					 "Entries of the last drained off-CPU window's maps.",
					 LABELLED("map", off_cpu_maps) },
	[METRIC_SWITCH_INS_CAUGHT_UP] = { "spanprof_switch_ins_caught_up_total", METRIC_COUNTER,
					  "Switches in that sched_switch did not report, caught up "
					  "at the end of __schedule(): a span segment's, or a wait's "
					  "under a thread context record.",
					  LABELLED("kind", caught_up_kinds) },
	[METRIC_INTERP_PROCESSES] = { "spanprof_interpreter_processes", METRIC_GAUGE,
				      "Processes whose Python or Ruby frames the sampler reads.",
				      LABELLED("interpreter", interpreters) },
	[METRIC_INTERP_UNREAD] = { "spanprof_interpreter_unread_total", METRIC_COUNTER,
				   "Scans that found a Python or Ruby interpreter whose frames are "
				   "not read: unsupported, or the process table was full.",
				   LABELLED("reason", interp_unread) },
	[METRIC_FAIR_SHARE] = { "spanprof_fair_share_limited_total", METRIC_COUNTER,
				"Times a per-user or per-service share of a table shared by all "
				"processes was enforced, by bound (see docs/security.md).",
				LABELLED("bound", fair_bounds) },
	[METRIC_LOG_SUPPRESSED] = { "spanprof_log_suppressed_total", METRIC_COUNTER,
				    "Warnings not printed, by reason: rate_limit, their source (a "
				    "pid or file) repeated them past the rate limit; sources_full, "
				    "the log's table of sources was full and the newcomers of their "
				    "kind had used their allowance (docs/security.md).",
				    LABELLED("reason", log_reasons) },
	[METRIC_MEMORY_BYTES] = { "spanprof_memory_bytes", METRIC_GAUGE,
				  "The agent's memory by part, at the last drain. total: rss plus "
				  "every bpf_* part, what the agent's cgroup is charged. rss: "
				  "resident memory (/proc/self/status VmRSS), which holds heap "
				  "(bytes malloc handed out), itself holding dwarf (debug info "
				  "kept for symbols), kernel_symbols (the kallsyms table), "
				  "perf_maps (JIT symbols), symbols (ELF symbol tables) and "
				  "interpreters (the Python and Ruby name caches). "
				  "bpf_*: kernel memory of the BPF maps of a group, as "
				  "memlock in /proc/self/fdinfo: windows (sample counts and "
				  "stacks), unwind (CFI tables, process mappings), spans, off_cpu, "
				  "processes (events, per-process settings), other.",
				  LABELLED("part", memory_parts) },
	[METRIC_OTHER_SPAN_SAMPLES] = { "spanprof_other_tracer_span_samples_total", METRIC_COUNTER,
					"Samples whose span came from another tracer: an "
					"OpenTelemetry thread context record, or OBI's map.",
					LABELLED("source", span_sources) },
	[METRIC_THREAD_CTX_PROCESSES] = { "spanprof_thread_context_processes", METRIC_GAUGE,
					  "Processes publishing OpenTelemetry thread context "
					  "that the sampler reads, or whose set-up is awaited." },
	[METRIC_RESCAN_PROCESSES] = { "spanprof_rescan_processes_total", METRIC_COUNTER,
				      "What the periodic rescan did: processes read (new, "
				      "changed since their last read, or in the rescan's slice of "
				      "the known ones: a tenth, about 64 at most), processes skipped (read since their last "
				      "exec, no process event lost), processes read every time "
				      "because the set of read ones was full (untracked), and "
				      "rescans that read every process (full_rescan: the first, "
				      "and after a lost event).",
				      LABELLED("result", rescan_results) },
	[METRIC_RESCANS] = { "spanprof_rescans_total", METRIC_COUNTER,
			     "Scans of the node's processes: the one at start, then the "
			     "periodic rescans." },
	[METRIC_RESCAN_CPU_US] = { "spanprof_rescan_cpu_microseconds_total", METRIC_COUNTER,
				   "CPU time the agent's loop spent in rescans (reading "
				   "processes' maps and what follows from them, and the liveness "
				   "check of tracked processes)." },
	[METRIC_INTERP_FRAMES_DROPPED] = { "spanprof_interpreter_frames_dropped_total",
					   METRIC_COUNTER,
					   "Python or Ruby frames read by the sampler that did not "
					   "fit a sample's frame array when merged with its native "
					   "frames.",
					   LABELLED("interpreter", interpreters) },
	[METRIC_PYTHON_CODE_CACHE] = { "spanprof_python_code_cache_total", METRIC_COUNTER,
				       "Lookups of Python code objects (names, files, line "
				       "tables) in the agent's cache, by result; stale and "
				       "read_error ones show a placeholder frame.",
				       LABELLED("result", interp_cache_results) },
	[METRIC_RUBY_ISEQ_CACHE] = { "spanprof_ruby_iseq_cache_total", METRIC_COUNTER,
				     "Lookups of Ruby iseqs (labels, paths, line tables) in the "
				     "agent's cache, by result; stale and read_error ones show a "
				     "placeholder frame.",
				     LABELLED("result", interp_cache_results) },
	[METRIC_GO_SPAN_MAP] = { "spanprof_go_span_map_entries", METRIC_GAUGE,
				 "The BPF map of goroutines in a span: entries in use, its size "
				 "now (it starts at 1024 and doubles when three quarters full), "
				 "and the size it stops at (--go-span-map-entries).",
				 LABELLED("kind", map_uses) },
	[METRIC_GO_SPAN_MAP_GROWN] = { "spanprof_go_span_map_grown_total", METRIC_COUNTER,
				       "Times the goroutine span map was replaced by one twice as "
				       "big." },
	[METRIC_GO_SPAN_MAP_FULL] = { "spanprof_go_span_map_full_total", METRIC_COUNTER,
				      "Checks (every 5 drains) that found the goroutine span map at "
				      "its limit (--go-span-map-entries) and more than three "
				      "quarters full: it no longer grows, and the goroutines that "
				      "set their spans least recently lose them to new ones." },
	[METRIC_BPF_MAP_FULL] = { "spanprof_bpf_map_full_total", METRIC_COUNTER,
				  "Entries a fixed-size BPF map refused, by map: pending_scans (a "
				  "rescan request sent without its mark, --pending-scan-entries), "
				  "unwind_rules (CFI rows left without their rule), go_pids (a Go "
				  "process not marked), tctx_procs (a process's thread context not "
				  "read), unwind_procs (a process's mappings not written: its stacks "
				  "by frame pointer only).",
				  LABELLED("map", bpf_maps_full) },
};

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_store(&m->values[METRIC_BUILD_INFO][0], 1);
	return m;
}

void metrics_free(struct metrics *m)
{
	free(m);
}

/* The slot of (id, label), or NULL when either is out of range. */
static _Atomic uint64_t *slot(const struct metrics *m, enum metric_id id, unsigned int label)
{
	unsigned int n;

	if (!m || (unsigned int)id >= METRIC__COUNT)
		return NULL;
	n = defs[id].label ? defs[id].nvalues : 1;
	if (label >= n)
		return NULL;
	return (_Atomic uint64_t *)&m->values[id][label];
}

void metrics_add_at(struct metrics *m, enum metric_id id, unsigned int label, uint64_t delta)
{
	_Atomic uint64_t *v = slot(m, id, label);

	if (v)
		atomic_fetch_add_explicit(v, delta, memory_order_relaxed);
}

void metrics_set_at(struct metrics *m, enum metric_id id, unsigned int label, uint64_t value)
{
	_Atomic uint64_t *v = slot(m, id, label);

	if (v)
		atomic_store_explicit(v, value, memory_order_relaxed);
}

void metrics_add(struct metrics *m, enum metric_id id, uint64_t delta)
{
	metrics_add_at(m, id, 0, delta);
}

void metrics_set(struct metrics *m, enum metric_id id, uint64_t value)
{
	metrics_set_at(m, id, 0, value);
}

uint64_t metrics_get(const struct metrics *m, enum metric_id id, unsigned int label)
{
	_Atomic uint64_t *v = slot(m, id, label);

	return v ? atomic_load_explicit(v, memory_order_relaxed) : 0;
}

void metrics_set_extra(struct metrics *m, metrics_render_fn fn, void *ctx)
{
	if (!m)
		return;
	m->extra = fn;
	m->extra_ctx = ctx;
}

void metrics_set_ready(struct metrics *m, int ready)
{
	if (m)
		atomic_store(&m->ready, !!ready);
}

void metrics_set_stale_after(struct metrics *m, uint64_t now_ns, uint64_t stale_after_ns)
{
	if (!m)
		return;
	atomic_store(&m->last_window_ns, now_ns);
	atomic_store(&m->stale_after_ns, stale_after_ns);
}

void metrics_window_written(struct metrics *m, uint64_t now_ns)
{
	if (m)
		atomic_store(&m->last_window_ns, now_ns);
}

int metrics_is_healthy(const struct metrics *m, uint64_t now_ns, uint64_t *age_ns)
{
	uint64_t last, limit, age;

	if (!m)
		return 0;
	last = atomic_load((_Atomic uint64_t *)&m->last_window_ns);
	limit = atomic_load((_Atomic uint64_t *)&m->stale_after_ns);
	age = now_ns > last ? now_ns - last : 0;
	if (age_ns)
		*age_ns = age;
	return !limit || age <= limit;
}

int metrics_is_ready(const struct metrics *m)
{
	return m ? atomic_load((atomic_int *)&m->ready) : 0;
}

int metrics_render(const struct metrics *m, FILE *out)
{
	const struct metric_def *d;
	unsigned int id, i;

	for (id = 0; id < METRIC__COUNT; id++) {
		d = &defs[id];
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", d->name, d->help, d->name,
			d->type == METRIC_COUNTER ? "counter" : "gauge");
		if (!d->label) {
			fprintf(out, "%s %llu\n", d->name,
				(unsigned long long)metrics_get(m, id, 0));
			continue;
		}
		for (i = 0; i < d->nvalues; i++)
			fprintf(out, "%s{%s=\"%s\"} %llu\n", d->name, d->label, d->values[i],
				(unsigned long long)metrics_get(m, id, i));
	}
	if (m && m->extra && m->extra(m->extra_ctx, out))
		return -EIO;
	return ferror(out) ? -EIO : 0;
}

const char *metrics_drop_reason_name(unsigned int reason)
{
	return reason < METRIC_DROP__COUNT && drop_reasons[reason] ? drop_reasons[reason] :
								     "unknown";
}
