// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Expands Go's inlined calls: moduledata.gofunc located in .noptrdata, the function's inline
 * tree (FUNCDATA_InlTree) and its pc -> tree index table (PCDATA_InlTreeIndex), walked through
 * each inlined call's parentPc as runtime.CallersFrames does. */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "util/elf_section.h"
#include "util/gopclntab_inline.h"
#include "util/elf_layout.h"
#include "util/unaligned.h"

#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE 3
/* moduledata: pcHeader at 0, text at 176; gofunc after rodata, two words later from 1.20
 * (covctrs, ecovctrs). Read from golang/go src/runtime/symtab.go; 1.19 checked here. */
#define MD_TEXT 176
#define MD_GOFUNC(v) ((v) >= 120 ? 320 : 304)
/* _func: fixed part 40 bytes (44 from 1.20: startLine), npcdata at 28, nfuncdata last byte. */
#define FUNC_HEADER(v) ((v) >= 120 ? 44 : 40)
#define FUNC_NPCDATA 28
/* inlinedCall: 1.18-1.19 {parent i16, funcID u8, _ u8, file i32, line i32, func_ i32,
 * parentPc i32}; 1.20+ {funcID u8, _ [3]u8, nameOff i32, parentPc i32, startLine i32}. */
#define INL_SIZE(v) ((v) >= 120 ? 16 : 20)
#define INL_NAME(v) ((v) >= 120 ? 4 : 12)
#define INL_PARENTPC(v) ((v) >= 120 ? 8 : 16)

/* gofunc from the moduledata that points at t's table and text; 0 when none. */
static uint64_t find_gofunc(const struct gopclntab *t, Elf *elf)
{
	uint64_t md = MD_GOFUNC(t->version), off;
	GElf_Shdr shdr;
	Elf_Data *d;
	Elf_Scn *scn;
	const uint8_t *p;

	scn = elf_section_named(elf, ".noptrdata", ELF_SCN_PROGBITS, &shdr);
	if (!scn || elf_section_data(scn, ELF_SECTION_MAX_GO_TABLE, &d))
		return 0;
	if (!d->d_buf || d->d_size < md + 8)
		return 0;
	p = d->d_buf;
	for (off = 0; off <= d->d_size - md - 8; off += 8)
		if (load_u64(p + off) == t->vaddr && load_u64(p + off + MD_TEXT) == t->text)
			return load_u64(p + off + md);
	return 0;
}

int gopclntab_inline_from_elf(struct gopclntab_inl *inl, const struct gopclntab *t, Elf *elf)
{
	uint64_t gofunc;
	GElf_Shdr shdr;
	Elf_Data *d;
	Elf_Scn *scn;
	int err;

	memset(inl, 0, sizeof(*inl));
	if (t->version < 118 || !t->vaddr)
		return -ENODATA;
	gofunc = find_gofunc(t, elf);
	if (!gofunc)
		return -ENODATA;
	scn = elf_section_at(elf, gofunc, &shdr);
	if (!scn)
		return -ENOEXEC;
	err = elf_section_data(scn, ELF_SECTION_MAX_GO_TABLE, &d);
	if (err)
		return err;
	if (!d->d_buf || gofunc - shdr.sh_addr >= d->d_size)
		return -ENOEXEC;
	inl->data = (const uint8_t *)d->d_buf + (gofunc - shdr.sh_addr);
	inl->size = d->d_size - (gofunc - shdr.sh_addr);
	return 0;
}

/* f's pc -> inline index table and its tree's offset in inl; 0 when it inlines nothing. */
static int inline_tables(const struct gopclntab *t, const struct gopclntab_inl *inl,
			 const struct gopclntab_func *f, uint32_t *pcdata, uint64_t *tree)
{
	uint64_t hdr = FUNC_HEADER(t->version), need;
	const uint8_t *fn = t->data + f->func_off;
	uint32_t npcdata, nfuncdata, fd;

	if (!inl || !inl->data || t->version < 118 || f->func_off > t->size - hdr)
		return 0;
	npcdata = load_u32(fn + FUNC_NPCDATA);
	nfuncdata = fn[hdr - 1];
	if (npcdata <= PCDATA_INLTREE || nfuncdata <= FUNCDATA_INLTREE)
		return 0;
	need = hdr + 4 * ((uint64_t)npcdata + nfuncdata);
	if (need > t->size - f->func_off)
		return 0;
	*pcdata = load_u32(fn + hdr + 4 * PCDATA_INLTREE);
	fd = load_u32(fn + hdr + 4 * (uint64_t)npcdata + 4 * FUNCDATA_INLTREE);
	if (fd == UINT32_MAX || fd >= inl->size)
		return 0;
	*tree = fd;
	return 1;
}

static void fill(const struct gopclntab *t, const struct gopclntab_func *f, uint64_t pc,
		 const char *function, struct gopclntab_frame *out)
{
	out->function = function;
	if (gopclntab_source(t, f, pc, &out->file, &out->line)) {
		out->file = NULL;
		out->line = 0;
	}
}

int gopclntab_inline_frames(const struct gopclntab *t, const struct gopclntab_inl *inl,
			    const struct gopclntab_func *f, uint64_t pc,
			    struct gopclntab_frame *out, int max)
{
	uint64_t tree = 0, rec, cur = pc, size = INL_SIZE(t->version);
	uint32_t pcdata = 0;
	int32_t ix, parent;
	const char *name;
	int n = 0;

	if (max <= 0)
		return 0;
	if (inline_tables(t, inl, f, &pcdata, &tree)) {
		while (n < max - 1 && !gopclntab_pcvalue(t, pcdata, f->entry, cur, &ix) &&
		       ix >= 0) {
			rec = tree + (uint64_t)ix * size;
			if (rec > inl->size || size > inl->size - rec)
				return -ENOEXEC;
			name = gopclntab_name(
				t, (int32_t)load_u32(inl->data + rec + INL_NAME(t->version)));
			parent = (int32_t)load_u32(inl->data + rec + INL_PARENTPC(t->version));
			if (!name || parent < 0 || (uint64_t)parent >= f->end - f->entry)
				return -ENOEXEC;
			fill(t, f, cur, name, &out[n++]);
			cur = f->entry + (uint64_t)parent;
		}
	}
	fill(t, f, cur, f->name, &out[n++]);
	return n;
}
