// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: cost of one spanprof_span_set() call, in one run, of
 *  - this executable's hook (ABI version 3: a thread context record and, with an agent, a ring
 *    of span changes; the uprobe is entered once per 256 changes), and
 *  - the library as built for hook ABI version 2 (build/tests/workloads/libspanprof_v2.so,
 *    dlopen'ed: the uprobe at every call, what programs linked with an older libspanprof run),
 * each with no agent, with the agent's default options (off-CPU and span times on: a record per
 * ended span, read by a thread as the agent would) and with span times off; this hook also with
 * two root spans taking turns at every set (two names: each set renames the thread's root, a ring
 * entry only once the agent has both names), default options; also the older
 * comparisons of the version 2 probe sites (1-byte nop, plain uprobe on the function entry).
 * Prints ns per call and ratios measured in this one run.
 * Another spanprof agent on the machine that profiles every process would attach to this
 * benchmark's hooks too: its uprobe entries would land in the rows, and its count would be in the
 * semaphore this benchmark raises by hand. The benchmark runs from copies of itself and of the
 * version 2 library without their probe notes, which such agents look for, attaches its own agent
 * at the sites read from the originals, and raises the semaphore by hand only while it reads 0
 * (without objcopy it runs in place and says so). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdatomic.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/loader.h"
#include "bench_stats.h"
#include "hook_copies.h"
#include "hook_libs.h"
#include "spanprof.h"
#include "spanprof_abi.h"
#include "util/log.h"

/* The calling thread's CPU time: on a loaded machine every run of calls may be preempted, and
 * the waits would swamp a wall clock's reading; the hook's own kernel work (its uprobe entries,
 * its ring's reads at its switch-outs) is the thread's CPU time all the same. */
static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int vaddr_offset(Elf *elf, uint64_t vaddr, uint64_t *offset)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	return -ENOEXEC;
}

/* struct spanprof_span of hook ABI version 1 (64-byte name), as old builds still pass it. */
struct spanprof_span_v1 {
	uint32_t abi_version, reserved;
	uint8_t trace_id[16], span_id[8], root_span_id[8];
	char name[64];
};

/* The lower of a (-1: none yet) and b, ignoring b when it failed (-1). */
static double lowest(double a, double b)
{
	return b >= 0 && (a < 0 || b < a) ? b : a;
}

#define ROUNDS 3

/* Runs per measurement: short runs, many of them, so that on a loaded machine some run without
 * being preempted (the minimum filters out the rest). */
#define RUNS 200
#define CALLS 5000

/* The spans a run of calls sets, a clear between each two: turn[0] and turn[1] by turns (the
 * same span twice: one span set again and again; two root spans: their names take turns). */
typedef const struct spanprof_span *const span_turns[2];

/* Best of RUNS runs of n calls, in ns per call: the minimum filters out preemption noise. */
static double time_calls_of(span_set_fn set, span_turns turn, long n)
{
	double best = 1e18, t;

	for (int run = 0; run < RUNS; run++) {
		t = now_ns();
		for (long i = 0; i < n; i++)
			set((i & 1) ? turn[(i >> 1) & 1] : NULL);
		t = (now_ns() - t) / n;
		if (t < best)
			best = t;
	}
	return best;
}

static double time_calls(const struct spanprof_span *span, long n)
{
	span_turns one = { span, span };

	return time_calls_of(spanprof_span_set, one, n);
}

/* Run time and count of the hook's BPF program so far (kernel run-time statistics). */
static void prog_stats(struct loader *l, uint64_t *ns, uint64_t *cnt)
{
	unsigned long long n, c;

	bench_stats_bpf_prog_fd(loader_hook_prog_fd(l, LOADER_HOOK_C), &n, &c);
	*ns = n;
	*cnt = c;
}

