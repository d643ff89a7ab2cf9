// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* FDE ranges of a CFI section: libdw splits the section into CIEs and FDEs; the FDE's
 * initial_location/address_range are decoded here with the CIE's pointer encoding. */
#include <dwarf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>

#include "unwind/cfi_fde.h"
#include "util/sorted_u64.h"

struct cie_enc {
	Dwarf_Off offset;
	uint64_t program_bytes; /* length of its initial instructions */
	uint8_t enc; /* DW_EH_PE_* of the FDE addresses */
};

struct walk {
	struct cie_enc *cies; /* growing, sorted by offset: the walk only moves forward */
	size_t ncies, cap;
	int addr_size;
	bool eh_frame_p;
};

/* Size of a fixed-size encoded value, or 0 for one not handled (uleb/sleb, omit). */
static size_t enc_size(uint8_t enc, int addr_size)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		return addr_size;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;
	}
}

/* Reads a value of encoding enc (format bits only) at p; the caller checked the size. */
static uint64_t read_value(const uint8_t *p, uint8_t enc, int addr_size)
{
	int16_t s16;
	int32_t s32;
	uint16_t u16;
	uint32_t u32;
	uint64_t u64;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata2:
		memcpy(&u16, p, 2);
		return u16;
	case DW_EH_PE_sdata2:
		memcpy(&s16, p, 2);
		return (uint64_t)(int64_t)s16;
	case DW_EH_PE_udata4:
		memcpy(&u32, p, 4);
		return u32;
	case DW_EH_PE_sdata4:
		memcpy(&s32, p, 4);
		return (uint64_t)(int64_t)s32;
	case DW_EH_PE_absptr:
		if (addr_size == 4) {
			memcpy(&u32, p, 4);
			return u32;
		}
		/* fall through */
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

/* The FDE pointer encoding of a CIE: the byte after 'R' in its augmentation data. */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie, int addr_size)
{
	const uint8_t *d = cie->augmentation_data;
	const char *a = cie->augmentation;
	size_t i = 0, n = cie->augmentation_data_size, sz;

	if (!a || a[0] != 'z' || !d)
		return DW_EH_PE_absptr;
	for (a++; *a; a++) {
		if (i >= n)
			break;
		if (*a == 'R')
			return d[i];
		if (*a == 'L') {
			i++;
		} else if (*a == 'P') {
			sz = enc_size(d[i], addr_size);
			if (!sz)
				break;
			i += 1 + sz;
		} else if (*a != 'S' && *a != 'B') {
			break;
		}
	}
	return DW_EH_PE_absptr;
}

/* Binary search: a crafted section may hold as many CIEs as FDEs. */
static const struct cie_enc *find_cie(const struct walk *w, Dwarf_Off off)
{
	size_t i = sorted_u64_upper_bound(w->cies, w->ncies, sizeof(*w->cies),
					  offsetof(struct cie_enc, offset), off);

	return i && w->cies[i - 1].offset == off ? &w->cies[i - 1] : NULL;
}

static int add_cie(struct walk *w, Dwarf_Off off, const Dwarf_CIE *cie)
{
	struct cie_enc *n;

	if (w->ncies == w->cap) {
		n = realloc(w->cies, (w->cap ? 2 * w->cap : 8) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		w->cies = n;
		w->cap = w->cap ? 2 * w->cap : 8;
	}
	w->cies[w->ncies++] = (struct cie_enc){
		off, (uint64_t)(cie->initial_instructions_end - cie->initial_instructions),
		cie_fde_encoding(cie, w->addr_size)
	};
	return 0;
}

/* Decodes one FDE's range; returns 0 or -ENOTSUP for an encoding not handled. */
static int fde_range(const struct walk *w, const Dwarf_FDE *fde, Elf_Data *data, uint64_t sh_addr,
		     uint64_t *lo, uint64_t *hi)
{
	const struct cie_enc *cie = find_cie(w, fde->CIE_pointer);
	uint8_t enc = cie ? cie->enc : DW_EH_PE_absptr;
	size_t sz = enc_size(enc, w->addr_size);
	const uint8_t *p = fde->start;
	uint64_t loc, len;

	if (!cie && w->eh_frame_p)
		return -ENOTSUP;
	if (!sz || (enc & 0x70 && (enc & 0x70) != DW_EH_PE_pcrel) || enc & DW_EH_PE_indirect ||
	    p + 2 * sz > fde->end)
		return -ENOTSUP;
	loc = read_value(p, enc, w->addr_size);
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		loc += sh_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
	len = read_value(p + sz, enc & 0x0f, w->addr_size);
	*lo = loc;
	*hi = loc + len;
	return 0;
}

int cfi_fde_each(Elf *elf, Elf_Data *data, uint64_t sh_addr, bool eh_frame_p, cfi_fde_fn fn,
		 void *ctx, uint64_t *skipped)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct walk *w;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	uint64_t lo, hi;
	int ret = 0, r;

	if (!ident || !data)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->addr_size = ident[EI_CLASS] == ELFCLASS32 ? 4 : 8;
	w->eh_frame_p = eh_frame_p;
	while (!ret && (r = dwarf_next_cfi(ident, data, eh_frame_p, off, &next, &e)) != 1) {
		if (r < 0) {
			if (next == (Dwarf_Off)-1 || next <= off)
				break; /* cannot skip past a broken entry */
		} else if (dwarf_cfi_cie_p(&e)) {
			ret = add_cie(w, off, &e.cie);
		} else if (!fde_range(w, &e.fde, data, sh_addr, &lo, &hi)) {
			const struct cie_enc *cie = find_cie(w, e.fde.CIE_pointer);
			uint64_t program = (uint64_t)(e.fde.end - e.fde.start) +
					   (cie ? cie->program_bytes : 0);

			if (hi > lo)
				ret = fn(ctx, lo, hi, program);
		} else {
			(*skipped)++;
		}
		off = next;
	}
	free(w->cies);
	free(w);
	return ret;
}
