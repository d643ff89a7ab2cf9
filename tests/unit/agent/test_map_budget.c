// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for map_budget: the most memory a BPF map can hold agrees with what the kernel
 * charges for maps made full (memlock in /proc/self/fdinfo), and the Helm chart's memory limit
 * covers the agent's worst case with default options, as docs/memory.md sums it. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "proc_memory.h"
#include "agent/map_budget.h"
#include "config/config.h"

#define MIB (1024.0 * 1024.0)

/* The worst case docs/memory.md states, beside the budgets the options set, on the node of
 * map_budget.h (64 CPUs, 10,000 threads that set spans): the agent's fixed part (shared libraries, kernel symbols, its process tables, the
 * BPF load's BTF parse) and one large file's unwind table being built (a table holds at most
 * 128 chunks of 4096 rows, 56 bytes a raw row). The interpreter caches' budget is 4 MiB. */
#define FIXED_RSS (25ull << 20)
#define UNWIND_BUILD_RSS (128ull * 4096 * 56)
#define INTERP_CACHE_BUDGET (4ull << 20)
/* Headroom over the sum: what no budget counts (libdw's own structures for the lines looked up,
 * allocator slack) and slab rounding of map elements. */
#define HEADROOM 1.10

/* Makes the map b describes, fills it when it is a hash, and checks that map_budget_bytes is
 * within ratio of the kernel's memlock (plus the header's 1 KiB, which it rounds up to). */
static void check_map(const struct loader_map_bound *b, double ratio)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = b->flags);
	unsigned int ncpus = libbpf_num_possible_cpus();
	uint64_t want = map_budget_bytes(b, ncpus, 0), got;
	char *value = calloc(ncpus, b->value_size + 8);
	uint32_t key;
	int fd;

	assert_non_null(value);
	fd = bpf_map_create(b->type, b->name, b->key_size, b->value_size, b->max_entries, &o);
	assert_true(fd >= 0);
	if (b->type == BPF_MAP_TYPE_HASH || b->type == BPF_MAP_TYPE_LRU_HASH)
		for (key = 0; key < b->max_entries; key++)
			assert_int_equal(bpf_map_update_elem(fd, &key, value, BPF_ANY), 0);
	got = proc_memory_fd_memlock(fd);
	printf("  %s: kernel %" PRIu64 ", budget %" PRIu64 "\n", b->name, got, want);
	assert_true(want >= got * (1 - ratio) && want <= got * (1 + ratio) + 1024);
	close(fd);
	free(value);
}

static void test_budget_matches_the_kernel_for_full_maps(void **state)
{
	const struct loader_map_bound maps[] = {
		{ "t_lru", BPF_MAP_TYPE_LRU_HASH, 4, 256, 4096, 0 },
		{ "t_hash", BPF_MAP_TYPE_HASH, 4, 1024, 2048, BPF_F_NO_PREALLOC },
		{ "t_prealloc", BPF_MAP_TYPE_HASH, 4, 8, 4096, 0 },
		{ "t_array", BPF_MAP_TYPE_ARRAY, 4, 16, 16384, 0 },
		{ "t_percpu", BPF_MAP_TYPE_PERCPU_ARRAY, 4, 2000, 1, 0 },
		{ "t_ring", BPF_MAP_TYPE_RINGBUF, 0, 0, 1 << 20, 0 },
	};
	size_t i;

	(void)state;
	if (geteuid() != 0) {
		printf("  not root: BPF maps cannot be made here\n");
		skip();
	}
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		check_map(&maps[i], 0.05);
}

/* resources.limits.memory of helm/spanprof/values.yaml in bytes, or 0. */
static uint64_t chart_memory_limit(const char *path)
{
	int in_resources = 0, in_limits = 0;
	char line[256], unit[8];
	uint64_t v = 0;
	double n;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "resources:", 10))
			in_resources = 1;
		else if (line[0] != ' ' && line[0] != '#' && line[0] != '\n')
			in_resources = 0;
		if (in_resources && !strncmp(line, "  limits:", 9))
			in_limits = 1;
		else if (in_resources && !strncmp(line, "  requests:", 11))
			in_limits = 0;
		if (in_limits && sscanf(line, " memory: %lf%7s", &n, unit) == 2) {
			v = !strcmp(unit, "Gi") ? n * 1024 * MIB :
			    !strcmp(unit, "Mi") ? n * MIB :
						  0;
			break;
		}
	}
	fclose(f);
	return v;
}

static void print_map(const struct loader_map_bound *m, uint64_t bytes, void *ctx)
{
	(void)ctx;
	if (bytes >= 512 * 1024)
		printf("  %-24s %8u entries  %7.1f MiB\n", m->name, m->max_entries, bytes / MIB);
}

static void test_chart_limit_covers_the_worst_case(void **state)
{
	uint64_t maps, rss, limit = chart_memory_limit("helm/spanprof/values.yaml");
	struct spanprof_config cfg;
	double need;

	(void)state;
	if (!limit) {
		printf("  helm/spanprof/values.yaml not found or without a memory limit (run from "
		       "the source tree)\n");
		skip();
	}
	config_init(&cfg);
	assert_int_equal(map_budget_worst(&cfg, MAP_BUDGET_NODE_CPUS, MAP_BUDGET_NODE_SPAN_THREADS,
					  &maps, print_map, NULL),
			 0);
	printf("  all BPF maps: %.1f MiB\n", maps / MIB);
	rss = FIXED_RSS + UNWIND_BUILD_RSS + cfg.symbol_budget + cfg.max_dwarf_bytes +
	      cfg.perf_map_budget + INTERP_CACHE_BUDGET + cfg.upload.queue_bytes;
	need = (maps + rss) * HEADROOM;
	printf("  RSS at its bounds %.1f MiB (symbols %.0f, DWARF %.0f, perf maps %.0f, "
	       "interpreters %.0f, push queue %.0f, unwind build %.0f, fixed %.0f), maps %.1f MiB: "
	       "%.1f MiB, %.0f MiB with %.0f%% headroom; chart limit %.0f MiB\n",
	       rss / MIB, cfg.symbol_budget / MIB, cfg.max_dwarf_bytes / MIB,
	       cfg.perf_map_budget / MIB, INTERP_CACHE_BUDGET / MIB, cfg.upload.queue_bytes / MIB,
	       UNWIND_BUILD_RSS / MIB, FIXED_RSS / MIB, maps / MIB, (maps + rss) / MIB, need / MIB,
	       (HEADROOM - 1) * 100, limit / MIB);
	config_release(&cfg);
	assert_true(limit >= need);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_budget_matches_the_kernel_for_full_maps),
		cmocka_unit_test(test_chart_limit_covers_the_worst_case),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
