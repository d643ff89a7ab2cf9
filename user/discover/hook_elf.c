// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Locates the span-set probe site through the stapsdt note the hook's asm emits (libelf). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "discover/go_runtime.h"
#include "discover/go_tls.h"
#include "discover/hook_elf.h"
#include "util/gopclntab.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/file_find.h"
#include "util/elf_section.h"
#include "util/proc_file.h"

#define STAPSDT_NOTE_TYPE 3
#define HOOK_PROVIDER "spanprof"
#define HOOK_PROBE "span_set"

static const unsigned char nop5[5] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/* The file being read: libelf's handle (ELF_C_READ: section data is read, never mapped), the
 * descriptor and its size when opened. */
struct hook_file_ref {
	Elf *elf;
	int fd;
	uint64_t size;
};

/* 1 when [off, off + len) lies inside a file of `size` bytes (no wrap-around). */
static int in_file(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
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

/* 1 when the note's name and descriptor lie inside the section data (libelf checks this too;
 * the note is untrusted, so it is checked here without relying on that). */
static int note_fits(const Elf_Data *data, const GElf_Nhdr *nh, size_t name_off, size_t desc_off)
{
	return in_file(name_off, nh->n_namesz, data->d_size) &&
	       in_file(desc_off, nh->n_descsz, data->d_size);
}

static int find_note(Elf *elf, uint64_t *pc, uint64_t *base, uint64_t *sem)
{
	GElf_Shdr shdr;
	GElf_Nhdr nhdr;
	Elf_Scn *scn;
	Elf_Data *data;
	size_t off = 0, name_off, desc_off;
	const char *buf;
	int err;

	scn = elf_section_named(elf, ".note.stapsdt", ELF_SCN_ANY, &shdr);
	if (!scn || shdr.sh_type != SHT_NOTE)
		return -ENODATA;
	err = elf_section_data(scn, ELF_SECTION_MAX_NOTES, &data);
	if (err)
		return err;
	if (!data->d_buf)
		return -ENOEXEC;
	buf = data->d_buf;
	while ((off = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		if (!note_fits(data, &nhdr, name_off, desc_off))
			return -ENOEXEC;
		if (nhdr.n_type != STAPSDT_NOTE_TYPE || nhdr.n_namesz != sizeof("stapsdt") ||
		    memcmp(buf + name_off, "stapsdt", sizeof("stapsdt")))
			continue;
		if (parse_note(buf + desc_off, nhdr.n_descsz, pc, base, sem))
			return 0;
	}
	return -ENODATA;
}

/* 1 when the 6 bytes at off of the file are `nop; nop5`. Read with pread, not from a mapping of
 * the file: a file its owner truncates under us then gives a short read, not SIGBUS. */
static int is_nop_pair(const struct hook_file_ref *f, uint64_t off)
{
	unsigned char buf[1 + sizeof(nop5)];

	if (!in_file(off, sizeof(buf), f->size) || off > INT64_MAX ||
	    pread(f->fd, buf, sizeof(buf), (off_t)off) != (ssize_t)sizeof(buf))
		return 0;
	return buf[0] == 0x90 && !memcmp(buf + 1, nop5, sizeof(nop5));
}

/* The site must be a whole instruction inside the file and the semaphore a 2-byte counter the
 * kernel can update in place (aligned, inside the file); anything else is a crafted note. */
static int check_offsets(const struct hook_file_ref *f, uint64_t site_off, uint64_t sem_off)
{
	if (!in_file(site_off, 1, f->size))
		return -ENOEXEC;
	if (sem_off && (!in_file(sem_off, 2, f->size) || (sem_off & 1)))
		return -ENOEXEC;
	return 0;
}

static int resolve_site(const struct hook_file_ref *f, struct hook_site *site)
{
	uint64_t pc, base, sem, sem_off = 0, pc_off;
	Elf *elf = f->elf;
	GElf_Shdr shdr;
	int err;

	err = find_note(elf, &pc, &base, &sem);
	if (err)
		return err;
	/* If the file was prelinked, .stapsdt.base moved; the note still holds the old address.
	 * Unsigned wrap-around is intended here (a move down); the result is checked below. */
	if (elf_section_named(elf, ".stapsdt.base", ELF_SCN_ANY, &shdr) && base) {
		pc += shdr.sh_addr - base;
		if (sem)
			sem += shdr.sh_addr - base;
	}
	if (elf_vaddr_to_offset(elf, pc, 1, PF_X, &pc_off))
		return -ENOEXEC;
	if (sem && elf_vaddr_to_offset(elf, sem, 1, PF_W, &sem_off))
		return -ENOEXEC;
	err = check_offsets(f, pc_off, sem_off);
	if (err)
		return err;
	site->site_offset = pc_off;
	site->semaphore_offset = sem_off;
	site->nop5_offset = is_nop_pair(f, pc_off) ? pc_off + 1 : 0;
	return 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t len = strlen(s), slen = strlen(suffix);

	return len > slen && !strcmp(s + len - slen, suffix);
}

/* File offset of the `nop; nop5` pair inside [off, off + size) of the file, or 0. The Go hook's
 * function is a few dozen bytes; a symbol claiming more is searched in its first GO_SCAN_MAX. */
#define GO_SCAN_MAX 4096
static uint64_t find_nop_pair(const struct hook_file_ref *f, uint64_t off, uint64_t size)
{
	unsigned char buf[GO_SCAN_MAX];
	ssize_t got;
	size_t i;

	if (off >= f->size || off > INT64_MAX)
		return 0;
	if (size > f->size - off)
		size = f->size - off;
	if (size > sizeof(buf))
		size = sizeof(buf);
	got = pread(f->fd, buf, size, (off_t)off);
	if (got <= 0)
		return 0;
	for (i = 0; (size_t)got - i >= 1 + sizeof(nop5); i++)
		if (buf[i] == 0x90 && !memcmp(buf + i + 1, nop5, sizeof(nop5)))
			return off + i;
	return 0;
}

struct go_site_scan {
	Elf *elf;
	uint64_t func_off, func_size, sem_off;
};

static void on_go_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct go_site_scan *g = ctx;

	if (!sym->st_value)
		return;
	/* Go's linker marks assembly (ABI0) functions with an ".abi0" suffix. */
	if ((has_suffix(name, HOOK_GO_FUNC_SUFFIX) ||
	     has_suffix(name, HOOK_GO_FUNC_SUFFIX ".abi0")) &&
	    !elf_vaddr_to_offset(g->elf, sym->st_value, 1, PF_X, &g->func_off))
		g->func_size = sym->st_size ? sym->st_size : 64;
	else if (has_suffix(name, HOOK_GO_SEMAPHORE_SUFFIX))
		elf_vaddr_to_offset(g->elf, sym->st_value, 1, PF_W, &g->sem_off);
}

/* The Go hook: the function and semaphore symbols, the site found inside the function. */
static int resolve_go_site(const struct hook_file_ref *f, struct hook_site *site)
{
	static const char name[] = HOOK_GO_FUNC_SUFFIX;
	struct go_site_scan g = { .elf = f->elf };

	/* Most files have no Go hook: one pass over their string tables through a small buffer
	 * rules the symbol walk out. */
	if (!elf_symbol_names_hold(f->elf, f->fd, name, sizeof(name) - 1))
		return -ENODATA;
	if (elf_each_defined_symbol(f->elf, f->fd, on_go_symbol, &g) == -EFBIG)
		return -EFBIG;
	if (!g.func_size)
		return -ENODATA;
	site->site_offset = find_nop_pair(f, g.func_off, g.func_size);
	if (!site->site_offset || !g.sem_off)
		return -ENOEXEC; /* a hook symbol without its site or semaphore: not ours to probe */
	if (check_offsets(f, site->site_offset, g.sem_off))
		return -ENOEXEC;
	site->nop5_offset = site->site_offset + 1;
	site->semaphore_offset = g.sem_off;
	site->is_go = 1;
	return 0;
}

/* The semaphore of a Go hook whose function starts with `movzwl sem(%rip), %eax`
 * (0f b7 05 disp32, the MOVWLZX of hook_amd64.s): its file offset, checked by the tag the Go
 * code stores next to the count. Read with pread (see is_nop_pair). Returns 0 or -ENOEXEC. */
static int go_semaphore_from_code(const struct hook_file_ref *f, uint64_t entry, uint64_t entry_off,
				  uint64_t *sem_off)
{
	static const unsigned char movzwl_rip_eax[3] = { 0x0f, 0xb7, 0x05 };
	unsigned char insn[7], tag[4];
	uint64_t sem;
	int32_t disp;

	if (!in_file(entry_off, sizeof(insn), f->size) || entry_off > INT64_MAX ||
	    pread(f->fd, insn, sizeof(insn), (off_t)entry_off) != (ssize_t)sizeof(insn) ||
	    memcmp(insn, movzwl_rip_eax, sizeof(movzwl_rip_eax)))
		return -ENOEXEC;
	memcpy(&disp, insn + 3, sizeof(disp));
	sem = entry + 7 + (int64_t)disp; /* wraps only for a crafted file; checked just below */
	if (elf_vaddr_to_offset(f->elf, sem, 1, PF_W, sem_off) ||
	    !in_file(*sem_off, sizeof(tag), f->size) || *sem_off > INT64_MAX || (*sem_off & 1) ||
	    pread(f->fd, tag, sizeof(tag), (off_t)*sem_off) != (ssize_t)sizeof(tag) ||
	    tag[2] != (HOOK_GO_SEMAPHORE_TAG & 0xff) || tag[3] != (HOOK_GO_SEMAPHORE_TAG >> 8))
		return -ENOEXEC;
	return 0;
}

/* Stripped Go binaries (-ldflags=-s): the hook function from .gopclntab's function table,
 * the semaphore from the function's first instruction. The table is read only within its size
 * cap and searched within its name budget (gopclntab.h): linear in the table's size. */
/* 0 when f's Go function table cannot name the hook: its section holds no copy of the name.
 * Looked for through a small buffer: most Go executables have no hook, and their tables (tens of
 * MB for a large one) are then never read into memory. 1 otherwise (also when unsure). */
static int pclntab_may_name_hook(const struct hook_file_ref *f)
{
	static const char name[] = HOOK_GO_FUNC_SUFFIX;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_named(f->elf, ".gopclntab", ELF_SCN_ANY, &sh);

	if (!scn)
		scn = elf_section_named(f->elf, ".data.rel.ro.gopclntab", ELF_SCN_ANY, &sh);
	/* A table over its cap is left to the reader, which refuses it without reading it (and
	 * says so): searching it here would read up to its claimed size, gigabytes if sparse. */
	if (!scn || sh.sh_type != SHT_PROGBITS || sh.sh_flags & SHF_COMPRESSED ||
	    sh.sh_size > ELF_SECTION_MAX_GO_TABLE || !in_file(sh.sh_offset, sh.sh_size, f->size))
		return 1;
	return file_find(f->fd, sh.sh_offset, sh.sh_size, name, sizeof(name) - 1) != 0;
}

static int resolve_go_pclntab(const struct hook_file_ref *f, struct hook_site *site)
{
	struct gopclntab t;
	struct gopclntab_func fn;
	uint64_t func_off, sem_off;
	int err;

	if (!pclntab_may_name_hook(f))
		return -ENODATA;
	err = gopclntab_from_elf(&t, f->elf);
	if (!err)
		err = gopclntab_find_name(&t, HOOK_GO_FUNC_SUFFIX, 1, &fn);
	if (err == -ENOENT || err == -ENODATA)
		return -ENODATA;
	if (err == -E2BIG || err == -EFBIG)
		return -EFBIG;
	if (err)
		return -ENOEXEC;
	if (elf_vaddr_to_offset(f->elf, fn.entry, 1, PF_X, &func_off) ||
	    go_semaphore_from_code(f, fn.entry, func_off, &sem_off))
		return -ENOEXEC;
	/* fn.end < fn.entry only in a crafted table: the wrapped size is capped by find_nop_pair */
	site->site_offset = find_nop_pair(f, func_off, fn.end - fn.entry);
	if (!site->site_offset || check_offsets(f, site->site_offset, sem_off))
		return -ENOEXEC;
	site->nop5_offset = site->site_offset + 1;
	site->semaphore_offset = sem_off;
	site->is_go = 1;
	return 0;
}

/* A Go executable (hook or not): where its runtime keeps pprof labels and goroutine ids, from
 * the version table, else from its own DWARF. Returns 1 when the sampler can read them, 0 when the
 * file is no Go executable, -EPROTONOSUPPORT for a Go executable of an unknown layout (its version
 * in site->go_version), -EFBIG when .go.buildinfo is over its size cap. */
static int go_labels(Elf *elf, int fd, struct hook_site *site)
{
	struct go_labels_layout layout;
	char version[64];
	int err = go_runtime_version(elf, version, sizeof(version));
	size_t i;

	if (err == -EFBIG)
		return err;
	if (err == -ENOTSUP)
		snprintf(version, sizeof(version), "before go1.18");
	else if (err)
		return 0;
	/* The file's bytes go to the log: printable ASCII only. */
	for (i = 0; version[i] && i < sizeof(site->go_version) - 1; i++)
		site->go_version[i] = version[i] >= 0x20 && version[i] < 0x7f ? version[i] : '?';
	site->go_version[i] = '\0';
	if (err == -ENOTSUP)
		return -EPROTONOSUPPORT;
	if (go_runtime_labels_layout(version, &layout)) {
		if (go_runtime_layout_from_dwarf(elf, fd, &layout))
			return -EPROTONOSUPPORT;
		site->go_layout_from_dwarf = 1;
	}
	site->go_labels_offset = layout.offset;
	site->go_labels_kind = layout.kind;
	site->go_m_offset = layout.m_offset;
	site->go_curg_offset = layout.curg_offset;
	site->go_goid_offset = layout.goid_offset;
	return 1;
}

int hook_elf_find_fd(int fd, struct hook_site *site)
{
	struct hook_file_ref f = { .fd = fd };
	struct stat st;
	int err;

	memset(site, 0, sizeof(*site));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	f.size = st.st_size;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	f.elf = elf_guard_begin(fd); /* caps, and ELF_C_READ: a truncated file must not SIGBUS us */
	if (!f.elf)
		return -ENOEXEC;
	err = elf_kind(f.elf) == ELF_K_ELF ? resolve_site(&f, site) : -ENOEXEC;
	if (err == -ENODATA)
		err = resolve_go_site(&f, site);
	if (err == -ENODATA)
		err = resolve_go_pclntab(&f, site);
	if (!err && site->is_go) {
		int go = go_labels(f.elf, fd, site);

		/* A hook in a Go file whose version cannot be read (no .go.buildinfo) has no known
		 * layout either: its goroutines could not be told apart, so it is refused. */
		if (go == 0)
			snprintf(site->go_version, sizeof(site->go_version), "version unreadable");
		if (go <= 0)
			err = go == -EFBIG ? -EFBIG : -EPROTONOSUPPORT;
	} else if (err == -ENODATA) {
		int go = go_labels(f.elf, fd, site);

		if (go < 0)
			err = go;
		if (go > 0) {
			memset(site, 0, offsetof(struct hook_site, go_labels_offset));
			site->is_go = 1;
			err = 0;
		}
	}
	if (!err && site->is_go)
		err = go_tls_g_offset(f.elf, fd, &site->go_g_offset);
	elf_end(f.elf);
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
