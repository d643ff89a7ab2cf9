// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process mapping tables for the BPF unwinder, on top of the shared file tables. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>

#include "util/clock.h"
#include "util/log.h"
#include "util/lru.h"
#include "unwind/unwind.h"

/* Processes waiting for a table are published again at most this often (well within the 1 s a
 * new process or library has to be unwound correctly). */
#define REPUBLISH_NS (200 * 1000 * 1000ull)

/* Files a waiting process remembers it waits for: it is published again (its maps read) once
 * one of them is done. One with more waits for these first, then for the rest. */
#define WAIT_FILES 4

struct pid_entry {
	struct lru_node node; /* k1 = pid */
	uint64_t sampled_round; /* the last drain round its samples were noted in */
	uint64_t sig; /* hash of the last value written */
	int pending; /* mappings whose table was being built at the last publish */
	int ready_logged;
	int nwait;
	uint64_t wait[WAIT_FILES][2]; /* unwind_file_ref keys of files it waits for */
	/* With publish_on_sample, until its first sample: its mappings as the last scan found
	 * them (nheld of them, a few hundred bytes for most processes, against 8 KiB in the
	 * kernel's procs map). */
	int published;
	uint32_t nheld;
	struct spanprof_unwind_mapping *held;
};

struct unwind {
	struct unwind_options opts;
	struct unwind_store *store;
	struct unwind_worker *worker;
	struct unwind_files *files;
	struct lru pids;
	uint64_t mappings_dropped, anon_dropped, publish_errors;
	int republish; /* tables finished since the last pass over the waiting processes */
	uint64_t last_republish_ns;
	struct spanprof_unwind_proc value; /* scratch for one publish */
	uint64_t wait[WAIT_FILES][2]; /* the files that publish waits for (scratch) */
	int nwait;
	struct spanprof_unwind_proc sampled; /* scratch for unwind_note_sampled */
	uint64_t round; /* drain rounds (unwind_new_round) */
};

struct unwind *unwind_new(const struct unwind_options *opts)
{
	struct unwind *u = calloc(1, sizeof(*u));
	struct unwind_files_options fo = { 0 };

	if (!u)
		return NULL;
	u->opts = *opts;
	u->store = unwind_store_new(&opts->fds, opts->nchunks);
	u->worker = u->store ? unwind_worker_new() : NULL;
	fo.store = u->store;
	fo.worker = u->worker;
	fo.proc_root = opts->proc_root;
	fo.max_files = opts->max_files;
	u->files = u->worker ? unwind_files_new(&fo) : NULL;
	if (!u->files || lru_init(&u->pids, opts->max_pids)) {
		log_err(-ENOMEM, "set up native unwinding");
		unwind_free(u);
		errno = ENOMEM;
		return NULL;
	}
	return u;
}

static void drop_pid(struct unwind *u, struct pid_entry *p)
{
	__u32 key = p->node.k1;

	if (p->published)
		bpf_map_delete_elem(u->opts.procs_fd, &key);
	lru_del(&u->pids, &p->node);
	free(p->held);
	free(p);
}

