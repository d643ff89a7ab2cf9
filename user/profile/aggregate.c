// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Aggregation: drained samples with their frames -> labelled samples in per-service pprof
 * builders; flushing hands each service's builder to the output. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "discover/labels.h"
#include "profile/aggregate.h"
#include "util/spanprof_types.h"

struct service_profile {
	char name[LABELS_SERVICE_MAX];
	struct pprof_builder *builder;
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

static struct pprof_builder *builder_for(struct aggregate *a, const char *service)
{
	struct service_profile *s;
	size_t slot = name_slot(a, service);

	if (a->index[slot])
		return a->services[a->index[slot] - 1].builder;
	if (a->nservices == a->opts.max_services)
		return NULL;
	s = &a->services[a->nservices];
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

/* Label names of the thread context attributes, and their values for one sample. */
struct attr_labels {
	char names[SPANPROF_TCTX_MAX_LABELS][72];
	char values[SPANPROF_TCTX_MAX_LABELS][SPANPROF_ABI_SPAN_NAME_MAX + 1];
};

/* A thread context span's interned string is "<name>\x1f<value 1>\x1f...": cuts name at the
 * first separator and labels the values that are not empty. Returns how many were set. */
static size_t attr_labels(const struct aggregate *a, char *name, struct attr_labels *al,
			  struct pprof_label *labels)
{
	char *sep = strchr(name, SPANPROF_TCTX_SEP), *v, *next;
	size_t i, n = 0, k;

	if (!sep)
		return 0;
	*sep = '\0';
	v = sep + 1;
	for (i = 0; i < a->opts.ntctx_labels && i < SPANPROF_TCTX_MAX_LABELS && v; i++, v = next) {
		next = strchr(v, SPANPROF_TCTX_SEP);
		if (next)
			*next++ = '\0';
		if (!*v)
			continue;
		snprintf(al->names[n], sizeof(al->names[n]), "%s", a->opts.tctx_labels[i]);
		for (k = 0; al->names[n][k]; k++)
			if (al->names[n][k] == '.' || al->names[n][k] == '-')
				al->names[n][k] = '_';
		snprintf(al->values[n], sizeof(al->values[n]), "%s", v);
		labels_clean(al->values[n]);
		labels[n] = (struct pprof_label){ al->names[n], al->values[n] };
		n++;
	}
	return n;
}

/* Span labels of one sample; returns how many were set. Hex and name buffers (name:
 * SPANPROF_ABI_SPAN_NAME_MAX + 1 bytes) belong to the caller. */
static size_t span_labels(const struct aggregate *a, const struct sample *s,
			  struct pprof_label *labels, char *span_hex, char *trace_hex, char *name,
			  struct attr_labels *al)
{
	const struct sample_key *key = s->key;
	const __u8 *id = key->span.span_id;
	size_t n = 0, len;

	if (!key->has_span)
		return 0;
	if (a->opts.scope == SPAN_SCOPE_ROOT && !labels_is_zero(key->span.root_span_id, 8))
		id = key->span.root_span_id;
	labels_hex(id, 8, span_hex);
	labels_hex(key->span.trace_id, 16, trace_hex);
	/* The application's bytes: no newline, ESC or broken UTF-8. A name evicted from span_names
	 * before the drain (counted there) is NULL and leaves the label out. */
	name[0] = '\0';
	if (s->span_name) {
		len = strnlen(s->span_name, SPANPROF_ABI_SPAN_NAME_MAX);
		memcpy(name, s->span_name, len);
		name[len] = '\0';
		if (key->span.abi_version == SPANPROF_SPAN_FROM_TCTX)
			n += attr_labels(a, name, al, labels + n);
		labels_clean(name);
	}
	/* A zero id is an unsampled span (or a Go span_name label alone): like otel-profiling-go,
	 * only its name is labelled, so per-name views still count all CPU. */
	if (!labels_is_zero(id, 8))
		labels[n++] = (struct pprof_label){ "span_id", span_hex };
	if (!labels_is_zero(key->span.trace_id, 16))
		labels[n++] = (struct pprof_label){ "trace_id", trace_hex };
	if (name[0])
		labels[n++] = (struct pprof_label){ "span_name", name };
	return n;
}

/* Process labels of the sample (OTel service namespace, Kubernetes placement); returns how
 * many were set. */
static size_t proc_labels(const struct proc_info *proc, struct pprof_label *labels)
{
	size_t n = 0;

	if (proc->service_namespace[0])
		labels[n++] = (struct pprof_label){ "service_namespace", proc->service_namespace };
	if (proc->k8s_namespace[0])
		labels[n++] = (struct pprof_label){ "namespace", proc->k8s_namespace };
	if (proc->k8s_pod[0])
		labels[n++] = (struct pprof_label){ "pod", proc->k8s_pod };
	if (proc->k8s_container[0])
		labels[n++] = (struct pprof_label){ "container", proc->k8s_container };
	return n;
}

void aggregate_add(struct aggregate *a, const struct sample *s, const struct sym_frame *frames,
		   size_t nframes)
{
	char span_hex[17], trace_hex[33], name[SPANPROF_ABI_SPAN_NAME_MAX + 1];
	const struct sample_key *key = s->key;
	struct pprof_label labels[7 + SPANPROF_TCTX_MAX_LABELS];
	struct attr_labels al;
	const struct proc_info *proc;
	struct proc_info scratch;
	struct pprof_builder *b;
	size_t nlabels;

	/* Read before the window's samples (the agent's keys pass); a table full of live
	 * processes keeps none, and only then is the process read here. */
	proc = proc_table_find(a->procs, key->pid);
	if (!proc)
		proc = proc_table_get(a->procs, key->pid, &scratch);
	b = builder_for(a, proc->service);
	if (!b) {
		a->stats.service_overflow += s->count;
		return;
	}
	nlabels = span_labels(a, s, labels, span_hex, trace_hex, name, &al);
	nlabels += proc_labels(proc, labels + nlabels);
	if (pprof_builder_add_sample(b, frames, nframes, s->count, labels, nlabels)) {
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
