// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The run loop: process events -> rescans (hooks, symbol snapshots, service names); every
 * drain period the BPF window is drained, each sample symbolized and aggregated; every interval
 * each service's profile is written. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "agent/agent.h"
#include "agent/agent_int.h"
#include "discover/labels.h"
#include "discover/proc_maps.h"
#include "agent/loader_options.h"
#include "agent/map_sizes.h"
#include "output/local_out.h"
#include "output/upload.h"
#include "agent/preflight.h"
#include "util/log.h"

/* A process that just exec'd or mapped code is scanned this much later, once per burst. */
#define SCAN_DELAY_NS (50 * NS_PER_MS)
/* Time for programs that read the old window slot to finish before the window is drained. */
#define FLIP_SETTLE_US 2000
/* ELF modules whose DWARF no lookup needed for this long are closed (memory back to the system);
 * reopening costs tens of ms for a large debug file, so not much sooner. */
#define DWARF_IDLE_NS (30 * NS_PER_S)

static int is_target(const struct agent *a, pid_t pid)
{
	size_t i;

	if (!a->cfg->npids)
		return 1;
	for (i = 0; i < a->cfg->npids; i++)
		if (a->cfg->pids[i] == pid)
			return 1;
	return 0;
}

/* Re-reads what the agent knows of pid. `fresh`: it just exec'd or mapped code, so its symbols
 * are snapshotted now, while it most likely lives. */
static void scan_pid(struct agent *a, pid_t pid, int fresh)
{
	struct proc_info scratch;
	struct proc_maps maps;
	int err, hooks, waiting = 0, complete;

	/* Before reading maps: an mmap from now on raises a new event. */
	loader_scan_done(a->loader, pid);
	if (!is_target(a, pid))
		return;
	err = proc_maps_read(pid, &maps);
	if (err) {
		/* A process named with --pid was asked for: not seeing it is worth a warning.
		 * Among all of a node's processes some are expected to be out of reach. */
		if (err == -ENOENT || err == -ESRCH)
			return;
		if (a->cfg->npids)
			log_warn(err,
				 "--pid %d: cannot read its memory maps: its span hook cannot be "
				 "found nor its frames symbolized",
				 pid);
		else
			log_debug("read maps of pid %d: %s", pid, strerror(-err));
		return;
	}
	/* A process named with --pid, or one with a span hook, gets its service name now, while
	 * it lives: one that ends before the next drain would otherwise be "unknown_service". */
	hooks = hook_registry_update_pid(a->hooks, pid, &maps, &waiting);
	if (hooks > 0 || a->cfg->npids)
		proc_table_get(a->procs, pid, &scratch);
	unwind_scan_pid(a->unwind, pid, &maps);
	/* --interpreter-frames=false: the sampler never learns of an interpreter, so it reads
	 * no Python or Ruby frames and stacks stay native. */
	if (a->cfg->interpreter_frames) {
		int interp = agent_interp_scan(a, pid, &maps);

		if (interp)
			waiting = 1;
		/* Its interpreter file is being parsed off the loop: the verdict is there then. */
		if (interp > 0)
			scan_queue_push(&a->scans, pid, clock_mono_ns() + NS_PER_S);
	}
	agent_thread_ctx_scan(a, pid, &maps);
	proc_maps_release(&maps);
	/* Read whole: until its next event, a rescan need not read it again. Not so after an
	 * event's scan (the mapping it announced may not exist yet) or one that left work to a
	 * later scan (a hook verdict pending or not queued, a full table): the rescan retries. */
	complete = !fresh && !waiting && hooks != -ENOSPC;
	if (scan_known_scanned(&a->known, pid, complete) == -ENOSPC && a->known.untracked == 1)
		log_warn(-ENOSPC,
			 "pid %d: more than %zu processes: the others are read by every rescan "
			 "(logged once, counted in spanprof_rescan_processes_total)",
			 (int)pid, a->known.max);
	if (fresh)
		symcache_snapshot_pid(a->symcache, pid);
}

