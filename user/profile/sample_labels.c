// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Builds a sample's labels from its span and its process. */
#include <stdio.h>
#include <string.h>

#include "discover/labels.h"
#include "profile/sample_labels.h"

/* A thread context span's interned string is "<name>\x1f<value 1>\x1f...": cuts name at the
 * first separator and labels the values that are not empty, each under its configured name with
 * '.' and '-' as '_'. */
static void add_attr_labels(struct sample_labels *out, const struct sample_label_options *o,
			    char *name)
{
	char *sep = strchr(name, SPANPROF_TCTX_SEP), *v, *next, *key;
	size_t i, a = 0;

	if (!sep)
		return;
	*sep = '\0';
	v = sep + 1;
	for (i = 0; i < o->ntctx_labels && i < SPANPROF_TCTX_MAX_LABELS && v; i++, v = next) {
		next = strchr(v, SPANPROF_TCTX_SEP);
		if (next)
			*next++ = '\0';
		if (!*v)
			continue;
		key = out->attr_names[a];
		series_label_name_of_key(o->tctx_labels[i], key, SAMPLE_LABEL_ATTR_NAME_MAX);
		snprintf(out->attr_values[a], sizeof(out->attr_values[a]), "%s", v);
		labels_clean(out->attr_values[a]);
		out->labels[out->n++] = (struct pprof_label){ key, out->attr_values[a] };
		a++;
	}
}

static void add(struct sample_labels *out, const char *key, const char *value)
{
	out->labels[out->n++] = (struct pprof_label){ key, value };
}

static void add_span_labels(struct sample_labels *out, const struct sample_label_options *o,
			    const struct sample *s)
{
	const struct sample_key *key = s->key;
	const __u8 *id = key->span.span_id;
	size_t len;

	if (!key->has_span)
		return;
	if (o->scope == SPAN_SCOPE_ROOT && !labels_is_zero(key->span.root_span_id, 8))
		id = key->span.root_span_id;
	labels_hex(id, 8, out->span_hex);
	labels_hex(key->span.trace_id, 16, out->trace_hex);
	/* A name evicted from span_names before the drain (counted there) is NULL and leaves the
	 * label out. */
	if (s->span_name) {
		len = strnlen(s->span_name, SPANPROF_ABI_SPAN_NAME_MAX);
		memcpy(out->name, s->span_name, len);
		out->name[len] = '\0';
		if (key->span.abi_version == SPANPROF_SPAN_FROM_TCTX)
			add_attr_labels(out, o, out->name);
		labels_clean(out->name);
	}
	/* A zero id is an unsampled span (or a Go span_name label alone): like otel-profiling-go,
	 * only its name is labelled, so per-name views still count all CPU. */
	if (!labels_is_zero(id, 8))
		add(out, SERIES_LABEL_SPAN_ID, out->span_hex);
	if (!labels_is_zero(key->span.trace_id, 16))
		add(out, SERIES_LABEL_TRACE_ID, out->trace_hex);
	if (out->name[0])
		add(out, SERIES_LABEL_SPAN_NAME, out->name);
}

static void add_proc_labels(struct sample_labels *out, const struct proc_info *proc)
{
	if (proc->service_namespace[0])
		add(out, SERIES_LABEL_SERVICE_NAMESPACE, proc->service_namespace);
	if (proc->k8s_namespace[0])
		add(out, SERIES_LABEL_K8S_NAMESPACE, proc->k8s_namespace);
	if (proc->k8s_pod[0])
		add(out, SERIES_LABEL_K8S_POD, proc->k8s_pod);
	if (proc->k8s_container[0])
		add(out, SERIES_LABEL_K8S_CONTAINER, proc->k8s_container);
}

size_t sample_labels_build(struct sample_labels *out, const struct sample_label_options *o,
			   const struct sample *s, const struct proc_info *proc)
{
	out->n = 0;
	out->name[0] = '\0';
	add_span_labels(out, o, s);
	if (proc)
		add_proc_labels(out, proc);
	return out->n;
}

const char *sample_labels_push_omit(int trace_id_sent)
{
	return trace_id_sent ? NULL : SERIES_LABEL_TRACE_ID;
}
