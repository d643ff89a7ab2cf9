// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Off-CPU profiles in the agent: each drain reads the off-CPU count map of the window that just
 * closed with the window's stacks and interpreter stacks (in frame-pointer mode, the stacks both
 * windows share, left in place), symbolizes every key with its Python or Ruby frames merged as
 * CPU samples are, and adds its nanoseconds to the service's off_cpu profile, flushed with the
 * CPU ones. */
#include <errno.h>

#include "agent/agent_int.h"
#include "profile/stack_sweep.h"
#include "util/clock.h"
#include "util/log.h"

/* How often frame-pointer mode's shared stacks are swept. */
#define SWEEP_EVERY_NS (30 * NS_PER_S)

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
	a->off_cpu.drain = drain_new(a->cfg->off_cpu_entries, 2 * a->cfg->off_cpu_entries);
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

/* Frame-pointer mode: deletes the shared stacks no wait took for STACK_SWEEP_MAX_AGE_S. */
static void sweep_shared_stacks(struct agent *a, int fd)
{
	uint64_t now = clock_mono_ns();
	uint32_t deleted;
	int err;

	if (now < a->off_cpu.next_sweep_ns)
		return;
	a->off_cpu.next_sweep_ns = now + SWEEP_EVERY_NS;
	err = stack_sweep(fd, now, STACK_SWEEP_MAX_AGE_S * NS_PER_S, &deleted);
	if (err)
		log_warn(err, "sweep the off-CPU frame-pointer stacks");
	else if (deleted)
		log_debug("off-CPU stacks: %u not taken for %d s deleted", deleted,
			  STACK_SWEEP_MAX_AGE_S);
}

void agent_off_cpu_drain(struct agent *a)
{
	struct loader_window w;

	if (!a->off_cpu.agg)
		return;
	w = loader_off_cpu_window(a->loader);
	drain_set_interp_stacks(a->off_cpu.drain, w.interp_stacks_fd);
	drain_set_keys_fn(a->off_cpu.drain, agent_prepare_keys, a);
	if (w.shared_stacks) {
		drain_window_shared_stacks(a->off_cpu.drain, w.counts_fd, w.stacks_fd, w.names_fd,
					   on_off_cpu, a);
		sweep_shared_stacks(a, w.stacks_fd);
	} else
		drain_window(a->off_cpu.drain, w.counts_fd, w.stacks_fd, w.names_fd, on_off_cpu, a);
}

void agent_off_cpu_close(struct agent *a)
{
	aggregate_free(a->off_cpu.agg);
	drain_free(a->off_cpu.drain);
	a->off_cpu.agg = NULL;
	a->off_cpu.drain = NULL;
}