/* Sets *lost to the kernel's count of process events lost to a full ring. Returns 0 or -errno. */
static int proc_events_lost(struct agent *a, uint64_t *lost)
{
	uint64_t drops[SPANPROF_DROP__COUNT];
	int err = loader_read_drops(a->loader, drops, SPANPROF_DROP__COUNT);

	*lost = err ? 0 : drops[SPANPROF_DROP_PROC_EVENT];
	return err;
}

/* The safety net for missed events. Processes read since their last exec, while every event
 * reached the agent, are left alone but for this rescan's slice of them (scan_known.h): an idle
 * process costs one read every SCAN_KNOWN_FULL_EVERY rescans or more, and a rescan about
 * SCAN_KNOWN_SLICE_MAX such reads at most. Returns 1 when the liveness of tracked processes is
 * due: this rescan read every process (an exit event may have been lost), or every
 * SCAN_KNOWN_FULL_EVERY rescans. */
static int scan_all(struct agent *a)
{
	uint64_t lost;
	/* Events the agent cannot count or does not get: every process is read. */
	int complete = !proc_events_lost(a, &lost) && loader_code_events_attached(a->loader);
	int full = scan_known_begin(&a->known, lost, complete);
	struct dirent *de;
	char *end;
	DIR *dir;
	long pid;

	dir = opendir(a->cfg->proc_root);
	if (!dir) {
		log_warn(-errno, "open %s for the process scan", a->cfg->proc_root);
		return full;
	}
	while ((de = readdir(dir))) {
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || scan_known_skip(&a->known, pid))
			continue;
		scan_pid(a, pid, 0);
	}
	closedir(dir);
	return scan_known_liveness_due(&a->known);
}

