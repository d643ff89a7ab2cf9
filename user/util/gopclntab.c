// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Parses Go's pc-line table (.gopclntab): header, function table, names, pcfile/pcln value
 * tables. Layouts from golang/go src/runtime/symtab.go and runtime2.go (_func), 1.16 to 1.24. */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "util/gopclntab.h"
#include "util/unaligned.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"

#define MAGIC_116 0xfffffffau
#define MAGIC_118 0xfffffff0u
#define MAGIC_120 0xfffffff1u

/* Fields of _func read here, by layout: 1.18+ starts with a 4-byte entryOff, 1.16 with an
 * 8-byte entry pc, so everything after it shifts by 4. */
#define FUNC_NAMEOFF(v) ((v) >= 118 ? 4 : 8)
#define FUNC_PCFILE(v) ((v) >= 118 ? 20 : 24)
#define FUNC_PCLN(v) ((v) >= 118 ? 24 : 28)
#define FUNC_CUOFF(v) ((v) >= 118 ? 32 : 36)
#define FUNC_MIN_SIZE 44

/* 1 when [off, off + len) lies inside the table (no overflow). */
static int fits(const struct gopclntab *t, uint64_t off, uint64_t len)
{
	return off <= t->size && len <= t->size - off;
}

/* The NUL-terminated string at off, or NULL when it runs off the table or is longer than
 * GOPCLNTAB_NAME_MAX (so one lookup reads at most that many bytes); *len (may be NULL) gets its
 * length. */
static const char *str_at(const struct gopclntab *t, uint64_t off, size_t *len)
{
	size_t room;
	const uint8_t *nul;

	if (off >= t->size)
		return NULL;
	room = t->size - off < GOPCLNTAB_NAME_MAX + 1 ? t->size - off : GOPCLNTAB_NAME_MAX + 1;
	nul = memchr(t->data + off, '\0', room);
	if (!nul)
		return NULL;
	if (len)
		*len = (size_t)(nul - (t->data + off));
	return (const char *)t->data + off;
}

static int read_header(struct gopclntab *t, uint32_t magic)
{
	const uint8_t *h = t->data;
	uint64_t w = 8; /* first word after magic, pads, quantum and pointer size */

	t->version = magic == MAGIC_116 ? 116 : magic == MAGIC_118 ? 118 : 120;
	if (!fits(t, 0, t->version >= 118 ? 72 : 64))
		return -ENOEXEC;
	t->nfunc = load_u64(h + w);
	w += 16; /* nfunc, nfiles */
	if (t->version >= 118) {
		uint64_t text = load_u64(h + w);

		t->text = text ? text : t->text;
		w += 8;
	}
	t->funcname = load_u64(h + w);
	t->cu = load_u64(h + w + 8);
	t->filetab = load_u64(h + w + 16);
	t->pctab = load_u64(h + w + 24);
	t->functab = load_u64(h + w + 32);
	t->functab_entry = t->version >= 118 ? 8 : 16;
	return 0;
}

int gopclntab_init(struct gopclntab *t, const void *data, size_t size, uint64_t text_vaddr)
{
	uint32_t magic;
	uint64_t rows;

	memset(t, 0, sizeof(*t));
	t->data = data;
	t->size = size;
	t->text = text_vaddr;
	if (!data || size < 8)
		return -ENOEXEC;
	magic = load_u32(t->data);
	if (magic != MAGIC_116 && magic != MAGIC_118 && magic != MAGIC_120)
		return -ENOEXEC;
	t->quantum = t->data[6];
	if (t->data[4] || t->data[5] || t->data[7] != 8 ||
	    (t->quantum != 1 && t->quantum != 2 && t->quantum != 4))
		return -ENOEXEC;
	if (read_header(t, magic))
		return -ENOEXEC;
	if (t->funcname >= size || t->cu >= size || t->filetab >= size || t->pctab >= size ||
	    t->functab >= size || !t->nfunc)
		return -ENOEXEC;
	/* nfunc rows plus the end-of-text sentinel row. */
	rows = (size - t->functab) / t->functab_entry;
	if (rows == 0 || t->nfunc > rows - 1)
		return -ENOEXEC;
	return 0;
}

/* Entry pc of functab row i (0 <= i <= nfunc; row nfunc is the end of the text). */
static uint64_t row_entry(const struct gopclntab *t, uint64_t i)
{
	const uint8_t *row = t->data + t->functab + i * t->functab_entry;

	return t->version >= 118 ? t->text + load_u32(row) : load_u64(row);
}

static uint64_t row_funcoff(const struct gopclntab *t, uint64_t i)
{
	const uint8_t *row = t->data + t->functab + i * t->functab_entry;

	return t->version >= 118 ? load_u32(row + 4) : load_u64(row + 8);
}

int gopclntab_func_at(const struct gopclntab *t, uint64_t i, struct gopclntab_func *f)
{
	uint64_t off;
	int32_t nameoff;

	if (i >= t->nfunc)
		return -ENOENT;
	off = row_funcoff(t, i);
	if (off > t->size - t->functab || !fits(t, t->functab + off, FUNC_MIN_SIZE))
		return -ENOEXEC;
	f->func_off = t->functab + off;
	memcpy(&nameoff, t->data + f->func_off + FUNC_NAMEOFF(t->version), sizeof(nameoff));
	f->name = nameoff < 0 ? NULL : str_at(t, t->funcname + (uint64_t)nameoff, &f->name_len);
	f->entry = row_entry(t, i);
	f->end = row_entry(t, i + 1);
	if (!f->name || f->end < f->entry)
		return -ENOEXEC;
	return 0;
}

