// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Spans other tracers publish (docs/thread-context.md): per process, where its OpenTelemetry
 * thread context lives, told to the sampler at each scan and kept current at each drain (key
 * map re-read when the sampler met an unknown key index, retries while the dynamic linker has
 * not filled the TLS slots yet); and OBI's pinned map, handed to the sampler once it appears. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "agent/agent_int.h"
#include "discover/proc_table.h"
#include "discover/tctx_elf.h"
#include "util/file_verdicts.h"
#include "util/log.h"

/* A process that exports the variable but has not published its process context, or whose
 * TLS slots were not filled yet, is retried at this many drains, at most (a later mmap or the
 * full rescan starts over). */
#define PENDING_TRIES 30
/* Every this many drains, processes whose exit was not seen (ring buffer full) are dropped. */
#define REAP_DRAINS 30
/* Files known not to export otel_thread_ctx_v1 (about 64 bytes each). */
#define NEGATIVE_FILES 16384
/* Parse verdicts of module files (about 0.4 KiB each): those that export the variable are not
 * parsed again for each process that maps them. */
#define VERDICT_FILES 1024
/* Work per drain on the run loop, at most: pending processes retried (each reads its maps and
 * opens its new files), key maps re-read, and time spent on files not seen before (scans
 * included). A file new to the agent is parsed on the verdicts' thread (file_verdicts.h; root's
 * files excepted, each parsed once on the loop within the section caps), and its process
 * retried once the verdict is in. Past these the work waits for the next drain, counted;
 * pending processes take turns. */
#define RETRIES_PER_DRAIN 16
#define REREADS_PER_DRAIN 64
#define PARSE_NS_PER_DRAIN (20ull * 1000000ull)

enum tctx_state {
	TCTX_FOUND, /* the sampler reads it */
	TCTX_PENDING, /* retried at drains while tries last */
	TCTX_REFUSED, /* a schema or TLS access not read: logged once, not retried */
};

struct tctx_pid {
	pid_t pid;
	enum tctx_state state;
	int tries; /* TCTX_PENDING: drains left */
};

struct agent_tctx {
	struct thread_ctx_labels labels;
	struct thread_ctx_files *files;
	struct file_verdicts
		*verdicts; /* what each module file's parse gave, parsed off the loop */
	struct tctx_pid *pids; /* `n` used of SPANPROF_MAX_TCTX_PROCS */
	size_t n;
	uint64_t full; /* processes not tracked: the table was full */
	unsigned int drains; /* since the last sweep for processes gone */
	size_t cursor; /* where the next drain's retries start: pending processes take turns */
	uint64_t parse_ns; /* spent parsing new files since the last drain */
	uint64_t deferred; /* work put off by the caps above */
	int obi_set; /* OBI's map was handed to the sampler */
	int obi_warned;
};

static int parse_module(int fd, const char *name, void *out)
{
	(void)name;
	return tctx_elf_read(fd, out);
}

/* thread_ctx_files' reader: the remembered verdict, or -EBUSY while the thread parses it. */
static int read_module(void *ctx, int fd, const char *path, struct tctx_elf *out)
{
	const char *base = strrchr(path, '/');

	return file_verdicts_read(ctx, fd, base ? base + 1 : path, parse_module, out);
}

int agent_thread_ctx_open(struct agent *a)
{
	const struct config_upload *up = &a->cfg->upload;
	struct agent_tctx *t = calloc(1, sizeof(*t));
	size_t i;
	int err;

	if (!t)
		return log_err(-ENOMEM, "set up the thread context table");
	t->pids = calloc(SPANPROF_MAX_TCTX_PROCS, sizeof(*t->pids));
	t->files = thread_ctx_files_new(NEGATIVE_FILES);
	t->verdicts =
		file_verdicts_new(VERDICT_FILES, sizeof(struct tctx_elf), "thread context module");
	if (!t->pids || !t->files || !t->verdicts) {
		err = !t->verdicts && errno ? -errno : -ENOMEM;
		file_verdicts_free(t->verdicts);
		thread_ctx_files_free(t->files);
		free(t->pids);
		free(t);
		return log_err(err, "set up the thread context table and its parse thread");
	}
	thread_ctx_files_set_reader(t->files, read_module, t->verdicts);
	for (i = 0; i < up->nthread_ctx_labels && i < SPANPROF_TCTX_MAX_LABELS; i++)
		t->labels.names[t->labels.n++] = up->thread_ctx_labels[i];
	a->tctx = t;
	return 0;
}