/* Copies a fixed-size, maybe unterminated field of a BPF event into a C string. */
static void event_str(char *dst, size_t size, const char *src, size_t src_size)
{
	size_t n = strnlen(src, src_size);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* An exec: the service is settled now, from /proc while the process lives, else from what the
 * event read of its environment (a process of a few ms is gone before any scan). */
static void on_exec(struct agent *a, const struct spanprof_exec_event *ev)
{
	char comm[SPANPROF_EXEC_COMM_MAX + 1], name[SPANPROF_EXEC_SERVICE_MAX + 1];
	char resource[SPANPROF_EXEC_RESOURCE_MAX + 1], service[LABELS_SERVICE_MAX];

	if (!is_target(a, ev->hdr.pid))
		return;
	event_str(comm, sizeof(comm), ev->comm, sizeof(ev->comm));
	event_str(name, sizeof(name), ev->service, sizeof(ev->service));
	event_str(resource, sizeof(resource), ev->resource, sizeof(ev->resource));
	if (labels_service_from_values(name, resource, comm, service, sizeof(service)))
		service[0] = '\0';
	/* No OTel name in the part of the environment BPF searched: comm is only a guess. */
	proc_table_exec(a->procs, ev->hdr.pid, service,
			!name[0] && !resource[0] && !ev->env_complete);
}

static void on_fork(struct agent *a, const struct spanprof_fork_event *ev)
{
	if (is_target(a, ev->hdr.pid))
		proc_table_fork(a->procs, ev->parent, ev->hdr.pid);
}

static void queue_scan(struct agent *a, pid_t pid)
{
	if (scan_queue_push(&a->scans, pid, clock_mono_ns() + SCAN_DELAY_NS))
		loader_scan_done(a->loader, pid); /* let a later event try again */
}

static int on_proc_event(void *ctx, void *data, size_t size)
{
	const struct spanprof_proc_event *ev = data;
	struct agent *a = ctx;

	if (size < sizeof(*ev))
		return 0;
	a->proc_events_seen = 1;
	/* Exec'd, mapped code, exited, or new (a fork, maybe on a reused pid): read it again. */
	scan_known_forget(&a->known, ev->pid);
	if (ev->type == SPANPROF_PROC_EXIT) {
		hook_registry_forget_pid(a->hooks, ev->pid);
		unwind_forget_pid(a->unwind, ev->pid);
		loader_set_rb_proc(a->loader, ev->pid, NULL);
		loader_set_py_proc(a->loader, ev->pid, NULL);
		agent_thread_ctx_forget(a, ev->pid);
		/* A process with samples keeps its interpreter until they are drained (its frames
		 * are named then); forget_exited() drops it with the rest. */
		if (!proc_table_mark_exited(a->procs, ev->pid))
			agent_interp_forget(a, ev->pid);
	} else if (ev->type == SPANPROF_PROC_EXEC && size >= sizeof(struct spanprof_exec_event)) {
		on_exec(a, data);
		queue_scan(a, ev->pid);
	} else if (ev->type == SPANPROF_PROC_FORK && size >= sizeof(struct spanprof_fork_event)) {
		on_fork(a, data);
	} else if (ev->type == SPANPROF_PROC_SCAN) {
		queue_scan(a, ev->pid);
	}
	return 0;
}

static void forget_exited(void *ctx, pid_t pid)
{
	struct agent *a = ctx;

	symcache_forget_pid(a->symcache, pid);
	agent_interp_forget(a, pid);
}

/* One drained sample through the later stages: symbolized, then aggregated. */
static void on_sample(void *ctx, const struct sample *s)
{
	struct agent *a = ctx;

	agent_resolve_sample(a, s);
	aggregate_add(a->agg, s, a->resolve->frames, a->resolve->nframes);
}

static int pid_alive(void *ctx, pid_t pid)
{
	const struct agent *a = ctx;

	return proc_table_pid_alive(a->cfg->proc_root, pid);
}

/* The safety net for lost exit events (ring buffer full): tracked processes that are gone are
 * marked exited (their entries go after the next drains) and their hook users released. */
static void reap_dead(struct agent *a)
{
	size_t procs = proc_table_reap(a->procs);
	size_t hooks = hook_registry_reap(a->hooks, pid_alive, a);

	if (procs || hooks)
		log_debug("reaped %zu processes and %zu hook users whose exit was not seen", procs,
			  hooks);
}

static void drain(struct agent *a)
{
	struct loader_window w;

	w = loader_flip_window(a->loader);
	/* The samples aggregated so far were all taken before this instant. */
	a->output.window_closed_ns = clock_real_ns();

	symcache_new_round(a->symcache);
	unwind_new_round(a->unwind);
	usleep(FLIP_SETTLE_US);
	/* Every sample in the drained window was taken after its process's exec and fork events
	 * were in the ring: read them now, after the flip, so that a process which exec'd just
	 * before it (a loaded machine preempts the agent for milliseconds anywhere) and is gone
	 * already is named from its events, not "unknown_service". */
	ring_buffer__consume(a->events);
	drain_set_interp_stacks(a->drain, w.interp_stacks_fd);
	drain_window(a->drain, w.counts_fd, w.stacks_fd, w.names_fd, on_sample, a);
	agent_off_cpu_drain(a);
	agent_span_cpu_drain(a);
	agent_thread_ctx_drain(a);
	/* Exited processes' last samples were in that window: their caches can go now. */
	proc_table_sweep_exited(a->procs, forget_exited, a);
	/* Hot frames are answered from the address cache; DWARF nobody needed lately goes. */
	symcache_release_idle(a->symcache, DWARF_IDLE_NS);
	agent_publish_metrics(a);
}

/* On Kubernetes (service-account token, KUBERNETES_SERVICE_HOST, NODE_NAME), profiles get pod
 * labels; elsewhere this is quietly off. */
static int start_k8s(struct agent *a)
{
	const struct config_upload *up = &a->cfg->upload;
	struct k8s_meta_options ko = { 0 };

	a->k8s = k8s_meta_new(&ko);
	if (!a->k8s && errno != ENOENT)
		return -errno; /* logged */
	proc_table_set_k8s(a->procs, a->k8s);
	/* The server lifts namespace, pod and container from the samples into the series too. */
	if (a->k8s && up->server && up->nlabels > config_label_budget(up, 1))
		return log_err(-EINVAL,
			       "%zu --label options, at most %zu fit on Kubernetes: the server "
			       "allows 30 labels per series and counts __name__, service_name, "
			       "span_name%s, namespace, pod and container",
			       up->nlabels, config_label_budget(up, 1),
			       up->trace_id_label ? ", trace_id" : "");
	return 0;
}

/* The tables for the BPF unwinder; a->unwind stays NULL when it is off. Returns 0 or -errno. */
static int start_unwind(struct agent *a, const struct spanprof_config *cfg)
{
	struct loader_unwind_maps m = loader_unwind_maps(a->loader);
	uint32_t nchunks = cfg->unwind_table_bytes / sizeof(struct spanprof_unwind_chunk);
	struct unwind_options uo = {
		.fds = { .rules = m.rules, .chunks = m.chunks, .tables = m.tables },
		.procs_fd = m.procs,
		.nchunks = nchunks,
		.max_pids = cfg->max_procs,
		.max_files = 4096,
		.proc_root = cfg->proc_root,
		/* Whole node: most processes are idle; each published one holds 8 KiB of kernel
		 * memory, so only those sampled are. */
		.publish_on_sample = cfg->npids == 0,
	};

	/* The BPF unwinder is x86-64 only: elsewhere user stacks come from frame pointers. */
	if (!nchunks || !UNWIND_SUPPORTED) {
		log_info("native unwinding off: user stacks come from frame pointers");
		return 0;
	}
	a->unwind = unwind_new(&uo);
	return a->unwind ? 0 : -errno;
}

/* Window map sizes from the sample rate on the CPUs there are, or as the options give them. */
static struct map_sizes window_map_sizes(const struct spanprof_config *cfg)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct map_demand d = {
		.ncpus = ncpus > 0 ? ncpus : 1,
		.frequency = cfg->frequency,
		.drain_ms = cfg->drain_ms,
		.sample_entries = cfg->sample_entries,
		.stack_entries = cfg->stack_entries,
	};
	struct map_sizes s = map_sizes_compute(&d);

	log_debug("window maps: %u sample keys, %u stacks (%u CPUs at %u Hz, drained every %u ms)",
		  s.counts, s.stacks, d.ncpus, d.frequency, d.drain_ms);
	return s;
}

