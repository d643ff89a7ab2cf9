// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The most kernel memory a BPF map can hold (map_budget.h). */
#include <errno.h>
#include <linux/bpf.h>

#include "agent/loader_options.h"
#include "agent/map_budget.h"
#include "agent/map_sizes.h"

/* A map's own header (struct bpf_htab is about 900 bytes, struct bpf_array about 320). */
#define MAP_HEADER 1024u
/* A hash element's header (struct htab_elem), and a bucket (lock and list head). */
#define HTAB_ELEM 48u
#define HTAB_BUCKET 16u
/* A task storage element's headers and its share of the task's storage: rounded up. */
#define TASK_ELEM 160u
#define PAGE 4096u

static uint64_t round8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static uint64_t hash_bytes(const struct loader_map_bound *m, unsigned int ncpus, int percpu)
{
	uint64_t n = m->max_entries, value = round8(m->value_size);
	uint64_t elem = HTAB_ELEM + round8(m->key_size) + (percpu ? 8 : value);
	uint64_t bytes = MAP_HEADER + pow2_at_least(n) * HTAB_BUCKET;

	/* A preallocated hash (not LRU) keeps one spare element per CPU. */
	if (!(m->flags & BPF_F_NO_PREALLOC) && m->type != BPF_MAP_TYPE_LRU_HASH &&
	    m->type != BPF_MAP_TYPE_LRU_PERCPU_HASH)
		n += ncpus;
	bytes += n * elem;
	if (percpu)
		bytes += n * value * ncpus;
	return bytes;
}

static uint64_t array_bytes(const struct loader_map_bound *m, unsigned int ncpus, int percpu)
{
	uint64_t value = round8(m->value_size), bytes;

	bytes = percpu ? (uint64_t)m->max_entries * (8 + value * ncpus) : m->max_entries * value;
	if (m->flags & BPF_F_MMAPABLE)
		bytes = (bytes + PAGE - 1) / PAGE * PAGE;
	return MAP_HEADER + bytes;
}

uint64_t map_budget_bytes(const struct loader_map_bound *m, unsigned int ncpus,
			  unsigned int nthreads)
{
	switch (m->type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
		return hash_bytes(m, ncpus, 0);
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return hash_bytes(m, ncpus, 1);
	case BPF_MAP_TYPE_ARRAY:
		return array_bytes(m, ncpus, 0);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return array_bytes(m, ncpus, 1);
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		return MAP_HEADER + (uint64_t)m->max_entries * 8; /* inner maps counted apart */
	case BPF_MAP_TYPE_RINGBUF:
		/* The data pages, mapped twice but held once, their page table and the two
		 * position pages. */
		return (uint64_t)m->max_entries + m->max_entries / PAGE * 8 + 4 * PAGE;
	case BPF_MAP_TYPE_TASK_STORAGE:
		return MAP_HEADER + (uint64_t)nthreads * (TASK_ELEM + round8(m->value_size));
	default:
		return MAP_HEADER + (uint64_t)m->max_entries * (HTAB_ELEM + round8(m->key_size) +
								round8(m->value_size));
	}
}

/* More than the object has: the goroutine map's inner one is added to them. */
#define MAX_MAPS 128

int map_budget_worst(const struct spanprof_config *cfg, unsigned int ncpus, unsigned int nthreads,
		     uint64_t *bytes,
		     void (*each)(const struct loader_map_bound *m, uint64_t bytes, void *ctx),
		     void *ctx)
{
	struct map_demand d = { .ncpus = ncpus,
				.frequency = cfg->frequency,
				.drain_ms = cfg->drain_ms,
				.sample_entries = cfg->sample_entries,
				.stack_entries = cfg->stack_entries };
	struct map_sizes ms = map_sizes_compute(&d);
	struct loader_map_bound maps[MAX_MAPS];
	struct loader_options lo;
	uint64_t b;
	int n, i;

	loader_options_from_config(cfg, &ms, &lo);
	n = loader_map_bounds(&lo, maps, MAX_MAPS);
	if (n < 0)
		return n;
	if (n > MAX_MAPS)
		return -E2BIG;
	*bytes = 0;
	for (i = 0; i < n; i++) {
		b = map_budget_bytes(&maps[i], ncpus, nthreads);
		*bytes += b;
		if (each)
			each(&maps[i], b, ctx);
	}
	return 0;
}
