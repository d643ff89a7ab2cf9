// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bounded pid -> CRuby interpreter table, and the once-per-file unsupported-version log. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/ruby_procs.h"
#include "util/log.h"
#include "util/lru.h"

/* Unsupported interpreter files remembered so each is logged once; the oldest is forgotten. */
#define MAX_LOGGED_FILES 256

struct proc_entry {
	struct lru_node node; /* k1 = pid */
	struct ruby_proc proc;
};

struct file_entry {
	struct lru_node node; /* k1 = dev, k2 = inode */
};

struct ruby_procs {
	const char *proc_root;
	size_t max_pids;
	struct lru pids, logged;
	struct ruby_procs_stats stats;
};

struct ruby_procs *ruby_procs_new(const char *proc_root, size_t max_pids)
{
	struct ruby_procs *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->proc_root = proc_root;
	rp->max_pids = max_pids;
	if (lru_init(&rp->pids, max_pids) || lru_init(&rp->logged, MAX_LOGGED_FILES)) {
		ruby_procs_free(rp);
		errno = ENOMEM;
		return NULL;
	}
	return rp;
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

void ruby_procs_free(struct ruby_procs *rp)
{
	if (!rp)
		return;
	drop_all(&rp->pids, offsetof(struct proc_entry, node));
	drop_all(&rp->logged, offsetof(struct file_entry, node));
	free(rp);
}

/* One warning per interpreter file this agent cannot read. */
static void note_unsupported(struct ruby_procs *rp, pid_t pid, const struct ruby_proc *p)
{
	struct file_entry *f;
	struct lru_node *old;

	rp->stats.unsupported++;
	if (lru_find(&rp->logged, p->dev, p->inode))
		return;
	log_warn(-ENOTSUP, "pid %d: CRuby %d.%d.%d in %s is not supported (%s): native frames only",
		 (int)pid, p->major, p->minor, p->patch, p->path, p->why ? p->why : "?");
	if (rp->logged.count >= MAX_LOGGED_FILES && (old = lru_oldest(&rp->logged))) {
		lru_del(&rp->logged, old);
		free(lru_entry(old, struct file_entry, node));
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return;
	f->node.k1 = p->dev;
	f->node.k2 = p->inode;
	lru_add(&rp->logged, &f->node);
}

const struct ruby_proc *ruby_procs_get(struct ruby_procs *rp, pid_t pid)
{
	struct lru_node *n = lru_find(&rp->pids, (uint64_t)pid, 0);

	return n ? &lru_entry(n, struct proc_entry, node)->proc : NULL;
}

void ruby_procs_forget(struct ruby_procs *rp, pid_t pid)
{
	struct lru_node *n = lru_find(&rp->pids, (uint64_t)pid, 0);

	if (!n)
		return;
	lru_del(&rp->pids, n);
	free(lru_entry(n, struct proc_entry, node));
	rp->stats.supported--;
}

static int remember(struct ruby_procs *rp, pid_t pid, const struct ruby_proc *p)
{
	struct proc_entry *e;

	if (rp->pids.count >= rp->max_pids) {
		rp->stats.full++;
		return -E2BIG;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->node.k1 = (uint64_t)pid;
	e->proc = *p;
	lru_add(&rp->pids, &e->node);
	rp->stats.supported++;
	return 0;
}

int ruby_procs_update(struct ruby_procs *rp, pid_t pid, const struct proc_maps *maps,
		      const struct ruby_proc **info)
{
	struct ruby_proc p;
	int err;

	ruby_procs_forget(rp, pid); /* an exec may have replaced the interpreter */
	err = ruby_proc_find(rp->proc_root, pid, maps, &p);
	if (err) {
		if (err != -ENOENT)
			log_debug("pid %d: no CRuby frames: %s", (int)pid, strerror(-err));
		return 0;
	}
	if (!p.off) {
		note_unsupported(rp, pid, &p);
		return 0;
	}
	if (remember(rp, pid, &p))
		return 0;
	log_info("pid %d: reading CRuby %d.%d.%d frames (%s%s)", (int)pid, p.major, p.minor,
		 p.patch, p.path, p.off->tested ? "" : "; this version's offsets are untested");
	*info = ruby_procs_get(rp, pid);
	return 1;
}

void ruby_procs_get_stats(const struct ruby_procs *rp, struct ruby_procs_stats *out)
{
	*out = rp->stats;
}
