// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One parsing thread over a fixed table of jobs under one mutex. The run loop submits, claims
 * and polls; the thread only moves a job from queued to running to finished. */
#include <errno.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "discover/hook_parser.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/worker_thread.h"

/* How long stopping waits for the parse in progress (bounded, but slow on a loaded node). */
#define STOP_WAIT_MS 300
/* Processes whose file found the queue full, handed back for a rescan once there is room. */
#define DEFERRED_MAX 64

enum job_state {
	JOB_FREE = 0,
	JOB_QUEUED,
	JOB_RUNNING,
	JOB_FINISHED, /* parsed, not polled yet */
	JOB_KEPT, /* polled and kept for hook_parser_claim() */
};

struct job {
	enum job_state state;
	uint64_t seq; /* submission order: the oldest queued job runs first */
	uid_t uid;
	uint64_t kept_ns; /* JOB_KEPT: when */
	struct hook_parse_result res;
	pid_t waiters[HOOK_PARSER_WAITERS];
	unsigned int nwaiters;
};

struct hook_parser {
	struct worker_thread worker; /* its lock guards the jobs, the turns and the stats */
	int wake_fd; /* eventfd, readable while finished jobs wait for a poll */
	uint64_t seq;
	uid_t last_uid; /* whose file was parsed last (turn_taken: one was) */
	int turn_taken;
	struct job jobs[HOOK_PARSER_JOBS];
	pid_t deferred[DEFERRED_MAX];
	unsigned int ndeferred;
	struct hook_parser_stats stats;
};

/* The oldest queued job of another user than the last one parsed, else the oldest queued job,
 * or NULL: users take turns, so the files one user queued first delay another user's file by
 * about one parse per user waiting, not by the whole of that user's half of the queue. Called
 * locked. */
static struct job *next_job(struct hook_parser *p)
{
	struct job *oldest = NULL, *other = NULL, *j;
	size_t i;

	for (i = 0; i < HOOK_PARSER_JOBS; i++) {
		j = &p->jobs[i];
		if (j->state != JOB_QUEUED)
			continue;
		if (!oldest || j->seq < oldest->seq)
			oldest = j;
		if (p->turn_taken && j->uid == p->last_uid)
			continue;
		if (!other || j->seq < other->seq)
			other = j;
	}
	if (other) {
		p->last_uid = other->uid;
		p->turn_taken = 1;
	}
	return other ? other : oldest;
}

static void *parser_main(void *arg)
{
	struct hook_parser *p = arg;
	uint64_t one = 1;
	struct job *j;
	int err;

	/* Not niced, unlike the unwind table builder: a hook file waits for its verdict to be
	 * attached, and a user's CPU hogs would starve a niced thread and so keep every other
	 * user's hooks unattached for as long as they run. */
	pthread_mutex_lock(&p->worker.lock);
	while (!p->worker.stop) {
		j = next_job(p);
		if (!j) {
			pthread_cond_wait(&p->worker.wake, &p->worker.lock);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->worker.lock);
		/* Only this thread touches a running job's fd, err and site. */
		memset(&j->res.site, 0, sizeof(j->res.site));
		err = hook_elf_find_fd(j->res.fd, &j->res.site);
		pthread_mutex_lock(&p->worker.lock);
		j->res.err = err;
		j->state = JOB_FINISHED;
		p->stats.parsed++;
		if (write(p->wake_fd, &one, sizeof(one)) != sizeof(one))
			log_debug("hook parser: cannot signal a finished parse: %s",
				  strerror(errno));
	}
	worker_thread_returned(&p->worker);
	return NULL;
}

struct hook_parser *hook_parser_new(void)
{
	struct hook_parser *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return NULL;
	elf_version(EV_CURRENT);
	p->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (p->wake_fd < 0) {
		free(p);
		return NULL;
	}
	err = worker_thread_start(&p->worker, STOP_WAIT_MS, parser_main, p);
	if (err) {
		close(p->wake_fd);
		free(p);
		errno = -err;
		return NULL;
	}
	return p;
}

void hook_parser_stop(struct hook_parser *p)
{
	if (p)
		worker_thread_stop(&p->worker);
}

void hook_parser_free(struct hook_parser *p)
{
	size_t i;

	if (!p)
		return;
	/* Inside one parse (bounded by its budgets, but a crafted file takes up to a second on a
	 * loaded node): the agent is exiting, so p is left to it and reclaimed with the process. */
	if (worker_thread_end(&p->worker, p, "hook file parse"))
		return;
	for (i = 0; i < HOOK_PARSER_JOBS; i++)
		if (p->jobs[i].state != JOB_FREE)
			close(p->jobs[i].res.fd);
	close(p->wake_fd);
	free(p);
}

static void defer_pid(struct hook_parser *p, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < p->ndeferred; i++)
		if (p->deferred[i] == pid)
			return;
	if (p->ndeferred < DEFERRED_MAX)
		p->deferred[p->ndeferred++] = pid;
}

