// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bounded pid -> CPython interpreter table, and the once-per-file unsupported-version log. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/python_procs.h"
#include "util/log.h"
#include "util/lru.h"

/* Unsupported interpreter files remembered so each is logged once; the oldest is forgotten. */
#define MAX_LOGGED_FILES 256

struct proc_entry {
	struct lru_node node; /* k1 = pid */
	struct python_proc proc;
};

struct file_entry {
	struct lru_node node; /* k1 = dev, k2 = inode */
};

struct python_procs {
	const char *proc_root;
	size_t max_pids;
	struct lru pids, logged;
	struct python_procs_stats stats;
};

struct python_procs *python_procs_new(const char *proc_root, size_t max_pids)
{
	struct python_procs *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->proc_root = proc_root;
	pp->max_pids = max_pids;
	if (lru_init(&pp->pids, max_pids) || lru_init(&pp->logged, MAX_LOGGED_FILES)) {
		python_procs_free(pp);
		errno = ENOMEM;
		return NULL;
	}
	return pp;
}

static void drop_all(struct lru *l, size_t offset)
{
	struct lru_node *n;

	while ((n = lru_oldest(l))) {
		lru_del(l, n);
		free((char *)n - offset);
	}
	lru_release(l);
}

void python_procs_free(struct python_procs *pp)
{
	if (!pp)
		return;
	drop_all(&pp->pids, offsetof(struct proc_entry, node));
	drop_all(&pp->logged, offsetof(struct file_entry, node));
	free(pp);
}

/* One warning per interpreter file whose version is not supported. */
static void note_unsupported(struct python_procs *pp, pid_t pid, const struct python_proc *p)
{
	struct file_entry *f;
	struct lru_node *old;

	pp->stats.unsupported++;
	if (lru_find(&pp->logged, p->dev, p->inode))
		return;
	log_warn(-ENOTSUP,
		 "pid %d: CPython %d.%d in %s is not supported (3.8-3.13 are): native frames only",
		 (int)pid, p->major, p->minor, p->path);
	if (pp->logged.count >= MAX_LOGGED_FILES && (old = lru_oldest(&pp->logged))) {
		lru_del(&pp->logged, old);
		free(lru_entry(old, struct file_entry, node));
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->node.k1 = p->dev;
	f->node.k2 = p->inode;
	lru_add(&pp->logged, &f->node);
}

const struct python_proc *python_procs_get(struct python_procs *pp, pid_t pid)
{
	struct lru_node *n = lru_find(&pp->pids, (uint64_t)pid, 0);

	return n ? &lru_entry(n, struct proc_entry, node)->proc : NULL;
}

void python_procs_forget(struct python_procs *pp, pid_t pid)
{
	struct lru_node *n = lru_find(&pp->pids, (uint64_t)pid, 0);

	if (!n)
		return;
	lru_del(&pp->pids, n);
	free(lru_entry(n, struct proc_entry, node));
	pp->stats.supported--;
}

static int remember(struct python_procs *pp, pid_t pid, const struct python_proc *p)
{
	struct proc_entry *e;

	if (pp->pids.count >= pp->max_pids) {
		pp->stats.full++;
		return -E2BIG;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->node.k1 = (uint64_t)pid;
	e->proc = *p;
	lru_add(&pp->pids, &e->node);
	pp->stats.supported++;
	return 0;
}

int python_procs_update(struct python_procs *pp, pid_t pid, const struct proc_maps *maps,
			const struct python_proc **info)
{
	struct python_proc p;
	int err;

	python_procs_forget(pp, pid); /* an exec may have replaced the interpreter */
	err = python_proc_find(pp->proc_root, pid, maps, &p);
	if (err) {
		if (err != -ENOENT)
			log_debug("pid %d: no CPython frames: %s", (int)pid, strerror(-err));
		return 0;
	}
	if (!p.off) {
		note_unsupported(pp, pid, &p);
		return 0;
	}
	if (remember(pp, pid, &p))
		return 0;
	log_info("pid %d: reading CPython %d.%d.%d frames (%s)", (int)pid, p.major, p.minor,
		 p.patch, p.path);
	*info = python_procs_get(pp, pid);
	return 1;
}

void python_procs_get_stats(const struct python_procs *pp, struct python_procs_stats *out)
{
	*out = pp->stats;
}
