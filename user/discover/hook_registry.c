// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Hook-file bookkeeping: (device, inode) -> uprobe link and user count; pid -> files it maps;
 * plus a bounded "no hook in this file" set so each file's ELF is read once. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/types.h>

#include <bpf/libbpf.h>

#include "discover/hook_elf.h"
#include "discover/hook_open.h"
#include "discover/hook_registry.h"
#include "spanprof_abi.h"
#include "loader.h"
#include "util/log.h"

#define FILES_PER_PID 8

struct hook_file {
	uint64_t dev, inode;
	struct bpf_link *link; /* NULL: nothing probed (a Go runtime: labels only) */
	int in_use; /* 0: free slot */
	size_t users;
	int is_go; /* a Go executable: its users' samples look spans up by goroutine */
	struct go_proc go; /* where its goroutines keep pprof labels */
};

struct hook_pid {
	pid_t pid; /* 0: free slot */
	unsigned int nfiles;
	unsigned int files[FILES_PER_PID]; /* indexes into hook_registry.files */
	int is_go; /* what the sampler was told (go_pids), so it is told only of changes */
	struct go_proc go;
};

struct file_id {
	uint64_t dev, inode; /* inode 0: empty slot */
};

struct hook_registry {
	struct loader *loader;
	struct hook_registry_limits limits;
	struct hook_file *files;
	struct hook_pid *pids;
	/* Slots at and past pids_end are free: lookups scan only the slots in use so far, which a
	 * node's exit and exec events (thousands a second on a build machine) must not pay for
	 * all limits.max_pids of them. */
	size_t pids_end;
	struct file_id *negative; /* open addressing, negative_cap slots (a power of two) */
	size_t negative_cap, negative_count;
	struct hook_registry_stats stats;
};

struct hook_registry *hook_registry_new(struct loader *loader,
					const struct hook_registry_limits *limits)
{
	struct hook_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->loader = loader;
	r->limits = *limits;
	r->negative_cap = 16;
	while (r->negative_cap < 2 * limits->max_negative)
		r->negative_cap *= 2;
	r->files = calloc(limits->max_files, sizeof(*r->files));
	r->pids = calloc(limits->max_pids, sizeof(*r->pids));
	r->negative = calloc(r->negative_cap, sizeof(*r->negative));
	if (!r->files || !r->pids || !r->negative) {
		hook_registry_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void hook_registry_free(struct hook_registry *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; r->files && i < r->limits.max_files; i++)
		bpf_link__destroy(r->files[i].link);
	free(r->files);
	free(r->pids);
	free(r->negative);
	free(r);
}

static size_t negative_slot(const struct hook_registry *r, uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode * 0x9e3779b97f4a7c15ull) ^ (dev * 0xbf58476d1ce4e5b9ull);
	size_t i = h & (r->negative_cap - 1);

	while (r->negative[i].inode && (r->negative[i].inode != inode || r->negative[i].dev != dev))
		i = (i + 1) & (r->negative_cap - 1);
	return i;
}

static int is_negative(const struct hook_registry *r, uint64_t dev, uint64_t inode)
{
	return r->negative[negative_slot(r, dev, inode)].inode != 0;
}

static void add_negative(struct hook_registry *r, uint64_t dev, uint64_t inode)
{
	/* Bounded: when full, forget everything; files are then simply read once more. */
	if (r->negative_count >= r->limits.max_negative) {
		memset(r->negative, 0, r->negative_cap * sizeof(*r->negative));
		r->negative_count = 0;
	}
	r->negative[negative_slot(r, dev, inode)] = (struct file_id){ dev, inode };
	r->negative_count++;
}

static long find_file(const struct hook_registry *r, uint64_t dev, uint64_t inode)
{
	size_t i;

	for (i = 0; i < r->limits.max_files; i++)
		if (r->files[i].in_use && r->files[i].dev == dev && r->files[i].inode == inode)
			return i;
	return -1;
}

static struct hook_pid *find_pid(struct hook_registry *r, pid_t pid, int create)
{
	struct hook_pid *free_slot = NULL;
	size_t i;

	for (i = 0; i < r->pids_end; i++) {
		if (r->pids[i].pid == pid)
			return &r->pids[i];
		if (!r->pids[i].pid && !free_slot)
			free_slot = &r->pids[i];
	}
	if (!create)
		return NULL;
	if (!free_slot && r->pids_end < r->limits.max_pids)
		free_slot = &r->pids[r->pids_end++];
	if (!free_slot)
		return NULL;
	free_slot->pid = pid;
	free_slot->nfiles = 0;
	free_slot->is_go = 0;
	free_slot->go = (struct go_proc){ 0 };
	r->stats.pids_tracked++;
	return free_slot;
}

