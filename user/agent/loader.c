// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Skeleton lifecycle (open -> configure -> load -> attach, bcc style) and the handles the rest
 * of the agent needs: window maps, hook links, process events, counters. */
#include <errno.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "agent/loader.h"
#include "agent/map_grow.h"
#include "spanprof.h"
#include "spanprof.skel.h"
#include "spanprof_abi.h"
#include "util/clock.h"
#include "util/cpulist.h"
#include "util/percpu_sum.h"
#include "util/log.h"
#include "util/self_memory.h"
#include "util/tsc_rate.h"

_Static_assert(SPANPROF_ABI_SPAN_NAME_OFFSET + SPANPROF_ABI_SPAN_NAME_MAX ==
		       sizeof(struct spanprof_span),
	       "hook ABI");
_Static_assert(__builtin_offsetof(struct spanprof_span, name) == SPANPROF_ABI_SPAN_NAME_OFFSET,
	       "hook ABI");
_Static_assert(SPANPROF_ABI_SPAN_NAME_MAX == SPANPROF_SPAN_NAME_MAX, "hook ABI");
_Static_assert(SPANPROF_ABI_VERSION == SPANPROF_SPAN_ABI_VERSION, "hook ABI");
/* Every ABI struct's size is checked in spanprof_abi.h itself, on both sides. */
_Static_assert(1 << SPANPROF_UNWIND_CHUNK_SHIFT == SPANPROF_UNWIND_CHUNK_ROWS, "BPF ABI");
_Static_assert(1 << SPANPROF_UNWIND_TABLE_SHIFT == SPANPROF_UNWIND_TABLE_CHUNKS, "BPF ABI");
_Static_assert(1 << SPANPROF_UNWIND_MAPS_SHIFT == SPANPROF_UNWIND_MAX_MAPPINGS, "BPF ABI");

struct loader {
	struct spanprof_bpf *skel;
	struct bpf_link **cpu_links; /* one per online CPU, NULL where the CPU is offline */
	int *cpu_fds;
	int ncpus;
	struct bpf_link *mmap_link; /* NULL when the optional mmap tracepoint is unavailable */
	struct bpf_link *mprotect_link; /* likewise */
	int off_cpu; /* the sched_switch program is attached */
	/* The span hook's uprobe program: on_span_set, or on_span_set_compat on kernels without
	 * bpf_preempt_disable() (before Linux 6.10). */
	struct bpf_program *span_set;
	struct map_grow goroutines; /* goroutine_spans' current map */
	/* The maps' fdinfo files, in the skeleton's map order, kept open for loader_map_memory
	 * (NULL before its first call). */
	struct self_memory_file *map_info;
	size_t n_map_info;
	/* The point the BPF side's time stamp counter rate was last measured from. */
	struct tsc_point tsc_from;
};

/* Interval of the first measurement of the counter's rate, before anything is attached: the
 * point reads are good to tens of ns, so the rate is good to a few ppm; each later window
 * measures it again over its whole length. */
#define TSC_FIRST_MS 20
#define TSC_REMEASURE_NS NS_PER_S

/* Whether the kernel's BTF (vmlinux, NULL when it could not be read) names kind `name`. */
static int kernel_has(const struct btf *vmlinux, const char *name, __u32 kind)
{
	return vmlinux && btf__find_by_name_kind(vmlinux, name, kind) > 0;
}

/* The span hook's uprobe: with bpf_preempt_disable() (Linux 6.10+) its ring reads go through
 * the per-CPU stage in batches; older kernels get the program that reads one change at a time
 * (a single program with a run-time check would not load there: their verifier rejects a call
 * to a kfunc the kernel lacks even where it is never reached). */
static int configure_span_set(struct loader *l, const struct btf *vmlinux)
{
	struct spanprof_bpf *skel = l->skel;
	int batched = kernel_has(vmlinux, "bpf_preempt_disable", BTF_KIND_FUNC) &&
		      kernel_has(vmlinux, "bpf_preempt_enable", BTF_KIND_FUNC);

	if (!batched && vmlinux)
		log_debug("the kernel has no bpf_preempt_disable() (Linux 6.10+): the span hook's "
			  "ring reads at uprobe entries take one change at a time");
	l->span_set = batched ? skel->progs.on_span_set : skel->progs.on_span_set_compat;
	return bpf_program__set_autoload(
		batched ? skel->progs.on_span_set_compat : skel->progs.on_span_set, false);
}

