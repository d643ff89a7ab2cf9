// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-file unwind tables shared across processes (unwind_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "discover/map_open.h"
#include "unwind/unwind_files.h"
#include "util/clock.h"
#include "util/elf_guard.h"
#include "util/elf_section.h"
#include "util/log.h"
#include "util/lru.h"
#include "util/proc_file.h"

#define MAX_SEGS 16
/* Key tags (k1's top bits) so build ids, device/inode pairs and the vDSO never collide. */
#define KEY_DEVINO (1ull << 63)
#define KEY_VDSO (1ull << 62)
#define VDSO_PATH "[vdso]"

struct seg {
	uint64_t vaddr, offset, filesz;
};

struct alias;

struct file {
	/* By build id, or the alias's key when the file has none. Recency: the last window in which
	 * a process using its table was sampled (or its table was stored). */
	struct lru_node node;
	enum unwind_file_state state;
	uint64_t evicted_ns; /* EVICTED: when */
	uint64_t sampled_ns; /* last noted in a sampled process (0: never) */
	uid_t uid; /* real uid of the process that mapped it first: whose share it counts in */
	uint32_t chunks; /* READY: chunks its table holds */
	char *path; /* as first mapped, for logs */
	uint32_t table, gen;
	struct seg segs[MAX_SEGS];
	unsigned int nsegs;
	struct alias *aliases;
};

/* A device/inode pair under which a file was seen (a container's copy has its own). */
struct alias {
	struct lru_node node;
	struct file *file;
	struct alias *next;
};

struct unwind_files {
	struct unwind_files_options opts;
	struct lru files; /* recency: see struct file */
	struct lru aliases; /* (dev, inode) -> file */
	/* Table slot -> the file whose table it holds or last held (EVICTED), so that samples
	 * can be traced to files. */
	struct file *by_table[SPANPROF_UNWIND_MAX_TABLES];
	struct unwind_files_stats stats;
};

struct unwind_files *unwind_files_new(const struct unwind_files_options *opts)
{
	struct unwind_files *fs = calloc(1, sizeof(*fs));

	if (!fs)
		return NULL;
	fs->opts = *opts;
	if (lru_init(&fs->files, opts->max_files) || lru_init(&fs->aliases, opts->max_files)) {
		unwind_files_free(fs);
		errno = ENOMEM;
		return NULL;
	}
	return fs;
}

static void free_file(struct unwind_files *fs, struct file *f)
{
	struct alias *a, *next;

	for (a = f->aliases; a; a = next) {
		next = a->next;
		lru_del(&fs->aliases, &a->node);
		free(a);
	}
	if (f->state == UNWIND_FILE_READY)
		unwind_store_drop(fs->opts.store, f->table);
	if (f->table < SPANPROF_UNWIND_MAX_TABLES && fs->by_table[f->table] == f)
		fs->by_table[f->table] = NULL;
	fs->stats.files[f->state]--;
	lru_del(&fs->files, &f->node);
	free(f->path);
	free(f);
}

void unwind_files_free(struct unwind_files *fs)
{
	struct lru_node *n;

	if (!fs)
		return;
	while (fs->files.buckets && (n = lru_oldest(&fs->files)))
		free_file(fs, lru_entry(n, struct file, node));
	lru_release(&fs->files);
	lru_release(&fs->aliases);
	free(fs);
}

static void set_state(struct unwind_files *fs, struct file *f, enum unwind_file_state s)
{
	fs->stats.files[f->state]--;
	f->state = s;
	fs->stats.files[s]++;
}

/* Who holds the table memory, in one pass over the files. */
struct holders {
	uint64_t mine; /* chunks of uid's tables */
	size_t users; /* users holding tables, uid counted */
	uid_t top; /* the user holding the most chunks */
};

#define MAX_HOLDERS 64 /* users told apart; more share the last entry's count */

