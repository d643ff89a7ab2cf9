/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One span's (or one span name's) profile: the matching samples of the service's CPU and
 * off-CPU profiles merged into a flame tree, written as JSON. */
#ifndef SPANPROF_VIEW_PROFILE_QUERY_H
#define SPANPROF_VIEW_PROFILE_QUERY_H

#include <stdint.h>
#include <stdio.h>

#include "view/view_store.h"

/* Profile windows are taken this far around a span's own time: a sample is written in the
 * window that was open when the agent drained it, which can be the next one. */
#define PROFILE_QUERY_SLACK_NS (2 * 1000000000LL)

struct profile_query {
	uint64_t span_id; /* the span (all its records); 0: by name */
	const char *service, *name; /* by name: this (service, span name) */
};

/* Writes {"files":N,"files_listed":N,"span_records":N,"tree":<flame_tree JSON>}: files read,
 * files of the service listed, and (by span id) the span's records found. A span id that no
 * record holds reads every file of no service: the tree is empty. Returns 0, -ENOENT (no such
 * span or name in the span records), or -ENOMEM. */
int profile_query_write(struct view_store *vs, const struct profile_query *q, FILE *f);

#endif /* SPANPROF_VIEW_PROFILE_QUERY_H */
