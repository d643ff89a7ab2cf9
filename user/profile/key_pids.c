// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>

#include "profile/key_pids.h"

static int by_pid(const void *x, const void *y)
{
	const struct key_pid *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int by_keys_then_pid(const void *x, const void *y)
{
	const struct key_pid *a = x, *b = y;

	if (a->keys != b->keys)
		return a->keys < b->keys ? 1 : -1;
	return by_pid(x, y);
}

size_t key_pids_distinct(const struct sample_key *keys, uint32_t n, struct key_pid *out)
{
	size_t i, m = 0, d = 0;

	for (i = 0; i < n; i++) {
		if ((pid_t)keys[i].pid <= 0)
			continue;
		out[m].pid = (pid_t)keys[i].pid;
		out[m].keys = 1;
		out[m++].user = keys[i].user_stack_hash != 0;
	}
	qsort(out, m, sizeof(*out), by_pid);
	for (i = 0; i < m; i++) {
		if (d && out[d - 1].pid == out[i].pid) {
			out[d - 1].keys++;
			out[d - 1].user |= out[i].user;
			continue;
		}
		out[d++] = out[i];
	}
	qsort(out, d, sizeof(*out), by_keys_then_pid);
	return d;
}
