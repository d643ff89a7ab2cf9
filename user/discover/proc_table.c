// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process facts the agent keeps: a chained hash of pid -> struct proc_info, bounded. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "discover/proc_table.h"
#include "discover/process_ctx.h"
#include "util/proc_file.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/series_labels.h"
#include "util/utf8.h"

#define NBUCKETS 4096
/* The one service of every kernel thread (kworker, ksoftirqd, kswapd, ...). */
#define KERNEL_SERVICE "kernel"
/* task->flags bit of a kernel thread, field 9 of /proc/PID/stat. */
#define PF_KTHREAD 0x00200000u
/* Looks for an OTel process context after the first: 1 + 2 + ... + 32 s covers SDK start-up. */
#define CTX_CHECKS_MAX 6

struct proc_node {
	struct proc_info info;
	char *service; /* info.service when allocated; NULL while it is SERIES_LABEL_UNKNOWN_SERVICE */
	uint64_t exited_sweep; /* the sweep count when it was marked exited */
	struct proc_node *next;
};

struct proc_table {
	struct proc_node *buckets[NBUCKETS];
	size_t count, max;
	uint64_t sweeps, reaped;
	const char *proc_root;
	struct k8s_meta *k8s; /* NULL off Kubernetes */
	char scratch_service[LABELS_SERVICE_MAX]; /* the service of an entry not kept */
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

static void node_free(struct proc_node *n)
{
	free(n->service);
	free(n);
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
			node_free(n);
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

/* Fills the Kubernetes fields; returns the service name to use for processes without an OTel
 * name, or NULL. A miss remembers the pod cache generation so a later get can retry. */
static const char *read_k8s(const struct proc_table *t, pid_t pid, struct proc_info *info,
			    char *service, size_t size)
{
	struct k8s_labels kl;
	int err;

	info->k8s_pending = 0;
	if (!t->k8s)
		return NULL;
	err = k8s_meta_lookup(t->k8s, t->proc_root, pid, &kl);
	/* A container the pod cache has not seen yet (or whose pod it knows, but not the container
	 * itself): try again once the cache has changed. */
	if ((err == -ENOENT && kl.container_id[0]) || (!err && !kl.container[0])) {
		info->k8s_pending = 1;
		info->k8s_generation = k8s_meta_generation(t->k8s);
	}
	if (err)
		return NULL;
	snprintf(info->k8s_namespace, sizeof(info->k8s_namespace), "%s", kl.namespace);
	snprintf(info->k8s_pod, sizeof(info->k8s_pod), "%s", kl.pod);
	snprintf(info->k8s_container, sizeof(info->k8s_container), "%s", kl.container);
	labels_clean(info->k8s_namespace);
	labels_clean(info->k8s_pod);
	labels_clean(info->k8s_container);
	return k8s_meta_service_name(&kl, service, size) ? NULL : service;
}

/* The service name the process published in code (OTel process context), ahead of its
 * environment: a Resource built in code is what its traces carry. Writes the name into buf
 * (LABELS_SERVICE_MAX bytes) and the namespace into info; returns 1 if a name was found. */
static int read_process_ctx(const struct proc_table *t, pid_t pid, struct proc_info *info,
			    char *buf)
{
	struct process_ctx ctx;
	int err = process_ctx_read(t->proc_root, pid, &ctx);
	size_t n;

	if (err) {
		if (err != -ENOENT && err != -ESRCH)
			log_warn(err, "OTel process context of pid %d ignored: %s", pid,
				 strerror(-err));
		return 0;
	}
	n = strlen(ctx.service_namespace);
	if (n >= sizeof(info->service_namespace))
		n = utf8_boundary(ctx.service_namespace, sizeof(info->service_namespace) - 1);
	memcpy(info->service_namespace, ctx.service_namespace, n);
	info->service_namespace[n] = '\0';
	if (!ctx.service_name[0])
		return 0;
	snprintf(buf, LABELS_SERVICE_MAX, "%s", ctx.service_name);
	return 1;
}

/* Schedules the next look for a process context: 1, 2, 4 ... 32 s after the first one. */
static void schedule_ctx_check(struct proc_info *info)
{
	if (++info->ctx_checks > CTX_CHECKS_MAX) {
		info->ctx_next_ns = 0;
		return;
	}
	info->ctx_next_ns =
		(int64_t)clock_mono_ns() + ((int64_t)NS_PER_S << (info->ctx_checks - 1));
}

/* Looks for a process context that was not there before; adopts its service name. Returns 1
 * when it did. */
static int look_ctx(const struct proc_table *t, struct proc_node *n)
{
	struct proc_info *info = &n->info;
	char *buf = malloc(LABELS_SERVICE_MAX);

	if (buf && read_process_ctx(t, info->pid, info, buf)) {
		free(n->service);
		n->service = realloc(buf, strlen(buf) + 1) ?: buf;
		info->service = n->service;
		info->ctx_next_ns = 0;
		info->ctx_named = 1;
		log_info("pid %d named its service in code: %s", info->pid, info->service);
		return 1;
	}
	free(buf);
	return 0;
}

/* A due look for a process context. */
static void recheck_ctx(const struct proc_table *t, struct proc_node *n)
{
	struct proc_info *info = &n->info;

	if (!info->ctx_next_ns || info->exited || (int64_t)clock_mono_ns() < info->ctx_next_ns)
		return;
	if (!look_ctx(t, n))
		schedule_ctx_check(info);
}

/* Reads <proc_root>/PID/stat's state (field 3) and flags (field 9; 0 when missing). Returns 0,
 * -ENOENT when there is no stat file, -ESRCH when it reads as gone, -EBADMSG, or -errno. */
static int read_stat(const char *proc_root, pid_t pid, char *state, unsigned int *flags)
{
	char path[64], buf[512];
	const char *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = errno == ENOENT ? -ESRCH : -errno; /* -ENOENT only for a missing file */
	close(fd);
	if (n <= 0)
		return n ? (int)n : -ESRCH;
	buf[n] = '\0';
	/* "pid (comm) S ppid pgrp session tty_nr tpgid flags ...": comm may hold ") ", so the
	 * fields start after the last ')'. */
	close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] != ' ' || !close_paren[2])
		return -EBADMSG;
	*state = close_paren[2];
	/* A stat cut short has no flags: not a kernel thread. */
	if (sscanf(close_paren + 3, " %*d %*d %*d %*d %*d %u", flags) != 1)
		*flags = 0;
	return 0;
}