/* A part's constructor returned NULL: says which part failed and why, once, and returns
 * -errno (-ENOMEM when the constructor left errno unset). */
static int part_failed(const char *part)
{
	return log_err(errno ? -errno : -ENOMEM, "set up %s", part);
}

#define SET_UP_PART(assign, part)                 \
	do {                                      \
		errno = 0;                        \
		if (!(assign))                    \
			return part_failed(part); \
	} while (0)

static int setup(struct agent *a, const struct spanprof_config *cfg)
{
	struct map_sizes ms = window_map_sizes(cfg);
	struct loader_options lo;
	struct symcache_limits sl = {
		.max_modules = cfg->max_modules,
		.max_pids = cfg->max_pid_snapshots,
		.max_bytes = cfg->symbol_budget,
		.proc_root = cfg->proc_root,
		.debug_root = "/usr/lib/debug",
		.kallsyms_path = "/proc/kallsyms",
		.perf_map_dir = "/tmp",
		.perf_map_max_bytes = cfg->perf_map_max_bytes,
		.perf_map_max_lines = cfg->perf_map_max_lines,
		.perf_map_budget = cfg->perf_map_budget,
		.max_dwarf_bytes = cfg->max_dwarf_bytes,
		.load_budget_ns = cfg->load_budget_ms * NS_PER_MS,
	};
	struct hook_registry_limits hl = {
		.max_files = cfg->max_hook_files,
		.max_pids = cfg->max_procs,
		.max_negative = 65536,
		.proc_root = cfg->proc_root,
		.use_nop5 = preflight_uprobe_nop5_optimized(),
	};
	struct aggregate_options ao = {
		.period_ns = NS_PER_S / cfg->frequency,
		.scope = cfg->span_scope,
		.max_services = cfg->max_services,
		.tctx_labels = cfg->upload.thread_ctx_labels,
		.ntctx_labels = cfg->upload.nthread_ctx_labels,
	};
	int err;

	a->cfg = cfg;
	scan_queue_init(&a->scans);
	err = scan_known_init(&a->known,
			      cfg->max_procs < SCAN_KNOWN_MAX ? cfg->max_procs : SCAN_KNOWN_MAX);
	if (err)
		return log_err(err, "allocate the set of scanned processes");
	err = preflight_check();
	err = err ?: agent_open_outputs(a);
	err = err ?: agent_open_metrics(a);
	if (err)
		return err;
	preflight_mount_tracefs();
	loader_options_from_config(cfg, &ms, &lo);
	a->loader = loader_open(&lo);
	if (!a->loader)
		return -errno;
	/* The samplers run from here: the first window starts now, so its time and duration
	 * cover the samples taken during the start-up scans too. */
	a->output.window_closed_ns = clock_real_ns();
	SET_UP_PART(a->symcache = symcache_new(&sl), "the symbol cache");
	SET_UP_PART(a->procs = proc_table_new(cfg->max_procs, cfg->proc_root), "the process table");
	SET_UP_PART(a->hooks = hook_registry_new(a->loader, &hl), "the span hook registry");
	err = start_unwind(a, cfg);
	if (err)
		return err; /* logged */
	SET_UP_PART(a->drain = drain_new(ms.counts, ms.stacks), "the CPU sample drain");
	drain_set_keys_fn(a->drain, agent_prepare_keys, a);
	err = agent_interp_open(a);
	if (err)
		return err;
	SET_UP_PART(a->resolve = malloc(sizeof(*a->resolve)), "the stack resolver");
	SET_UP_PART(a->agg = aggregate_new(&ao, a->procs), "the CPU profiles");
	SET_UP_PART(a->events = loader_proc_events(a->loader, on_proc_event, a),
		    "the process event ring buffer");
	err = agent_off_cpu_open(a);
	err = err ?: agent_thread_ctx_open(a);
	err = err ?: agent_span_cpu_open(a);
	err = err ?: agent_wait_open(a);
	return err ?: start_k8s(a);
}