int hook_parser_submit(struct hook_parser *p, const struct hook_parse_request *req)
{
	struct job *slot = NULL;
	size_t i, of_uid = 0;

	pthread_mutex_lock(&p->worker.lock);
	for (i = 0; i < HOOK_PARSER_JOBS; i++) {
		if (p->jobs[i].state == JOB_FREE)
			slot = slot ? slot : &p->jobs[i];
		else if (p->jobs[i].uid == req->uid)
			of_uid++;
	}
	if (!slot || of_uid >= HOOK_PARSER_JOBS / 2) {
		p->stats.deferred++;
		defer_pid(p, req->pid);
		pthread_mutex_unlock(&p->worker.lock);
		return -ENOSPC;
	}
	memset(slot, 0, sizeof(*slot));
	slot->seq = ++p->seq;
	slot->uid = req->uid;
	slot->res.dev = req->dev;
	slot->res.inode = req->inode;
	slot->res.pid = req->pid;
	slot->res.fd = req->fd;
	snprintf(slot->res.path, sizeof(slot->res.path), "%s", req->path ? req->path : "");
	slot->waiters[slot->nwaiters++] = req->pid;
	slot->state = JOB_QUEUED;
	p->stats.pending++;
	pthread_cond_signal(&p->worker.wake);
	pthread_mutex_unlock(&p->worker.lock);
	return 0;
}

static void add_waiter(struct job *j, pid_t pid)
{
	unsigned int i;

	for (i = 0; i < j->nwaiters; i++)
		if (j->waiters[i] == pid)
			return;
	if (j->nwaiters < HOOK_PARSER_WAITERS)
		j->waiters[j->nwaiters++] = pid;
}

int hook_parser_claim(struct hook_parser *p, uint64_t dev, uint64_t inode, pid_t pid,
		      struct hook_parse_result *out)
{
	struct job *j;
	size_t i;
	int ret = 0;

	pthread_mutex_lock(&p->worker.lock);
	for (i = 0; i < HOOK_PARSER_JOBS && !ret; i++) {
		j = &p->jobs[i];
		if (j->state == JOB_FREE || j->res.dev != dev || j->res.inode != inode)
			continue;
		if (j->state == JOB_KEPT) {
			*out = j->res;
			j->state = JOB_FREE;
			ret = 2;
		} else {
			/* Queued, running, or finished and not polled yet: its poll hands pid
			 * back. */
			add_waiter(j, pid);
			ret = 1;
		}
	}
	pthread_mutex_unlock(&p->worker.lock);
	return ret;
}

/* Appends j's waiters to rescan[]. */
static size_t hand_back(const struct job *j, pid_t *rescan, size_t n, size_t max)
{
	unsigned int i;

	for (i = 0; i < j->nwaiters && n < max; i++)
		rescan[n++] = j->waiters[i];
	return n;
}

size_t hook_parser_poll(struct hook_parser *p, uint64_t now_ns, hook_parser_done_fn done, void *ctx,
			pid_t *rescan, size_t max)
{
	struct hook_parse_result res;
	uint64_t count;
	size_t i, n = 0, finished = 0;
	struct job *j;
	int keep;

	pthread_mutex_lock(&p->worker.lock);
	if (read(p->wake_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_debug("hook parser: cannot reset the finished-parse signal: %s",
			  strerror(errno));
	for (i = 0; i < HOOK_PARSER_JOBS; i++) {
		j = &p->jobs[i];
		if (j->state == JOB_KEPT && now_ns - j->kept_ns >= HOOK_PARSER_KEEP_NS) {
			close(j->res.fd);
			j->state = JOB_FREE;
			p->stats.expired++;
		}
		if (j->state != JOB_FINISHED)
			continue;
		/* Only the run loop touches a finished job: the callback runs unlocked. */
		j->state = JOB_KEPT;
		j->kept_ns = now_ns;
		p->stats.pending--;
		finished++;
		res = j->res;
		pthread_mutex_unlock(&p->worker.lock);
		keep = done(ctx, &res);
		pthread_mutex_lock(&p->worker.lock);
		if (keep) {
			n = hand_back(j, rescan, n, max);
		} else {
			close(j->res.fd);
			j->state = JOB_FREE;
		}
	}
	/* Parses finished, so the queue moves: the processes turned away get their scan (those
	 * turned away again wait for the next parse to finish). */
	while (finished && p->ndeferred && n < max)
		rescan[n++] = p->deferred[--p->ndeferred];
	pthread_mutex_unlock(&p->worker.lock);
	return n;
}

int hook_parser_wake_fd(const struct hook_parser *p)
{
	return p->wake_fd;
}

void hook_parser_get_stats(struct hook_parser *p, struct hook_parser_stats *out)
{
	pthread_mutex_lock(&p->worker.lock);
	*out = p->stats;
	pthread_mutex_unlock(&p->worker.lock);
}
