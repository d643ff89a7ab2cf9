/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The store's state as JSON for the page: what was read, what was skipped and why, what the
 * limits cut, and the memory held. */
#ifndef SPANPROF_VIEW_STATUS_H
#define SPANPROF_VIEW_STATUS_H

#include <stdio.h>

#include "view/view_store.h"

/* {"dir":..,"profiles":N,"span_logs":N,"span_log_bytes":N,"spans":N,"spans_dropped":N,
 * "files_skipped":N,"load_ms":N,"loaded_at_ns":N,"memory_bytes":N,"cache":{..},
 * "limits":{..},"problems_total":N,"problems":[{"file":..,"why":..},..]} */
void view_status_write(const struct view_store *vs, FILE *f);

#endif /* SPANPROF_VIEW_STATUS_H */