/* Off-CPU stacks: full (CFI and interpreter frames, when a wait ends) unless the options or the
 * kernel say frame pointers. Maps a mode does not use get one entry. The full stacks need the
 * sched_exit_tp tracepoint (Linux 6.16+); without it they are taken at switch-out by frame
 * pointer. */
static int configure_off_cpu(struct spanprof_bpf *skel, const struct loader_options *opts,
			     const struct btf *vmlinux)
{
	int exit_tp = kernel_has(vmlinux, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF);
	int full = opts->off_cpu && !opts->off_cpu_fp;
	int err = 0;

	if (full && !exit_tp) {
		log_info("the kernel has no sched_exit_tp tracepoint (Linux 6.16+): off-CPU stacks "
			 "are taken by frame pointer when a thread blocks");
		full = 0;
	}
	skel->rodata->cfg_off_cpu_full_stacks = full;
	/* A mode's own stack maps get the bound; the other mode's get one entry. Each window names
	 * at most two stacks per key (kernel and user); the shared map of frame-pointer mode holds
	 * those of the waits of the last minutes (user/profile/stack_sweep.h). */
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.off_cpu_stacks_0,
					       full ? 2 * opts->off_cpu_entries : 1);
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.off_cpu_stacks_1,
					       full ? 2 * opts->off_cpu_entries : 1);
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.off_cpu_fp_stacks,
					       opts->off_cpu && !full ? 2 * opts->off_cpu_entries :
									1);
	/* A switch in that sched_switch did not see is caught up at the end of __schedule():
	 * by on_sched_exit with full stacks, else by on_sched_exit_unseen alone. */
	if (full || !opts->off_cpu || !exit_tp)
		err = err ?: bpf_program__set_autoload(skel->progs.on_sched_exit_unseen, false);
	if (!full) {
		err = err ?: bpf_program__set_autoload(skel->progs.on_sched_exit, false);
		err = err ?: bpf_map__set_max_entries(skel->maps.off_cpu_interp_stacks_0, 1);
		err = err ?: bpf_map__set_max_entries(skel->maps.off_cpu_interp_stacks_1, 1);
	}
	return err;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	size_t len;

	if (level == LIBBPF_DEBUG && log_get_level() < LOG_LEVEL_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	len = strlen(buf);
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	log_msg(level == LIBBPF_WARN ? LOG_LEVEL_WARN : LOG_LEVEL_DEBUG, "libbpf: %s", buf);
	return 0;
}

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Attaches on_cpu_sample to a cpu-clock event on every online CPU. */
static int attach_samplers(struct loader *l, unsigned int frequency)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_freq = frequency,
		.freq = 1,
	};
	bool *online = NULL;
	int n, cpu, err, attached = 0;

	err = cpulist_read("/sys/devices/system/cpu/online", &online, &n);
	if (err)
		return log_err(err, "read /sys/devices/system/cpu/online");
	l->ncpus = n;
	l->cpu_links = calloc(n, sizeof(*l->cpu_links));
	l->cpu_fds = malloc(n * sizeof(*l->cpu_fds));
	if (!l->cpu_links || !l->cpu_fds) {
		err = -ENOMEM;
		goto out_free_online;
	}
	for (cpu = 0; cpu < n; cpu++) {
		l->cpu_fds[cpu] = -1;
		if (!online[cpu])
			continue;
		l->cpu_fds[cpu] = perf_event_open(&attr, -1, cpu);
		if (l->cpu_fds[cpu] < 0) {
			err = log_err(-errno, "perf_event_open cpu-clock on CPU %d", cpu);
			goto out_free_online;
		}
		l->cpu_links[cpu] = bpf_program__attach_perf_event(l->skel->progs.on_cpu_sample,
								   l->cpu_fds[cpu]);
		if (!l->cpu_links[cpu]) {
			err = log_err(-errno, "attach sampler to CPU %d", cpu);
			goto out_free_online;
		}
		attached++;
	}
	log_debug("sampling %d CPUs at %u Hz", attached, frequency);
	err = 0;
out_free_online:
	free(online);
	return err;
}

