// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Window draining: BPF count/stack maps -> symbolized, labelled samples in per-service pprof
 * builders; flushing hands each service's builder to the output. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "discover/labels.h"
#include "profile/aggregate.h"
#include "symbolize/stack_resolve.h"
#include "util/log.h"
#include "util/spanprof_types.h"

struct service_profile {
	char name[LABELS_SERVICE_MAX];
	struct pprof_builder *builder;
};

struct aggregate {
	struct aggregate_options opts;
	struct symcache *sc;
	struct proc_table *procs;
	struct service_profile *services; /* opts.max_services slots, `nservices` used */
	size_t nservices;
	int64_t window_start_ns;
	struct sample_key *keys; /* scratch for one drain, opts.max_keys entries */
	struct stack_resolve *resolve; /* scratch for one sample's frames */
	uint64_t kern_ips[SPANPROF_MAX_STACK_DEPTH], user_ips[SPANPROF_MAX_STACK_DEPTH];
	struct aggregate_stats stats;
};

struct aggregate *aggregate_new(const struct aggregate_options *opts, struct symcache *sc,
				struct proc_table *procs)
{
	struct aggregate *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->opts = *opts;
	a->sc = sc;
	a->procs = procs;
	a->services = calloc(opts->max_services, sizeof(*a->services));
	a->keys = calloc(opts->max_keys, sizeof(*a->keys));
	a->resolve = malloc(sizeof(*a->resolve));
	if (!a->services || !a->keys || !a->resolve) {
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
}

void aggregate_free(struct aggregate *a)
{
	if (!a)
		return;
	if (a->services)
		free_services(a);
	free(a->services);
	free(a->keys);
	free(a->resolve);
	free(a);
}

void aggregate_start(struct aggregate *a, int64_t start_ns)
{
	a->window_start_ns = start_ns;
}

static struct pprof_builder *builder_for(struct aggregate *a, const char *service)
{
	struct service_profile *s;
	size_t i;

	for (i = 0; i < a->nservices; i++)
		if (!strcmp(a->services[i].name, service))
			return a->services[i].builder;
	if (a->nservices == a->opts.max_services)
		return NULL;
	s = &a->services[a->nservices];
	/* The real duration is only known at flush; pprof_builder_set_time fixes it then. */
	s->builder = pprof_builder_new(a->opts.period_ns, a->window_start_ns, 0);
	if (!s->builder)
		return NULL;
	strncpy(s->name, service, sizeof(s->name) - 1);
	s->name[sizeof(s->name) - 1] = '\0';
	a->nservices++;
	return s->builder;
}

/* Span labels of one sample; returns how many were set. Hex buffers belong to the caller. */
static size_t span_labels(const struct aggregate *a, const struct sample_key *key,
			  struct pprof_label *labels, char *span_hex, char *trace_hex, char *name)
{
	const __u8 *id = key->span.span_id;
	size_t n = 0;

	if (!key->has_span)
		return 0;
	if (a->opts.scope == SPAN_SCOPE_ROOT && !labels_is_zero(key->span.root_span_id, 8))
		id = key->span.root_span_id;
	labels_hex(id, 8, span_hex);
	labels_hex(key->span.trace_id, 16, trace_hex);
	memcpy(name, key->span.name, SPANPROF_ABI_SPAN_NAME_MAX);
	name[SPANPROF_ABI_SPAN_NAME_MAX] = '\0';
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

/* Reads a stack by id from the window's stack map; NULL when id says there is none. */
static const uint64_t *read_stack(struct aggregate *a, int fd, __s32 id, uint64_t *ips)
{
	if (id < 0)
		return NULL;
	if (bpf_map_lookup_elem(fd, &id, ips)) {
		a->stats.map_errors++;
		return NULL;
	}
	return ips;
}

/* Kubernetes placement labels of the sample's process; returns how many were set. */
static size_t k8s_labels(const struct proc_info *proc, struct pprof_label *labels)
{
	size_t n = 0;

	if (proc->k8s_namespace[0])
		labels[n++] = (struct pprof_label){ "namespace", proc->k8s_namespace };
	if (proc->k8s_pod[0])
		labels[n++] = (struct pprof_label){ "pod", proc->k8s_pod };
	if (proc->k8s_container[0])
		labels[n++] = (struct pprof_label){ "container", proc->k8s_container };
	return n;
}

static void add_key(struct aggregate *a, struct loader_window w, const struct sample_key *key,
		    uint64_t count)
{
	char span_hex[17], trace_hex[33], name[SPANPROF_ABI_SPAN_NAME_MAX + 1];
	struct pprof_label labels[6];
	const struct proc_info *proc;
	struct proc_info scratch;
	struct pprof_builder *b;
	size_t nlabels;

	proc = proc_table_get(a->procs, key->pid, &scratch);
	b = builder_for(a, proc->service);
	if (!b) {
		a->stats.service_overflow += count;
		return;
	}
	stack_resolve(a->resolve, a->sc, key->pid,
		      read_stack(a, w.stacks_fd, key->kern_stack_id, a->kern_ips),
		      key->kern_stack_id < 0 && key->kern_stack_id != -EFAULT,
		      read_stack(a, w.stacks_fd, key->user_stack_id, a->user_ips),
		      key->user_stack_id < 0 && key->user_stack_id != -EFAULT);
	nlabels = span_labels(a, key, labels, span_hex, trace_hex, name);
	nlabels += k8s_labels(proc, labels + nlabels);
	if (pprof_builder_add_sample(b, a->resolve->frames, a->resolve->nframes, count, labels,
				     nlabels)) {
		a->stats.encode_errors += count;
		return;
	}
	a->stats.samples += count;
	if (key->has_span)
		a->stats.samples_in_spans += count;
}

static void clear_stacks(int fd)
{
	__u32 id, next;
	int have = 0;

	/* Deleting the current key restarts nothing in a stack map: ids are array slots. */
	while (!bpf_map_get_next_key(fd, have ? &id : NULL, &next)) {
		bpf_map_delete_elem(fd, &next);
		id = next;
		have = 1;
	}
}

int aggregate_drain(struct aggregate *a, struct loader_window w)
{
	struct sample_key *prev = NULL;
	uint32_t n = 0, i;
	uint64_t count;
	int err = 0;

	while (n < a->opts.max_keys && !bpf_map_get_next_key(w.counts_fd, prev, &a->keys[n])) {
		prev = &a->keys[n];
		n++;
	}
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(w.counts_fd, &a->keys[i], &count)) {
			err = log_warn(-errno, "read sample count (pid %u)", a->keys[i].pid);
			a->stats.map_errors++;
			continue;
		}
		add_key(a, w, &a->keys[i], count);
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(w.counts_fd, &a->keys[i]);
	clear_stacks(w.stacks_fd);
	a->stats.keys += n;
	return err;
}

int aggregate_flush(struct aggregate *a, int64_t end_ns, aggregate_profile_fn fn, void *ctx)
{
	int err = 0, ret;
	size_t i;

	for (i = 0; i < a->nservices; i++) {
		pprof_builder_set_time(a->services[i].builder, a->window_start_ns,
				       end_ns - a->window_start_ns);
		ret = fn(ctx, a->services[i].name, a->window_start_ns, a->services[i].builder);
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
