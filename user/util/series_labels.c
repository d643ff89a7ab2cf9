// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Series label policy: name characters and length, reserved names, value length and UTF-8, a
 * static set's uniqueness and size, and the budget the server's 30 labels leave. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/series_labels.h"
#include "util/utf8.h"

/* A label name spanprof sets itself, where it sets it, and the check's answer for it. */
struct reserved_label {
	const char *name, *set_on, *want;
};

/* What series_label_check() answers for the label called label, set on `on`. */
#define RESERVED_WANT(label, on)                                                                  \
	"a label name other than " label ": spanprof sets it on " on "; the server reads '.' as " \
	"'_'"
#define RESERVED(label, on)                                                   \
	{                                                                     \
		.name = label, .set_on = on, .want = RESERVED_WANT(label, on) \
	}
#define ON_EVERY_SERIES "every series it pushes (the process's service)"
#define ON_SPANS "the samples taken in a span"
#define ON_PROCESS_CTX "the samples of a process whose OTel process context has service.namespace"
#define ON_K8S "the samples of processes in Kubernetes pods (reserved off Kubernetes too)"

static const struct reserved_label reserved_labels[] = {
	RESERVED(SERIES_LABEL_SERVICE_NAME, ON_EVERY_SERIES),
	RESERVED(SERIES_LABEL_SPAN_ID, ON_SPANS),
	RESERVED(SERIES_LABEL_TRACE_ID, ON_SPANS),
	RESERVED(SERIES_LABEL_SPAN_NAME, ON_SPANS),
	RESERVED(SERIES_LABEL_SERVICE_NAMESPACE, ON_PROCESS_CTX),
	RESERVED(SERIES_LABEL_K8S_NAMESPACE, ON_K8S),
	RESERVED(SERIES_LABEL_K8S_POD, ON_K8S),
	RESERVED(SERIES_LABEL_K8S_CONTAINER, ON_K8S),
};

int series_label_name_cmp(const char *a, size_t na, const char *b, size_t nb)
{
	size_t i;
	char x, y;

	if (na != nb)
		return na < nb ? -1 : 1;
	for (i = 0; i < na; i++) {
		x = a[i] == '.' ? '_' : a[i];
		y = b[i] == '.' ? '_' : b[i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

size_t series_label_name_of_key(const char *key, char *name, size_t size)
{
	size_t n;

	for (n = 0; key[n] && n < size - 1; n++)
		name[n] = key[n] == '.' || key[n] == '-' ? '_' : key[n];
	name[n] = '\0';
	return n;
}

static const struct reserved_label *find_reserved(const char *name, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(reserved_labels) / sizeof(reserved_labels[0]); i++)
		if (!series_label_name_cmp(name, n, reserved_labels[i].name,
					   strlen(reserved_labels[i].name)))
			return &reserved_labels[i];
	return NULL;
}

const char *series_label_set_by_spanprof(const char *name, size_t name_len)
{
	const struct reserved_label *r = find_reserved(name, name_len);

	return r ? r->set_on : NULL;
}

static int name_chars_ok(const char *s, size_t n)
{
	char *copy;
	size_t i;
	int ok;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f || s[i] == ',')
			return 0;
	copy = strndup(s, n);
	ok = copy && utf8_valid(copy);
	free(copy);
	return ok;
}

static const char *check_name(const char *name, size_t n)
{
	const struct reserved_label *r;

	if (!n)
		return "a non-empty label name";
	if (n > SERIES_LABEL_NAME_MAX)
		return "a label name of at most 1024 bytes";
	if (!name_chars_ok(name, n))
		return "a label name of UTF-8 without control characters or ','";
	if (n >= 2 && name[0] == '_' && name[1] == '_')
		return "a label name that does not start with '__' (reserved)";
	r = find_reserved(name, n);
	return r ? r->want : NULL;
}

const char *series_label_check(const char *name, size_t name_len, const char *value)
{
	const char *why = check_name(name, name_len);

	if (why)
		return why;
	if (!value || !*value || strlen(value) > SERIES_LABEL_VALUE_MAX || !utf8_valid(value))
		return "a non-empty label value of at most 2048 bytes of UTF-8";
	return NULL;
}

int series_labels_check_static(const struct pprof_label *labels, size_t n, const char **why,
			       size_t *bad)
{
	size_t i, j;

	if (n > SERIES_LABELS_MAX_STATIC) {
		*why = "too many labels (a series takes at most 30, two of them are built in)";
		*bad = n;
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		*bad = i;
		*why = labels[i].key ? series_label_check(labels[i].key, strlen(labels[i].key),
							  labels[i].value) :
				       "a non-empty label name";
		if (*why)
			return -EINVAL;
		for (j = 0; j < i; j++) {
			if (!series_label_name_cmp(labels[i].key, strlen(labels[i].key),
						   labels[j].key, strlen(labels[j].key))) {
				*why = "label name given twice";
				return -EINVAL;
			}
		}
	}
	*why = NULL;
	return 0;
}

size_t series_labels_lifted(int trace_id_sent, int k8s, size_t ntctx)
{
	/* span_name; trace_id; namespace, pod, container; the thread context's keys */
	return 1 + (trace_id_sent ? 1 : 0) + (k8s ? 3 : 0) + ntctx;
}

size_t series_labels_lifted_keys(const char *const *keys, size_t nkeys, int trace_id_sent)
{
	size_t i, lifted = 0;

	for (i = 0; i < nkeys; i++)
		if (strcmp(keys[i], SERIES_LABEL_SPAN_ID) &&
		    (trace_id_sent || strcmp(keys[i], SERIES_LABEL_TRACE_ID)))
			lifted++;
	return lifted;
}

size_t series_labels_budget(size_t lifted)
{
	if (lifted >= SERIES_LABELS_MAX_STATIC)
		return 0;
	return SERIES_LABELS_MAX_STATIC - lifted;
}

static int label_key_cmp(const void *a, const void *b)
{
	const struct pprof_label *x = a, *y = b;

	return strcmp(x->key, y->key);
}

int series_label_set_build(struct series_label_set *set, const char *name, const char *service,
			   const struct pprof_label *statics, size_t n)
{
	size_t i;

	set->n = 0;
	set->service = NULL;
	if (!name || !name[0] || (!statics && n) || n > SERIES_LABELS_MAX_STATIC)
		return -EINVAL;
	set->service = utf8_sanitize(service && *service ? service : SERIES_LABEL_UNKNOWN_SERVICE);
	if (!set->service)
		return -ENOMEM;
	if (strlen(set->service) > SERIES_LABEL_VALUE_MAX)
		set->service[utf8_boundary(set->service, SERIES_LABEL_VALUE_MAX)] = '\0';
	set->labels[set->n++] = (struct pprof_label){ SERIES_LABEL_PROFILE_NAME, name };
	set->labels[set->n++] = (struct pprof_label){ SERIES_LABEL_SERVICE_NAME, set->service };
	for (i = 0; i < n; i++)
		set->labels[set->n++] = statics[i];
	qsort(set->labels, set->n, sizeof(set->labels[0]), label_key_cmp);
	return 0;
}

void series_label_set_release(struct series_label_set *set)
{
	free(set->service);
	set->service = NULL;
	set->n = 0;
}
