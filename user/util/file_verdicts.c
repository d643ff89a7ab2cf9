// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-file parse verdicts (a bounded LRU the run loop owns) and the parsing thread:
 * a fixed table of jobs under one mutex, which the thread moves from queued to finished and the
 * loop collects into the LRU at its next read. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/file_verdicts.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/lru.h"
#include "util/worker_thread.h"

/* How long stopping waits for the parse in progress (bounded, but slow on a loaded node). */
#define STOP_WAIT_MS 300

#define NAME_MAX_KEPT 64

/* The file's identity: a verdict holds while these are unchanged. */
struct file_key {
	uint64_t dev, inode, size, mtime_ns;
	char name[NAME_MAX_KEPT];
};

struct verdict {
	struct lru_node node; /* k1 = device, k2 = inode */
	struct file_key key;
	int err;
	_Alignas(max_align_t) unsigned char value[]; /* value_size bytes */
};

enum job_state { JOB_FREE = 0, JOB_QUEUED, JOB_RUNNING, JOB_FINISHED };

struct job {
	enum job_state state;
	uint64_t seq; /* the oldest queued job runs first */
	uid_t uid; /* the file's owner */
	int fd; /* a duplicate, the job's own */
	file_parse_fn parse;
	struct file_key key;
	int err;
	uint64_t took_ns;
	unsigned char *value; /* value_size bytes */
};

struct file_verdicts {
	size_t max_files, value_size;
	const char *what; /* the files' kind, for logs */
	struct lru files; /* the run loop's only */
	struct worker_thread worker; /* its lock guards the jobs and stats */
	uint64_t seq;
	struct job jobs[FILE_VERDICTS_JOBS];
	struct file_verdicts_stats stats; /* parse_ns, longest_ns written by the thread, locked */
};

static void key_of(const struct stat *st, const char *name, struct file_key *k)
{
	memset(k, 0, sizeof(*k));
	k->dev = (uint64_t)st->st_dev;
	k->inode = (uint64_t)st->st_ino;
	k->size = (uint64_t)st->st_size;
	k->mtime_ns = (uint64_t)st->st_mtim.tv_sec * NS_PER_S + (uint64_t)st->st_mtim.tv_nsec;
	snprintf(k->name, sizeof(k->name), "%s", name);
}

static int same_key(const struct file_key *a, const struct file_key *b)
{
	return a->dev == b->dev && a->inode == b->inode && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && !strcmp(a->name, b->name);
}

/* The oldest queued job, or NULL. Called locked. */
static struct job *next_job(struct file_verdicts *v)
{
	struct job *best = NULL;
	size_t i;

	for (i = 0; i < FILE_VERDICTS_JOBS; i++)
		if (v->jobs[i].state == JOB_QUEUED && (!best || v->jobs[i].seq < best->seq))
			best = &v->jobs[i];
	return best;
}

static void *parser_main(void *arg)
{
	struct file_verdicts *v = arg;
	uint64_t start;
	struct job *j;

	pthread_mutex_lock(&v->worker.lock);
	while (!v->worker.stop) {
		j = next_job(v);
		if (!j) {
			pthread_cond_wait(&v->worker.wake, &v->worker.lock);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&v->worker.lock);
		start = clock_mono_ns();
		j->err = j->parse(j->fd, j->key.name, j->value);
		j->took_ns = clock_mono_ns() - start;
		close(j->fd);
		j->fd = -1;
		pthread_mutex_lock(&v->worker.lock);
		j->state = JOB_FINISHED;
	}
	worker_thread_returned(&v->worker);
	return NULL;
}

struct file_verdicts *file_verdicts_new(size_t max_files, size_t value_size, const char *what)
{
	struct file_verdicts *v = calloc(1, sizeof(*v));
	size_t i;
	int err;

	if (!v)
		goto nomem;
	v->max_files = max_files;
	v->value_size = value_size;
	v->what = what;
	for (i = 0; i < FILE_VERDICTS_JOBS; i++) {
		v->jobs[i].fd = -1;
		v->jobs[i].value = calloc(1, value_size ? value_size : 1);
		if (!v->jobs[i].value)
			goto nomem_free;
	}
	if (lru_init(&v->files, max_files))
		goto nomem_free;
	err = worker_thread_start(&v->worker, STOP_WAIT_MS, parser_main, v);
	if (err) {
		lru_release(&v->files);
		for (i = 0; i < FILE_VERDICTS_JOBS; i++)
			free(v->jobs[i].value);
		free(v);
		errno = -err;
		return NULL;
	}
	return v;
nomem_free:
	for (i = 0; i < FILE_VERDICTS_JOBS; i++)
		free(v->jobs[i].value);
	free(v);
nomem:
	errno = ENOMEM;
	return NULL;
}

void file_verdicts_stop(struct file_verdicts *v)
{
	if (v)
		worker_thread_stop(&v->worker);
}