static int configure(struct loader *l, const struct loader_options *opts)
{
	struct spanprof_bpf *skel = l->skel;
	/* The optional kernel features matter to off-CPU only (the full stacks, and the span
	 * hook's ring reads): without it the kernel's BTF is not parsed, a few MB less at start.
	 * NULL when unreadable: they are then taken as missing. */
	struct btf *vmlinux = opts->off_cpu ? btf__load_vmlinux_btf() : NULL;
	int err = 0;

	skel->rodata->cfg_filter_pids = opts->npids > 0;
	skel->rodata->cfg_off_cpu_min_ns = opts->off_cpu_min_ns;
	skel->rodata->cfg_span_tasks = opts->off_cpu;
	skel->rodata->cfg_span_records = opts->off_cpu && opts->span_times;
	/* The ring buffer's smallest size (one page) when nothing writes it. */
	if (!skel->rodata->cfg_span_records)
		err = err ?: bpf_map__set_max_entries(skel->maps.span_ends, getpagesize());
	err = err ?: configure_off_cpu(skel, opts, vmlinux);
	err = err ?: configure_span_set(l, vmlinux);
	btf__free(vmlinux);
	/* Off: the program is neither loaded nor attached, and its maps take no memory. */
	if (!opts->off_cpu)
		err = err ?: bpf_program__set_autoload(skel->progs.on_sched_switch, false);
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.off_cpu_counts_0,
					       opts->off_cpu ? opts->off_cpu_entries : 1);
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.off_cpu_counts_1,
					       opts->off_cpu ? opts->off_cpu_entries : 1);
	/* None of the window maps is preallocated: these are bounds, the kernel holds memory for
	 * the entries a window has (and a bucket per entry of the bound, 16 bytes). */
	err = err ?: bpf_map__set_max_entries(skel->maps.stacks_0, opts->stack_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.stacks_1, opts->stack_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.sample_counts_0, opts->count_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.sample_counts_1, opts->count_entries);
	/* A sample adds at most one key to these. */
	err = err ?: bpf_map__set_max_entries(skel->maps.interp_stacks_0, opts->count_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.interp_stacks_1, opts->count_entries);
	err = err ?: bpf_map__set_max_entries(skel->maps.unwind_chunks, opts->unwind_chunks ?: 1);
	err = err ?: bpf_map__set_max_entries(skel->maps.unwind_procs, opts->unwind_pids ?: 1);
	/* An LRU hash: preallocated, so the bound is what it costs from the start. */
	err = err   ?:
		      bpf_map__set_max_entries(skel->maps.span_names,
					       opts->span_name_entries ?: SPANPROF_MAX_SPAN_NAMES);
	if (opts->pending_scan_entries)
		err = err   ?:
			      bpf_map__set_max_entries(skel->maps.pending_scans,
						       opts->pending_scan_entries);
	/* Without --pid the programs never look at target_pids: one entry. */
	err = err ?: bpf_map__set_max_entries(skel->maps.target_pids, opts->npids ?: 1);
	return err;
}

static int fill_target_pids(struct loader *l, const struct loader_options *opts)
{
	int fd = bpf_map__fd(l->skel->maps.target_pids);
	__u8 one = 1;
	size_t i;

	for (i = 0; i < opts->npids; i++) {
		__u32 pid = opts->pids[i];

		if (bpf_map_update_elem(fd, &pid, &one, BPF_ANY))
			return log_err(-errno, "add pid %d to target_pids", opts->pids[i]);
	}
	return 0;
}

static void attach_mmap_events(struct loader *l)
{
	l->mmap_link = bpf_program__attach(l->skel->progs.on_mmap_enter);
	if (!l->mmap_link)
		log_warn(-errno,
			 "attach tracepoint syscalls/sys_enter_mmap (is tracefs mounted at "
			 "/sys/kernel/tracing?): libraries loaded with dlopen() are found by the "
			 "periodic rescan only");
	l->mprotect_link = bpf_program__attach(l->skel->progs.on_mprotect_enter);
	if (!l->mprotect_link)
		log_warn(-errno,
			 "attach tracepoint syscalls/sys_enter_mprotect: JIT code made executable "
			 "with mprotect() is unwound after the periodic rescan only");
}

