/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Series label policy in one place: the label type, the rules a label follows (the server's and
 * the names spanprof sets), the check of a set of static labels, and the one label budget. */
#ifndef SPANPROF_SERIES_LABELS_H
#define SPANPROF_SERIES_LABELS_H

#include <stddef.h>

/* One label: of a series (--label), or of a sample (span_id, pod, ...). pprof's Label with a
 * string value; the strings belong to whoever filled it in. */
struct pprof_label {
	const char *key;
	const char *value;
};

#define SERIES_LABEL_NAME_MAX 1024
#define SERIES_LABEL_VALUE_MAX 2048
/* Pyroscope allows 30 labels per series; every push carries __name__ and service_name. */
#define SERIES_LABELS_MAX 30
#define SERIES_LABELS_BUILT_IN 2
#define SERIES_LABELS_MAX_STATIC (SERIES_LABELS_MAX - SERIES_LABELS_BUILT_IN)
/* service_name of a process nothing names (what the server would fill in too). */
#define SERIES_LABEL_UNKNOWN_SERVICE "unknown_service"

/* The label names spanprof sets itself, defined here once: the profile's name and service on
 * every pushed series; on samples, the span's (span_id, trace_id, span_name), the OTel process
 * context's service.namespace, and the Kubernetes pod's (namespace, pod, container; only when
 * running on Kubernetes). The server lifts sample labels into the series, so a --label or a
 * --thread-ctx-labels key of one of these names would reach it twice. */
#define SERIES_LABEL_PROFILE_NAME "__name__"
#define SERIES_LABEL_SERVICE_NAME "service_name"
#define SERIES_LABEL_SPAN_ID "span_id"
#define SERIES_LABEL_TRACE_ID "trace_id"
#define SERIES_LABEL_SPAN_NAME "span_name"
#define SERIES_LABEL_SERVICE_NAMESPACE "service_namespace"
#define SERIES_LABEL_K8S_NAMESPACE "namespace"
#define SERIES_LABEL_K8S_POD "pod"
#define SERIES_LABEL_K8S_CONTAINER "container"

/* Compares two label names as the server does: Pyroscope reads '.' as '_' (unless its label
 * sanitization is off), so "a.b" and "a_b" are one name. Returns <0, 0 or >0 like strcmp. */
int series_label_name_cmp(const char *a, size_t na, const char *b, size_t nb);

/* The label name an OpenTelemetry attribute key (a --thread-ctx-labels key) becomes on samples:
 * the key with '.' and '-' written '_', into name (size bytes, at least 1; cut at size - 1).
 * Returns its length. */
size_t series_label_name_of_key(const char *key, char *name, size_t size);

/* Where spanprof sets a label called name[0..name_len) itself (compared with
 * series_label_name_cmp; "__name__" is left to the "__" rule): a static text such as "the
 * samples of processes in Kubernetes pods (reserved off Kubernetes too)", or NULL when spanprof
 * sets no label of that name. The Kubernetes names are reserved whether or not the agent runs
 * on Kubernetes, so that one configuration is accepted or refused alike everywhere. */
const char *series_label_set_by_spanprof(const char *name, size_t name_len);

/* Checks one series label: name[0..name_len) is non-empty UTF-8 (the server's rule, Prometheus'
 * UTF-8 names) without control characters or ',' (which separates labels in SPANPROF_LABELS),
 * has at most SERIES_LABEL_NAME_MAX bytes, does not start with "__" and is no name spanprof sets
 * itself (series_label_set_by_spanprof()); value is non-empty UTF-8 of at most
 * SERIES_LABEL_VALUE_MAX bytes. Returns NULL when the label is valid, else a static text saying
 * what a valid one looks like (for a name spanprof sets: which one and where it sets it). */
const char *series_label_check(const char *name, size_t name_len, const char *value);

/* Checks labels meant for every series: each passes series_label_check() and appears once; at
 * most SERIES_LABELS_MAX_STATIC. Returns 0, or -EINVAL with *why set to a static description
 * and *bad to the offending index (n when the count is the problem). */
int series_labels_check_static(const struct pprof_label *labels, size_t n, const char **why,
			       size_t *bad);

/* Sample labels the server lifts into the series, as the configuration foresees them: span_name
 * always, trace_id when pushed (trace_id_sent), namespace, pod and container on Kubernetes (k8s),
 * and the ntctx --thread-ctx-labels. */
size_t series_labels_lifted(int trace_id_sent, int k8s, size_t ntctx);

/* The same, counted from a profile's distinct sample label keys: all but span_id, and trace_id
 * only when it is pushed. */
size_t series_labels_lifted_keys(const char *const *keys, size_t nkeys, int trace_id_sent);

/* The label budget: how many static labels fit in a series beside the built-in ones and
 * `lifted` lifted ones (0 when none do). Every check of the 30-label limit uses it. */
size_t series_labels_budget(size_t lifted);

/* The labels of one series: __name__, service_name and the static ones, sorted by name. */
struct series_label_set {
	struct pprof_label labels[SERIES_LABELS_MAX];
	size_t n;
	char *service; /* service_name's value (malloc'ed) */
};

/* Fills set with __name__=<name>, service_name=<service> (SERIES_LABEL_UNKNOWN_SERVICE when
 * NULL or empty; repaired to UTF-8 and cut at a character to SERIES_LABEL_VALUE_MAX bytes) and
 * the n static labels (which must pass series_labels_check_static()), sorted by name. The
 * labels point into name, statics and set->service. Returns 0, -EINVAL (NULL or empty name,
 * too many statics) or -ENOMEM; release with series_label_set_release() after 0. */
int series_label_set_build(struct series_label_set *set, const char *name, const char *service,
			   const struct pprof_label *statics, size_t n);

void series_label_set_release(struct series_label_set *set);

#endif /* SPANPROF_SERIES_LABELS_H */
