// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sections by name or address and vaddr -> file offset, for every reader of untrusted ELF
 * files (hook notes, CFI, Go tables, interpreter symbols). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/elf_section.h"
#include "util/elf_layout.h"

static int kind_ok(const GElf_Shdr *shdr, enum elf_scn_kind kind)
{
	switch (kind) {
	case ELF_SCN_FILE_BYTES:
		return shdr->sh_type != SHT_NOBITS;
	case ELF_SCN_PROGBITS:
		return shdr->sh_type == SHT_PROGBITS;
	default:
		return 1;
	}
}

const char *elf_name_at(Elf *elf, size_t strndx, size_t off)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	Elf_Data *data;
	const char *s;
	GElf_Shdr sh;
	size_t left;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    elf_section_data(scn, ELF_SECTION_MAX_SYMBOLS, &data) || !data->d_buf ||
	    off >= data->d_size)
		return NULL;
	s = (const char *)data->d_buf + off;
	left = data->d_size - off;
	return memchr(s, '\0', left < ELF_NAME_MAX ? left : ELF_NAME_MAX) ? s : NULL;
}

Elf_Scn *elf_section_named(Elf *elf, const char *name, enum elf_scn_kind kind, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const char *sname;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr) || !kind_ok(shdr, kind))
			continue;
		sname = elf_name_at(elf, shstrndx, shdr->sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

Elf_Scn *elf_section_at(Elf *elf, uint64_t vaddr, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr) || shdr->sh_type != SHT_PROGBITS ||
		    !(shdr->sh_flags & SHF_ALLOC))
			continue;
		if (vaddr >= shdr->sh_addr && vaddr - shdr->sh_addr < shdr->sh_size)
			return scn;
	}
	return NULL;
}

int elf_vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t len, uint32_t need, uint64_t *offset)
{
	uint64_t in;
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		in = vaddr - ph.p_vaddr;
		if (len > ph.p_filesz - in)
			continue;
		if ((ph.p_flags & need) != need || ph.p_offset > UINT64_MAX - in)
			return -ENOEXEC;
		*offset = ph.p_offset + in;
		return 0;
	}
	return -ENOEXEC;
}

void elf_loads_read(Elf *elf, struct elf_loads *out)
{
	GElf_Phdr ph;
	size_t n, i;

	out->n = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	for (i = 0; i < n && out->n < ELF_LOADS_MAX; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		out->seg[out->n].vaddr = ph.p_vaddr;
		out->seg[out->n].offset = ph.p_offset;
		out->seg[out->n].filesz = ph.p_filesz;
		out->n++;
	}
}

int elf_loads_bias(const struct elf_loads *l, uint64_t map_start, uint64_t map_offset,
		   uint64_t *bias)
{
	int i;

	for (i = 0; i < l->n; i++) {
		if (map_offset < l->seg[i].offset ||
		    map_offset - l->seg[i].offset >= l->seg[i].filesz)
			continue;
		/* Wrapping arithmetic: a bias is an offset modulo 2^64. */
		*bias = map_start - (l->seg[i].vaddr + (map_offset - l->seg[i].offset));
		return 0;
	}
	return -ENOENT;
}

int elf_read_vaddr(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t len)
{
	uint64_t off;
	int err = elf_vaddr_to_offset(elf, vaddr, len, 0, &off);

	if (err)
		return err;
	if (off > INT64_MAX || pread(fd, buf, len, (off_t)off) != (ssize_t)len)
		return -EIO;
	return 0;
}

int elf_wanted_sym_note(struct elf_wanted_sym *want, size_t n, const char *name,
			const GElf_Sym *sym)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (strcmp(name, want[i].name))
			continue;
		if (!want[i].found) {
			want[i].sym = *sym;
			want[i].found = 1;
		}
		return 1;
	}
	return 0;
}

struct wanted_walk {
	struct elf_wanted_sym *want;
	size_t n;
};

static void note_wanted(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct wanted_walk *walk = ctx;

	elf_wanted_sym_note(walk->want, walk->n, name, sym);
}

int elf_find_symbols(Elf *elf, int fd, struct elf_wanted_sym *want, size_t n)
{
	struct wanted_walk walk = { want, n };
	size_t i;

	for (i = 0; i < n; i++)
		want[i].found = 0;
	return elf_each_defined_symbol(elf, fd, note_wanted, &walk);
}
