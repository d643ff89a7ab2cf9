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
#include "agent/hook_negative.h"
#include "agent/hook_pids.h"
#include "agent/hook_registry.h"
#include "discover/hook_parser.h"
#include "discover/hook_slots.h"
#include "discover/link_reaper.h"
#include "spanprof_abi.h"
#include "agent/loader.h"
#include "util/log.h"
#include "util/proc_file.h"

/* Threads that remove uprobes, so that the run loop removes none: the kernel takes about 0.1 s
 * per removal and does them one at a time, so more threads would only wait on each other. */
#define DETACH_THREADS 2
#define PATH_KEPT 128 /* bytes of a hook file's path kept for logs */
/* Uprobes the agent removes itself when it stops: none. Even two removals, about 0.5 s each on a
 * loaded node, would delay the exit past what a SIGTERM allows, and a fork costs milliseconds. */
#define HAND_OFF_AT_EXIT 0

struct hook_file {
	uint64_t dev, inode;
	uid_t uid; /* real uid of the process it was attached for: whose share it counts in */
	char path[PATH_KEPT]; /* as that process's maps named it, for logs */
	struct bpf_link *link; /* NULL: nothing probed (a Go runtime: labels only) */
	int in_use; /* 0: free slot */
	size_t users;
	int is_go; /* a Go executable: its users' samples look spans up by goroutine */
	struct go_proc go; /* where its goroutines keep pprof labels */
};

struct file_id {
	uint64_t dev, inode;
};