static void count_holders(struct unwind_files *fs, uid_t uid, struct holders *out)
{
	struct {
		uid_t uid;
		uint64_t chunks;
	} h[MAX_HOLDERS];
	size_t n = 0, i, best = 0;
	struct lru_node *node;
	struct file *f;

	for (node = lru_oldest(&fs->files); node; node = lru_newer(&fs->files, node)) {
		f = lru_entry(node, struct file, node);
		if (f->state != UNWIND_FILE_READY)
			continue;
		for (i = 0; i < n && h[i].uid != f->uid; i++)
			;
		if (i == n && n < MAX_HOLDERS) {
			h[n].uid = f->uid;
			h[n++].chunks = 0;
		}
		h[i < n ? i : n - 1].chunks += f->chunks;
	}
	*out = (struct holders){ .users = n, .top = uid };
	for (i = 0; i < n; i++) {
		if (h[i].uid == uid)
			out->mine = h[i].chunks;
		if (h[i].chunks > best) {
			best = h[i].chunks;
			out->top = h[i].uid;
		}
	}
	out->users += !out->mine;
}

/* Makes room in the BPF maps for a table of `want` (a file of uid): the least recently sampled
 * table of the user holding the most goes, and its file is remembered as evicted; a user
 * already at its share (the budget divided among the users holding tables) only evicts its own
 * tables. Returns 0, -ENOSPC (no table to evict) or -EDQUOT (uid at its share, none of its
 * own to evict). */
static int evict_table(struct unwind_files *fs, const struct file *want)
{
	struct unwind_store_stats ss;
	struct holders h;
	struct lru_node *n;
	struct file *f;
	uid_t victim;

	unwind_store_get_stats(fs->opts.store, &ss);
	count_holders(fs, want->uid, &h);
	victim = h.mine + want->chunks > ss.chunks_total / h.users ? want->uid : h.top;
	for (n = lru_oldest(&fs->files); n; n = lru_newer(&fs->files, n)) {
		f = lru_entry(n, struct file, node);
		if (f->state != UNWIND_FILE_READY || f->uid != victim)
			continue;
		unwind_store_drop(fs->opts.store, f->table);
		set_state(fs, f, UNWIND_FILE_EVICTED);
		f->evicted_ns = clock_mono_ns();
		fs->stats.evicted++;
		return 0;
	}
	return victim == want->uid && h.users > 1 ? -EDQUOT : -ENOSPC;
}

/* Forgets the least recently mapped file not being built; returns 0 or -ENOSPC. */
static int forget_one(struct unwind_files *fs)
{
	struct lru_node *n;
	struct file *f;

	for (n = lru_oldest(&fs->files); n; n = lru_newer(&fs->files, n)) {
		f = lru_entry(n, struct file, node);
		if (f->state == UNWIND_FILE_PENDING)
			continue;
		free_file(fs, f);
		return 0;
	}
	return -ENOSPC;
}

static int read_segs(Elf *elf, struct file *f)
{
	GElf_Phdr ph;
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n && f->nsegs < MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		f->segs[f->nsegs++] = (struct seg){ ph.p_vaddr, ph.p_offset, ph.p_filesz };
	}
	return f->nsegs ? 0 : -EINVAL;
}

static int add_alias(struct unwind_files *fs, struct file *f, uint64_t k1, uint64_t k2)
{
	struct alias *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->node.k1 = k1;
	a->node.k2 = k2;
	a->file = f;
	a->next = f->aliases;
	f->aliases = a;
	lru_add(&fs->aliases, &a->node);
	return 0;
}

static struct file *new_file(struct unwind_files *fs, uint64_t k1, uint64_t k2, const char *path)
{
	struct file *f;

	while (fs->files.count >= fs->opts.max_files && !forget_one(fs))
		;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->path = strdup(path);
	f->node.k1 = k1;
	f->node.k2 = k2;
	f->table = UINT32_MAX;
	f->state = UNWIND_FILE_PENDING;
	fs->stats.files[f->state]++;
	lru_add(&fs->files, &f->node);
	return f;
}

static int submit(struct unwind_files *fs, struct file *f, int fd)
{
	struct unwind_job *j = calloc(1, sizeof(*j));

	if (!j) {
		if (fd >= 0)
			close(fd);
		set_state(fs, f, UNWIND_FILE_FAILED);
		return -ENOMEM;
	}
	j->fd = fd;
	j->owner = f;
	unwind_worker_submit(fs->opts.worker, j);
	return 0;
}