void agent_thread_ctx_stop_parses(struct agent *a)
{
	if (a->tctx)
		file_verdicts_stop(a->tctx->verdicts);
}

void agent_thread_ctx_close(struct agent *a)
{
	if (!a->tctx)
		return;
	thread_ctx_files_free(a->tctx->files);
	file_verdicts_free(a->tctx->verdicts);
	free(a->tctx->pids);
	free(a->tctx);
	a->tctx = NULL;
}

static struct tctx_pid *find_pid(struct agent_tctx *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->pids[i].pid == pid)
			return &t->pids[i];
	return NULL;
}

void agent_thread_ctx_forget(struct agent *a, pid_t pid)
{
	struct agent_tctx *t = a->tctx;
	struct tctx_pid *p = t ? find_pid(t, pid) : NULL;

	if (!p)
		return;
	loader_set_tctx_proc(a->loader, pid, NULL);
	*p = t->pids[--t->n];
}

/* Puts pid in state. Returns its previous state, -1 when it was not tracked, or -ENOSPC when
 * the table is full (warned once). A found process stays found while a rescan is pending. */
static int track(struct agent_tctx *t, pid_t pid, enum tctx_state state)
{
	struct tctx_pid *p = find_pid(t, pid);
	int was;

	if (!p) {
		if (t->n == SPANPROF_MAX_TCTX_PROCS) {
			if (!t->full++)
				log_warn(-ENOSPC,
					 "pid %d: %d processes publishing thread context are "
					 "tracked already; more are not read (logged once)",
					 (int)pid, SPANPROF_MAX_TCTX_PROCS);
			return -ENOSPC;
		}
		p = &t->pids[t->n++];
		p->pid = pid;
		p->state = state;
		p->tries = PENDING_TRIES;
		return -1;
	}
	was = p->state;
	if (state == TCTX_PENDING && was == TCTX_FOUND)
		return was;
	if (state == TCTX_PENDING && was != TCTX_PENDING)
		p->tries = PENDING_TRIES;
	p->state = state;
	return was;
}

void agent_thread_ctx_scan(struct agent *a, pid_t pid, const struct proc_maps *maps)
{
	struct agent_tctx *t = a->tctx;
	const char *why = NULL;
	struct tctx_proc info;
	int err, was;

	struct tctx_pid *p;
	uint64_t start;

	if (!t)
		return;
	start = clock_mono_ns();
	err = thread_ctx_find(
		t->files, a->cfg->proc_root, pid, maps, &t->labels,
		start + (t->parse_ns < PARSE_NS_PER_DRAIN ? PARSE_NS_PER_DRAIN - t->parse_ns : 0),
		&info, &why);
	t->parse_ns += clock_mono_ns() - start;
	if (err == -EAGAIN || err == -EINPROGRESS) {
		track(t, pid, TCTX_PENDING);
		/* Put off by the drain's time, not by the process: that try does not count. */
		p = err == -EINPROGRESS ? find_pid(t, pid) : NULL;
		if (p && p->state == TCTX_PENDING && p->tries < PENDING_TRIES)
			p->tries++;
		t->deferred += err == -EINPROGRESS;
		return;
	}
	if (err == -ENOENT || err == -ESRCH) {
		log_debug("pid %d: no OpenTelemetry thread context read: %s", (int)pid,
			  strerror(-err));
		agent_thread_ctx_forget(a, pid);
		return;
	}
	if (err) {
		loader_set_tctx_proc(a->loader, pid, NULL);
		if (track(t, pid, TCTX_REFUSED) != TCTX_REFUSED)
			log_info("pid %d: its OpenTelemetry thread context is not read: %s",
				 (int)pid, why ? why : strerror(-err));
		return;
	}
	was = track(t, pid, TCTX_FOUND);
	if (was == -ENOSPC)
		return;
	err = loader_set_tctx_proc(a->loader, pid, &info);
	if (err) {
		log_warn(err, "pid %d: cannot tell the sampler where its thread context is",
			 (int)pid);
		agent_thread_ctx_forget(a, pid);
		return;
	}
	if (was == TCTX_FOUND)
		return;
	/* Its process context was read just now: the service it names labels the samples from
	 * the next drain on, the first whose samples can carry the records' spans. */
	proc_table_ctx_found(a->procs, pid);
	log_info("reading OpenTelemetry thread context of pid %d: %s TLS, %d attribute keys",
		 (int)pid, info.tls == SPANPROF_TCTX_TLS_STATIC ? "static" : "dynamic",
		 (int)info.nkeys);
}