/* Measures the time stamp counter's rate for the hook rings stamped with it (x86-64): ns per
 * tick << SPANPROF_TSC_MULT_SHIFT into the BPF side's tsc_mult. first: the first measurement,
 * over TSC_FIRST_MS from now; else from the last point, once a second or more passed. Without a
 * counter (not x86-64) the hook never stamps with it and nothing is set. */
static void measure_tsc_rate(struct loader *l, int first)
{
	struct timespec pause = { .tv_nsec = TSC_FIRST_MS * NS_PER_MS };
	struct tsc_point now;
	uint64_t mult;

	if (first) {
		if (tsc_point_read(&l->tsc_from))
			return;
		nanosleep(&pause, NULL);
	} else if (!l->tsc_from.ns) {
		return;
	}
	if (tsc_point_read(&now) || now.ns - l->tsc_from.ns < (first ? 0 : TSC_REMEASURE_NS))
		return;
	mult = tsc_rate_mult(&l->tsc_from, &now, SPANPROF_TSC_MULT_SHIFT);
	if (!mult) {
		log_warn(-ERANGE,
			 "time stamp counter went back or stood still: its rate stays %llu",
			 (unsigned long long)l->skel->bss->tsc_mult);
		return;
	}
	__atomic_store_n(&l->skel->bss->tsc_mult, mult, __ATOMIC_RELAXED);
	l->tsc_from = now;
}

struct loader *loader_open(const struct loader_options *opts)
{
	struct loader *l;
	int err;

	libbpf_set_print(print_libbpf);
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->goroutines.fd = -1;
	l->goroutines.info = (struct self_memory_file)SELF_MEMORY_FILE_INIT;
	l->skel = spanprof_bpf__open();
	if (!l->skel) {
		err = log_err(-errno, "open BPF skeleton");
		goto out_free;
	}
	l->off_cpu = opts->off_cpu;
	err = configure(l, opts);
	if (err) {
		log_err(err, "configure BPF maps");
		goto out_free;
	}
	/* Optional: without it, dlopen'ed hooks are found by the periodic rescan only. */
	bpf_program__set_autoattach(l->skel->progs.on_mmap_enter, false);
	bpf_program__set_autoattach(l->skel->progs.on_mprotect_enter, false);
	err = spanprof_bpf__load(l->skel);
	if (err) {
		err = log_err(-errno, "load BPF programs (run with -v for the verifier log)");
		goto out_free;
	}
	/* Loading parsed the kernel's BTF (tens of MB at peak); hand the freed heap back to the
	 * system, or the agent's RSS would stay at that peak for its whole life. */
	malloc_trim(0);
	err = fill_target_pids(l, opts);
	if (err)
		goto out_free;
	err = map_grow_open(&l->goroutines, bpf_map__fd(l->skel->maps.goroutine_spans),
			    "goroutine_spans", BPF_MAP_TYPE_LRU_HASH, sizeof(struct goroutine_key),
			    sizeof(struct goroutine_span), SPANPROF_GOROUTINES_START,
			    opts->goroutine_entries ?: SPANPROF_GOROUTINES_START);
	if (err)
		goto out_free;
	/* Before the hook's uprobe is attached: its first read of a ring may need the rate. */
	measure_tsc_rate(l, 1);
	/* Process events first, so no exec between the initial /proc scan and now is missed. */
	err = spanprof_bpf__attach(l->skel);
	if (err) {
		err = log_err(-errno, "attach process-event programs");
		goto out_free;
	}
	attach_mmap_events(l);
	err = attach_samplers(l, opts->frequency);
	if (err)
		goto out_free;
	return l;
out_free:
	loader_close(l);
	errno = -err;
	return NULL;
}

void loader_close(struct loader *l)
{
	size_t i;
	int cpu;

	if (!l)
		return;
	for (cpu = 0; cpu < l->ncpus; cpu++) {
		bpf_link__destroy(l->cpu_links[cpu]);
		if (l->cpu_fds[cpu] >= 0)
			close(l->cpu_fds[cpu]);
	}
	free(l->cpu_links);
	free(l->cpu_fds);
	bpf_link__destroy(l->mmap_link);
	bpf_link__destroy(l->mprotect_link);
	spanprof_bpf__destroy(l->skel);
	map_grow_close(&l->goroutines);
	for (i = 0; i < l->n_map_info; i++)
		self_memory_file_close(&l->map_info[i]);
	free(l->map_info);
	free(l);
}

