// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: cost of one spanprof_span_set() call with no agent, with the agent's uprobe on the
 * 5-byte nop (optimized on 6.18+ x86-64), on the 1-byte nop, and on the function entry (a plain
 * uprobe, for reference), and on the nop5 site with span times on (a record per ended span, read
 * by a thread as the agent would). Prints ns per call and ratios measured in this one run. */
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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "discover/hook_elf.h"
#include "agent/loader.h"
#include "spanprof.h"
#include "spanprof_abi.h"
#include "util/log.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
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

/* Best of 5 runs of n calls, in ns per call: the minimum filters out preemption noise. */
static double time_calls(const struct spanprof_span *span, long n)
{
	double best = 1e18, t;

	for (int run = 0; run < 5; run++) {
		t = now_ns();
		for (long i = 0; i < n; i++)
			spanprof_span_set((i & 1) ? span : NULL);
		t = (now_ns() - t) / n;
		if (t < best)
			best = t;
	}
	return best;
}

/* Run time and count of the hook's BPF program so far (kernel run-time statistics). */
static void prog_stats(struct loader *l, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	*ns = *cnt = 0;
	if (!bpf_obj_get_info_by_fd(loader_hook_prog_fd(l, LOADER_HOOK_C), &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

static double time_with_link(struct loader *l, const char *exe, uint64_t offset, uint64_t semaphore,
			     const struct spanprof_span *span, const char *what)
{
	struct bpf_link *link = loader_attach_hook(l, exe, offset, semaphore, LOADER_HOOK_C, 0);
	uint64_t ns0, cnt0, ns1, cnt1;
	double ns;

	if (!link) {
		fprintf(stderr, "attach at 0x%llx: %s\n", (unsigned long long)offset,
			strerror(errno));
		return -1;
	}
	if (!spanprof_active())
		fprintf(stderr, "warning: semaphore not raised after attach\n");
	time_calls(span, 1000); /* first hits install the trampoline */
	prog_stats(l, &ns0, &cnt0);
	ns = time_calls(span, 200000);
	prog_stats(l, &ns1, &cnt1);
	bpf_link__destroy(link);
	/* The BPF program alone, set and clear calls alike: what the hook ABI decides. Needs the
	 * kernel's run-time statistics, enabled for this process's lifetime below. */
	if (cnt1 > cnt0)
		printf("  BPF program alone, %-22s %7.1f ns per call\n", what,
		       (double)(ns1 - ns0) / (cnt1 - cnt0));
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
	(void)data, (void)size;
	((struct span_reader *)ctx)->records++;
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

/* The nop5 site with off-CPU and span times on: every clear ends a span, one record each. */
static double time_with_span_times(const char *exe, const struct hook_site *site,
				   const struct spanprof_span *span)
{
	struct loader_options lo = {
		.frequency = 100,
		.stack_entries = 1024,
		.count_entries = 1024,
		.off_cpu = 1,
		.off_cpu_min_ns = 1000000,
		.span_times = 1,
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
		ns = time_with_link(l, exe, site->nop5_offset, site->semaphore_offset, span,
				    "with span times:");
		atomic_store(&r.stop, 1);
		pthread_join(t, NULL);
		loader_read_drops(l, drops, SPANPROF_DROP__COUNT);
		printf("  span records read: %llu, lost (ring buffer full): %llu\n",
		       (unsigned long long)r.records,
		       (unsigned long long)drops[SPANPROF_DROP_SPAN_END_FULL]);
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

int main(void)
{
	struct loader_options lo = { .frequency = 100,
				     .stack_entries = 1024,
				     .count_entries = 1024 };
	struct spanprof_span span = { .abi_version = SPANPROF_SPAN_ABI_VERSION, .name = "bench" };
	struct spanprof_span long_span = span;
	struct spanprof_span_v1 v1 = { .abi_version = 1, .name = "bench" };
	const struct spanprof_span *v1p = (const struct spanprof_span *)(const void *)&v1;
	double none, nop5 = -1, nop5_long = -1, nop5_v1 = -1, nop1, entry = -1, times = -1;
	uint64_t entry_off = 0;
	struct hook_site site;
	struct loader *l;
	char exe[4096];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return 1;
	exe[n] = '\0';
	log_set_level(LOG_LEVEL_WARN);
	if (hook_elf_find(exe, &site) || symbol_offset(exe, "spanprof_span_set", &entry_off)) {
		fprintf(stderr, "bench_hook: no hook site or symbol in %s\n", exe);
		return 1;
	}
	memset(long_span.name, 'n', 200); /* a 200-byte name: ABI v1 would have cut it at 63 */
	none = time_calls(&span, 50000000);
	/* Kernel run-time statistics while this process lives (released with the fd at exit). */
	if (bpf_enable_stats(BPF_STATS_RUN_TIME) < 0)
		fprintf(stderr, "bench_hook: no BPF run-time statistics: %s\n", strerror(errno));
	l = loader_open(&lo);
	if (!l) {
		fprintf(stderr, "bench_hook: cannot load BPF (needs root): %s\n", strerror(errno));
		return 1;
	}
	if (site.nop5_offset) {
		nop5 = time_with_link(l, exe, site.nop5_offset, site.semaphore_offset, &span,
				      "5-byte name:");
		nop5_long = time_with_link(l, exe, site.nop5_offset, site.semaphore_offset,
					   &long_span, "200-byte name:");
		nop5_v1 = time_with_link(l, exe, site.nop5_offset, site.semaphore_offset, v1p,
					 "ABI v1 struct:");
	}
	nop1 = time_with_link(l, exe, site.site_offset, site.semaphore_offset, &span,
			      "1-byte nop site:");
	entry = time_with_link(l, exe, entry_off, site.semaphore_offset, &span, "function entry:");
	loader_close(l);
	if (site.nop5_offset)
		times = time_with_span_times(exe, &site, &span);

	printf("\n== hook cost per spanprof_span_set() call (best of 5 runs) ==\n");
	printf("  no agent (semaphore down)        %10.2f ns\n", none);
	if (nop5 > 0) {
		printf("  agent attached, nop5 site        %10.2f ns   (%.0fx no agent)\n", nop5,
		       nop5 / none);
		printf("    ... 200-byte span name         %10.2f ns   (%.2fx a 5-byte name)\n",
		       nop5_long, nop5_long / nop5);
		printf("    ... ABI v1 struct (old build)  %10.2f ns   (%.2fx ABI v2)\n", nop5_v1,
		       nop5_v1 / nop5);
	}
	printf("  agent attached, 1-byte nop site  %10.2f ns   (%.0fx no agent)\n", nop1,
	       nop1 / none);
	printf("  plain uprobe on function entry   %10.2f ns   (%.0fx no agent)\n", entry,
	       entry / none);
	if (nop5 > 0)
		printf("  nop5 site vs plain entry uprobe: %.1fx faster\n", entry / nop5);
	if (times > 0)
		printf("  nop5 site, span times on         %10.2f ns   (%.2fx span times off)\n",
		       times, times / nop5);
	return 0;
}
