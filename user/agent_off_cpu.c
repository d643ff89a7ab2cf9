// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU profiles in the agent: each drain reads the off-CPU count map of the window that just
 * closed with the window's CFI and interpreter stacks (the kernel and frame-pointer stacks stay:
 * they are shared by both windows), symbolizes every key with its Python or Ruby frames merged as
 * CPU samples are, and adds its nanoseconds to the service's off_cpu profile, flushed with the
 * CPU ones. */
#include <errno.h>

#include "agent_int.h"

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
	a->off_cpu_drain = drain_new(SPANPROF_OFF_CPU_COUNTS);
	a->off_cpu = a->procs ? aggregate_new(&o, a->procs) : NULL;
	return a->off_cpu_drain && a->off_cpu ? 0 : -ENOMEM;
}

static void on_off_cpu(void *ctx, const struct sample *s)
{
	struct agent *a = ctx;

	agent_resolve_sample(a, s);
	aggregate_add(a->off_cpu, s, a->resolve->frames, a->resolve->nframes);
}

void agent_off_cpu_drain(struct agent *a)
{
	struct loader_window w;

	if (!a->off_cpu)
		return;
	w = loader_off_cpu_window(a->loader);
	drain_set_py_stacks(a->off_cpu_drain, w.py_stacks_fd);
	drain_set_keys_fn(a->off_cpu_drain, agent_prepare_keys, a);
	drain_window_shared_stacks(a->off_cpu_drain, w.counts_fd, w.stacks_fd, w.user_stacks_fd,
				   w.names_fd, on_off_cpu, a);
}

void agent_off_cpu_close(struct agent *a)
{
	aggregate_free(a->off_cpu);
	drain_free(a->off_cpu_drain);
	a->off_cpu = NULL;
	a->off_cpu_drain = NULL;
}