struct hook_registry {
	struct loader *loader;
	struct hook_registry_limits limits;
	struct hook_file *files;
	struct hook_pids pids; /* grows with the processes that map hook files */
	struct link_reaper *reaper; /* destroys detached links off the run loop */
	struct hook_parser *parser; /* parses new files off the run loop */
	struct hook_slot *view; /* max_files: what the fair-share rule sees of files */
	struct hook_negative negative; /* files without a usable hook */
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
	r->files = calloc(limits->max_files, sizeof(*r->files));
	r->reaper = link_reaper_new(DETACH_THREADS, limits->max_files);
	r->parser = hook_parser_new();
	r->view = calloc(limits->max_files, sizeof(*r->view));
	if (!r->files || hook_pids_init(&r->pids, limits->max_pids) ||
	    hook_negative_init(&r->negative, limits->max_negative) || !r->reaper || !r->parser ||
	    !r->view) {
		hook_registry_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

/* See hook_registry_free(): the holder keeps the attached links' descriptors. */
static void hand_off_links(struct hook_registry *r)
{
	int *fds = calloc(r->limits.max_files, sizeof(*fds));
	size_t i, n = 0;

	for (i = 0; fds && i < r->limits.max_files; i++)
		if (r->files[i].link && bpf_link__fd(r->files[i].link) >= 0)
			fds[n++] = bpf_link__fd(r->files[i].link);
	if (fds && link_reaper_hand_off(r->reaper, fds, n))
		log_debug("uprobes removed by the agent itself: no holder process");
	free(fds);
}

void hook_registry_stop_parses(struct hook_registry *r)
{
	if (r)
		hook_parser_stop(r->parser);
}

void hook_registry_free(struct hook_registry *r)
{
	size_t i;

	if (!r)
		return;
	hook_parser_free(r->parser);
	/* Removing a uprobe takes the kernel about 0.1 s, one at a time (more when the node is
	 * loaded): a holder process inherits them and removes them as it exits, so the agent stops
	 * at once. */
	if (r->reaper && r->stats.files_attached > HAND_OFF_AT_EXIT)
		hand_off_links(r);
	for (i = 0; r->files && i < r->limits.max_files; i++)
		if (r->reaper)
			link_reaper_push(r->reaper, r->files[i].link);
		else
			bpf_link__destroy(r->files[i].link);
	link_reaper_free(r->reaper);
	free(r->view);
	free(r->files);
	hook_pids_release(&r->pids);
	hook_negative_release(&r->negative);
	free(r);
}

static long find_file(const struct hook_registry *r, uint64_t dev, uint64_t inode)
{
	size_t i;

	for (i = 0; i < r->limits.max_files; i++)
		if (r->files[i].in_use && r->files[i].dev == dev && r->files[i].inode == inode)
			return i;
	return -1;
}

static struct go_proc go_proc_of(const struct hook_site *site)
{
	return (struct go_proc){ .labels_offset = site->go_labels_offset,
				 .labels_kind = site->go_labels_kind,
				 .m_offset = site->go_m_offset,
				 .curg_offset = site->go_curg_offset,
				 .g_tls_offset = site->go_g_offset,
				 .goid_offset = site->go_goid_offset };
}

static int contains(const unsigned int *files, unsigned int n, unsigned int idx);
static void detach_file(struct hook_registry *r, unsigned int idx);
static void mark_go_pid(struct hook_registry *r, struct hook_pid *p, const unsigned int *files,
			unsigned int n);

/* Takes file idx from the processes that map it (they keep their other hook files). */
static void reclaim_file(struct hook_registry *r, unsigned int idx)
{
	struct hook_pid *p;
	unsigned int k;
	size_t i;

	for (i = 0; i < r->pids.end; i++) {
		p = &r->pids.slots[i];
		if (!p->pid || !contains(p->files, p->nfiles, idx))
			continue;
		for (k = 0; k < p->nfiles; k++)
			if (p->files[k] == idx)
				p->files[k--] = p->files[--p->nfiles];
		mark_go_pid(r, p, p->files, p->nfiles);
	}
	r->files[idx].users = 0;
	detach_file(r, idx);
}

/* A slot for a new hook file of uid's process pid, fair to other users (hook_slots.h): a free
 * one, or one taken back from the user holding the most (logged, counted); -ENOSPC (logged,
 * counted) when uid holds its share already. */
static long take_slot(struct hook_registry *r, uid_t uid, pid_t pid, const char *path)
{
	struct hook_slot_pick pick;
	size_t i;
	int err;

	for (i = 0; i < r->limits.max_files; i++)
		r->view[i] = (struct hook_slot){ r->files[i].in_use, r->files[i].uid,
						 r->files[i].users };
	err = hook_slots_pick(r->view, r->limits.max_files, uid, &pick);
	if (err) {
		r->stats.limit_drops++;
		r->stats.slot_refusals++;
		return log_warn_from(pid, err,
				     "hook in %s (pid %d, uid %u) not attached: %zu hook files "
				     "already, and its user holds its share (%zu) of them",
				     path, pid, (unsigned int)uid, r->limits.max_files, pick.share);
	}
	if (pick.reclaim) {
		r->stats.slot_reclaims++;
		log_warn_from(pid, -ENOSPC,
			      "hook files full: detached %s (uid %u holds more than its share of "
			      "%zu) for %s (pid %d, uid %u, below its share)",
			      r->files[pick.slot].path, (unsigned int)pick.from, pick.share, path,
			      pid, (unsigned int)uid);
		reclaim_file(r, pick.slot);
	}
	return pick.slot;
}

/* Attaches the uprobe for a new hook file, open as fd: the kernel resolves /proc/self/fd/N to
 * that open file, so the probe goes into the inode that was parsed. Returns its index or -errno. */
static long attach_file(struct hook_registry *r, pid_t pid, const struct proc_map *m, int fd,
			const struct hook_site *site)
{
	uint64_t offset =
		r->limits.use_nop5 && site->nop5_offset ? site->nop5_offset : site->site_offset;
	uid_t uid = 0, euid;
	struct bpf_link *link;
	char path[32];
	long i;

	/* The real uid: /proc/PID's owner would say root for a process that made itself
	 * non-dumpable. Unreadable: the process is going, nothing is attached for it. */
	if (proc_file_uids(r->limits.proc_root, pid, &uid, &euid))
		return -ESRCH;
	i = take_slot(r, uid, pid, m->path);
	if (i < 0)
		return i;
	if (!site->site_offset) {
		/* A Go runtime without the hook: nothing to probe, its labels are read. */
		r->files[i] = (struct hook_file){ .dev = m->dev,
						  .inode = m->inode,
						  .uid = uid,
						  .in_use = 1,
						  .is_go = 1,
						  .go = go_proc_of(site) };
		snprintf(r->files[i].path, sizeof(r->files[i].path), "%s", m->path);
		log_info("Go executable %s (pid %d): span labels read from pprof labels", m->path,
			 pid);
		return i;
	}
	link = loader_attach_hook(
		r->loader, hook_open_fd_path(fd, path, sizeof(path)), offset,
		site->semaphore_offset, site->is_go ? LOADER_HOOK_GO : LOADER_HOOK_C,
		site->is_go ? SPANPROF_GO_COOKIE(site->go_g_offset, site->go_goid_offset) : 0);
	if (!link) {
		int err = -errno;

		r->stats.attach_errors++;
		return log_warn_from(
			pid, err, "attach span hook to %s (pid %d, offset 0x%llx)%s", m->path, pid,
			(unsigned long long)offset,
			err == -EPERM || err == -EACCES ? " (uprobes need CAP_SYS_ADMIN)" : "");
	}
	r->files[i] = (struct hook_file){
		.dev = m->dev,
		.inode = m->inode,
		.uid = uid,
		.link = link,
		.in_use = 1,
		.is_go = site->is_go,
		.go = go_proc_of(site),
	};
	snprintf(r->files[i].path, sizeof(r->files[i].path), "%s", m->path);
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
	return log_warn_from(pid, err, "span hook candidate %s (pid %d) not opened: %s", m->path,
			     pid, why ? why : "cannot open");
}

/* A file the parser found without a usable hook: logged with the path and pid it was found
 * for, and remembered, so it is not parsed again. */
static void refuse_file(struct hook_registry *r, const struct hook_parse_result *res)
{
	pid_t pid = res->pid;
	int err = res->err;

	if (err == -ENOEXEC)
		r->stats.elf_errors++;
	if (err == -EFBIG) {
		r->stats.oversized++;
		log_warn_from(
			pid, err,
			"span hook candidate %s (pid %d) refused: a section over its size cap, "
			"or a Go function table over its search budget",
			res->path, pid);
	}
	if (err == -EPROTONOSUPPORT)
		log_warn_from(
			pid, err,
			"Go executable %s (pid %d, %s): runtime layout unknown to this agent: "
			"no spans for its goroutines (%s, pprof labels and inheritance are "
			"off; supported: go1.18-go1.26)",
			res->path, pid, res->site.go_version,
			res->site.site_offset ? "span hook not attached" : "no span hook");
	if (err == -ENOTSUP)
		log_warn_from(
			pid, err,
			"Go file %s (pid %d): its goroutine pointer's TLS slot is not known (a "
			"stripped PIE linked externally, or a Go shared library): no spans for "
			"it",
			res->path, pid);
	hook_negative_add(&r->negative, res->dev, res->inode);
}

static int is_refusal(int err)
{
	return err == -ENODATA || err == -ENOEXEC || err == -ENOTSUP || err == -EPROTONOSUPPORT ||
	       err == -EFBIG;
}

/* hook_parser_poll()'s callback: a refusal is settled at once; a file with a hook is kept for
 * its waiters' rescan, which attaches it (the attach needs the process's current mapping). */
static int on_parsed(void *ctx, const struct hook_parse_result *res)
{
	struct hook_registry *r = ctx;

	if (is_refusal(res->err)) {
		refuse_file(r, res);
		return 0;
	}
	if (res->err) {
		if (res->err != -ENOENT && res->err != -ESRCH) {
			r->stats.open_refused++;
			log_warn_from(res->pid, res->err,
				      "span hook candidate %s (pid %d) not opened: cannot read it",
				      res->path, res->pid);
		}
		return 0;
	}
	return 1;
}

/* Sends mapping m's file to the parser; -EINPROGRESS when queued (the process is rescanned
 * once the verdict is in), or an error. */
static long submit_parse(struct hook_registry *r, pid_t pid, const struct proc_map *m)
{
	struct hook_parse_request req = {
		.dev = m->dev, .inode = m->inode, .pid = pid, .path = m->path
	};
	const char *why = NULL;
	uid_t euid;
	int err;

	if (proc_file_uids(r->limits.proc_root, pid, &req.uid, &euid))
		return -ESRCH;
	req.fd = hook_open_mapping(r->limits.proc_root, pid, m, &why);
	if (req.fd < 0)
		return open_failed(r, pid, m, req.fd, why);
	err = hook_parser_submit(r->parser, &req);
	if (err) {
		/* Not lost: counted (hook_parse_deferred), and pid is scanned again once a
		 * parse finishes. */
		close(req.fd);
		log_debug("span hook candidate %s (pid %d, uid %u) waits: %d files are being "
			  "parsed, or its user's half of them",
			  m->path, pid, (unsigned int)req.uid, HOOK_PARSER_JOBS);
		return err;
	}
	return -EINPROGRESS;
}

/* Index of the hook file behind mapping m, attaching it if its parse found a hook; -ENOENT if
 * m has no hook; -EINPROGRESS while it is being parsed. The file is opened once, by the mapping
 * (hook_open.h), and both parsed (off the run loop, hook_parser.h) and probed through that fd. */
static long hook_file_for(struct hook_registry *r, pid_t pid, const struct proc_map *m)
{
	struct hook_parse_result res;
	long idx;
	int found;

	if (!m->inode || hook_negative_has(&r->negative, m->dev, m->inode))
		return -ENOENT;
	idx = find_file(r, m->dev, m->inode);
	if (idx >= 0)
		return idx;
	found = hook_parser_claim(r->parser, m->dev, m->inode, pid, &res);
	if (found == 0)
		return submit_parse(r, pid, m);
	if (found == 1)
		return -EINPROGRESS;
	if (res.site.go_layout_from_dwarf)
		log_info("Go executable %s (pid %d, %s): runtime layout read from its DWARF",
			 m->path, pid, res.site.go_version);
	idx = attach_file(r, pid, m, res.fd, &res.site);
	close(res.fd); /* the uprobe holds its own reference to the file */
	return idx;
}

size_t hook_registry_poll(struct hook_registry *r, uint64_t now_ns, pid_t *rescan, size_t max)
{
	return hook_parser_poll(r->parser, now_ns, on_parsed, r, rescan, max);
}

int hook_registry_wake_fd(const struct hook_registry *r)
{
	return hook_parser_wake_fd(r->parser);
}

/* Detaches file idx (its link goes to the reaper) and frees its slot. */
static void detach_file(struct hook_registry *r, unsigned int idx)
{
	struct hook_file *f = &r->files[idx];

	f->in_use = 0;
	if (!f->link)
		return;
	link_reaper_push(r->reaper, f->link);
	f->link = NULL;
	r->stats.detaches++;
	r->stats.files_attached--;
}

static void release_file(struct hook_registry *r, unsigned int idx)
{
	struct hook_file *f = &r->files[idx];

	if (!f->in_use || --f->users > 0)
		return;
	detach_file(r, idx);
	log_info("span hook detached: %s (device %llu inode %llu; no process maps it)", f->path,
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
		r->stats.go_pids_full += err == -E2BIG;
		log_warn_from(p->pid, err, "mark pid %d as a Go process: its spans will be missing",
			      p->pid);
		return;
	}
	p->is_go = is_go;
	p->go = go;
}

int hook_registry_update_pid(struct hook_registry *r, pid_t pid, const struct proc_maps *maps,
			     int *waiting)
{
	unsigned int now[HOOK_PID_FILES], n = 0, i, j, kept;
	struct file_id ids[HOOK_PID_FILES];
	struct hook_pid *p;
	int err = 0;
	size_t m;
	long idx;

	for (m = 0; m < maps->count && n < HOOK_PID_FILES; m++) {
		idx = hook_file_for(r, pid, &maps->maps[m]);
		/* -EINPROGRESS: parsing; -ENOSPC: the parser is full (hook_parser_submit). */
		if (idx == -EINPROGRESS || idx == -ENOSPC)
			*waiting = 1;
		if (idx < 0)
			continue;
		for (j = 0; j < n && now[j] != (unsigned int)idx; j++)
			;
		/* A slot seen before in this loop holds what was found last: the same file mapped
		 * twice, or a file that reclaimed the slot of one found earlier. */
		ids[j] = (struct file_id){ r->files[idx].dev, r->files[idx].inode };
		if (j == n)
			now[n++] = idx;
	}
	/* A later file of this loop may have reclaimed the slot of an earlier one (held by
	 * another user): keep only the slots that still hold the file found. */
	for (i = kept = 0; i < n; i++)
		if (r->files[now[i]].in_use && r->files[now[i]].dev == ids[i].dev &&
		    r->files[now[i]].inode == ids[i].inode)
			now[kept++] = now[i];
	n = kept;
	p = hook_pids_find(&r->pids, pid);
	if (!p && n == 0)
		return 0;
	if (!p)
		err = hook_pids_add(&r->pids, pid, &p);
	if (err) {
		/* Untracked user: give back files nobody else holds rather than leak their probes.
		 */
		r->stats.limit_drops++;
		for (i = 0; i < n; i++)
			if (r->files[now[i]].users == 0) {
				r->files[now[i]].users = 1;
				release_file(r, now[i]);
			}
		if (err == -ENOSPC)
			return log_warn_from(
				pid, err,
				"pid %d maps a span hook but %zu processes are tracked already",
				pid, r->limits.max_pids);
		return log_warn_from(pid, err,
				     "pid %d maps a span hook but the table of %zu processes "
				     "could not grow",
				     pid, r->pids.cap);
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
		hook_pids_remove(&r->pids, p);
	return n;
}

void hook_registry_forget_pid(struct hook_registry *r, pid_t pid)
{
	struct hook_pid *p = hook_pids_find(&r->pids, pid);
	unsigned int i;

	if (!p)
		return;
	mark_go_pid(r, p, NULL, 0);
	for (i = 0; i < p->nfiles; i++)
		release_file(r, p->files[i]);
	hook_pids_remove(&r->pids, p);
}

size_t hook_registry_reap(struct hook_registry *r, int (*alive)(void *ctx, pid_t pid), void *ctx)
{
	size_t i, reaped = 0;

	for (i = 0; i < r->pids.end; i++)
		if (r->pids.slots[i].pid && !alive(ctx, r->pids.slots[i].pid)) {
			hook_registry_forget_pid(r, r->pids.slots[i].pid);
			reaped++;
		}
	return reaped;
}

void hook_registry_get_stats(struct hook_registry *r, struct hook_registry_stats *out)
{
	struct link_reaper_stats rs;
	struct hook_parser_stats ps;

	link_reaper_get_stats(r->reaper, &rs);
	hook_parser_get_stats(r->parser, &ps);
	*out = r->stats;
	out->pids_tracked = r->pids.count;
	out->pid_table_full = r->pids.full;
	out->negative_resets = r->negative.resets;
	out->detach_pending = rs.pending;
	out->parse_pending = ps.pending;
	out->parse_deferred = ps.deferred;
	out->parses = ps.parsed;
}
