// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Locates the span-set probe site through the stapsdt note the hook's asm emits (libelf). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "discover/go_runtime.h"
#include "discover/hook_elf.h"
#include "symbolize/gopclntab.h"
#include "util/elf_guard.h"
#include "util/proc_file.h"

#define STAPSDT_NOTE_TYPE 3
#define HOOK_PROVIDER "spanprof"
#define HOOK_PROBE "span_set"

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* Virtual address -> file offset through the PT_LOAD segment holding it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *offset)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*offset = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOEXEC;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *sname;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		sname = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

/* Reads pc and semaphore from one stapsdt descriptor if it is ours. Returns 1 if it is. */
static int parse_note(const char *desc, size_t len, uint64_t *pc, uint64_t *base, uint64_t *sem)
{
	const char *provider, *probe, *end = desc + len;

	if (len < 3 * 8 + 2)
		return 0;
	memcpy(pc, desc, 8);
	memcpy(base, desc + 8, 8);
	memcpy(sem, desc + 16, 8);
	provider = desc + 24;
	if (!memchr(provider, '\0', end - provider))
		return 0;
	probe = provider + strlen(provider) + 1;
	if (probe >= end || !memchr(probe, '\0', end - probe))
		return 0;
	return !strcmp(provider, HOOK_PROVIDER) && !strcmp(probe, HOOK_PROBE);
}

static int find_note(Elf *elf, uint64_t *pc, uint64_t *base, uint64_t *sem)
{
	GElf_Shdr shdr;
	GElf_Nhdr nhdr;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t off = 0, name_off, desc_off;

	scn = find_section(elf, ".note.stapsdt", &shdr);
	if (!scn || shdr.sh_type != SHT_NOTE)
		return -ENODATA;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -ENOEXEC;
	while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (nhdr.n_type != STAPSDT_NOTE_TYPE || nhdr.n_namesz != sizeof("stapsdt") ||
		    memcmp((char *)data->d_buf + name_off, "stapsdt", sizeof("stapsdt")))
			continue;
		if (parse_note((char *)data->d_buf + desc_off, nhdr.n_descsz, pc, base, sem))
			return 0;
	}
	return -ENODATA;
}

static int resolve_site(Elf *elf, struct hook_site *site)
{
	uint64_t pc, base, sem, sem_off = 0, pc_off;
	size_t size;
	const unsigned char *raw;
	GElf_Shdr shdr;
	int err;

	err = find_note(elf, &pc, &base, &sem);
	if (err)
		return err;
	/* If the file was prelinked, .stapsdt.base moved; the note still holds the old address. */
	if (find_section(elf, ".stapsdt.base", &shdr) && base) {
		pc += shdr.sh_addr - base;
		if (sem)
			sem += shdr.sh_addr - base;
	}
	if (vaddr_to_offset(elf, pc, &pc_off))
		return -ENOEXEC;
	if (sem && vaddr_to_offset(elf, sem, &sem_off))
		return -ENOEXEC;
	site->site_offset = pc_off;
	site->semaphore_offset = sem_off;
	site->nop5_offset = 0;
	raw = (const unsigned char *)elf_rawfile(elf, &size);
	if (raw && pc_off + 1 + sizeof(nop5) <= size && raw[pc_off] == 0x90 &&
	    !memcmp(raw + pc_off + 1, nop5, sizeof(nop5)))
		site->nop5_offset = pc_off + 1;
	return 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t len = strlen(s), slen = strlen(suffix);

	return len > slen && !strcmp(s + len - slen, suffix);
}

/* File offset of the `nop; nop5` pair inside [off, off + size) of the file, or 0. */
static uint64_t find_nop_pair(Elf *elf, uint64_t off, uint64_t size)
{
	const unsigned char *raw;
	size_t len;
	uint64_t i;

	raw = (const unsigned char *)elf_rawfile(elf, &len);
	if (!raw || off >= len)
		return 0;
	if (size > len - off)
		size = len - off;
	for (i = 0; i + 1 + sizeof(nop5) <= size; i++)
		if (raw[off + i] == 0x90 && !memcmp(raw + off + i + 1, nop5, sizeof(nop5)))
			return off + i;
	return 0;
}

/* The Go hook: the function and semaphore symbols, the site found inside the function. */
static int resolve_go_site(Elf *elf, struct hook_site *site)
{
	uint64_t func_off = 0, func_size = 0, sem_off = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	GElf_Sym sym;
	Elf_Data *data;
	const char *name;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB || !shdr.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = data ? shdr.sh_size / shdr.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			if (!gelf_getsym(data, i, &sym) || !sym.st_value)
				continue;
			name = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (!name)
				continue;
			/* Go's linker marks assembly (ABI0) functions with an ".abi0" suffix. */
			if ((has_suffix(name, HOOK_GO_FUNC_SUFFIX) ||
			     has_suffix(name, HOOK_GO_FUNC_SUFFIX ".abi0")) &&
			    !vaddr_to_offset(elf, sym.st_value, &func_off))
				func_size = sym.st_size ? sym.st_size : 64;
			else if (has_suffix(name, HOOK_GO_SEMAPHORE_SUFFIX))
				vaddr_to_offset(elf, sym.st_value, &sem_off);
		}
	}
	if (!func_size)
		return -ENODATA;
	site->site_offset = find_nop_pair(elf, func_off, func_size);
	if (!site->site_offset || !sem_off)
		return -ENOEXEC; /* a hook symbol without its site or semaphore: not ours to probe */
	site->nop5_offset = site->site_offset + 1;
	site->semaphore_offset = sem_off;
	site->is_go = 1;
	return 0;
}

