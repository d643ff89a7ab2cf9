// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregation: drained samples with their frames -> labelled samples in per-service pprof
 * builders; flushing hands each service's builder to the output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/aggregate.h"
#include "profile/sample_labels.h"
#include "util/log.h"
#include "util/spanprof_types.h"

struct service_profile {
	char name[LABELS_SERVICE_MAX];
	struct pprof_builder *builder;
	uid_t uid; /* the uid of the process whose sample took the slot */
};

struct aggregate {
	struct aggregate_options opts;
	struct proc_table *procs;
	struct service_profile *services; /* opts.max_services slots, `nservices` used */
	size_t nservices;
	/* Open addressing over the services by name hash (0: empty, else index + 1), so a sample
	 * costs one hash and usually one strcmp, whatever the number of services. */
	uint32_t *index;
	size_t index_mask;
	int64_t window_start_ns;
	struct aggregate_stats stats;
};

struct aggregate *aggregate_new(const struct aggregate_options *opts, struct proc_table *procs)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->opts = *opts;
	a->procs = procs;
	a->services = calloc(opts->max_services, sizeof(*a->services));
	a->index_mask = 15;
	while (a->index_mask + 1 < 2 * opts->max_services)
		a->index_mask = 2 * a->index_mask + 1;
	a->index = calloc(a->index_mask + 1, sizeof(*a->index));
	if (!a->services || !a->index) {
		aggregate_free(a);
		errno = ENOMEM;
		return NULL;
	}
	return a;
}

static void free_services(struct aggregate *a)
{
	size_t i;

	for (i = 0; i < a->nservices; i++)
		pprof_builder_free(a->services[i].builder);
	a->nservices = 0;
	memset(a->index, 0, (a->index_mask + 1) * sizeof(*a->index));
}

void aggregate_free(struct aggregate *a)
{
	if (!a)
		return;
	if (a->services)
		free_services(a);
	free(a->services);
	free(a->index);
	free(a);
}

void aggregate_start(struct aggregate *a, int64_t start_ns)
{
	a->window_start_ns = start_ns;
}

static size_t name_slot(const struct aggregate *a, const char *service)
{
	uint64_t h = 1469598103934665603ull;
	const char *p;
	size_t i;

	for (p = service; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (i = h & a->index_mask; a->index[i]; i = (i + 1) & a->index_mask)
		if (!strcmp(a->services[a->index[i] - 1].name, service))
			break;
	return i;
}

/* The slots uid's processes took in this window. */
static size_t slots_of(const struct aggregate *a, uid_t uid)
{
	size_t i, n = 0;

	for (i = 0; i < a->nservices; i++)
		n += a->services[i].uid == uid;
	return n;
}

/* The builder of proc's service, taking a new slot for it if needed: NULL with *refused set when
 * its user holds its share, NULL alone when the window is full or without memory. A user other
 * than root takes a new slot only while it holds fewer slots than are still free: one user gets
 * at most half of them, each further user at most half of what is left, and root's services
 * find a free slot. A root process has one service, so counting root per process, as the other
 * shares do, would never bite: root is not limited. */
static struct pprof_builder *builder_for(struct aggregate *a, const struct proc_info *proc,
					 int *refused)
{
	const char *service = proc->service;
	struct service_profile *s;
	size_t slot = name_slot(a, service), held, free_slots;

	if (a->index[slot])
		return a->services[a->index[slot] - 1].builder;
	if (a->nservices == a->opts.max_services)
		return NULL;
	free_slots = a->opts.max_services - a->nservices;
	if (proc->uid != 0 && (held = slots_of(a, proc->uid)) >= free_slots) {
		*refused = 1;
		log_warn_from(proc->pid, 0,
			      "service %s of pid %d not profiled this window: uid %u holds %zu of "
			      "%zu service slots, %zu free (--max-services)",
			      service, (int)proc->pid, (unsigned int)proc->uid, held,
			      a->opts.max_services, free_slots);
		return NULL;
	}
	s = &a->services[a->nservices];
	s->uid = proc->uid;
	/* The duration is only known when the window closes: aggregate_flush sets it then. */
	s->builder = pprof_builder_new(a->opts.period_ns, a->window_start_ns, 0);
	if (s->builder && a->opts.sample_type &&
	    pprof_builder_set_sample_type(s->builder, a->opts.sample_type, "nanoseconds")) {
		pprof_builder_free(s->builder);
		s->builder = NULL;
	}
	if (!s->builder)
		return NULL;
	snprintf(s->name, sizeof(s->name), "%s", service);
	a->nservices++;
	a->index[slot] = a->nservices;
	return s->builder;
}

void aggregate_add(struct aggregate *a, const struct sample *s, const struct sym_frame *frames,
		   size_t nframes)
{
	const struct sample_label_options lo = { a->opts.scope, a->opts.tctx_labels,
						 a->opts.ntctx_labels };
	const struct sample_key *key = s->key;
	struct sample_labels labels;
	const struct proc_info *proc;
	struct proc_info scratch;
	struct pprof_builder *b;
	int refused = 0;

	/* Read before the window's samples (the agent's keys pass); a table full of live
	 * processes keeps none, and only then is the process read here. */
	proc = proc_table_find(a->procs, key->pid);
	if (!proc)
		proc = proc_table_get(a->procs, key->pid, &scratch);
	b = builder_for(a, proc, &refused);
	if (!b) {
		a->stats.service_overflow += s->count;
		if (refused)
			a->stats.service_fair_refused += s->count;
		return;
	}
	sample_labels_build(&labels, &lo, s, proc);
	if (pprof_builder_add_sample(b, frames, nframes, s->count, labels.labels, labels.n)) {
		a->stats.encode_errors += s->count;
		return;
	}
	a->stats.samples += s->count;
	if (key->has_span)
		a->stats.samples_in_spans += s->count;
}

int aggregate_flush(struct aggregate *a, int64_t end_ns, aggregate_profile_fn fn, void *ctx)
{
	int64_t duration_ns = end_ns - a->window_start_ns;
	int err = 0, ret;
	size_t i;

	/* The window's time is fixed here, once, for every service; outputs only read it. */
	for (i = 0; i < a->nservices; i++) {
		pprof_builder_set_time(a->services[i].builder, a->window_start_ns, duration_ns);
		ret = fn(ctx, a->services[i].name, a->services[i].builder);
		if (ret && !err)
			err = ret;
	}
	free_services(a);
	a->window_start_ns = end_ns;
	return err;
}

void aggregate_get_stats(const struct aggregate *a, struct aggregate_stats *out)
{
	*out = a->stats;
}