/* 1 when pid is a kernel thread. Its environ cannot be read (recent kernels answer ESRCH for a
 * task without memory, as for one that is gone) and its comm says which worker it is, not
 * which application: the stat flags tell it apart for the price of one small read. */
static int is_kernel_thread(const char *proc_root, pid_t pid)
{
	unsigned int flags;
	char state;

	return !read_stat(proc_root, pid, &state, &flags) && (flags & PF_KTHREAD);
}

/* Reads pid's facts into info; its service name into buf (LABELS_SERVICE_MAX bytes). Returns 0,
 * or -ENOENT/-ESRCH when the process is gone (the service is then "unknown_service"). */
static int read_info(const struct proc_table *t, pid_t pid, struct proc_info *info, char *buf)
{
	char k8s_service[LABELS_SERVICE_MAX];
	const char *fallback;
	uid_t euid;
	int err;

	memset(info, 0, sizeof(*info));
	info->pid = pid;
	/* The real uid, as hook files are charged: /proc/PID's owner says root for a process that
	 * made itself non-dumpable. */
	if (proc_file_uids(t->proc_root, pid, &info->uid, &euid))
		info->uid = PROC_UID_UNKNOWN;
	if (is_kernel_thread(t->proc_root, pid)) {
		strcpy(buf, KERNEL_SERVICE);
		info->service = buf;
		return 0;
	}
	fallback = read_k8s(t, pid, info, k8s_service, sizeof(k8s_service));
	if (read_process_ctx(t, pid, info, buf)) {
		info->service = buf;
		info->ctx_named = 1;
		return 0;
	}
	schedule_ctx_check(info);
	err = labels_service_for_pid_or(t->proc_root, pid, fallback, buf, LABELS_SERVICE_MAX);
	if (err) {
		if (err != -ENOENT && err != -ESRCH)
			log_debug("service name of pid %d: %s", pid, strerror(-err));
		strcpy(buf, SERIES_LABEL_UNKNOWN_SERVICE);
	}
	info->service = buf;
	return err == -ENOENT || err == -ESRCH ? err : 0;
}

