/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's state, shared by the files that make up the agent (agent.c: set-up and run loop,
 * agent_output.c: windows to files and uploads, agent_metrics.c: the agent's own metrics). */
#ifndef SPANPROF_AGENT_INT_H
#define SPANPROF_AGENT_INT_H

#include <stdint.h>
#include <time.h>

#include "config/config.h"
#include "agent/hook_registry.h"
#include "discover/thread_ctx.h"
#include "discover/proc_table.h"
#include "discover/scan_known.h"
#include "discover/scan_queue.h"
#include "agent/loader.h"
#include "output/local_out.h"
#include "output/metrics.h"
#include "output/metrics_http.h"
#include "output/span_log.h"
#include "output/span_stats.h"
#include "profile/aggregate.h"
#include "profile/drain.h"
#include "profile/span_names.h"
#include "symbolize/stack_resolve.h"
#include "symbolize/symcache.h"
#include "util/clock.h"
#include "util/self_memory.h"
#include "util/spanprof_types.h"
#include "interp/python_symbols.h"
#include "interp/interp_procs.h"
#include "interp/python_proc.h"
#include "interp/ruby_symbols.h"
#include "interp/ruby_proc.h"
#include "unwind/unwind.h"

struct uploader;
struct agent_tctx;

/* Each part below is owned by its file: set up by its open, released by its close. */

/* The agent's own metrics (agent_metrics.c): the registry every part publishes into, and its
 * HTTP server. */
struct agent_metrics {
	struct metrics *reg;
	struct http_server *http; /* NULL without --metrics-addr */
	unsigned int drains; /* drains since start: the growable maps are checked every few */
	int pending_full_logged; /* pending_scans was found full once (logged once) */
	int caught_up_logged; /* a switch in sched_switch missed was caught up once (logged once) */
	struct self_memory_file status; /* /proc/self/status, for the RSS figure */
};

/* Window output (agent_output.c): local files and the uploader. */
struct agent_output {
	struct local_out out; /* used when cfg->output_dir is set */
	struct uploader *uploader; /* NULL without --server */
	unsigned int file_seq;
	int64_t window_closed_ns; /* Unix ns of the last flip: the end of the window aggregated */
	uint64_t profiles_written, write_errors;
	uint64_t last_drops[SPANPROF_DROP__COUNT]; /* BPF drop counters at the last window */
};

/* Exact CPU time per span (agent_span_cpu.c); all NULL when off. */
struct agent_span_cpu {
	struct span_stats *stats; /* span times by (service, name), shown in /metrics */
	struct span_log *log; /* ended spans as JSON lines; NULL without --output */
	struct span_names *names; /* names of ended spans */
};

/* Off-CPU profiles (agent_off_cpu.c); both NULL with --off-cpu=false. */
struct agent_off_cpu {
	struct aggregate *agg; /* off-CPU time per span */
	struct drain *drain; /* its window's count map, sized --off-cpu-map-entries */
	uint64_t next_sweep_ns; /* frame-pointer mode: when the shared stacks are next swept */
};

/* Python and Ruby (agent/agent_interp.c): which processes run them, and their code's names. */
struct agent_interp {
	struct interp_procs *pyprocs; /* processes running CPython */
	struct python_symbols *pysyms; /* their code objects' names */
	uint64_t py_frames_dropped; /* Python frames that did not fit a sample's frame array */
	struct interp_procs *rbprocs; /* processes running CRuby */
	struct ruby_symbols *rbsyms; /* their iseqs' names */
	uint64_t rb_frames_dropped; /* Ruby frames that did not fit a sample's frame array */
	struct interp_budget *budget; /* --interp-cache-budget: both caches' bytes */
};

/* The run loop's sleep (agent_wait.c). */
struct agent_wait {
	int fd; /* the epoll set; -1 before it exists */
	const sigset_t *sigmask; /* signal mask while the loop sleeps (agent_run) */
};

struct agent {
	const struct spanprof_config *cfg;
	struct loader *loader;
	struct symcache *symcache;
	struct proc_table *procs;
	struct hook_registry *hooks;
	struct drain *drain;
	struct agent_interp interp;
	struct stack_resolve *resolve; /* one sample's frames at a time */
	struct aggregate *agg;
	struct agent_off_cpu off_cpu;
	struct ring_buffer *events; /* process events, and span_ends with span times on */
	int proc_events_seen; /* process events read since the loop last looked */
	struct agent_wait wait;
	struct agent_span_cpu span_cpu;
	struct agent_metrics metrics;
	struct k8s_meta *k8s; /* NULL when not running on Kubernetes */
	struct unwind *unwind; /* CFI tables for the BPF unwinder */
	struct agent_tctx *tctx; /* processes publishing thread context (agent_thread_ctx.c) */
	struct scan_queue scans;
	struct scan_known known; /* processes a rescan may skip */
	uint64_t rescan_cpu_ns; /* the loop thread's CPU time in periodic rescans */
	uint64_t
		pids_unprepared; /* processes of a drain past the snapshot cap, not read before it */
	struct agent_output output;
};