struct loader_window loader_flip_window(struct loader *l)
{
	__u32 old = l->skel->bss->window_slot;
	struct loader_window w = { .shared_stacks = 0 };

	__atomic_store_n(&l->skel->bss->window_slot, old ^ 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&l->skel->bss->off_cpu_slot, old ^ 1, __ATOMIC_SEQ_CST);
	/* Over the whole window: the rate clock adjustments (NTP) gave CLOCK_MONOTONIC lately. */
	measure_tsc_rate(l, 0);
	w.counts_fd =
		bpf_map__fd(old ? l->skel->maps.sample_counts_1 : l->skel->maps.sample_counts_0);
	w.stacks_fd = bpf_map__fd(old ? l->skel->maps.stacks_1 : l->skel->maps.stacks_0);
	w.interp_stacks_fd =
		bpf_map__fd(old ? l->skel->maps.interp_stacks_1 : l->skel->maps.interp_stacks_0);
	w.names_fd = bpf_map__fd(l->skel->maps.span_names);
	return w;
}

int loader_hook_prog_fd(struct loader *l, enum loader_hook_kind kind)
{
	return bpf_program__fd(kind == LOADER_HOOK_GO ? l->skel->progs.on_go_span_set :
							l->span_set);
}

int loader_prog_fd(struct loader *l, const char *name)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(l->skel->obj, name);

	return prog ? bpf_program__fd(prog) : -ENOENT;
}

struct loader_unwind_maps loader_unwind_maps(struct loader *l)
{
	return (struct loader_unwind_maps){
		.rules = bpf_map__fd(l->skel->maps.unwind_rules),
		.chunks = bpf_map__fd(l->skel->maps.unwind_chunks),
		.tables = bpf_map__fd(l->skel->maps.unwind_tables),
		.procs = bpf_map__fd(l->skel->maps.unwind_procs),
	};
}

struct loader_window loader_off_cpu_window(struct loader *l)
{
	/* loader_flip_window() flipped both slots together: the closed one is the other. */
	__u32 closed = l->skel->bss->off_cpu_slot ^ 1;
	struct loader_window w = { -1, -1, -1, -1, 0 };
	struct spanprof_bpf *skel = l->skel;

	if (!l->off_cpu)
		return w;
	w.names_fd = bpf_map__fd(skel->maps.span_names);
	w.counts_fd =
		bpf_map__fd(closed ? skel->maps.off_cpu_counts_1 : skel->maps.off_cpu_counts_0);
	if (!skel->rodata->cfg_off_cpu_full_stacks) {
		w.stacks_fd = bpf_map__fd(skel->maps.off_cpu_fp_stacks);
		w.shared_stacks = 1;
		return w;
	}
	w.stacks_fd =
		bpf_map__fd(closed ? skel->maps.off_cpu_stacks_1 : skel->maps.off_cpu_stacks_0);
	w.interp_stacks_fd = bpf_map__fd(closed ? skel->maps.off_cpu_interp_stacks_1 :
						  skel->maps.off_cpu_interp_stacks_0);
	return w;
}

struct bpf_link *loader_attach_hook(struct loader *l, const char *path, uint64_t offset,
				    uint64_t ref_ctr_offset, enum loader_hook_kind kind,
				    uint64_t cookie)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .ref_ctr_offset = ref_ctr_offset, .bpf_cookie = cookie);
	struct bpf_program *prog =
		kind == LOADER_HOOK_GO ? l->skel->progs.on_go_span_set : l->span_set;

	return bpf_program__attach_uprobe_opts(prog, -1, path, offset, &opts);
}

/* Sets pid's entry of a per-process HASH map to *info, or deletes it (none there is no
 * error) when info is NULL. */
static int set_proc_entry(struct bpf_map *map, pid_t pid, const void *info)
{
	int fd = bpf_map__fd(map);
	__u32 key = pid;

	if (!info)
		return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &key, info, BPF_ANY) ? -errno : 0;
}

int loader_set_go_pid(struct loader *l, pid_t pid, const struct go_proc *go)
{
	return set_proc_entry(l->skel->maps.go_pids, pid, go);
}