/* Sets a kept node's service to a copy of name (SERIES_LABEL_UNKNOWN_SERVICE without memory). */
static void set_service(struct proc_node *n, const char *name)
{
	free(n->service);
	n->service = name && *name ? strdup(name) : NULL;
	n->info.service = n->service ? n->service : SERIES_LABEL_UNKNOWN_SERVICE;
}

/* Reads pid into a kept node: the name is copied to fit (SERIES_LABEL_UNKNOWN_SERVICE without memory).
 * Returns read_info()'s result. */
static int read_node(const struct proc_table *t, pid_t pid, struct proc_node *n)
{
	char *buf = malloc(LABELS_SERVICE_MAX);
	int err;

	free(n->service);
	n->service = NULL;
	if (!buf) {
		memset(&n->info, 0, sizeof(n->info));
		n->info.pid = pid;
		n->info.uid = PROC_UID_UNKNOWN;
		n->info.service = SERIES_LABEL_UNKNOWN_SERVICE;
		return 0;
	}
	err = read_info(t, pid, &n->info, buf);
	n->service = realloc(buf, strlen(buf) + 1) ?: buf;
	n->info.service = n->service;
	return err;
}

int proc_table_pid_alive(const char *proc_root, pid_t pid)
{
	unsigned int flags;
	char path[64];
	char state;
	int err = read_stat(proc_root, pid, &state, &flags);

	if (err == -ENOENT) {
		snprintf(path, sizeof(path), "%s/%d", proc_root, (int)pid);
		return access(path, F_OK) == 0;
	}
	if (err == -ESRCH)
		return 0;
	if (err)
		return 1;
	return state != 'Z' && state != 'X';
}

static void mark_exited(struct proc_table *t, struct proc_node *n)
{
	if (n->info.exited)
		return;
	n->info.exited = 1;
	n->exited_sweep = t->sweeps;
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
				node_free(victim);
				t->count--;
				return 1;
			}
	return 0;
}

/* A new entry for pid (NULL when the table is full of live processes or memory is short). */
static struct proc_node *new_node(struct proc_table *t, pid_t pid)
{
	struct proc_node *n;

	if (t->count >= t->max && !evict_exited(t))
		return NULL;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->info.pid = pid;
	n->info.service = SERIES_LABEL_UNKNOWN_SERVICE;
	*slot_of(t, pid) = n;
	t->count++;
	return n;
}

const struct proc_info *proc_table_get(struct proc_table *t, pid_t pid, struct proc_info *scratch)
{
	struct proc_node **slot = slot_of(t, pid), *n;

	if (*slot) {
		n = *slot;
		/* Its pod was unknown: look again once the pod cache has changed. */
		if (n->info.k8s_pending && !n->info.exited &&
		    k8s_meta_generation(t->k8s) != n->info.k8s_generation)
			read_node(t, pid, n);
		recheck_ctx(t, n);
		return &n->info;
	}
	n = new_node(t, pid);
	if (!n) {
		read_info(t, pid, scratch, t->scratch_service);
		return scratch;
	}
	/* Gone already (its exit event, if any, came before this entry existed): the entry goes
	 * with the exited ones instead of staying forever. */
	if (read_node(t, pid, n) || !proc_table_pid_alive(t->proc_root, pid))
		mark_exited(t, n);
	return &n->info;
}

