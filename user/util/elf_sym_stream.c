// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The walk over every defined symbol of an ELF file, read in small pieces with pread: the
 * symbol tables a chunk of entries at a time, their names through a window of the string table.
 * libelf opened with ELF_C_READ copies a whole section into the heap when its data is asked for,
 * so a walk through it held a copy of .symtab and .strtab (up to ELF_SECTION_MAX_SYMBOLS each)
 * for as long as the walk lasted, once per thread walking the same file. Here a walk holds
 * about 120 KiB, whatever the tables' sizes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/elf_section.h"
#include "util/file_find.h"
#include "util/elf_layout.h"

/* Symbol entries read with one pread (24 KiB of Elf64_Sym). */
#define SYM_CHUNK 1024
/* Bytes of string table read with one pread when the walk moves forward through the table. */
#define NAME_WINDOW (64u << 10)

/* Where one table lies in the file. */
struct table_span {
	uint64_t off, size;
};

/* Bytes [start, start + len) of a string table, held in buf. */
struct name_buf {
	uint64_t start;
	size_t len;
	char *buf;
};

/* The string table the names are read from, through two windows: ahead, NAME_WINDOW bytes from
 * a name the walk came to moving forward, and aside, ELF_NAME_MAX bytes on either side of a name
 * behind the previous one (linkers lay names out in symbol order but share a string between symbols, so a
 * walk mostly moves forward and now and then looks back). prev is the previous name's offset,
 * ahead_left the bytes ahead may still read in this table (twice the table and a window). */
struct name_window {
	int fd;
	struct table_span tab;
	uint64_t prev, ahead_left;
	struct name_buf ahead, aside;
	char ahead_buf[NAME_WINDOW];
	char aside_buf[2 * ELF_NAME_MAX];
};

struct sym_stream {
	struct name_window names;
	unsigned char raw[SYM_CHUNK * sizeof(Elf64_Sym)];
	unsigned char mem[SYM_CHUNK * sizeof(Elf64_Sym)];
};

static size_t min_size(uint64_t a, uint64_t b)
{
	return (size_t)(a < b ? a : b);
}

/* Looks for the name at table offset off in b: 1 with *name when b holds it with its NUL, 1 with
 * *name NULL when no table could (no NUL within ELF_NAME_MAX, or the table ends first), 0 when b
 * cannot tell (off is outside it, or its NUL may lie past b's end). */
static int buf_name(const struct name_buf *b, uint64_t table_size, uint64_t off, const char **name)
{
	size_t left;
	const char *s;

	if (off < b->start || off - b->start >= b->len)
		return 0;
	s = b->buf + (off - b->start);
	left = b->len - (size_t)(off - b->start);
	*name = memchr(s, '\0', left < ELF_NAME_MAX ? left : ELF_NAME_MAX) ? s : NULL;
	return *name || left >= ELF_NAME_MAX || b->start + b->len == table_size;
}

/* Reads want bytes of the table from start into b (fewer at the table's end) and looks there for
 * the name at off, as buf_name() does. Returns 0 also when the file shrank (*name NULL). */
static int fill(struct name_window *w, struct name_buf *b, uint64_t start, size_t want,
		uint64_t off, const char **name)
{
	want = min_size(want, w->tab.size - start);
	b->len = 0;
	*name = NULL;
	if (pread(w->fd, b->buf, want, (off_t)(w->tab.off + start)) != (ssize_t)want)
		return 0;
	b->start = start;
	b->len = want;
	return buf_name(b, w->tab.size, off, name);
}

/* The NUL-terminated name at offset off of the table, or NULL (outside it, no NUL within
 * ELF_NAME_MAX, or the file shrank). A name neither window holds moves one of them to it:
 * ahead, by NAME_WINDOW bytes, when the walk moved forward to it (names that follow the symbols
 * are read about once), else aside, by 2 x ELF_NAME_MAX bytes. ahead reads at most twice the
 * table and then leaves every miss to aside, so a table costs at most that plus 2 x ELF_NAME_MAX
 * bytes per name, however its names are ordered: about what a scan for the NUL in a table held whole cost
 * (a .dynsym in GNU hash order names its strings in no order: about one read per name). */
static const char *window_name(struct name_window *w, uint64_t off)
{
	int forward = off > w->prev;
	const char *name;
	uint64_t start;

	w->prev = off;
	if (off >= w->tab.size)
		return NULL;
	if (buf_name(&w->ahead, w->tab.size, off, &name) ||
	    buf_name(&w->aside, w->tab.size, off, &name))
		return name;
	if (forward && w->ahead_left >= NAME_WINDOW) {
		w->ahead_left -= NAME_WINDOW;
		fill(w, &w->ahead, off, NAME_WINDOW, off, &name);
		return name;
	}
	/* The bytes before the name too: a walk that looks back often looks further back next. */
	start = off > ELF_NAME_MAX ? off - ELF_NAME_MAX : 0;
	fill(w, &w->aside, start, (size_t)(off - start) + ELF_NAME_MAX, off, &name);
	return name;
}

/* 0 when sh's bytes lie inside a file of fsize bytes, within the cap; -EFBIG when the section
 * claims more than the cap, -ENOEXEC when it is not in the file. */
static int span_of(const GElf_Shdr *sh, uint64_t fsize, struct table_span *span)
{
	if (sh->sh_size > ELF_SECTION_MAX_SYMBOLS)
		return -EFBIG;
	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > fsize ||
	    sh->sh_size > fsize - sh->sh_offset || sh->sh_offset > INT64_MAX)
		return -ENOEXEC;
	span->off = sh->sh_offset;
	span->size = sh->sh_size;
	return 0;
}