int loader_set_py_proc(struct loader *l, pid_t pid, const struct py_proc_info *info)
{
	return set_proc_entry(l->skel->maps.py_procs, pid, info);
}

int loader_set_rb_proc(struct loader *l, pid_t pid, const struct rb_proc_info *info)
{
	return set_proc_entry(l->skel->maps.rb_procs, pid, info);
}

int loader_set_tctx_proc(struct loader *l, pid_t pid, const struct tctx_proc *info)
{
	return set_proc_entry(l->skel->maps.tctx_procs, pid, info);
}

int loader_get_tctx_proc(struct loader *l, pid_t pid, struct tctx_proc *out)
{
	__u32 key = pid;

	return bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.tctx_procs), &key, out) ? -errno : 0;
}

int loader_set_obi_map(struct loader *l, int map_fd)
{
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(l->skel->maps.obi_traces), &zero, &map_fd, BPF_ANY) ?
		       -errno :
		       0;
}

struct ring_buffer *loader_proc_events(struct loader *l, loader_event_fn fn, void *ctx)
{
	return ring_buffer__new(bpf_map__fd(l->skel->maps.proc_events), fn, ctx, NULL);
}

int loader_add_span_ends(struct loader *l, struct ring_buffer *rb, loader_event_fn fn, void *ctx)
{
	return ring_buffer__add(rb, bpf_map__fd(l->skel->maps.span_ends), fn, ctx);
}

int loader_span_names_fd(struct loader *l)
{
	return bpf_map__fd(l->skel->maps.span_names);
}

void loader_scan_done(struct loader *l, pid_t pid)
{
	__u32 key = pid;

	/* ENOENT is normal: the request may have come from the periodic rescan. */
	bpf_map_delete_elem(bpf_map__fd(l->skel->maps.pending_scans), &key);
}

int loader_code_events_attached(const struct loader *l)
{
	return l->mmap_link && l->mprotect_link;
}

int loader_read_drops(struct loader *l, uint64_t *out, size_t n)
{
	if (n > SPANPROF_DROP__COUNT)
		n = SPANPROF_DROP__COUNT;
	return percpu_sum(bpf_map__fd(l->skel->maps.drop_counts), out, n);
}

int loader_read_events(struct loader *l, uint64_t *out, size_t n)
{
	if (n > SPANPROF_EVENT__COUNT)
		n = SPANPROF_EVENT__COUNT;
	return percpu_sum(bpf_map__fd(l->skel->maps.event_counts), out, n);
}

/* Map name prefixes by group; the first match wins, a name none matches is "other". Per-CPU
 * working space (a name ending in "_scratch", and the span ring's stages) is "other" whatever its
 * prefix: it holds no state of the group, only one program run's buffers. */
static const struct {
	const char *prefix;
	enum loader_map_group group;
} map_groups[] = {
	{ "span_ring_stages", LOADER_MAPS_OTHER }, { "sample_counts", LOADER_MAPS_WINDOWS },
	{ "stacks_", LOADER_MAPS_WINDOWS },	   { "interp_stacks", LOADER_MAPS_WINDOWS },
	{ "unwind_", LOADER_MAPS_UNWIND },	   { "thread_spans", LOADER_MAPS_SPANS },
	{ "goroutine_spans", LOADER_MAPS_SPANS },  { "span_", LOADER_MAPS_SPANS },
	{ "tctx_waits", LOADER_MAPS_SPANS },	   { "off_cpu", LOADER_MAPS_OFF_CPU },
	{ "proc_events", LOADER_MAPS_PROCESSES },  { "pending_scans", LOADER_MAPS_PROCESSES },
	{ "go_pids", LOADER_MAPS_PROCESSES },	   { "py_procs", LOADER_MAPS_PROCESSES },
	{ "rb_procs", LOADER_MAPS_PROCESSES },	   { "target_pids", LOADER_MAPS_PROCESSES },
	{ "tctx_procs", LOADER_MAPS_PROCESSES },   { "obi_traces", LOADER_MAPS_SPANS },
	{ "user_budgets", LOADER_MAPS_SPANS },
};

static enum loader_map_group group_of(const char *name)
{
	static const char scratch[] = "_scratch";
	size_t i, len = strlen(name);