void file_verdicts_free(struct file_verdicts *v)
{
	struct lru_node *n;
	char what[96];
	size_t i;

	if (!v)
		return;
	snprintf(what, sizeof(what), "%s file parse", v->what);
	/* Inside one parse (bounded by the parsers' caps, but a crafted file takes up to a second
	 * on a loaded node): the agent is exiting, so v is left to the thread and reclaimed with
	 * the process. */
	if (worker_thread_end(&v->worker, v, what))
		return;
	for (i = 0; i < FILE_VERDICTS_JOBS; i++) {
		if (v->jobs[i].fd >= 0)
			close(v->jobs[i].fd);
		free(v->jobs[i].value);
	}
	while ((n = lru_oldest(&v->files))) {
		lru_del(&v->files, n);
		free(lru_entry(n, struct verdict, node));
	}
	lru_release(&v->files);
	free(v);
}

static void remember(struct file_verdicts *v, const struct file_key *key, int err,
		     const void *value)
{
	struct lru_node *old;
	struct verdict *e;

	if (err == -ENOMEM) /* out of memory says nothing about the file */
		return;
	if ((old = lru_find(&v->files, key->dev, key->inode))) {
		lru_del(&v->files, old);
		free(lru_entry(old, struct verdict, node));
	}
	if (v->files.count >= v->max_files && (old = lru_oldest(&v->files))) {
		lru_del(&v->files, old);
		free(lru_entry(old, struct verdict, node));
		if (!v->stats.evicted++)
			log_info("more than %zu %s files seen: the least recently scanned are "
				 "parsed again when next met (logged once, counted in "
				 "spanprof_input_guards_total)",
				 v->max_files, v->what);
	}
	e = calloc(1, sizeof(*e) + v->value_size);
	if (!e)
		return; /* parsed again next time */
	e->node.k1 = key->dev;
	e->node.k2 = key->inode;
	e->key = *key;
	e->err = err;
	memcpy(e->value, value, v->value_size);
	lru_add(&v->files, &e->node);
}

static void count_parse(struct file_verdicts *v, uint64_t took_ns)
{
	v->stats.parsed++;
	v->stats.parse_ns += took_ns;
	if (took_ns > v->stats.longest_ns)
		v->stats.longest_ns = took_ns;
}

/* Moves the thread's finished jobs into the LRU. */
static void collect(struct file_verdicts *v)
{
	size_t i;

	pthread_mutex_lock(&v->worker.lock);
	for (i = 0; i < FILE_VERDICTS_JOBS; i++) {
		struct job *j = &v->jobs[i];

		if (j->state != JOB_FINISHED)
			continue;
		remember(v, &j->key, j->err, j->value);
		count_parse(v, j->took_ns);
		j->state = JOB_FREE;
	}
	pthread_mutex_unlock(&v->worker.lock);
}

/* Queues key's parse unless it is queued already, the table is full or uid holds half of it.
 * Called locked. */
static void submit(struct file_verdicts *v, int fd, uid_t uid, file_parse_fn parse,
		   const struct file_key *key)
{
	struct job *slot = NULL;
	unsigned int mine = 0;
	size_t i;

	for (i = 0; i < FILE_VERDICTS_JOBS; i++) {
		struct job *j = &v->jobs[i];

		if (j->state == JOB_FREE) {
			if (!slot)
				slot = j;
			continue;
		}
		if (same_key(&j->key, key))
			return; /* queued or being parsed */
		mine += j->uid == uid;
	}
	if (!slot || mine >= FILE_VERDICTS_JOBS / 2) {
		v->stats.refused++;
		return; /* the rescan in a second tries again */
	}
	slot->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (slot->fd < 0)
		return;
	slot->state = JOB_QUEUED;
	slot->seq = ++v->seq;
	slot->uid = uid;
	slot->parse = parse;
	slot->key = *key;
	pthread_cond_signal(&v->worker.wake);
}

int file_verdicts_read(struct file_verdicts *v, int fd, const char *name, file_parse_fn parse,
		       void *out)
{
	struct file_key key;
	struct lru_node *n;
	struct verdict *e;
	struct stat st;
	uint64_t start;
	int err;

	if (fstat(fd, &st))
		return -errno;
	key_of(&st, name, &key);
	collect(v);
	n = lru_find(&v->files, key.dev, key.inode);
	if (n) {
		e = lru_entry(n, struct verdict, node);
		if (same_key(&e->key, &key)) {
			lru_touch(&v->files, n);
			v->stats.hits++;
			memcpy(out, e->value, v->value_size);
			return e->err;
		}
	}
	/* Only the administrator makes files owned by root, and each is parsed once: they are
	 * parsed at once, so other users' files cannot keep a root-installed file unread
	 * behind them in the queue. */
	if (st.st_uid == 0) {
		start = clock_mono_ns();
		err = parse(fd, name, out);
		count_parse(v, clock_mono_ns() - start);
		remember(v, &key, err, out);
		return err;
	}
	v->stats.deferred++;
	pthread_mutex_lock(&v->worker.lock);
	submit(v, fd, st.st_uid, parse, &key);
	pthread_mutex_unlock(&v->worker.lock);
	return -EBUSY;
}

void file_verdicts_get_stats(const struct file_verdicts *v, struct file_verdicts_stats *out)
{
	*out = v->stats;
}