/* The semaphore of a Go hook whose function starts with `movzwl sem(%rip), %eax`
 * (0f b7 05 disp32, the MOVWLZX of hook_amd64.s): its file offset, checked by the tag the Go
 * code stores next to the count. Returns 0 or -ENOEXEC. */
static int go_semaphore_from_code(Elf *elf, uint64_t entry, uint64_t entry_off, uint64_t *sem_off)
{
	static const unsigned char movzwl_rip_eax[3] = { 0x0f, 0xb7, 0x05 };
	const unsigned char *raw;
	uint64_t sem;
	int32_t disp;
	size_t len;

	raw = (const unsigned char *)elf_rawfile(elf, &len);
	if (!raw || entry_off >= len || len - entry_off < 7 ||
	    memcmp(raw + entry_off, movzwl_rip_eax, sizeof(movzwl_rip_eax)))
		return -ENOEXEC;
	memcpy(&disp, raw + entry_off + 3, sizeof(disp));
	sem = entry + 7 + (int64_t)disp;
	if (vaddr_to_offset(elf, sem, sem_off) || *sem_off >= len || len - *sem_off < 4 ||
	    raw[*sem_off + 2] != (HOOK_GO_SEMAPHORE_TAG & 0xff) ||
	    raw[*sem_off + 3] != (HOOK_GO_SEMAPHORE_TAG >> 8))
		return -ENOEXEC;
	return 0;
}

/* Stripped Go binaries (-ldflags=-s): the hook function from .gopclntab's function table,
 * the semaphore from the function's first instruction. */
static int resolve_go_pclntab(Elf *elf, struct hook_site *site)
{
	struct gopclntab t;
	struct gopclntab_func f;
	uint64_t i, func_off, sem_off;
	int err;

	err = gopclntab_from_elf(&t, elf);
	if (err)
		return err == -ENODATA ? -ENODATA : -ENOEXEC;
	for (i = 0; i < t.nfunc; i++) {
		if (gopclntab_func_at(&t, i, &f))
			return -ENOEXEC;
		if (has_suffix(f.name, HOOK_GO_FUNC_SUFFIX))
			break;
	}
	if (i == t.nfunc)
		return -ENODATA;
	if (vaddr_to_offset(elf, f.entry, &func_off) ||
	    go_semaphore_from_code(elf, f.entry, func_off, &sem_off))
		return -ENOEXEC;
	site->site_offset = find_nop_pair(elf, func_off, f.end - f.entry);
	if (!site->site_offset)
		return -ENOEXEC;
	site->nop5_offset = site->site_offset + 1;
	site->semaphore_offset = sem_off;
	site->is_go = 1;
	return 0;
}

/* A Go executable (hook or not): where its runtime keeps pprof labels. Returns 1 when the
 * sampler can read them. */
static int go_labels(Elf *elf, struct hook_site *site)
{
	struct go_labels_layout layout;
	char version[64];

	if (go_runtime_version(elf, version, sizeof(version)) ||
	    go_runtime_labels_layout(version, &layout))
		return 0;
	site->go_labels_offset = layout.offset;
	site->go_labels_kind = layout.kind;
	site->go_m_offset = layout.m_offset;
	site->go_curg_offset = layout.curg_offset;
	return 1;
}

int hook_elf_find_fd(int fd, struct hook_site *site)
{
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	elf = elf_guard_begin(fd); /* caps, and no mmap: a truncated file must not SIGBUS us */
	if (!elf)
		return -ENOEXEC;
	memset(site, 0, sizeof(*site));
	err = elf_kind(elf) == ELF_K_ELF ? resolve_site(elf, site) : -ENOEXEC;
	if (err == -ENODATA)
		err = resolve_go_site(elf, site);
	if (err == -ENODATA)
		err = resolve_go_pclntab(elf, site);
	if (!err && site->is_go)
		go_labels(elf, site);
	else if (err == -ENODATA && go_labels(elf, site)) {
		memset(site, 0, offsetof(struct hook_site, go_labels_offset));
		site->is_go = 1;
		err = 0;
	}
	elf_end(elf);
	return err;
}

int hook_elf_find(const char *path, struct hook_site *site)
{
	int fd, err;

	fd = proc_file_open(NULL, path, 0, NULL); /* never blocks on a FIFO; regular files only */
	if (fd < 0)
		return fd == -EINVAL || fd == -ELOOP ? -ENOEXEC : fd;
	err = hook_elf_find_fd(fd, site);
	close(fd);
	return err;
}