	if (len >= sizeof(scratch) - 1 && !strcmp(name + len - (sizeof(scratch) - 1), scratch))
		return LOADER_MAPS_OTHER;
	for (i = 0; i < sizeof(map_groups) / sizeof(map_groups[0]); i++)
		if (!strncmp(name, map_groups[i].prefix, strlen(map_groups[i].prefix)))
			return map_groups[i].group;
	return LOADER_MAPS_OTHER;
}

/* One kept-open fdinfo file per map of the skeleton, all closed to start with. */
static int open_map_info(struct loader *l)
{
	struct bpf_map *map;
	size_t n = 0, i;

	bpf_object__for_each_map(map, l->skel->obj) n++;
	l->map_info = calloc(n ? n : 1, sizeof(*l->map_info));
	if (!l->map_info)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		l->map_info[i] = (struct self_memory_file)SELF_MEMORY_FILE_INIT;
	l->n_map_info = n;
	return 0;
}

int loader_map_memory(struct loader *l, uint64_t *out)
{
	struct bpf_map *map;
	uint64_t bytes;
	size_t i = 0;
	int fd, err;

	memset(out, 0, LOADER_MAPS__COUNT * sizeof(*out));
	if (!l->map_info && (err = open_map_info(l)))
		return err;
	bpf_object__for_each_map(map, l->skel->obj)
	{
		/* The skeleton's maps are fixed at load: every one has its file. */
		struct self_memory_file *info = i < l->n_map_info ? &l->map_info[i] : NULL;

		i++;
		fd = bpf_map__fd(map);
		if (fd < 0)
			continue; /* not created (autocreate off) */
		err = info ? self_memory_bpf_map_in(info, fd, &bytes) :
			     self_memory_bpf_map(fd, &bytes);
		if (err)
			return err;
		out[group_of(bpf_map__name(map))] += bytes;
	}
	/* The goroutine span map in goroutine_spans' slot is the agent's, not the skeleton's. */
	err = map_grow_memory(&l->goroutines, &bytes);
	if (err)
		return err;
	out[LOADER_MAPS_SPANS] += bytes;
	return 0;
}

static void add_bound(struct loader_map_bound *out, size_t max, size_t n, const char *name,
		      uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries,
		      uint32_t flags)
{
	if (n >= max)
		return;
	snprintf(out[n].name, sizeof(out[n].name), "%s", name);
	out[n].type = type;
	out[n].key_size = key_size;
	out[n].value_size = value_size;
	out[n].max_entries = max_entries;
	out[n].flags = flags;
}

int loader_map_bounds(const struct loader_options *opts, struct loader_map_bound *out, size_t max)
{
	struct loader l = { .goroutines.fd = -1 };
	const struct bpf_map *map;
	size_t n = 0;
	int err;

	l.skel = spanprof_bpf__open();
	if (!l.skel)
		return -errno;
	err = configure(&l, opts);
	if (err) {
		spanprof_bpf__destroy(l.skel);
		return err;
	}
	bpf_object__for_each_map(map, l.skel->obj)
	{
		if (!bpf_map__autocreate(map))
			continue;
		add_bound(out, max, n++, bpf_map__name(map), bpf_map__type(map),
			  bpf_map__key_size(map), bpf_map__value_size(map),
			  bpf_map__max_entries(map), bpf_map__map_flags(map));
	}
	/* The map the agent puts in goroutine_spans' slot, at the size it stops growing at. */
	add_bound(out, max, n++, "goroutine_spans (inner)", BPF_MAP_TYPE_LRU_HASH,
		  sizeof(struct goroutine_key), sizeof(struct goroutine_span),
		  opts->goroutine_entries ?: SPANPROF_GOROUTINES_START, 0);
	spanprof_bpf__destroy(l.skel);
	return (int)n;
}

int loader_grow_maps(struct loader *l, struct loader_map_use *goroutines)
{
	int grown = map_grow_check(&l->goroutines);

	goroutines->entries = l->goroutines.entries;
	goroutines->capacity = l->goroutines.max_entries;
	goroutines->limit = l->goroutines.limit;
	goroutines->grown = l->goroutines.grown;
	goroutines->full = l->goroutines.full;
	return grown;
}
