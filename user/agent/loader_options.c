// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The BPF loader's options from the agent's configuration (loader_options.h). */
#include <string.h>

#include <linux/types.h>

#include "agent/loader_options.h"
#include "spanprof_abi.h"

void loader_options_from_config(const struct spanprof_config *cfg, const struct map_sizes *ms,
				struct loader_options *lo)
{
	memset(lo, 0, sizeof(*lo));
	lo->frequency = cfg->frequency;
	lo->pids = cfg->pids;
	lo->npids = cfg->npids;
	lo->stack_entries = ms->stacks;
	lo->count_entries = ms->counts;
	lo->off_cpu_entries = cfg->off_cpu_entries;
	lo->goroutine_entries = cfg->goroutine_entries;
	lo->span_name_entries = cfg->span_name_entries;
	lo->pending_scan_entries = cfg->pending_scan_entries;
	lo->unwind_chunks = cfg->unwind_table_bytes / sizeof(struct spanprof_unwind_chunk);
	lo->unwind_pids = cfg->max_procs;
	lo->off_cpu = cfg->off_cpu;
	lo->off_cpu_min_ns = (uint64_t)cfg->off_cpu_min_us * 1000;
	lo->off_cpu_fp = cfg->off_cpu_fp;
	lo->span_times = cfg->span_stats_max > 0;
}
