// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-file interpreter parse verdicts (bounded LRU) and the per-second parse-time budget. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interp/interp_verdicts.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/lru.h"

#define NS_PER_S 1000000000ull
#define NAME_MAX_KEPT 64

struct verdict {
	struct lru_node node; /* k1 = device, k2 = inode */
	uint64_t size, mtime_ns;
	char name[NAME_MAX_KEPT];
	int err;
	_Alignas(max_align_t) unsigned char value[]; /* value_size bytes */
};

struct interp_verdicts {
	size_t max_files, value_size;
	uint64_t budget_ns;
	uint64_t period_start, spent_ns; /* this second's parse time */
	struct lru files;
	struct interp_verdicts_stats stats;
};

struct interp_verdicts *interp_verdicts_new(size_t max_files, size_t value_size, uint64_t budget_ns)
{
	struct interp_verdicts *v = calloc(1, sizeof(*v));

	if (!v || lru_init(&v->files, max_files)) {
		free(v);
		errno = ENOMEM;
		return NULL;
	}
	v->max_files = max_files;
	v->value_size = value_size;
	v->budget_ns = budget_ns;
	return v;
}

void interp_verdicts_free(struct interp_verdicts *v)
{
	struct lru_node *n;

	if (!v)
		return;
	while ((n = lru_oldest(&v->files))) {
		lru_del(&v->files, n);
		free(lru_entry(n, struct verdict, node));
	}
	lru_release(&v->files);
	free(v);
}

static int same_file(const struct verdict *e, const struct stat *st, const char *name)
{
	return e->size == (uint64_t)st->st_size &&
	       e->mtime_ns == (uint64_t)st->st_mtim.tv_sec * NS_PER_S + st->st_mtim.tv_nsec &&
	       !strncmp(e->name, name, sizeof(e->name) - 1);
}

/* Whether this second's budget has time left; starts a new second when one has passed. */
static int budget_left(struct interp_verdicts *v, uint64_t now)
{
	if (now - v->period_start >= NS_PER_S) {
		v->period_start = now;
		v->spent_ns = 0;
	}
	return v->spent_ns < v->budget_ns;
}

static void remember(struct interp_verdicts *v, const struct stat *st, const char *name, int err,
		     const void *value)
{
	struct verdict *e;
	struct lru_node *old;

	if (v->files.count >= v->max_files && (old = lru_oldest(&v->files))) {
		lru_del(&v->files, old);
		free(lru_entry(old, struct verdict, node));
		if (!v->stats.evicted++)
			log_info("more than %zu interpreter files seen: the least recently "
				 "scanned are parsed again when next met (counted in "
				 "spanprof_input_guards_total{guard=\"interp_file_evicted\"})",
				 v->max_files);
	}
	e = calloc(1, sizeof(*e) + v->value_size);
	if (!e)
		return; /* parsed again next time */
	e->node.k1 = (uint64_t)st->st_dev;
	e->node.k2 = (uint64_t)st->st_ino;
	e->size = (uint64_t)st->st_size;
	e->mtime_ns = (uint64_t)st->st_mtim.tv_sec * NS_PER_S + (uint64_t)st->st_mtim.tv_nsec;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->err = err;
	memcpy(e->value, value, v->value_size);
	lru_add(&v->files, &e->node);
}

int interp_verdicts_read(struct interp_verdicts *v, int fd, const char *name, interp_parse_fn parse,
			 void *out)
{
	struct lru_node *n;
	struct verdict *e;
	struct stat st;
	uint64_t start, took;
	int err;

	if (fstat(fd, &st))
		return -errno;
	n = lru_find(&v->files, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (n) {
		e = lru_entry(n, struct verdict, node);
		if (same_file(e, &st, name)) {
			lru_touch(&v->files, n);
			v->stats.hits++;
			memcpy(out, e->value, v->value_size);
			return e->err;
		}
		lru_del(&v->files, n); /* rewritten, or met under another name */
		free(e);
	}
	start = clock_mono_ns();
	/* Only the administrator makes files owned by root, and each is parsed once: they are not
	 * put off, so other users' files cannot keep a root-installed interpreter unread. */
	if (!budget_left(v, start) && st.st_uid != 0) {
		v->stats.deferred++;
		return -EBUSY;
	}
	err = parse(fd, name, out);
	took = clock_mono_ns() - start;
	v->spent_ns += took;
	v->stats.parse_ns += took;
	if (took > v->stats.longest_ns)
		v->stats.longest_ns = took;
	v->stats.parsed++;
	if (err != -ENOMEM) /* out of memory says nothing about the file */
		remember(v, &st, name, err, out);
	return err;
}

void interp_verdicts_get_stats(const struct interp_verdicts *v, struct interp_verdicts_stats *out)
{
	*out = v->stats;
}