void proc_table_ctx_found(struct proc_table *t, pid_t pid)
{
	struct proc_node *n = *slot_of(t, pid);
	struct proc_info scratch;

	if (!n) {
		proc_table_get(t, pid, &scratch); /* read now, context included */
		return;
	}
	if (n->info.ctx_named || n->info.exited)
		return;
	/* Read by another reader just now: the look scheduled for later (or given up after
	 * CTX_CHECKS_MAX) is made now. A context naming no service leaves the schedule as it is. */
	look_ctx(t, n);
}

const struct proc_info *proc_table_find(const struct proc_table *t, pid_t pid)
{
	const struct proc_node *n = t->buckets[(unsigned int)pid % NBUCKETS];

	while (n && n->info.pid != pid)
		n = n->next;
	return n ? &n->info : NULL;
}

void proc_table_set_k8s(struct proc_table *t, struct k8s_meta *k8s)
{
	t->k8s = k8s;
}

void proc_table_refresh(struct proc_table *t, pid_t pid)
{
	struct proc_node *n = *slot_of(t, pid);
	struct proc_info scratch;

	if (n)
		read_node(t, pid, n);
	else
		proc_table_get(t, pid, &scratch); /* reads it once, as a new entry */
}

void proc_table_exec(struct proc_table *t, pid_t pid, const char *service, int guess)
{
	struct proc_node *n = *slot_of(t, pid);
	char *inherited = NULL;

	if (!n)
		n = new_node(t, pid);
	if (!n)
		return;
	/* What the fork passed on (a live entry with a name of its own), before it is re-read. */
	if (guess && n->service && !n->info.exited)
		inherited = strdup(n->service);
	/* A reused pid's old entry is read afresh (read_info clears `exited`). Its exit event
	 * follows this exec event in the ring, so a zombie is not marked exited here. */
	if (read_node(t, pid, n) || !proc_table_pid_alive(t->proc_root, pid)) {
		n->info.pid = pid;
		set_service(n, inherited ? inherited : service);
	}
	free(inherited);
}

void proc_table_fork(struct proc_table *t, pid_t parent, pid_t child)
{
	struct proc_info scratch, copy;
	const struct proc_info *p;
	struct proc_node *n;
	char *service;

	p = proc_table_get(t, parent, &scratch);
	if (!strcmp(p->service, SERIES_LABEL_UNKNOWN_SERVICE))
		return; /* nothing to pass on: the child is read itself when sampled */
	/* Copied first: making the child's entry may evict the parent's. */
	copy = *p;
	service = strdup(p->service);
	n = service ? *slot_of(t, child) : NULL;
	if (service && !n)
		n = new_node(t, child);
	if (!n) {
		free(service);
		return;
	}
	free(n->service);
	n->info = copy;
	n->info.pid = child;
	n->info.exited = 0;
	n->service = service;
	n->info.service = service;
}

int proc_table_mark_exited(struct proc_table *t, pid_t pid)
{
	struct proc_node *n = *slot_of(t, pid);

	if (n)
		mark_exited(t, n);
	return n != NULL;
}

void proc_table_sweep_exited(struct proc_table *t, void (*fn)(void *ctx, pid_t pid), void *ctx)
{
	struct proc_node **p, *victim;
	size_t b;

	for (b = 0; b < NBUCKETS; b++) {
		p = &t->buckets[b];
		while (*p) {
			if (!(*p)->info.exited || (*p)->exited_sweep == t->sweeps) {
				p = &(*p)->next;
				continue;
			}
			victim = *p;
			*p = victim->next;
			if (fn)
				fn(ctx, victim->info.pid);
			node_free(victim);
			t->count--;
		}
	}
	t->sweeps++;
}

size_t proc_table_reap(struct proc_table *t)
{
	struct proc_node *n;
	size_t b, reaped = 0;

	for (b = 0; b < NBUCKETS; b++)
		for (n = t->buckets[b]; n; n = n->next)
			if (!n->info.exited && !proc_table_pid_alive(t->proc_root, n->info.pid)) {
				mark_exited(t, n);
				reaped++;
			}
	t->reaped += reaped;
	return reaped;
}

uint64_t proc_table_reaped(const struct proc_table *t)
{
	return t->reaped;
}

size_t proc_table_count(const struct proc_table *t)
{
	return t->count;
}