/* Prepares the local directory (when configured) and starts the uploader (with --server).
 * Returns 0 or -errno (logged). agent_close_outputs() delivers or spools what is queued. */
int agent_open_outputs(struct agent *a);
void agent_close_outputs(struct agent *a);

/* Creates the metrics registry and, with --metrics-addr, its HTTP server. Returns 0 or -errno
 * (logged). */
int agent_open_metrics(struct agent *a);
void agent_close_metrics(struct agent *a);

/* Hands every service's profile of the window that ends now to the outputs (local directory
 * and/or uploader) and logs one line about the window. */
void agent_flush(struct agent *a);

/* Symbolizes a drained sample's stacks into a->resolve, with its Python or Ruby frames merged in
 * (agent_resolve.c; CPU samples and off-CPU waits alike). */
void agent_resolve_sample(struct agent *a, const struct sample *s);
/* drain_keys_fn: reads what the window's processes need before its samples are resolved. */
void agent_prepare_keys(void *ctx, const struct sample_key *keys, uint32_t n);

/* Python and Ruby (agent/agent_interp.c): open returns 0 or -errno (logged, naming the table
 * or cache that failed); scan tells the sampler how to read pid's interpreter frames and
 * returns 0, 1 when an interpreter file's parse was put off (scan pid again later), or -ENOSPC
 * when a table was too full to take pid (a later scan tries again); forget
 * drops what is known of an exited pid; merge adds a resolved sample's interpreter frames. */
int agent_interp_open(struct agent *a);
void agent_interp_close(struct agent *a);
int agent_interp_scan(struct agent *a, pid_t pid, const struct proc_maps *maps);
void agent_interp_forget(struct agent *a, pid_t pid);
void agent_interp_merge(struct agent *a, const struct sample *s);

/* Off-CPU profiles (agent_off_cpu.c), all no-ops with --off-cpu=false: open returns 0 or
 * -errno (logged, naming what failed); drain reads the window loader_flip_window() just closed
 * into a->off_cpu. */
int agent_off_cpu_open(struct agent *a);
void agent_off_cpu_drain(struct agent *a);
void agent_off_cpu_close(struct agent *a);

/* Exact CPU time per span (agent_span_cpu.c), all no-ops when off (--off-cpu=false or
 * --span-stats-max 0). open_stats makes the table /metrics shows (before the metrics server
 * starts); open adds the span_ends ring buffer to a->events and opens the span log; drain writes
 * the records read since the last drain; close frees all three (after the metrics server
 * stopped). The opens return 0 or -errno (logged). */
int agent_span_cpu_open_stats(struct agent *a);
int agent_span_cpu_open(struct agent *a);
void agent_span_cpu_drain(struct agent *a);
void agent_span_cpu_close(struct agent *a);

/* The run loop's sleep (agent_wait.c). open returns 0 or -errno (logged); wait sleeps up to
 * wait_ns (0: not at all), until a ring buffer or the unwind worker signals or a signal comes,
 * then reads the ring buffers. */
int agent_wait_open(struct agent *a);
void agent_wait(struct agent *a, uint64_t wait_ns);
void agent_wait_close(struct agent *a);

/* Other tracers' spans (agent_thread_ctx.c): open returns 0 or -ENOMEM (logged); scan looks at
 * pid's thread context after its maps were read; drain retries, refreshes key maps and looks for
 * OBI's map; forget drops an exited pid. */
int agent_thread_ctx_open(struct agent *a);
void agent_thread_ctx_close(struct agent *a);
/* The agent is exiting: the thread-context module parser stops after its parse in progress. */
void agent_thread_ctx_stop_parses(struct agent *a);
void agent_thread_ctx_scan(struct agent *a, pid_t pid, const struct proc_maps *maps);
void agent_thread_ctx_drain(struct agent *a);
void agent_thread_ctx_forget(struct agent *a, pid_t pid);
uint64_t agent_thread_ctx_count(const struct agent *a); /* processes tracked */
/* Processes whose thread context is not read: the table (and tctx_procs) was full. */
uint64_t agent_thread_ctx_full(const struct agent *a);
/* Retries, key re-reads and file parses put off to a later drain by the per-drain caps. */
uint64_t agent_thread_ctx_deferred(const struct agent *a);
/* The module files' parse verdicts: parses put off to their thread, refused by its queue's
 * per-owner half, verdicts forgotten (file_verdicts.h). */
void agent_thread_ctx_parse_stats(const struct agent *a, struct file_verdicts_stats *out);

/* Copies the counters of every part of the agent into its metrics registry. */
void agent_publish_metrics(struct agent *a);

#endif /* SPANPROF_AGENT_INT_H */
