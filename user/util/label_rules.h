/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The rules a series label must follow (Pyroscope's, plus the names spanprof sets itself),
 * checked here once for the configuration and the uploader alike. */
#ifndef SPANPROF_LABEL_RULES_H
#define SPANPROF_LABEL_RULES_H

#include <stddef.h>

#define LABEL_NAME_MAX 1024
#define LABEL_VALUE_MAX 2048
/* Pyroscope allows 30 labels per series; the uploader adds __name__ and service_name. */
#define LABEL_MAX_SERIES 30
#define LABEL_MAX_STATIC (LABEL_MAX_SERIES - 2)

/* Compares two label names as the server does: Pyroscope reads '.' as '_' (unless its label
 * sanitization is off), so "a.b" and "a_b" are one name. Returns <0, 0 or >0 like strcmp. */
int label_name_cmp(const char *a, size_t na, const char *b, size_t nb);

/* Checks one series label: name[0..name_len) is non-empty UTF-8 (the server's rule, Prometheus'
 * UTF-8 names) without control characters or ',' (which separates labels in SPANPROF_LABELS),
 * has at most LABEL_NAME_MAX bytes, does not start with "__" and is none of service_name,
 * span_id, trace_id and span_name (compared with label_name_cmp); value is non-empty UTF-8 of at
 * most LABEL_VALUE_MAX bytes. Returns NULL when the label is valid, else a static text saying
 * what a valid one looks like. */
const char *label_rules_check(const char *name, size_t name_len, const char *value);

#endif /* SPANPROF_LABEL_RULES_H */
