// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Bounded pid -> interpreter table, and the once-per-file unsupported-interpreter log. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/interp_procs.h"
#include "util/log.h"
#include "util/lru.h"

/* Unsupported interpreter files remembered so each is logged once; the oldest is forgotten. */
#define MAX_NOTED_FILES 256

struct proc_entry {
	struct lru_node node; /* k1 = pid */
	_Alignas(max_align_t) unsigned char value[]; /* kind->value_size bytes */
};

struct file_entry {
	struct lru_node node; /* k1 = dev, k2 = inode */
};

struct interp_procs {
	const struct interp_kind *kind;
	const char *proc_root;
	size_t max_pids;
	struct lru pids, noted;
	struct file_verdicts *verdicts;
	struct interp_procs_stats stats;
};

struct interp_procs *interp_procs_new(const struct interp_kind *kind, const char *proc_root,
				      size_t max_pids)
{
	struct interp_procs *ip = calloc(1, sizeof(*ip));

	if (!ip)
		return NULL;
	ip->kind = kind;
	ip->proc_root = proc_root;
	ip->max_pids = max_pids;
	ip->verdicts = file_verdicts_new(INTERP_MAX_FILES, kind->parsed_size, "interpreter");
	if (!ip->verdicts || lru_init(&ip->pids, max_pids) ||
	    lru_init(&ip->noted, MAX_NOTED_FILES)) {
		interp_procs_free(ip);
		errno = ENOMEM;
		return NULL;
	}
	return ip;
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

void interp_procs_stop_parses(struct interp_procs *ip)
{
	if (ip)
		file_verdicts_stop(ip->verdicts);
}

void interp_procs_free(struct interp_procs *ip)
{
	if (!ip)
		return;
	drop_all(&ip->pids, offsetof(struct proc_entry, node));
	drop_all(&ip->noted, offsetof(struct file_entry, node));
	file_verdicts_free(ip->verdicts);
	free(ip);
}

const void *interp_procs_get(const struct interp_procs *ip, pid_t pid)
{
	struct lru_node *n = lru_find(&ip->pids, (uint64_t)pid, 0);

	return n ? lru_entry(n, struct proc_entry, node)->value : NULL;
}

void interp_procs_forget(struct interp_procs *ip, pid_t pid)
{
	struct lru_node *n = lru_find(&ip->pids, (uint64_t)pid, 0);

	if (!n)
		return;
	lru_del(&ip->pids, n);
	free(lru_entry(n, struct proc_entry, node));
	ip->stats.supported--;
}

/* One warning per interpreter file this agent cannot read. */
static void note_unsupported(struct interp_procs *ip, pid_t pid, const struct interp_file *file)
{
	struct file_entry *f;
	struct lru_node *old;

	ip->stats.unsupported++;
	if (lru_find(&ip->noted, file->dev, file->inode))
		return;
	log_warn_from((long)file->inode, -ENOTSUP,
		      "pid %d: %s %d.%d.%d in %s is not supported (%s): native frames only",
		      (int)pid, ip->kind->name, file->major, file->minor, file->patch, file->path,
		      file->remark ? file->remark : "?");
	if (ip->noted.count >= MAX_NOTED_FILES && (old = lru_oldest(&ip->noted))) {
		lru_del(&ip->noted, old);
		free(lru_entry(old, struct file_entry, node));
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return; /* logged again next time */
	f->node.k1 = file->dev;
	f->node.k2 = file->inode;
	lru_add(&ip->noted, &f->node);
}

/* The interpreter file the last scan of pid found readable: {0, 0} when none. */
static struct file_id {
	uint64_t dev, inode;
} known_file(const struct interp_procs *ip, pid_t pid)
{
	const struct interp_file *f = interp_procs_get(ip, pid);

	return f ? (struct file_id){ f->dev, f->inode } : (struct file_id){ 0, 0 };
}

const void *interp_procs_update(struct interp_procs *ip, pid_t pid, const struct proc_maps *maps)
{
	/* Rescans (every mmap, every --rescan-s) find the same interpreter again: it is news
	 * only when the process did not run it before (first scan, or an exec). */
	struct file_id before = known_file(ip, pid);
	const struct interp_file *file;
	struct proc_entry *e;
	int err;

	interp_procs_forget(ip, pid); /* an exec may have replaced the interpreter */
	e = calloc(1, sizeof(*e) + ip->kind->value_size);
	if (!e)
		return NULL; /* the next scan tries again */
	file = (const struct interp_file *)e->value;
	err = ip->kind->find(ip->proc_root, pid, maps, ip->verdicts, e->value);
	if (err == -EBUSY) {
		free(e);
		errno = EBUSY;
		return NULL;
	}
	if (err) {
		if (err != -ENOENT)
			log_debug("pid %d: no %s frames: %s", (int)pid, ip->kind->name,
				  strerror(-err));
		goto drop;
	}
	if (!file->supported) {
		note_unsupported(ip, pid, file);
		goto drop;
	}
	if (ip->pids.count >= ip->max_pids) {
		ip->stats.full++;
		goto drop;
	}
	e->node.k1 = (uint64_t)pid;
	lru_add(&ip->pids, &e->node);
	ip->stats.supported++;
	if (before.dev == file->dev && before.inode == file->inode)
		return e->value;
	log_info("pid %d: reading %s %d.%d.%d frames (%s%s%s)", (int)pid, ip->kind->name,
		 file->major, file->minor, file->patch, file->path, file->remark ? "; " : "",
		 file->remark ? file->remark : "");
	return e->value;
drop:
	free(e);
	return NULL;
}

void interp_procs_get_stats(const struct interp_procs *ip, struct interp_procs_stats *out)
{
	*out = ip->stats;
	file_verdicts_get_stats(ip->verdicts, &out->files);
}