/* OBI pins its map when it starts, maybe after the agent: looked for until found. */
static void find_obi_map(struct agent *a)
{
	struct agent_tctx *t = a->tctx;
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);
	int fd, err;

	if (t->obi_set || !a->cfg->obi_map || !a->cfg->obi_map[0] || access(a->cfg->obi_map, F_OK))
		return;
	fd = bpf_obj_get(a->cfg->obi_map);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	if (!err && (info.type != BPF_MAP_TYPE_LRU_HASH || info.key_size != sizeof(__u64) ||
		     info.value_size != sizeof(struct obi_trace_ctx) || info.map_flags))
		err = -EPROTO;
	err = err ?: loader_set_obi_map(a->loader, fd);
	close(fd);
	if (err)
		goto fail;
	t->obi_set = 1;
	log_info("reading OBI's trace context map %s for threads with no other span",
		 a->cfg->obi_map);
	return;
fail:
	if (!t->obi_warned)
		log_warn(err, "OBI's map %s is not read%s", a->cfg->obi_map,
			 err == -EPROTO ? ": not an LRU hash of pid_tgid -> {trace_id, span_id}" :
					  "");
	t->obi_warned = 1;
}

/* Re-reads the key map of a process whose records named a key the sampler did not know, while
 * *rereads last. */
static void refresh_keys(struct agent *a, struct tctx_pid *p, size_t *rereads)
{
	struct tctx_proc info;

	if (loader_get_tctx_proc(a->loader, p->pid, &info) || !info.rescan)
		return;
	if (!*rereads) {
		a->tctx->deferred++;
		return;
	}
	--*rereads;
	if (thread_ctx_reread_keys(a->cfg->proc_root, p->pid, &a->tctx->labels, &info))
		return; /* gone, or no context any more: the exit or next scan settles it */
	loader_set_tctx_proc(a->loader, p->pid, &info);
}

static void retry_pending(struct agent *a, struct tctx_pid *p)
{
	struct proc_maps maps;
	pid_t pid = p->pid;

	if (--p->tries <= 0 || proc_maps_read_at(a->cfg->proc_root, pid, &maps)) {
		agent_thread_ctx_forget(a, pid);
		scan_known_forget(&a->known, pid); /* the next rescan looks again */
		return;
	}
	agent_thread_ctx_scan(a, pid, &maps);
	proc_maps_release(&maps);
}

void agent_thread_ctx_drain(struct agent *a)
{
	struct agent_tctx *t = a->tctx;
	size_t i, k, n, rereads = REREADS_PER_DRAIN, nretry = 0;
	pid_t retry[RETRIES_PER_DRAIN];
	struct tctx_pid *p;
	int reap;

	if (!t)
		return;
	find_obi_map(a);
	t->parse_ns = 0;
	reap = ++t->drains >= REAP_DRAINS;
	if (reap)
		t->drains = 0;
	/* Backwards: a forgotten entry is replaced by the last one, already visited. */
	for (i = t->n; reap && i-- > 0;)
		if (!proc_table_pid_alive(a->cfg->proc_root, t->pids[i].pid))
			agent_thread_ctx_forget(a, t->pids[i].pid);
	/* From the cursor round: the first RETRIES_PER_DRAIN pending processes are retried, the
	 * next drain starts after the last of them. */
	n = t->n;
	for (k = 0; k < n; k++) {
		i = (t->cursor + k) % n;
		p = &t->pids[i];
		if (p->state == TCTX_FOUND) {
			refresh_keys(a, p, &rereads);
		} else if (p->state == TCTX_PENDING) {
			if (nretry == RETRIES_PER_DRAIN) {
				t->deferred++;
				continue;
			}
			retry[nretry++] = p->pid;
			t->cursor = i + 1;
		}
	}
	/* Retrying may forget entries (moving others): by pid, after the walk. */
	for (k = 0; k < nretry; k++) {
		p = find_pid(t, retry[k]);
		if (p && p->state == TCTX_PENDING)
			retry_pending(a, p);
	}
}

uint64_t agent_thread_ctx_full(const struct agent *a)
{
	return a->tctx ? a->tctx->full : 0;
}

uint64_t agent_thread_ctx_count(const struct agent *a)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; a->tctx && i < a->tctx->n; i++)
		n += a->tctx->pids[i].state != TCTX_REFUSED;
	return n;
}

uint64_t agent_thread_ctx_deferred(const struct agent *a)
{
	return a->tctx ? a->tctx->deferred : 0;
}

void agent_thread_ctx_parse_stats(const struct agent *a, struct file_verdicts_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (a->tctx)
		file_verdicts_get_stats(a->tctx->verdicts, out);
}