/* Entry i of a chunk converted to memory order, as GElf_Sym. */
static void chunk_sym(const struct sym_stream *st, int is64, size_t i, GElf_Sym *sym)
{
	const Elf32_Sym *s32;

	if (is64) {
		memcpy(sym, st->mem + i * sizeof(Elf64_Sym), sizeof(*sym));
		return;
	}
	s32 = (const Elf32_Sym *)(const void *)(st->mem + i * sizeof(Elf32_Sym));
	sym->st_name = s32->st_name;
	sym->st_info = s32->st_info;
	sym->st_other = s32->st_other;
	sym->st_shndx = s32->st_shndx;
	sym->st_value = s32->st_value;
	sym->st_size = s32->st_size;
}

/* Walks one symbol table whose header is sh until fn returns nonzero. Returns 0, 1 (fn stopped
 * it), -EFBIG (a table over the cap, not read) or -ENOEXEC (not readable as a symbol table:
 * nothing or part of it was walked). */
static int walk_table(Elf *elf, int fd, uint64_t fsize, const GElf_Shdr *sh, struct sym_stream *st,
		      elf_symbol_at_fn fn, void *ctx)
{
	int is64 = gelf_getclass(elf) == ELFCLASS64, enc;
	size_t entsize = is64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), n, i, chunk;
	struct table_span syms;
	Elf_Scn *strscn = elf_getscn(elf, sh->sh_link);
	const char *ident = elf_getident(elf, NULL), *name;
	GElf_Shdr strsh;
	Elf_Data src, dst;
	GElf_Sym sym;
	uint64_t at;
	int err;

	err = span_of(sh, fsize, &syms);
	if (err)
		return err;
	if (sh->sh_entsize != entsize || !ident || !strscn || !gelf_getshdr(strscn, &strsh) ||
	    strsh.sh_type != SHT_STRTAB)
		return -ENOEXEC;
	err = span_of(&strsh, fsize, &st->names.tab);
	if (err)
		return err;
	enc = ident[EI_DATA];
	st->names.fd = fd;
	st->names.prev = 0;
	st->names.ahead_left = 2 * st->names.tab.size + NAME_WINDOW;
	st->names.ahead = (struct name_buf){ .buf = st->names.ahead_buf };
	st->names.aside = (struct name_buf){ .buf = st->names.aside_buf };
	n = syms.size / entsize;
	for (at = 0; at < n; at += chunk) {
		chunk = min_size(SYM_CHUNK, n - at);
		if (pread(fd, st->raw, chunk * entsize, (off_t)(syms.off + at * entsize)) !=
		    (ssize_t)(chunk * entsize))
			return -ENOEXEC; /* the file shrank under the walk */
		src = (Elf_Data){ .d_buf = st->raw,
				  .d_type = ELF_T_SYM,
				  .d_size = chunk * entsize,
				  .d_version = EV_CURRENT };
		dst = (Elf_Data){ .d_buf = st->mem, .d_size = sizeof(st->mem) };
		if (!gelf_xlatetom(elf, &dst, &src, (unsigned)enc))
			return -ENOEXEC;
		for (i = 0; i < chunk; i++) {
			chunk_sym(st, is64, i, &sym);
			if (sym.st_shndx == SHN_UNDEF)
				continue;
			name = window_name(&st->names, sym.st_name);
			if (name && fn(ctx, (size_t)(at + i), name, &sym))
				return 1;
		}
	}
	return 0;
}

/* elf_each_defined_symbol()'s callback, called for each symbol of every table. */
struct each_symbol {
	elf_symbol_fn fn;
	void *ctx;
};

static int on_each_symbol(void *ctx, size_t ndx, const char *name, const GElf_Sym *sym)
{
	struct each_symbol *e = ctx;

	(void)ndx;
	e->fn(e->ctx, name, sym);
	return 0;
}

int elf_each_defined_symbol(Elf *elf, int fd, elf_symbol_fn fn, void *ctx)
{
	struct each_symbol each = { fn, ctx };
	struct sym_stream *st = NULL;
	Elf_Scn *scn = NULL;
	struct stat sb;
	GElf_Shdr sh;
	int ret = 0;

	if (fstat(fd, &sb))
		return -errno;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		if (!st && !(st = malloc(sizeof(*st))))
			return -ENOMEM;
		if (walk_table(elf, fd, (uint64_t)sb.st_size, &sh, st, on_each_symbol, &each) ==
		    -EFBIG)
			ret = -EFBIG;
	}
	free(st);
	return ret;
}

int elf_each_symbol_in(Elf *elf, int fd, Elf_Scn *scn, elf_symbol_at_fn fn, void *ctx)
{
	struct sym_stream *st;
	struct stat sb;
	GElf_Shdr sh;
	int err;

	if (!scn || !gelf_getshdr(scn, &sh) ||
	    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
		return -ENOEXEC;
	if (fstat(fd, &sb))
		return -errno;
	st = malloc(sizeof(*st));
	if (!st)
		return -ENOMEM;
	err = walk_table(elf, fd, (uint64_t)sb.st_size, &sh, st, fn, ctx);
	free(st);
	return err == 1 ? 0 : err;
}

int elf_symbol_names_hold(Elf *elf, int fd, const void *bytes, size_t n)
{
	struct table_span span;
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	struct stat sb;
	int found;

	if (fstat(fd, &sb))
		return 1;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		strscn = elf_getscn(elf, sh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
			continue;
		/* A table the walk would not read (over the cap, outside the file) names nothing. */
		if (span_of(&strsh, (uint64_t)sb.st_size, &span))
			continue;
		found = file_find(fd, span.off, span.size, bytes, n);
		if (found)
			return 1; /* found, or unsure */
	}
	return 0;
}