static double time_lib_with_link(struct loader *l, const struct hook_lib *h, uint64_t offset,
				 span_turns span, const char *what)
{
	struct bpf_link *link =
		loader_attach_hook(l, h->path, offset, h->site.semaphore_offset, LOADER_HOOK_C, 0);
	uint64_t ns0, cnt0, ns1, cnt1;
	double ns;

	if (!link) {
		fprintf(stderr, "attach at 0x%llx: %s\n", (unsigned long long)offset,
			strerror(errno));
		return -1;
	}
	if (h->set == spanprof_span_set && !spanprof_active())
		fprintf(stderr, "warning: semaphore not raised after attach\n");
	time_calls_of(h->set, span, 1000); /* first hits install the trampoline */
	prog_stats(l, &ns0, &cnt0);
	ns = time_calls_of(h->set, span, CALLS);
	prog_stats(l, &ns1, &cnt1);
	bpf_link__destroy(link);
	/* The BPF program alone, set and clear calls alike: what the hook ABI decides. Needs the
	 * kernel's run-time statistics, enabled for this process's lifetime below. Per call: a
	 * version 3 hook enters it at one call in SPANPROF_RING_TRAP_EVERY. */
	if (cnt1 > cnt0)
		printf("  BPF program alone, %-8s %-22s %7.1f ns per call (%llu entries in %d calls)\n",
		       h->name, what, (double)(ns1 - ns0) / (RUNS * CALLS),
		       (unsigned long long)(cnt1 - cnt0), RUNS * CALLS);
	return ns;
}

/* The agent's side of span times, in a thread: the ring buffer read as records come. */
struct span_reader {
	struct ring_buffer *rb;
	atomic_int stop;
	uint64_t records;
};

static int ignore_event(void *ctx, void *data, size_t size)
{
	(void)ctx, (void)data, (void)size;
	return 0;
}

static int count_record(void *ctx, void *data, size_t size)
{
	/* An entry holds one record or a ring read's records back to back. */
	(void)data;
	((struct span_reader *)ctx)->records += size / sizeof(struct spanprof_span_end);
	return 0;
}

static void *read_records(void *arg)
{
	struct span_reader *r = arg;

	while (!atomic_load(&r->stop))
		ring_buffer__poll(r->rb, 50);
	ring_buffer__consume(r->rb);
	return NULL;
}

/* The nop5 site with the agent's default options, off-CPU and span times on (span_times 0: span
 * times off): every clear ends a span, one record each. what: the row's name. */
static double time_with_span_times(const struct hook_lib *h, span_turns span, int span_times,
				   const char *what)
{
	struct loader_options lo = {
		.frequency = 100,
		.stack_entries = 1024,
		.count_entries = 1024,
		.off_cpu = span_times,
		.off_cpu_entries = 1024,
		.off_cpu_min_ns = 1000000,
		.span_times = span_times,
	};
	struct span_reader r = { 0 };
	uint64_t drops[SPANPROF_DROP__COUNT] = { 0 };
	struct loader *l = loader_open(&lo);
	double ns = -1;
	pthread_t t;

	if (!l)
		return -1;
	r.rb = loader_proc_events(l, ignore_event, NULL);
	if (r.rb && !loader_add_span_ends(l, r.rb, count_record, &r) &&
	    !pthread_create(&t, NULL, read_records, &r)) {
		ns = time_lib_with_link(l, h, h->site.nop5_offset, span, what);
		atomic_store(&r.stop, 1);
		pthread_join(t, NULL);
		loader_read_drops(l, drops, SPANPROF_DROP__COUNT);
		printf("  %s: span records read: %llu, lost (ring buffer full): %llu, span changes "
		       "lost (hook ring): %llu\n",
		       h->name, (unsigned long long)r.records,
		       (unsigned long long)drops[SPANPROF_DROP_SPAN_END_FULL],
		       (unsigned long long)drops[SPANPROF_DROP_SPAN_RING_LOST]);
	}
	ring_buffer__free(r.rb);
	loader_close(l);
	return ns;
}

/* File offset of a symbol's entry, through libelf (the reference plain-uprobe site). */
static int symbol_offset(const char *path, const char *name, uint64_t *offset)
{
	int fd = open(path, O_RDONLY), err = -ENOENT;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf *elf;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) && err) {
		Elf_Data *data = elf_getdata(scn, NULL);

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !data)
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			if (!gelf_getsym(data, i, &sym) ||
			    strcmp(elf_strptr(elf, shdr.sh_link, sym.st_name), name))
				continue;
			err = vaddr_offset(elf, sym.st_value, offset);
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

