// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The walk over the relocation entries of an ELF file, read in small pieces with pread (see
 * elf_each_rela() in elf_layout.h). libelf opened with ELF_C_READ copies a whole section into the
 * heap when its data is asked for: a walk through a large executable's relocations held them and
 * the symbol table they name (33 MB at once for one file on a whole-node run, in each thread
 * walking it). Here a walk holds about 50 KiB. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/elf_section.h"
#include "util/elf_layout.h"

/* Relocation entries read with one pread (24 KiB of Elf64_Rela). */
#define RELA_CHUNK 1024

struct rela_chunk {
	unsigned char raw[RELA_CHUNK * sizeof(Elf64_Rela)];
	unsigned char mem[RELA_CHUNK * sizeof(Elf64_Rela)];
};

/* The symbol table one relocation section names: where its entries lie in the file. */
struct sym_table {
	uint64_t off, count;
};

struct rela_file {
	Elf *elf;
	int fd, is64;
	unsigned int enc; /* the file's byte order (EI_DATA) */
	uint64_t fsize;
};

/* 1 when sh's bytes lie inside the file. */
static int in_file(const struct rela_file *f, const GElf_Shdr *sh)
{
	return sh->sh_type != SHT_NOBITS && sh->sh_offset <= f->fsize &&
	       sh->sh_size <= f->fsize - sh->sh_offset && sh->sh_offset <= INT64_MAX;
}

/* The symbol table section link names, when it is one this file can hold (count 0 otherwise). */
static struct sym_table sym_table_of(const struct rela_file *f, size_t link)
{
	size_t entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	Elf_Scn *scn = elf_getscn(f->elf, link);
	struct sym_table t = { 0, 0 };
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) ||
	    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || sh.sh_entsize != entsize ||
	    !in_file(f, &sh))
		return t;
	t.off = sh.sh_offset;
	t.count = sh.sh_size / entsize;
	return t;
}

/* Entry idx of table t, read with one pread, in *sym. Returns sym, or NULL when the table has no
 * such entry or it cannot be read. */
static const GElf_Sym *read_sym(const struct rela_file *f, const struct sym_table *t, uint64_t idx,
				GElf_Sym *sym)
{
	size_t entsize = f->is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	unsigned char raw[sizeof(Elf64_Sym)], mem[sizeof(Elf64_Sym)];
	Elf_Data src = {
		.d_buf = raw, .d_type = ELF_T_SYM, .d_size = entsize, .d_version = EV_CURRENT
	};
	Elf_Data dst = { .d_buf = mem, .d_size = sizeof(mem) };
	Elf32_Sym s32;

	if (idx >= t->count ||
	    pread(f->fd, raw, entsize, (off_t)(t->off + idx * entsize)) != (ssize_t)entsize ||
	    !gelf_xlatetom(f->elf, &dst, &src, f->enc))
		return NULL;
	if (f->is64) {
		memcpy(sym, mem, sizeof(*sym));
		return sym;
	}
	memcpy(&s32, mem, sizeof(s32));
	sym->st_name = s32.st_name;
	sym->st_info = s32.st_info;
	sym->st_other = s32.st_other;
	sym->st_shndx = s32.st_shndx;
	sym->st_value = s32.st_value;
	sym->st_size = s32.st_size;
	return sym;
}

/* Entry i of a chunk in memory order, as GElf_Rela. */
static void chunk_rela(const struct rela_file *f, const struct rela_chunk *c, size_t i,
		       GElf_Rela *r)
{
	Elf32_Rela r32;

	if (f->is64) {
		memcpy(r, c->mem + i * sizeof(Elf64_Rela), sizeof(*r));
		return;
	}
	memcpy(&r32, c->mem + i * sizeof(Elf32_Rela), sizeof(r32));
	r->r_offset = r32.r_offset;
	r->r_info = GELF_R_INFO(ELF32_R_SYM(r32.r_info), ELF32_R_TYPE(r32.r_info));
	r->r_addend = r32.r_addend;
}

/* Walks one SHT_RELA section. Returns 0, or -ENOEXEC when the file shrank under the walk. */
static int walk_section(const struct rela_file *f, const GElf_Shdr *sh, struct rela_chunk *c,
			uint64_t sym_types, elf_rela_fn fn, void *ctx)
{
	size_t entsize = f->is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela), i, chunk;
	struct sym_table syms = sym_table_of(f, sh->sh_link);
	uint64_t n = sh->sh_size / entsize, at, type;
	const GElf_Sym *symp;
	Elf_Data src, dst;
	GElf_Rela r;
	GElf_Sym sym;

	for (at = 0; at < n; at += chunk) {
		chunk = (size_t)(n - at < RELA_CHUNK ? n - at : RELA_CHUNK);
		if (pread(f->fd, c->raw, chunk * entsize, (off_t)(sh->sh_offset + at * entsize)) !=
		    (ssize_t)(chunk * entsize))
			return -ENOEXEC;
		src = (Elf_Data){ .d_buf = c->raw,
				  .d_type = ELF_T_RELA,
				  .d_size = chunk * entsize,
				  .d_version = EV_CURRENT };
		dst = (Elf_Data){ .d_buf = c->mem, .d_size = sizeof(c->mem) };
		if (!gelf_xlatetom(f->elf, &dst, &src, f->enc))
			return -ENOEXEC;
		for (i = 0; i < chunk; i++) {
			chunk_rela(f, c, i, &r);
			type = GELF_R_TYPE(r.r_info);
			symp = NULL;
			if (GELF_R_SYM(r.r_info) && type < 64 && (sym_types & (1ull << type)))
				symp = read_sym(f, &syms, GELF_R_SYM(r.r_info), &sym);
			fn(ctx, &r, symp);
		}
	}
	return 0;
}

int elf_each_rela(Elf *elf, int fd, uint64_t sym_types, elf_rela_fn fn, void *ctx)
{
	struct rela_file f = { .elf = elf, .fd = fd };
	const char *ident = elf_getident(elf, NULL);
	struct rela_chunk *c = NULL;
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	struct stat sb;
	GElf_Shdr sh;
	int err = 0;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA &&
		    (total += sh.sh_size) > ELF_SECTION_MAX_SYMBOLS)
			return -EFBIG;
	if (!ident || fstat(fd, &sb))
		return ident ? -errno : -ENOEXEC;
	f.is64 = gelf_getclass(elf) == ELFCLASS64;
	f.enc = (unsigned char)ident[EI_DATA];
	f.fsize = (uint64_t)sb.st_size;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_entsize != (f.is64 ? sizeof(Elf64_Rela) : sizeof(Elf32_Rela)) ||
		    !in_file(&f, &sh))
			continue;
		if (!c && !(c = malloc(sizeof(*c))))
			return -ENOMEM;
		err = walk_section(&f, &sh, c, sym_types, fn, ctx);
	}
	free(c);
	return err;
}
