// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process facts the agent keeps: a chained hash of pid -> struct proc_info, bounded. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc_table.h"

#define NBUCKETS 4096
#define UNKNOWN_SERVICE "unknown_service"

struct proc_node {
	struct proc_info info;
	struct proc_node *next;
};

struct proc_table {
	struct proc_node *buckets[NBUCKETS];
	size_t count, max;
	const char *proc_root;
};

struct proc_table *proc_table_new(size_t max_procs, const char *proc_root)
{
	struct proc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max = max_procs;
	t->proc_root = proc_root;
	return t;
}

void proc_table_free(struct proc_table *t)
{
	struct proc_node *n, *next;
	size_t b;

	if (!t)
		return;
	for (b = 0; b < NBUCKETS; b++)
		for (n = t->buckets[b]; n; n = next) {
			next = n->next;
			free(n);
		}
	free(t);
}

static struct proc_node **slot_of(struct proc_table *t, pid_t pid)
{
	struct proc_node **p = &t->buckets[(unsigned int)pid % NBUCKETS];

	while (*p && (*p)->info.pid != pid)
		p = &(*p)->next;
	return p;
}

static void read_info(const struct proc_table *t, pid_t pid, struct proc_info *info)
{
	int err;

	memset(info, 0, sizeof(*info));
	info->pid = pid;
	err = labels_service_for_pid(t->proc_root, pid, info->service, sizeof(info->service));
	if (err) {
		if (err != -ENOENT && err != -ESRCH)
			log_debug("service name of pid %d: %s", pid, strerror(-err));
		strcpy(info->service, UNKNOWN_SERVICE);
	}
}

/* Frees one exited entry to make room. Returns 1 if it did. */
static int evict_exited(struct proc_table *t)
{
	struct proc_node **p, *victim;
	size_t b;

	for (b = 0; b < NBUCKETS; b++)
		for (p = &t->buckets[b]; *p; p = &(*p)->next)
			if ((*p)->info.exited) {
				victim = *p;
				*p = victim->next;
				free(victim);
				t->count--;
				return 1;
			}
	return 0;
}

const struct proc_info *proc_table_get(struct proc_table *t, pid_t pid, struct proc_info *scratch)
{
	struct proc_node **slot = slot_of(t, pid), *n;

	if (*slot)
		return &(*slot)->info;
	if (t->count >= t->max && !evict_exited(t))
		goto out_scratch;
	n = malloc(sizeof(*n));
	if (!n)
		goto out_scratch;
	read_info(t, pid, &n->info);
	n->next = NULL;
	*slot_of(t, pid) = n;
	t->count++;
	return &n->info;
out_scratch:
	read_info(t, pid, scratch);
	return scratch;
}

void proc_table_refresh(struct proc_table *t, pid_t pid)
{
	struct proc_node *n = *slot_of(t, pid);

	if (n)
		read_info(t, pid, &n->info);
}

void proc_table_mark_exited(struct proc_table *t, pid_t pid)
{
	struct proc_node *n = *slot_of(t, pid);

	if (n)
		n->info.exited = 1;
}

void proc_table_sweep_exited(struct proc_table *t, void (*fn)(void *ctx, pid_t pid), void *ctx)
{
	struct proc_node **p, *victim;
	size_t b;

	for (b = 0; b < NBUCKETS; b++) {
		p = &t->buckets[b];
		while (*p) {
			if (!(*p)->info.exited) {
				p = &(*p)->next;
				continue;
			}
			victim = *p;
			*p = victim->next;
			if (fn)
				fn(ctx, victim->info.pid);
			free(victim);
			t->count--;
		}
	}
}

size_t proc_table_count(const struct proc_table *t)
{
	return t->count;
}
