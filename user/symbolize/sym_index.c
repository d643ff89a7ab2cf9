// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sorted symbol table of one module: built once, searched by address. */
#include <errno.h>
#include <gelf.h>
#include <stddef.h>
#include <stdlib.h>

#include "symbolize/sym_index.h"
#include "util/sorted_u64.h"

/* How far below the closest symbol the lookup looks for a sized symbol still containing the
 * address (symbols nested in a larger one): a bound, not a search of the whole table. */
#define NESTED_LOOKBACK 8

static uint32_t binding_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
		return 1;
	default:
		return 0;
	}
}

/* Symbols that name code or data at an address: not undefined, not sections, files or TLS. */
static int names_an_address(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return shndx != SHN_UNDEF && shndx != SHN_ABS && type != STT_SECTION && type != STT_FILE &&
	       type != STT_TLS;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym_index_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1; /* the better name first */
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The address range of a sizeless symbol's section (0/0 when it cannot be read). */
static void section_range(Elf *elf, GElf_Word shndx, GElf_Addr bias, struct sym_index_entry *e)
{
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr shdr;

	if (scn && gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_ALLOC)) {
		e->sec_lo = shdr.sh_addr + bias;
		e->sec_hi = e->sec_lo + shdr.sh_size;
	}
}

/* The symbol table libdwfl lists from elf (.symtab, else .dynsym), or NULL; *shndx_bytes gets
 * the size of the extended section index tables. */
static Elf_Scn *listed_symtab(Elf *elf, size_t *shndx_bytes)
{
	Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
	GElf_Shdr sh;

	*shndx_bytes = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			tab = scn;
		else if (sh.sh_type == SHT_DYNSYM)
			dyn = scn;
		else if (sh.sh_type == SHT_SYMTAB_SHNDX)
			*shndx_bytes += sh.sh_size;
	}
	return tab ? tab : dyn;
}

/* Bytes of the sections libelf reads (and keeps, in a file opened without mmap) to list elf's
 * symbols: the symbol table libdwfl uses, its string table and its extended section indices. */
static size_t symtab_bytes(Elf *elf)
{
	Elf_Scn *tab, *link;
	size_t bytes;
	GElf_Shdr sh;

	tab = listed_symtab(elf, &bytes);
	if (!tab || !gelf_getshdr(tab, &sh))
		return bytes;
	bytes += sh.sh_size;
	link = elf_getscn(elf, sh.sh_link);
	if (link && gelf_getshdr(link, &sh) && sh.sh_type != SHT_NOBITS)
		bytes += sh.sh_size;
	return bytes;
}

/* 1 when the string table of elf's listed symbol table ends with a NUL byte (libdwfl hands out
 * names as pointers into it: a name running into an unterminated end would be read past the
 * table), or elf lists no table from sections. libdwfl has read the table already: its last
 * byte is in memory. */
static int strtab_terminated(Elf *elf)
{
	Elf_Scn *tab, *link;
	Elf_Data *data;
	size_t ignored;
	GElf_Shdr sh;

	tab = listed_symtab(elf, &ignored);
	if (!tab || !gelf_getshdr(tab, &sh))
		return 1;
	link = elf_getscn(elf, sh.sh_link);
	if (!link || !gelf_getshdr(link, &sh) || sh.sh_type != SHT_STRTAB)
		return 0;
	data = elf_getdata(link, NULL);
	return data && data->d_size && ((const char *)data->d_buf)[data->d_size - 1] == '\0';
}

/* Checks the string tables of the files mod lists symbols from: the first symbol's (the main
 * table) and the last one's (the minidebuginfo table, when there is one). */
static int names_terminated(Dwfl_Module *mod, int n)
{
	Elf *first = NULL, *last = NULL;
	GElf_Addr addr, bias;
	GElf_Word shndx;
	GElf_Sym sym;

	dwfl_module_getsym_info(mod, 0, &sym, &addr, &shndx, &first, &bias);
	dwfl_module_getsym_info(mod, n - 1, &sym, &addr, &shndx, &last, &bias);
	return (!first || strtab_terminated(first)) &&
	       (!last || last == first || strtab_terminated(last));
}