void unwind_free(struct unwind *u)
{
	struct lru_node *n;

	if (!u)
		return;
	while (u->pids.buckets && (n = lru_oldest(&u->pids)))
		drop_pid(u, lru_entry(n, struct pid_entry, node));
	lru_release(&u->pids);
	/* The worker first: its jobs point at entries of the file cache. */
	unwind_worker_free(u->worker);
	unwind_files_free(u->files);
	unwind_store_free(u->store);
	free(u);
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/* Appends file mapping fm; returns 1 when it waits for its table. */
static int add_file(struct unwind *u, pid_t pid, const struct proc_map *fm)
{
	struct spanprof_unwind_mapping *m = &u->value.maps[u->value.nmaps++];
	struct unwind_file_ref ref;

	m->start = fm->start;
	m->end = fm->end;
	m->bias = 0;
	m->gen = 0;
	m->table = SPANPROF_UNWIND_TABLE_FP;
	if (unwind_files_resolve(u->files, pid, fm, &ref))
		return 0; /* a pseudo file ([anon:name], [heap]) or unreadable: frame pointers */
	m->bias = ref.bias;
	if (ref.state == UNWIND_FILE_READY) {
		m->table = ref.table;
		m->gen = ref.gen;
	} else if (ref.state == UNWIND_FILE_PENDING) {
		m->table = SPANPROF_UNWIND_TABLE_PENDING;
		if (u->nwait < WAIT_FILES) {
			u->wait[u->nwait][0] = ref.key[0];
			u->wait[u->nwait++][1] = ref.key[1];
		}
		return 1;
	}
	return 0;
}

/* Anonymous executable memory (JIT code) is walked by frame pointer. */
static void add_anon(struct unwind *u, const struct proc_range *r)
{
	struct spanprof_unwind_mapping *m = &u->value.maps[u->value.nmaps++];

	m->start = r->start;
	m->end = r->end;
	m->bias = 0;
	m->gen = 0;
	m->table = SPANPROF_UNWIND_TABLE_FP;
}

/* How many of maps' file mappings the BPF search can hold ([vsyscall] lies in the kernel's
 * half: no user PC is there, and the search compares addresses below SPANPROF_UNWIND_ADDR_END
 * only). */
static size_t user_files(const struct proc_maps *maps)
{
	size_t i, n = 0;

	for (i = 0; i < maps->count; i++)
		n += maps->maps[i].end <= SPANPROF_UNWIND_ADDR_END;
	return n;
}

/* Fills u->value from maps, in address order; returns how many mappings wait for a table.
 * Files come first when there are more than SPANPROF_UNWIND_MAX_MAPPINGS executable mappings
 * (they have CFI): anonymous ranges get the slots left. */
static int fill(struct unwind *u, pid_t pid, const struct proc_maps *maps)
{
	struct spanprof_unwind_proc *v = &u->value;
	size_t files = user_files(maps), i = 0, j = 0, anon_room, dropped = 0;
	int pending = 0;

	anon_room = files < SPANPROF_UNWIND_MAX_MAPPINGS ? SPANPROF_UNWIND_MAX_MAPPINGS - files : 0;
	v->nmaps = 0;
	u->nwait = 0;
	while (i < maps->count || j < maps->anon_count) {
		if (j < maps->anon_count &&
		    (i == maps->count || maps->anon[j].start < maps->maps[i].start)) {
			if (anon_room) {
				add_anon(u, &maps->anon[j]);
				anon_room--;
			} else {
				u->anon_dropped++;
				dropped++;
			}
			j++;
		} else if (maps->maps[i].end > SPANPROF_UNWIND_ADDR_END) {
			i++;
		} else if (v->nmaps == SPANPROF_UNWIND_MAX_MAPPINGS) {
			u->mappings_dropped++;
			dropped++;
			i++;
		} else {
			pending += add_file(u, pid, &maps->maps[i++]);
		}
	}
	if (dropped)
		log_debug(
			"unwind: pid %d has %zu executable mappings and %zu anonymous code ranges, "
			"%zu are not unwound (at most %d)",
			pid, files, maps->anon_count, dropped, SPANPROF_UNWIND_MAX_MAPPINGS);
	for (i = v->nmaps; i < SPANPROF_UNWIND_MAX_MAPPINGS; i++) {
		memset(&v->maps[i], 0, sizeof(v->maps[i]));
		v->maps[i].start = SPANPROF_UNWIND_ADDR_END;
	}
	return pending;
}

static struct pid_entry *pid_entry(struct unwind *u, pid_t pid)
{
	struct lru_node *n = lru_find(&u->pids, pid, 0);
	struct pid_entry *p;

	if (n) {
		lru_touch(&u->pids, n);
		return lru_entry(n, struct pid_entry, node);
	}
	while (u->pids.count >= u->opts.max_pids && (n = lru_oldest(&u->pids)))
		drop_pid(u, lru_entry(n, struct pid_entry, node));
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->node.k1 = pid;
	lru_add(&u->pids, &p->node);
	return p;
}

static void log_ready(const struct unwind *u, pid_t pid)
{
	unsigned int i, tables = 0;

	for (i = 0; i < u->value.nmaps; i++)
		tables += u->value.maps[i].table < SPANPROF_UNWIND_MAX_TABLES;
	log_debug("unwind: pid %d ready: %u mappings, %u with CFI tables", pid, u->value.nmaps,
		  tables);
}

/* Keeps u->value's mappings in p until the process is first sampled. Returns 0 or -ENOMEM. */
static int hold(struct unwind *u, struct pid_entry *p)
{
	struct spanprof_unwind_mapping *m = NULL;
	size_t n = u->value.nmaps;

	if (n) {
		m = realloc(p->held, n * sizeof(*m));
		if (!m)
			return -ENOMEM;
		memcpy(m, u->value.maps, n * sizeof(*m));
	} else {
		free(p->held);
	}
	p->held = m;
	p->nheld = n;
	return 0;
}

/* Publishes the mappings held for p (its first sample came). Returns 0 or -errno. */
static int publish_held(struct unwind *u, struct pid_entry *p)
{
	struct spanprof_unwind_proc *v = &u->value;
	__u32 key = p->node.k1, i;

	v->nmaps = p->nheld;
	if (p->nheld)
		memcpy(v->maps, p->held, p->nheld * sizeof(v->maps[0]));
	for (i = p->nheld; i < SPANPROF_UNWIND_MAX_MAPPINGS; i++) {
		memset(&v->maps[i], 0, sizeof(v->maps[i]));
		v->maps[i].start = SPANPROF_UNWIND_ADDR_END;
	}
	if (bpf_map_update_elem(u->opts.procs_fd, &key, v, BPF_ANY)) {
		u->publish_errors++;
		log_debug("publish mappings of pid %u: %s", key, strerror(errno));
		return -errno;
	}
	free(p->held);
	p->held = NULL;
	p->nheld = 0;
	p->published = 1;
	return 0;
}

void unwind_scan_pid(struct unwind *u, pid_t pid, const struct proc_maps *maps)
{
	struct pid_entry *p;
	__u32 key = pid;
	uint64_t sig;
	int pending;

	if (!u || !maps->count)
		return; /* a kernel thread, or gone: the sampler takes frame pointers */
	pending = fill(u, pid, maps);
	p = pid_entry(u, pid);
	if (!p)
		return;
	/* The mappings past nmaps are a function of nmaps (fill() sets them), so the used part
	 * says whether the value changed: a few hundred bytes hashed instead of 8 KiB, on every
	 * scan of every process. */
	sig = hash_bytes(&u->value, offsetof(struct spanprof_unwind_proc, maps) +
					    u->value.nmaps * sizeof(u->value.maps[0]));
	if (!p->published && !u->opts.publish_on_sample)
		p->published = 1; /* published just below */
	if (sig != p->sig && !p->published) {
		if (hold(u, p))
			return;
		p->sig = sig;
	} else if (sig != p->sig) {
		if (bpf_map_update_elem(u->opts.procs_fd, &key, &u->value, BPF_ANY)) {
			u->publish_errors++;
			log_debug("publish mappings of pid %d: %s", pid, strerror(errno));
			return;
		}
		p->sig = sig;
	}
	p->pending = pending;
	p->nwait = u->nwait;
	memcpy(p->wait, u->wait, sizeof(p->wait));
	if (pending)
		p->ready_logged = 0;
	else if (!p->ready_logged) {
		log_ready(u, pid);
		p->ready_logged = 1;
	}
}

void unwind_new_round(struct unwind *u)
{
	if (u)
		u->round++;
}

void unwind_note_sampled(struct unwind *u, pid_t pid)
{
	struct lru_node *n = u ? lru_find(&u->pids, pid, 0) : NULL;
	struct pid_entry *p = n ? lru_entry(n, struct pid_entry, node) : NULL;
	__u32 key = pid, i;

	if (!p || p->sampled_round == u->round)
		return;
	p->sampled_round = u->round;
	if (!p->published && publish_held(u, p))
		return;
	/* What the unwinder used for it: the mappings as last published. */
	if (bpf_map_lookup_elem(u->opts.procs_fd, &key, &u->sampled))
		return;
	for (i = 0; i < u->sampled.nmaps && i < SPANPROF_UNWIND_MAX_MAPPINGS; i++)
		unwind_files_note_sampled(u->files, u->sampled.maps[i].table,
					  u->sampled.maps[i].gen);
}

void unwind_forget_pid(struct unwind *u, pid_t pid)
{
	struct lru_node *n = u ? lru_find(&u->pids, pid, 0) : NULL;

	if (n)
		drop_pid(u, lru_entry(n, struct pid_entry, node));
}

/* Processes whose last publish waited for a table. */
/* 1 when p waits for a table and one it waits for is done: its maps are worth reading again.
 * Until then a waiting process costs a few hash lookups per pass, not a /proc read. */
static int wait_over(const struct unwind *u, const struct pid_entry *p)
{
	int i;

	if (!p->pending)
		return 0;
	for (i = 0; i < p->nwait; i++)
		if (!unwind_files_pending(u->files, p->wait[i]))
			return 1;
	return !p->nwait;
}

static size_t waiting_pids(struct unwind *u, pid_t **out)
{
	struct lru_node *n;
	size_t count = 0;
	pid_t *pids;

	pids = malloc(u->pids.count * sizeof(*pids) + 1);
	if (!pids)
		return 0;
	for (n = lru_oldest(&u->pids); n; n = lru_newer(&u->pids, n))
		if (wait_over(u, lru_entry(n, struct pid_entry, node)))
			pids[count++] = n->k1;
	*out = pids;
	return count;
}

uint64_t unwind_poll(struct unwind *u)
{
	struct proc_maps maps;
	pid_t *pids = NULL;
	uint64_t now;
	size_t n, i;

	if (!u)
		return UINT64_MAX;
	if (unwind_files_poll(u->files))
		u->republish = 1;
	/* At start a node has hundreds of tables to build and processes waiting for them: one
	 * pass over the waiting processes per REPUBLISH_NS, not one per finished table. */
	now = clock_mono_ns();
	if (!u->republish)
		return UINT64_MAX;
	if (now - u->last_republish_ns < REPUBLISH_NS)
		return u->last_republish_ns + REPUBLISH_NS;
	u->republish = 0;
	u->last_republish_ns = now;
	n = waiting_pids(u, &pids);
	for (i = 0; i < n; i++) {
		if (proc_maps_read_at(u->opts.proc_root, pids[i], &maps)) {
			unwind_forget_pid(u, pids[i]);
			continue;
		}
		unwind_scan_pid(u, pids[i], &maps);
		proc_maps_release(&maps);
	}
	free(pids);
	return UINT64_MAX;
}

int unwind_wake_fd(const struct unwind *u)
{
	return u ? unwind_worker_done_fd(u->worker) : -1;
}

void unwind_get_stats(const struct unwind *u, struct unwind_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!u)
		return;
	unwind_files_get_stats(u->files, &out->files);
	unwind_store_get_stats(u->store, &out->store);
	out->pids = u->pids.count;
	out->mappings_dropped = u->mappings_dropped;
	out->anon_dropped = u->anon_dropped;
	out->publish_errors = u->publish_errors;
}