/* First sight of (dev, inode): open it, find it by build id or add it and queue its build. */
static struct file *open_file(struct unwind_files *fs, pid_t pid, const struct proc_map *m)
{
	uint64_t k1 = KEY_DEVINO | m->dev, k2 = m->inode;
	const unsigned char *id = NULL;
	struct file *f = NULL;
	struct lru_node *n;
	struct stat st;
	Elf *elf = NULL;
	ssize_t idlen;
	int fd;

	fd = map_open_fd(fs->opts.proc_root, pid, m);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || elf_guard_check(fd))
		goto out_close;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out_close;
	if (elf_section_notes_fit(elf, ELF_SECTION_MAX_NOTES)) {
		fs->stats.oversized++;
		log_warn(-EFBIG, "unwind: %s (pid %d) not read: a note is over its size cap",
			 m->path, (int)pid);
		/* Remembered as failed (frame pointers), so it is refused, logged and counted once. */
		f = new_file(fs, k1, k2, m->path);
		if (!f)
			goto out_close;
		set_state(fs, f, UNWIND_FILE_FAILED);
		goto out_alias;
	}
	idlen = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	if (idlen >= 16) {
		memcpy(&k1, id, 8);
		memcpy(&k2, id + 8, 8);
		k1 &= ~(KEY_DEVINO | KEY_VDSO);
		n = lru_find(&fs->files, k1, k2);
		if (n) { /* the same file seen through another path or container */
			f = lru_entry(n, struct file, node);
			goto out_alias;
		}
	}
	f = new_file(fs, k1, k2, m->path);
	if (f) {
		uid_t euid;

		if (proc_file_uids(fs->opts.proc_root, pid, &f->uid, &euid))
			f->uid = (uid_t)-1; /* gone already: counts as a user of its own */
	}
	if (!f || read_segs(elf, f)) {
		if (f)
			free_file(fs, f);
		f = NULL;
		goto out_close;
	}
	elf_end(elf);
	if (add_alias(fs, f, KEY_DEVINO | m->dev, m->inode)) {
		free_file(fs, f);
		close(fd);
		return NULL;
	}
	submit(fs, f, fd); /* on failure the file is marked failed and fd closed */
	return f;
out_alias:
	if (add_alias(fs, f, KEY_DEVINO | m->dev, m->inode))
		f = NULL;
out_close:
	elf_end(elf);
	close(fd);
	return f;
}

static struct file *vdso_file(struct unwind_files *fs)
{
	const char *image = (const char *)getauxval(AT_SYSINFO_EHDR);
	struct lru_node *n = lru_find(&fs->files, KEY_VDSO, 0);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	struct file *f;
	Elf *elf;

	if (n)
		return lru_entry(n, struct file, node);
	if (!image)
		return NULL;
	f = new_file(fs, KEY_VDSO, 0, VDSO_PATH);
	elf = f ? elf_memory((char *)image, eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize) :
		  NULL;
	if (!elf || read_segs(elf, f)) {
		elf_end(elf);
		if (f)
			free_file(fs, f);
		return NULL;
	}
	elf_end(elf);
	submit(fs, f, UNWIND_JOB_VDSO);
	return f;
}