int sym_index_build(struct sym_index *idx, Dwfl_Module *mod)
{
	int i, n = dwfl_module_getsymtab(mod);
	struct sym_index_entry *e;
	GElf_Addr addr, bias;
	const char *name;
	GElf_Word shndx;
	GElf_Sym sym;
	Elf *elf;

	idx->v = NULL;
	idx->n = 0;
	idx->bytes = 0;
	elf = NULL;
	if (n <= 1)
		return 0;
	if (!names_terminated(mod, n))
		return -EBADMSG;
	idx->v = calloc((size_t)n, sizeof(*idx->v));
	if (!idx->v)
		return -ENOMEM;
	for (i = 1; i < n; i++) {
		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &bias);
		if (!name || !*name || !names_an_address(&sym, shndx))
			continue;
		e = &idx->v[idx->n++];
		*e = (struct sym_index_entry){ .addr = addr,
					       .size = sym.st_size,
					       .name = name,
					       .rank = binding_rank(&sym),
					       .order = (uint32_t)i };
		if (!e->size && shndx < SHN_LORESERVE)
			section_range(elf, shndx, bias, e);
	}
	qsort(idx->v, idx->n, sizeof(*idx->v), by_addr);
	/* Most symbols name no code (objects, files, sections): give their slots back. */
	e = realloc(idx->v, (idx->n ? idx->n : 1) * sizeof(*idx->v));
	if (e)
		idx->v = e;
	idx->bytes = idx->n * sizeof(*idx->v) + (elf ? symtab_bytes(elf) : 0);
	return 0;
}

size_t sym_index_estimate(Elf *elf)
{
	size_t entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), shndx;
	Elf_Scn *tab = listed_symtab(elf, &shndx);
	GElf_Shdr sh;

	if (!tab || !entsize || !gelf_getshdr(tab, &sh))
		return symtab_bytes(elf);
	return symtab_bytes(elf) + sh.sh_size / entsize * sizeof(struct sym_index_entry);
}

void sym_index_free(struct sym_index *idx)
{
	free(idx->v);
	idx->v = NULL;
	idx->n = 0;
	idx->bytes = 0;
}

/* Index of the last entry with addr <= a (the first of its address's run), or -1. */
static long last_at_or_below(const struct sym_index *idx, uint64_t a)
{
	size_t lo = sorted_u64_upper_bound(idx->v, idx->n, sizeof(*idx->v),
					   offsetof(struct sym_index_entry, addr), a);

	if (!lo)
		return -1;
	lo--;
	while (lo > 0 && idx->v[lo - 1].addr == idx->v[lo].addr)
		lo--;
	return (long)lo;
}

/* The best-ranked sized symbol at index i's address that contains a, or -1. */
static long sized_at(const struct sym_index *idx, long i, uint64_t a)
{
	uint64_t at = idx->v[i].addr;

	for (; (size_t)i < idx->n && idx->v[i].addr == at; i++)
		if (idx->v[i].size && a - at < idx->v[i].size)
			return i;
	return -1;
}

const char *sym_index_lookup(const struct sym_index *idx, uint64_t addr, uint64_t *off)
{
	long top = last_at_or_below(idx, addr), i, hit = -1;
	int steps = 0;

	if (top < 0)
		return NULL;
	for (i = top; i >= 0 && steps < NESTED_LOOKBACK; steps++) {
		hit = sized_at(idx, i, addr);
		if (hit >= 0)
			break;
		i--; /* the last of the run below, then its first */
		while (i > 0 && idx->v[i - 1].addr == idx->v[i].addr)
			i--;
	}
	if (hit < 0) {
		/* No sized symbol holds addr: the closest symbol, when it has no size and addr is
		 * in its section. */
		for (i = top; (size_t)i < idx->n && idx->v[i].addr == idx->v[top].addr; i++)
			if (!idx->v[i].size && addr >= idx->v[i].sec_lo &&
			    addr < idx->v[i].sec_hi) {
				hit = i;
				break;
			}
	}
	if (hit < 0)
		return NULL;
	*off = addr - idx->v[hit].addr;
	return idx->v[hit].name;
}