static void teardown(struct agent *a)
{
	agent_close_metrics(a);
	agent_close_outputs(a);
	agent_wait_close(a);
	ring_buffer__free(a->events);
	aggregate_free(a->agg);
	agent_off_cpu_close(a);
	agent_span_cpu_close(a);
	agent_thread_ctx_close(a);
	free(a->resolve);
	drain_free(a->drain);
	agent_interp_close(a);
	k8s_meta_free(a->k8s);
	hook_registry_free(a->hooks);
	unwind_free(a->unwind);
	proc_table_free(a->procs);
	symcache_free(a->symcache);
	loader_close(a->loader);
	scan_known_release(&a->known);
}

/* Every --pid must exist; one the agent cannot read is profiled, but said so at once. */
static int check_pids_exist(const struct spanprof_config *cfg)
{
	char path[64];
	size_t i;
	int fd;

	for (i = 0; i < cfg->npids; i++) {
		snprintf(path, sizeof(path), "%s/%d", cfg->proc_root, cfg->pids[i]);
		if (access(path, F_OK))
			return log_err(-ESRCH, "--pid %d: no such process", cfg->pids[i]);
		snprintf(path, sizeof(path), "%s/%d/maps", cfg->proc_root, cfg->pids[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT && errno != ESRCH)
			log_warn(-errno,
				 "--pid %d: cannot read %s: its span hook cannot be found nor its "
				 "frames symbolized",
				 cfg->pids[i], path);
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* Parses kallsyms (megabytes, a second or two on a busy node) before the first window instead
 * of in the middle of its drain. */
static void warm_kernel_symbols(struct agent *a)
{
	struct sym_frame scratch;

	symcache_resolve_kernel(a->symcache, UINT64_MAX, &scratch);
}

/* Processes whose hook file was parsed (off the run loop) are scanned again now: that scan
 * attaches the file through the descriptor that was parsed. */
static void poll_hook_parses(struct agent *a, uint64_t now)
{
	pid_t pids[256];
	size_t i, n = hook_registry_poll(a->hooks, now, pids, sizeof(pids) / sizeof(pids[0]));

	for (i = 0; i < n; i++)
		scan_queue_push(&a->scans, pids[i], now);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* A rescan (the one at start, then every --rescan seconds), its liveness check when due, and
 * the loop thread's CPU time they took. */
static void rescan(struct agent *a)
{
	uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	/* A lost exit event makes the rescan a full one: reaping then suffices. */
	if (scan_all(a))
		reap_dead(a);
	a->rescan_cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
}

static void run_loop(struct agent *a, volatile sig_atomic_t *stop)
{
	const struct spanprof_config *cfg = a->cfg;
	uint64_t now = clock_mono_ns(), next_due;
	uint64_t next_drain = now + cfg->drain_ms * NS_PER_MS;
	uint64_t next_flush = now + cfg->interval_s * NS_PER_S;
	uint64_t next_rescan = now + cfg->rescan_s * NS_PER_S;
	uint64_t end = cfg->duration_s ? now + cfg->duration_s * NS_PER_S : UINT64_MAX;
	uint64_t unwind_due = UINT64_MAX, events_due = UINT64_MAX;
	pid_t pid;

	while (!*stop && now < end) {
		/* BPF wakes the loop for one process event per 100 ms at most: after reading one
		 * (here or in a drain), look again soon for those it let through without a wake-up
		 * (proc_events.bpf.c). */
		now = clock_mono_ns();
		if (a->proc_events_seen)
			events_due = now + SPANPROF_EVENTS_FOLLOWUP_MS * NS_PER_MS;
		else if (now >= events_due)
			events_due = UINT64_MAX;
		a->proc_events_seen = 0;
		next_due = earliest(earliest(next_drain, next_flush), end);
		next_due = earliest(next_due, scan_queue_next_due(&a->scans));
		next_due = earliest(next_due, earliest(unwind_due, events_due));
		agent_wait(a, next_due > now ? next_due - now : 0);
		now = clock_mono_ns();
		poll_hook_parses(a, now);
		while (scan_queue_pop_due(&a->scans, now, &pid))
			scan_pid(a, pid, 1);
		unwind_due = unwind_poll(a->unwind);
		/* A flush always drains first so it covers every sample up to now. */
		if (now >= next_drain || now >= next_flush) {
			drain(a);
			next_drain = now + cfg->drain_ms * NS_PER_MS;
		}
		if (now >= next_flush) {
			agent_flush(a);
			next_flush += cfg->interval_s * NS_PER_S;
		}
		if (now >= next_rescan) {
			rescan(a);
			next_rescan = now + cfg->rescan_s * NS_PER_S;
		}
	}
}

int agent_run(const struct spanprof_config *cfg, volatile sig_atomic_t *stop,
	      const sigset_t *wait_sigmask)
{
	struct agent a = { .wait = { .fd = -1, .sigmask = wait_sigmask },
			   .metrics = { .status = SELF_MEMORY_FILE_INIT } };
	int err;

	err = check_pids_exist(cfg);
	err = err ?: setup(&a, cfg);
	if (err)
		goto out_teardown;
	/* Liveness: a window every interval; three missed ones mean the agent is wedged. */
	metrics_set_stale_after(a.metrics.reg, clock_mono_ns(),
				3ull * cfg->interval_s * NS_PER_S + cfg->drain_ms * NS_PER_MS);
	rescan(&a); /* the first reads every process */
	warm_kernel_symbols(&a);
	metrics_set_ready(a.metrics.reg, 1);
	log_info("profiling %s at %u Hz, one profile per service every %u s%s%s",
		 cfg->npids ? "selected processes" : "all processes", cfg->frequency,
		 cfg->interval_s, cfg->output_dir ? " into " : "",
		 cfg->output_dir ? cfg->output_dir : "");
	/* The first window started when the samplers were attached (setup()). */
	aggregate_start(a.agg, a.output.window_closed_ns);
	if (a.off_cpu.agg)
		aggregate_start(a.off_cpu.agg, a.output.window_closed_ns);
	run_loop(&a, stop);
	/* Every parse thread is told to stop now, all at once: each ends its parse in progress
	 * (a crafted file takes up to a second on a loaded node) while the last window is
	 * written, so teardown rarely waits for one, and never for one after another. */
	hook_registry_stop_parses(a.hooks);
	interp_procs_stop_parses(a.interp.pyprocs);
	interp_procs_stop_parses(a.interp.rbprocs);
	agent_thread_ctx_stop_parses(&a);
	/* The final, partial window. */
	drain(&a);
	agent_flush(&a);
out_teardown:
	teardown(&a);
	return err;
}