/* Frees p's slot, and the free slots at the end of the used range with it. */
static void free_pid(struct hook_registry *r, struct hook_pid *p)
{
	p->pid = 0;
	p->nfiles = 0;
	r->stats.pids_tracked--;
	while (r->pids_end && !r->pids[r->pids_end - 1].pid)
		r->pids_end--;
}

static struct go_proc go_proc_of(const struct hook_site *site)
{
	return (struct go_proc){ .labels_offset = site->go_labels_offset,
				 .labels_kind = site->go_labels_kind,
				 .m_offset = site->go_m_offset,
				 .curg_offset = site->go_curg_offset,
				 .g_tls_offset = site->go_g_offset };
}

/* Attaches the uprobe for a new hook file, open as fd: the kernel resolves /proc/self/fd/N to
 * that open file, so the probe goes into the inode that was parsed. Returns its index or -errno. */
static long attach_file(struct hook_registry *r, pid_t pid, const struct proc_map *m, int fd,
			const struct hook_site *site)
{
	uint64_t offset =
		r->limits.use_nop5 && site->nop5_offset ? site->nop5_offset : site->site_offset;
	struct bpf_link *link;
	char path[32];
	size_t i;

	for (i = 0; i < r->limits.max_files && r->files[i].in_use; i++)
		;
	if (i == r->limits.max_files) {
		r->stats.limit_drops++;
		return log_warn(-ENOSPC, "hook in %s (pid %d) not attached: %zu hook files already",
				m->path, pid, r->limits.max_files);
	}
	if (!site->site_offset) {
		/* A Go runtime without the hook: nothing to probe, its labels are read. */
		r->files[i] = (struct hook_file){ .dev = m->dev,
						  .inode = m->inode,
						  .in_use = 1,
						  .is_go = 1,
						  .go = go_proc_of(site) };
		log_info("Go executable %s (pid %d): span labels read from pprof labels", m->path,
			 pid);
		return i;
	}
	link = loader_attach_hook(r->loader, hook_open_fd_path(fd, path, sizeof(path)), offset,
				  site->semaphore_offset,
				  site->is_go ? LOADER_HOOK_GO : LOADER_HOOK_C,
				  site->is_go ? (uint64_t)(int64_t)site->go_g_offset : 0);
	if (!link) {
		int err = -errno;

		r->stats.attach_errors++;
		return log_warn(err, "attach span hook to %s (pid %d, offset 0x%llx)%s", m->path,
				pid, (unsigned long long)offset,
				err == -EPERM || err == -EACCES ? " (uprobes need CAP_SYS_ADMIN)" :
								  "");
	}
	r->files[i] = (struct hook_file){
		.dev = m->dev,
		.inode = m->inode,
		.link = link,
		.in_use = 1,
		.is_go = site->is_go,
		.go = go_proc_of(site),
	};
	r->stats.attaches++;
	r->stats.files_attached++;
	log_info("span hook attached: %s (pid %d, %s%s site)", m->path, pid,
		 site->is_go ? "Go, " : "", offset == site->nop5_offset ? "nop5" : "nop");
	return i;
}

/* The hook file could not be opened or read: logged unless the process or mapping just went
 * (a short-lived process is normal, not news). */
static int open_failed(struct hook_registry *r, pid_t pid, const struct proc_map *m, int err,
		       const char *why)
{
	if (err == -ENOENT || err == -ESRCH)
		return err;
	r->stats.open_refused++;
	return log_warn(err, "span hook candidate %s (pid %d) not opened: %s", m->path, pid,
			why ? why : "cannot open");
}

/* Index of the hook file behind mapping m, attaching it if new; -ENOENT if m has no hook. The
 * file is opened once, by the mapping (hook_open.h), and both parsed and probed through that fd. */
static long hook_file_for(struct hook_registry *r, pid_t pid, const struct proc_map *m)
{
	struct hook_site site;
	const char *why = NULL;
	long idx;
	int fd, err;

	if (!m->inode || is_negative(r, m->dev, m->inode))
		return -ENOENT;
	idx = find_file(r, m->dev, m->inode);
	if (idx >= 0)
		return idx;
	fd = hook_open_mapping(r->limits.proc_root, pid, m, &why);
	if (fd < 0)
		return open_failed(r, pid, m, fd, why);
	err = hook_elf_find_fd(fd, &site);
	if (err == -ENODATA || err == -ENOEXEC || err == -ENOTSUP || err == -EFBIG) {
		if (err == -ENOEXEC)
			r->stats.elf_errors++;
		if (err == -EFBIG) {
			r->stats.oversized++;
			log_warn(err,
				 "span hook candidate %s (pid %d) refused: a section over its size "
				 "cap, or a Go function table over its search budget",
				 m->path, pid);
		}
		if (err == -ENOTSUP)
			log_warn(
				err,
				"Go file %s (pid %d): its goroutine pointer's TLS slot is not known "
				"(a stripped PIE linked externally, or a Go shared library): no "
				"spans for it",
				m->path, pid);
		add_negative(r, m->dev, m->inode);
		idx = -ENOENT;
	} else if (err) {
		idx = open_failed(r, pid, m, err, "cannot read it");
	} else {
		idx = attach_file(r, pid, m, fd, &site);
	}
	close(fd); /* the uprobe holds its own reference to the file */
	return idx;
}