static double time_clock(long n, int tsc)
{
	double best = 1e18, t;
	struct timespec ts;
	uint64_t sum = 0;

	for (int run = 0; run < RUNS; run++) {
		t = now_ns();
		for (long i = 0; i < n; i++) {
#if defined(__x86_64__)
			if (tsc) {
				sum += __rdtsc();
				continue;
			}
#endif
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sum += (uint64_t)ts.tv_nsec;
		}
		t = (now_ns() - t) / n;
		if (t < best)
			best = t;
	}
	return sum ? best : best; /* sum keeps the calls */
}

int main(int argc, char **argv)
{
	struct loader_options lo = { .frequency = 100,
				     .stack_entries = 1024,
				     .count_entries = 1024 };
	struct spanprof_span span = { .abi_version = SPANPROF_SPAN_ABI_VERSION, .name = "bench" };
	struct spanprof_span long_span = span, other;
	struct spanprof_span_v1 v1 = { .abi_version = 1, .name = "bench" };
	const struct spanprof_span *v1p = (const struct spanprof_span *)(const void *)&v1;
	span_turns one = { &span, &span }, two = { &span, &other },
		   long1 = { &long_span, &long_span }, v1t = { v1p, v1p };
	double none, none_v2, v3_def = -1, v3_two = -1, v3_off = -1, v2_def = -1, v2_off = -1;
	double nop5_long = -1, nop5_v1 = -1, nop1, entry = -1, clock_ns, tsc_ns, hook_alone;
	struct hook_lib v3, v2;
	char exe[4096], v2_path[4200];
	uint64_t entry_off = 0;
	volatile unsigned short *sem;
	struct loader *l;
	int foreign = 0;

	(void)argc;
	hook_copies_reexec("bench_hook", argv);
	log_set_level(LOG_LEVEL_WARN);
	if (hook_lib_self(&v3, exe, sizeof(exe)) ||
	    hook_lib_open_v2(&v2, v2_path, sizeof(v2_path), exe))
		return 1;
	if (symbol_offset(v2_path, "spanprof_span_set", &entry_off)) {
		fprintf(stderr, "bench_hook: no symbol spanprof_span_set in %s\n", v2_path);
		return 1;
	}
	/* Non-zero ids: a span with a zero span id is no span, and queues no change. */
	span.trace_id[15] = 1;
	span.span_id[7] = 2;
	span.root_span_id[7] = 3;
	long_span = span;
	memcpy(v1.trace_id, span.trace_id, sizeof(v1.trace_id));
	memcpy(v1.span_id, span.span_id, sizeof(v1.span_id));
	memset(long_span.name, 'n', 200); /* a 200-byte name: ABI v1 would have cut it at 63 */
	/* Another root span, under another name: with span, the two take turns at every set. */
	other = span;
	other.span_id[7] = 4;
	other.root_span_id[7] = 5;
	snprintf(other.name, sizeof(other.name), "bench-other");
	none = lowest(-1, time_calls(&span, CALLS));
	/* First, before any uprobe was attached to this executable's site: with none attached the
	 * site is a nop only while the kernel never optimized a probe there (after one did, this
	 * process's entries of the site were seen to cost tens of us with no probe, which would
	 * swamp what this row shows: the hook's own user-space work). */
	clock_ns = time_clock(CALLS, 0);
	tsc_ns = time_clock(CALLS, 1);
	hook_alone = -1;
	/* The hook's semaphore in this executable (libspanprof.a is linked in): raised by hand, the
	 * hook does what it does under an agent (record, ring, an uprobe site entry every 256
	 * changes) with no uprobe attached: the hook's own user-space cost. Only while no uprobe
	 * counts in it: the kernel keeps that count, and lowering what it raised would push it
	 * below zero. */
	sem = (volatile unsigned short *)v3.semaphore;
	for (int round = 0; round < ROUNDS; round++) {
		foreign |= *sem != 0 || *v2.semaphore != 0;
		if (!*sem) {
			*sem += 1;
			hook_alone = lowest(hook_alone, time_calls(&span, CALLS));
			*sem -= 1; /* not = 0: an agent that attached meanwhile keeps its count */
		}
		none = lowest(none, time_calls(&span, CALLS));
	}
	none_v2 = time_calls_of(v2.set, one, CALLS);

	/* Kernel run-time statistics while this process lives (released with the fd at exit). */
	if (bpf_enable_stats(BPF_STATS_RUN_TIME) < 0)
		fprintf(stderr, "bench_hook: no BPF run-time statistics: %s\n", strerror(errno));
	/* The machine's speed may drop for a second or more at a time (a busy host): each row is
	 * the best of ROUNDS measurements taken apart, the rows of one round in turn. */
	for (int round = 0; round < ROUNDS; round++) {
		v3_def = lowest(v3_def, time_with_span_times(&v3, one, 1, "default options:"));
		v3_two = lowest(v3_two, time_with_span_times(&v3, two, 1, "two root names:"));
		v2_def = lowest(v2_def, time_with_span_times(&v2, one, 1, "default options:"));
		v3_off = lowest(v3_off, time_with_span_times(&v3, one, 0, "span times off:"));
		v2_off = lowest(v2_off, time_with_span_times(&v2, one, 0, "span times off:"));
		none = lowest(none, time_calls(&span, CALLS));
	}
	l = loader_open(&lo);
	if (!l) {
		fprintf(stderr, "bench_hook: cannot load BPF (needs root): %s\n", strerror(errno));
		return 1;
	}
	nop5_long = time_lib_with_link(l, &v2, v2.site.nop5_offset, long1, "200-byte name:");
	nop5_v1 = time_lib_with_link(l, &v2, v2.site.nop5_offset, v1t, "ABI v1 struct:");
	nop1 = time_lib_with_link(l, &v2, v2.site.site_offset, one, "1-byte nop site:");
	entry = time_lib_with_link(l, &v2, entry_off, one, "function entry:");
	loader_close(l);
	/* With this benchmark's links gone, a count left is another agent's (one that attached
	 * after the first rounds, when the benchmark runs in place). */
	foreign |= *sem != 0 || *v2.semaphore != 0;

	printf("\n== hook cost per spanprof_span_set() call (best of %d runs of %d calls; calls "
	       "alternate set and clear) ==\n",
	       RUNS, CALLS);
	printf("  %-44s %10.2f ns\n", "ABI v3 (TLS record), no agent", none);
	printf("  %-44s %10.2f ns   (%.1fx no agent)\n",
	       "ABI v3, semaphore up, no BPF (hook alone)", hook_alone, hook_alone / none);
	printf("    ... its ring's clock: time stamp counter %10.2f ns (clock_gettime(MONOTONIC) "
	       "%.2f ns)\n",
	       tsc_ns, clock_ns);
	printf("  %-44s %10.2f ns   (%.1fx no agent)\n", "ABI v3, agent, default options", v3_def,
	       v3_def / none);
	printf("    ... two root names taking turns          %10.2f ns   (%.2fx one name)\n",
	       v3_two, v3_two / v3_def);
	printf("  %-44s %10.2f ns   (%.1fx no agent)\n", "ABI v3, agent, span times off", v3_off,
	       v3_off / none);
	printf("  %-44s %10.2f ns\n", "ABI v2 (uprobe per call), no agent", none_v2);
	printf("  %-44s %10.2f ns   (%.1fx ABI v3)\n", "ABI v2, agent, default options (nop5)",
	       v2_def, v2_def / v3_def);
	printf("  %-44s %10.2f ns   (%.1fx ABI v3)\n", "ABI v2, agent, span times off (nop5)",
	       v2_off, v2_off / v3_off);
	printf("    ... 200-byte span name                   %10.2f ns   (%.2fx a 5-byte name)\n",
	       nop5_long, nop5_long / v2_off);
	printf("    ... ABI v1 struct (old build)            %10.2f ns   (%.2fx ABI v2)\n", nop5_v1,
	       nop5_v1 / v2_off);
	printf("  %-44s %10.2f ns   (%.0fx no agent)\n", "ABI v2, agent, 1-byte nop site", nop1,
	       nop1 / none_v2);
	printf("  %-44s %10.2f ns   (%.0fx no agent)\n", "ABI v2, plain uprobe on function entry",
	       entry, entry / none_v2);
	if (foreign)
		printf("    ... another agent's uprobe was attached to the hooks: the no-agent rows "
		       "are its%s\n",
		       hook_alone < 0 ? ", and the semaphore was never raised by hand (-1)" : "");
	return 0;
}
