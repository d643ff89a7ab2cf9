/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Lists the PC ranges of the FDEs of one CFI section, walking it with libdw's dwarf_next_cfi and
 * decoding only the FDE's address fields (the pointer encoding its CIE's 'R' augmentation names).
 */
#ifndef SPANPROF_CFI_FDE_H
#define SPANPROF_CFI_FDE_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

/* Called for each FDE covering [lo, hi); program_bytes is the length of the CFA program libdw
 * runs for one lookup in it at worst (the CIE's initial instructions and the FDE's own). A
 * non-zero return stops the walk and is returned. */
typedef int (*cfi_fde_fn)(void *ctx, uint64_t lo, uint64_t hi, uint64_t program_bytes);

/* Walks section data (loaded at sh_addr; .eh_frame when eh_frame_p, else .debug_frame).
 * Returns 0, fn's non-zero return, or -EINVAL when the section cannot be walked at all.
 * FDEs whose addresses use an encoding not handled here are skipped and counted in *skipped. */
int cfi_fde_each(Elf *elf, Elf_Data *data, uint64_t sh_addr, bool eh_frame_p, cfi_fde_fn fn,
		 void *ctx, uint64_t *skipped);

#endif /* SPANPROF_CFI_FDE_H */
