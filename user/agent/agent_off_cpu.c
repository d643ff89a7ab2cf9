// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU profiles in the agent: each drain reads the off-CPU count map of the window that just
 * closed with the window's CFI and interpreter stacks (the kernel and frame-pointer stacks stay:
 * they are shared by both windows), symbolizes every key with its Python or Ruby frames merged as
 * CPU samples are, and adds its nanoseconds to the service's off_cpu profile, flushed with the
 * CPU ones. */
#include <errno.h>

#include "agent/agent_int.h"
#include "util/log.h"

int agent_off_cpu_open(struct agent *a)
{
	/* One sample is one nanosecond of waiting: period 1, values are sums of nanoseconds. */
	struct aggregate_options o = {
		.period_ns = 1,
		.scope = a->cfg->span_scope,
		.max_services = a->cfg->max_services,
		.sample_type = "off_cpu",
	};

	if (!a->cfg->off_cpu)
		return 0;
	errno = 0;
	a->off_cpu.drain = drain_new(SPANPROF_OFF_CPU_COUNTS);
	if (!a->off_cpu.drain)
		return log_err(errno ? -errno : -ENOMEM, "set up the off-CPU drain");
	a->off_cpu.agg = aggregate_new(&o, a->procs);
	if (!a->off_cpu.agg)
		return log_err(errno ? -errno : -ENOMEM, "set up the off-CPU profiles");
	return 0;
}

static void on_off_cpu(void *ctx, const struct sample *s)
{
	struct agent *a = ctx;

	agent_resolve_sample(a, s);
	aggregate_add(a->off_cpu.agg, s, a->resolve->frames, a->resolve->nframes);
}

void agent_off_cpu_drain(struct agent *a)
{
	struct loader_window w;

	if (!a->off_cpu.agg)
		return;
	w = loader_off_cpu_window(a->loader);
	drain_set_interp_stacks(a->off_cpu.drain, w.interp_stacks_fd);
	drain_set_keys_fn(a->off_cpu.drain, agent_prepare_keys, a);
	drain_window_shared_stacks(a->off_cpu.drain, w.counts_fd, w.stacks_fd, w.user_stacks_fd,
				   w.names_fd, on_off_cpu, a);
}

void agent_off_cpu_close(struct agent *a)
{
	aggregate_free(a->off_cpu.agg);
	drain_free(a->off_cpu.drain);
	a->off_cpu.agg = NULL;
	a->off_cpu.drain = NULL;
}