int gopclntab_find_name(const struct gopclntab *t, const char *want, int suffix,
			struct gopclntab_func *f)
{
	/* Real tables name each function once, so their names add up to less than the table;
	 * rows that keep naming long strings (a crafted table) spend the budget instead. */
	uint64_t i, budget = 2 * (uint64_t)t->size + GOPCLNTAB_NAME_MAX;
	size_t wlen = strlen(want);
	int err;

	if (t->nfunc > GOPCLNTAB_MAX_SEARCH_FUNCS)
		return -E2BIG;
	for (i = 0; i < t->nfunc; i++) {
		err = gopclntab_func_at(t, i, f);
		if (err)
			return err;
		if (f->name_len + 1 > budget)
			return -E2BIG;
		budget -= f->name_len + 1;
		if (suffix ? f->name_len > wlen &&
				     !memcmp(f->name + f->name_len - wlen, want, wlen) :
			     f->name_len == wlen && !memcmp(f->name, want, wlen))
			return 0;
	}
	return -ENOENT;
}

int gopclntab_find(const struct gopclntab *t, uint64_t pc, struct gopclntab_func *f)
{
	uint64_t lo = 0, hi = t->nfunc, mid;

	if (pc < row_entry(t, 0) || pc >= row_entry(t, t->nfunc))
		return -ENOENT;
	/* Largest row whose entry is <= pc; at most 64 rounds whatever the table says. */
	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (row_entry(t, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return gopclntab_func_at(t, lo, f);
}

/* Reads an unsigned LEB128 varint (at most 32 bits, as the runtime writes) at *off. */
static int read_uvarint(const struct gopclntab *t, uint64_t *off, uint32_t *out)
{
	uint32_t v = 0;
	unsigned int shift;

	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*off >= t->size)
			return -ENOEXEC;
		b = t->data[(*off)++];
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -ENOEXEC;
}

/* Runs the pc-value table at pctab + table_off from entry to pc (runtime.pcvalue). Each step
 * consumes at least two bytes, so the walk ends within the table's size, and it stops after
 * GOPCLNTAB_MAX_PCVALUE_STEPS: one lookup reads a few megabytes at most. */
int gopclntab_pcvalue(const struct gopclntab *t, uint32_t table_off, uint64_t entry, uint64_t pc,
		      int32_t *value)
{
	uint64_t off = t->pctab + table_off, cur = entry;
	int64_t val = -1;
	uint32_t uv, pcdelta, steps;
	int first = 1;

	if (!table_off || off < t->pctab)
		return -ENOENT;
	for (steps = 0; steps < GOPCLNTAB_MAX_PCVALUE_STEPS; steps++) {
		if (read_uvarint(t, &off, &uv))
			return -ENOEXEC;
		if (!uv && !first)
			return -ENOENT;
		first = 0;
		val += (uv & 1) ? -(int64_t)(uv >> 1) - 1 : (int64_t)(uv >> 1);
		if (read_uvarint(t, &off, &pcdelta))
			return -ENOEXEC;
		cur += (uint64_t)pcdelta * t->quantum;
		if (pc < cur) {
			*value = (int32_t)val;
			return 0;
		}
	}
	return -ENOEXEC;
}

const char *gopclntab_name(const struct gopclntab *t, int64_t nameoff)
{
	return nameoff < 0 ? NULL : str_at(t, t->funcname + (uint64_t)nameoff, NULL);
}

int gopclntab_source(const struct gopclntab *t, const struct gopclntab_func *f, uint64_t pc,
		     const char **file, int *line)
{
	const uint8_t *fn = t->data + f->func_off;
	int32_t fileno, ln;
	uint32_t cuoff, fileoff;
	uint64_t slot;
	int err;

	err = gopclntab_pcvalue(t, load_u32(fn + FUNC_PCLN(t->version)), f->entry, pc, &ln);
	if (err)
		return err;
	err = gopclntab_pcvalue(t, load_u32(fn + FUNC_PCFILE(t->version)), f->entry, pc, &fileno);
	if (err)
		return err;
	cuoff = load_u32(fn + FUNC_CUOFF(t->version));
	if (fileno < 0)
		return -ENOEXEC;
	slot = t->cu + ((uint64_t)cuoff + (uint64_t)fileno) * 4;
	if (!fits(t, slot, 4))
		return -ENOEXEC;
	fileoff = load_u32(t->data + slot);
	*file = fileoff == UINT32_MAX ? NULL : str_at(t, t->filetab + fileoff, NULL);
	*line = ln;
	return *file ? 0 : -ENOEXEC;
}

int gopclntab_from_elf(struct gopclntab *t, Elf *elf)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = elf_section_named(elf, ".gopclntab", ELF_SCN_ANY, &shdr);
	Elf_Scn *text = elf_section_named(elf, ".text", ELF_SCN_ANY, &shdr);
	Elf_Data *data;
	uint64_t text_vaddr = 0;
	int err;

	memset(t, 0, sizeof(*t));
	if (!scn) /* internally linked PIE keeps it in RELRO data */
		scn = elf_section_named(elf, ".data.rel.ro.gopclntab", ELF_SCN_ANY, &shdr);
	if (!scn)
		return -ENODATA;
	if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_PROGBITS)
		return -ENOEXEC;
	if (text && gelf_getshdr(text, &shdr))
		text_vaddr = shdr.sh_addr;
	err = elf_section_data(scn, ELF_SECTION_MAX_GO_TABLE, &data);
	if (err)
		return err;
	if (!data->d_buf)
		return -ENOEXEC;
	if (!gelf_getshdr(scn, &shdr))
		return -ENOEXEC;
	err = gopclntab_init(t, data->d_buf, data->d_size, text_vaddr);
	t->vaddr = shdr.sh_addr;
	return err;
}
