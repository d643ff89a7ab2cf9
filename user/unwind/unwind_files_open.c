// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A file's first sight: opened through the process, told apart by build id (or device and
 * inode), its loadable segments read, and its table build queued; the vDSO from our own copy. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "discover/map_open.h"
#include "unwind/unwind_files_int.h"
#include "util/elf_guard.h"
#include "util/elf_section.h"
#include "util/log.h"
#include "util/proc_file.h"

/* Forgets the least recently mapped file not being built; returns 0 or -ENOSPC. */
static int forget_one(struct unwind_files *fs)
{
	struct lru_node *n;
	struct file *f;

	for (n = lru_oldest(&fs->files); n; n = lru_newer(&fs->files, n)) {
		f = lru_entry(n, struct file, node);
		if (f->state == UNWIND_FILE_PENDING)
			continue;
		unwind_files_drop_file(fs, f);
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
		unwind_files_set_state(fs, f, UNWIND_FILE_FAILED);
		return -ENOMEM;
	}
	j->fd = fd;
	j->owner = f;
	unwind_worker_submit(fs->opts.worker, j);
	return 0;
}

struct file *unwind_files_open_file(struct unwind_files *fs, pid_t pid, const struct proc_map *m)
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
		/* Remembered as failed (frame pointers), so it is refused, logged and counted once.
		 */
		f = new_file(fs, k1, k2, m->path);
		if (!f)
			goto out_close;
		unwind_files_set_state(fs, f, UNWIND_FILE_FAILED);
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
			unwind_files_drop_file(fs, f);
		f = NULL;
		goto out_close;
	}
	elf_end(elf);
	if (add_alias(fs, f, KEY_DEVINO | m->dev, m->inode)) {
		unwind_files_drop_file(fs, f);
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

struct file *unwind_files_vdso(struct unwind_files *fs)
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
			unwind_files_drop_file(fs, f);
		return NULL;
	}
	elf_end(elf);
	submit(fs, f, UNWIND_JOB_VDSO);
	return f;
}
