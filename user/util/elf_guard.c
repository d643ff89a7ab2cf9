// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Header caps and mmap-free opening of untrusted ELF files (see elf_guard.h). */
#define _GNU_SOURCE
#include <elf.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"
#include "util/xz_size.h"

#if __BYTE_ORDER == __LITTLE_ENDIAN
#define NATIVE_DATA ELFDATA2LSB
#else
#define NATIVE_DATA ELFDATA2MSB
#endif

static int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EINVAL;
}

/* The header fields that size the header tables, for either class. */
struct hdr {
	uint64_t shoff, phoff, shnum, phnum, shentsize, phentsize;
};

static int read_hdr(int fd, struct hdr *h)
{
	union {
		Elf64_Ehdr e64;
		Elf32_Ehdr e32;
	} u;
	int err = pread_all(fd, &u, sizeof(u.e64), 0);

	if (err == -EINVAL)
		err = pread_all(fd, &u, sizeof(u.e32), 0);
	if (err)
		return err == -EINVAL ? -ENOEXEC : err;
	if (memcmp(u.e64.e_ident, ELFMAG, SELFMAG) || u.e64.e_ident[EI_DATA] != NATIVE_DATA)
		return -ENOEXEC;
	if (u.e64.e_ident[EI_CLASS] == ELFCLASS64)
		*h = (struct hdr){ u.e64.e_shoff, u.e64.e_phoff,     u.e64.e_shnum,
				   u.e64.e_phnum, u.e64.e_shentsize, u.e64.e_phentsize };
	else if (u.e64.e_ident[EI_CLASS] == ELFCLASS32)
		*h = (struct hdr){ u.e32.e_shoff, u.e32.e_phoff,     u.e32.e_shnum,
				   u.e32.e_phnum, u.e32.e_shentsize, u.e32.e_phentsize };
	else
		return -ENOEXEC;
	return 0;
}

/* Extended numbering: the real counts live in section header 0 (sh_size, sh_info). */
static int read_extended(int fd, int is64, struct hdr *h)
{
	Elf64_Shdr s64;
	Elf32_Shdr s32;
	int err;

	if (h->shoff == 0 || (h->shnum && h->phnum != PN_XNUM))
		return 0;
	if (is64) {
		err = pread_all(fd, &s64, sizeof(s64), h->shoff);
		if (!err && !h->shnum)
			h->shnum = s64.sh_size;
		if (!err && h->phnum == PN_XNUM)
			h->phnum = s64.sh_info;
	} else {
		err = pread_all(fd, &s32, sizeof(s32), h->shoff);
		if (!err && !h->shnum)
			h->shnum = s32.sh_size;
		if (!err && h->phnum == PN_XNUM)
			h->phnum = s32.sh_info;
	}
	return err;
}

static int table_fits(uint64_t off, uint64_t num, uint64_t entsize, uint64_t file_size)
{
	return !num || (entsize && off <= file_size && num <= (file_size - off) / entsize);
}

int elf_guard_check(int fd)
{
	unsigned char cls;
	struct stat st;
	struct hdr h;
	int err;

	if (fstat(fd, &st))
		return -errno;
	err = read_hdr(fd, &h);
	if (err)
		return err;
	if (pread_all(fd, &cls, 1, EI_CLASS))
		return -ENOEXEC;
	err = read_extended(fd, cls == ELFCLASS64, &h);
	if (err)
		return err;
	if (h.shnum > ELF_GUARD_MAX_SECTIONS || h.phnum > ELF_GUARD_MAX_PHDRS)
		return -E2BIG;
	if (!table_fits(h.shoff, h.shnum, h.shentsize, st.st_size) ||
	    !table_fits(h.phoff, h.phnum, h.phentsize, st.st_size))
		return -EINVAL;
	return 0;
}

static int symtabs_fit(Elf *elf)
{
	uint64_t total = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return 0;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM ||
		    sh.sh_type == SHT_STRTAB)
			total += sh.sh_size;
		if (total > ELF_GUARD_MAX_SYMTAB_BYTES)
			return 0;
	}
	return 1;
}

/* libdwfl decompresses .gnu_debugdata (xz MiniDebugInfo) whole when a file has no .symtab:
 * 1 when it is absent, or decompresses to at most what the symbol tables may hold. */
static int minidebug_fits(Elf *elf)
{
	Elf_Data *data;
	GElf_Shdr sh;
	uint64_t size;
	Elf_Scn *scn = elf_section_named(elf, ".gnu_debugdata", ELF_SCN_ANY, &sh);

	if (!scn)
		return 1;
	if (elf_section_data(scn, ELF_SECTION_MAX_MINIDEBUG, &data))
		return 0;
	return !data->d_buf ||
	       xz_size(data->d_buf, data->d_size, ELF_GUARD_MAX_SYMTAB_BYTES, &size) != -EFBIG;
}

Elf *elf_guard_begin(int fd)
{
	int err = elf_guard_check(fd);
	Elf *elf;

	if (err) {
		errno = -err;
		return NULL;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		errno = EINVAL;
		return NULL;
	}
	if (!symtabs_fit(elf) || elf_section_notes_fit(elf, ELF_SECTION_MAX_NOTES) ||
	    !minidebug_fits(elf)) {
		elf_end(elf);
		errno = E2BIG;
		return NULL;
	}
	return elf;
}

static uint64_t section_bytes(Elf *elf, int fd, const GElf_Shdr *sh)
{
	Elf64_Chdr c64;
	Elf32_Chdr c32;

	if (!(sh->sh_flags & SHF_COMPRESSED))
		return sh->sh_size;
	if (gelf_getclass(elf) == ELFCLASS64)
		return pread_all(fd, &c64, sizeof(c64), sh->sh_offset) ? sh->sh_size : c64.ch_size;
	return pread_all(fd, &c32, sizeof(c32), sh->sh_offset) ? sh->sh_size : c32.ch_size;
}

size_t elf_guard_dwarf_bytes(Elf *elf, int fd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;
	const char *name;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_name_at(elf, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".debug_", 7))
			total += section_bytes(elf, fd, &sh);
		else if (name && !strncmp(name, ".zdebug_", 8))
			total += 4 * sh.sh_size; /* old GNU compression: a fair guess */
	}
	return total;
}

int elf_guard_private_copy(int fd, size_t max_bytes)
{
	char buf[65536];
	struct stat st;
	off_t off = 0;
	ssize_t n;
	int mfd, err;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max_bytes)
		return -E2BIG;
	mfd = memfd_create("spanprof-elf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	while (off < st.st_size && (n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (write(mfd, buf, n) != n)
			break;
		off += n;
	}
	if (off != st.st_size ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		err = off != st.st_size ? -EIO : -errno;
		close(mfd);
		return err;
	}
	return mfd;
}