static void release_file(struct hook_registry *r, unsigned int idx)
{
	struct hook_file *f = &r->files[idx];

	if (!f->in_use || --f->users > 0)
		return;
	f->in_use = 0;
	if (!f->link)
		return;
	bpf_link__destroy(f->link);
	f->link = NULL;
	r->stats.detaches++;
	r->stats.files_attached--;
	log_info("span hook detached: device %llu inode %llu (no process maps it)",
		 (unsigned long long)f->dev, (unsigned long long)f->inode);
}

static int contains(const unsigned int *files, unsigned int n, unsigned int idx)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (files[i] == idx)
			return 1;
	return 0;
}

/* Tells the sampler whether p's spans are kept per goroutine, when that changed. */
static void mark_go_pid(struct hook_registry *r, struct hook_pid *p, const unsigned int *files,
			unsigned int n)
{
	struct go_proc go = { 0 };
	int is_go = 0, err;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (r->files[files[i]].is_go && !is_go) {
			is_go = 1;
			go = r->files[files[i]].go;
		}
	if (is_go == p->is_go && !memcmp(&go, &p->go, sizeof(go)))
		return;
	err = loader_set_go_pid(r->loader, p->pid, is_go ? &go : NULL);
	if (err && is_go) {
		r->stats.limit_drops++;
		log_warn(err, "mark pid %d as a Go process: its spans will be missing", p->pid);
		return;
	}
	p->is_go = is_go;
	p->go = go;
}

int hook_registry_update_pid(struct hook_registry *r, pid_t pid, const struct proc_maps *maps)
{
	unsigned int now[FILES_PER_PID], n = 0, i;
	struct hook_pid *p;
	size_t m;
	long idx;

	for (m = 0; m < maps->count && n < FILES_PER_PID; m++) {
		idx = hook_file_for(r, pid, &maps->maps[m]);
		if (idx >= 0 && !contains(now, n, idx))
			now[n++] = idx;
	}
	p = find_pid(r, pid, n > 0);
	if (!p) {
		if (n == 0)
			return 0;
		/* Untracked user: give back files nobody else holds rather than leak their probes. */
		r->stats.limit_drops++;
		for (i = 0; i < n; i++)
			if (r->files[now[i]].users == 0) {
				r->files[now[i]].users = 1;
				release_file(r, now[i]);
			}
		return log_warn(-ENOSPC,
				"pid %d maps a span hook but %zu processes are tracked already",
				pid, r->limits.max_pids);
	}
	for (i = 0; i < n; i++)
		if (!contains(p->files, p->nfiles, now[i]))
			r->files[now[i]].users++;
	for (i = 0; i < p->nfiles; i++)
		if (!contains(now, n, p->files[i]))
			release_file(r, p->files[i]);
	memcpy(p->files, now, n * sizeof(now[0]));
	p->nfiles = n;
	mark_go_pid(r, p, now, n);
	if (n == 0)
		free_pid(r, p);
	return n;
}

void hook_registry_forget_pid(struct hook_registry *r, pid_t pid)
{
	struct hook_pid *p = find_pid(r, pid, 0);
	unsigned int i;

	if (!p)
		return;
	mark_go_pid(r, p, NULL, 0);
	for (i = 0; i < p->nfiles; i++)
		release_file(r, p->files[i]);
	free_pid(r, p);
}

size_t hook_registry_reap(struct hook_registry *r, int (*alive)(void *ctx, pid_t pid), void *ctx)
{
	size_t i, reaped = 0;

	for (i = 0; i < r->pids_end; i++)
		if (r->pids[i].pid && !alive(ctx, r->pids[i].pid)) {
			hook_registry_forget_pid(r, r->pids[i].pid);
			reaped++;
		}
	return reaped;
}

void hook_registry_get_stats(const struct hook_registry *r, struct hook_registry_stats *out)
{
	*out = r->stats;
}
