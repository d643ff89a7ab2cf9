// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A drained sample on its way to frames, for the CPU and off-CPU drains alike: the processes a
 * window's keys name are read first (process-table entries, symbol snapshots), then each sample's
 * stacks are symbolized and its Python or Ruby frames merged in. */
#include <errno.h>
#include <stdlib.h>

#include "agent/agent_int.h"
#include "profile/key_pids.h"
#include "util/log.h"

/* Each process a drain's keys name is read once (its process-table entry, its symbol
 * snapshot), before the sample loop, the busiest first, and at most as many as the symbol cache
 * keeps snapshots of: more would evict the first ones before their samples are resolved. */
void agent_prepare_keys(void *ctx, const struct sample_key *keys, uint32_t n)
{
	struct agent *a = ctx;
	size_t i, npids, max = a->cfg->max_pid_snapshots;
	struct proc_info scratch;
	struct key_pid *pids;

	if (!n)
		return;
	pids = malloc(n * sizeof(*pids));
	if (!pids) {
		log_warn(-ENOMEM,
			 "drain of %u keys: no room to list their processes: each is read "
			 "when its samples are resolved",
			 n);
		return;
	}
	npids = key_pids_distinct(keys, n, pids);
	if (npids > max) {
		a->pids_unprepared += npids - max;
		log_warn_from(
			0, -ENOSPC,
			"a drain names %zu processes, more than --max-pid-snapshots (%zu): the "
			"others are read when their samples are resolved (counted in "
			"spanprof_input_guards_total{guard=\"pids_unprepared\"})",
			npids, max);
		npids = max;
	}
	for (i = 0; i < npids; i++) {
		proc_table_get(a->procs, pids[i].pid, &scratch);
		/* A process never sampled with user frames (a kernel thread) needs no snapshot. */
		if (pids[i].user)
			symcache_prepare_pid(a->symcache, pids[i].pid);
	}
	free(pids);
}

void agent_resolve_sample(struct agent *a, const struct sample *s)
{
	unwind_note_sampled(a->unwind, s->key->pid);
	stack_resolve(a->resolve, a->symcache, s->key->pid, s->kern_ips, s->lost_kern, s->user_ips,
		      s->lost_user);
	agent_interp_merge(a, s);
}
