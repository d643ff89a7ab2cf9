/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reads the data of one section of an untrusted ELF file only when the size the file claims for
 * it is within a stated maximum, so a sparse file cannot make the agent allocate gigabytes. */
#ifndef SPANPROF_ELF_SECTION_H
#define SPANPROF_ELF_SECTION_H

#include <stddef.h>
#include <libelf.h>

/* The stated maximum of every section the agent reads whole (libelf allocates sh_size bytes and
 * reads them, however few blocks the file really has on disk). Real files stay far below: */
/* .note.stapsdt: a few hundred bytes per probe. */
#define ELF_SECTION_MAX_NOTES (1u << 20)
/* .go.buildinfo: a 32-byte header, the version and the module list (kilobytes). */
#define ELF_SECTION_MAX_GO_BUILDINFO (4u << 20)
/* .gopclntab and the Go sections read with it (.noptrdata, the gofunc section): a 100 MB Go
 * executable has a table of about 30 MB. */
#define ELF_SECTION_MAX_GO_TABLE (64u << 20)
/* Symbol, string and relocation tables read entry by entry (elf_guard.h caps the sum of symbol
 * and string tables of a file at the same size). */
#define ELF_SECTION_MAX_SYMBOLS (64u << 20)
/* .gnu_debugdata, xz-compressed symbol tables ("MiniDebugInfo"): a few hundred kilobytes. */
#define ELF_SECTION_MAX_MINIDEBUG (8u << 20)
/* .eh_frame / .debug_frame: about a tenth of the code, which unwind tables cap at 40 MB. */
#define ELF_SECTION_MAX_CFI (32u << 20)

/* The data of scn as elf_getdata() gives it (owned by elf), read only when the section's size in
 * the file (sh_size; nothing is decompressed here) is at most max_bytes. A NOBITS section has no
 * bytes in the file and is returned as libelf describes it (d_buf NULL). Returns 0 and *data,
 * -EFBIG when the section claims more than max_bytes (nothing was allocated or read), or -ENOEXEC
 * when libelf cannot read it. */
int elf_section_data(Elf_Scn *scn, size_t max_bytes, Elf_Data **data);

/* 0 when every note section and note segment of elf (what libdwelf reads whole to find a build
 * id) is at most max_bytes, else -EFBIG. */
int elf_section_notes_fit(Elf *elf, size_t max_bytes);

#endif /* SPANPROF_ELF_SECTION_H */