static int bias_of(const struct file *f, const struct proc_map *m, uint64_t *bias)
{
	unsigned int i;

	for (i = 0; i < f->nsegs; i++) {
		const struct seg *s = &f->segs[i];

		if (m->offset >= (s->offset & ~0xfffull) && m->offset < s->offset + s->filesz) {
			*bias = m->start - m->offset - (s->vaddr - s->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* An evicted file is built again after UNWIND_EVICTED_RETRY_S, or UNWIND_SAMPLED_RETRY_S when
 * a process using it was sampled since: it is wanted, not just mapped. */
static int retry_due(const struct file *f)
{
	uint64_t age = clock_mono_ns() - f->evicted_ns;

	if (f->sampled_ns > f->evicted_ns)
		return age > UNWIND_SAMPLED_RETRY_S * NS_PER_S;
	return age > UNWIND_EVICTED_RETRY_S * NS_PER_S;
}

void unwind_files_note_sampled(struct unwind_files *fs, uint32_t table, uint32_t gen)
{
	struct file *f = table < SPANPROF_UNWIND_MAX_TABLES ? fs->by_table[table] : NULL;

	if (!f || f->table != table || f->gen != gen)
		return;
	f->sampled_ns = clock_mono_ns();
	if (f->state == UNWIND_FILE_READY)
		lru_touch(&fs->files, &f->node);
}

int unwind_files_resolve(struct unwind_files *fs, pid_t pid, const struct proc_map *m,
			 struct unwind_file_ref *out)
{
	struct lru_node *n;
	struct file *f;

	if (!strcmp(m->path, VDSO_PATH)) {
		f = vdso_file(fs);
	} else if (!m->inode) {
		return -ENOENT; /* another pseudo file ([vsyscall], ...) */
	} else {
		n = lru_find(&fs->aliases, KEY_DEVINO | m->dev, m->inode);
		f = n ? lru_entry(n, struct alias, node)->file : NULL;
		if (f && f->state == UNWIND_FILE_EVICTED && retry_due(f)) {
			free_file(fs, f); /* time to try again */
			f = NULL;
		}
		if (!f)
			f = open_file(fs, pid, m);
	}
	if (!f)
		return -ENOENT;
	out->state = f->state;
	out->table = f->table;
	out->gen = f->gen;
	return bias_of(f, m, &out->bias);
}

/* Puts a built table into the maps, evicting least recently used tables for room. */
static void store(struct unwind_files *fs, struct file *f, struct unwind_job *j)
{
	int err;

	fs->stats.built++;
	fs->stats.build_us += j->table.stats.build_us;
	fs->stats.text_bytes += j->table.stats.text_bytes;
	fs->stats.rows += j->table.nrows;
	f->chunks = unwind_store_chunks_needed(&j->table);
	while ((err = unwind_store_put(fs->opts.store, &j->table, &f->table, &f->gen)) == -ENOSPC)
		if ((err = evict_table(fs, f)))
			break;
	if (err == -EDQUOT) {
		fs->stats.fair_refused++;
		log_warn_from((long)f->uid, err,
			      "unwind table of %s (uid %u) not stored: its user holds its share of "
			      "the table budget; frame pointers there",
			      f->path ?: "?", (unsigned int)f->uid);
		set_state(fs, f, UNWIND_FILE_EVICTED);
		f->evicted_ns = clock_mono_ns();
		return;
	}
	if (err) {
		log_debug("unwind table of %s (%zu rows) not stored: %s", f->path ?: "?",
			  j->table.nrows, strerror(-err));
		set_state(fs, f, UNWIND_FILE_FAILED);
		return;
	}
	set_state(fs, f, UNWIND_FILE_READY);
	/* A new table counts as just sampled: it gets a window to be used before it may go. */
	lru_touch(&fs->files, &f->node);
	fs->by_table[f->table] = f;
}

size_t unwind_files_poll(struct unwind_files *fs)
{
	struct unwind_job *j = unwind_worker_take_done(fs->opts.worker), *next;
	size_t n = 0;

	for (; j; j = next, n++) {
		struct file *f = j->owner;

		next = j->next;
		if (j->err == -ENOENT) {
			log_debug("unwind: %s has no CFI: frame pointers there", f->path ?: "?");
			set_state(fs, f, UNWIND_FILE_NOCFI);
		} else if (j->err == -ETIME || j->err == -EFBIG) {
			if (j->err == -ETIME)
				fs->stats.budget_spent++;
			else
				fs->stats.oversized++;
			log_warn(j->err, "unwind table of %s not built: %s; frame pointers there",
				 f->path ?: "?",
				 j->err == -ETIME ? "its CFI spent the build budget" :
						    "a section is over its size cap");
			set_state(fs, f, UNWIND_FILE_FAILED);
		} else if (j->err) {
			log_debug("unwind table of %s: %s", f->path ?: "?", strerror(-j->err));
			set_state(fs, f, UNWIND_FILE_FAILED);
		} else {
			store(fs, f, j);
		}
		cfi_table_release(&j->table);
		free(j);
	}
	return n;
}

void unwind_files_get_stats(const struct unwind_files *fs, struct unwind_files_stats *out)
{
	*out = fs->stats;
}
