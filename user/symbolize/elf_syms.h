/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One ELF module opened through libdwfl: build id, file offset to ELF address, and address to
 * function names (with inlined frames, file and line when DWARF is available). */
#ifndef SPANPROF_ELF_SYMS_H
#define SPANPROF_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

/* At most this many source lines (the real function plus inlined ones) per address. */
#define ELF_SYMS_MAX_LINES 8

struct elf_syms;

/* One source-level frame. Strings are owned by the struct elf_syms and stay valid until the next
 * elf_syms_lookup() on it or elf_syms_free(). */
struct elf_sym_line {
	const char *function; /* demangled */
	const char *file; /* NULL when unknown */
	int line; /* 0 when unknown */
};

/* Opens an executable or shared library for symbolization.
 * fd:         an open descriptor of the file; always consumed (closed on failure too).
 * path:       the file's path as its process sees it ("/usr/lib/libc.so.6"); used for
 *             .gnu_debuglink lookups and in messages.
 * root:       prefix under which path is visible to us ("/proc/42/root"), or NULL for none.
 * debug_root: directory of separate debug files ("/usr/lib/debug"), or NULL.
 * Separate debug files are found and opened here, not lazily, so that a process's root directory
 * may vanish afterwards. Returns NULL and sets errno: EINVAL for a malformed or non-ELF file,
 * ENOEXEC for an ELF that is not an executable or shared library, ENOMEM. */
struct elf_syms *elf_syms_new(int fd, const char *path, const char *root, const char *debug_root);

/* elf_syms_new() on a file opened by path (root none). Same errors, plus those of open(). */
struct elf_syms *elf_syms_open(const char *path, const char *debug_root);

/* NULL-safe. */
void elf_syms_free(struct elf_syms *es);

/* The GNU build id in lower-case hex (owned by es), or NULL when the file has none. */
const char *elf_syms_build_id(const struct elf_syms *es);

/* The separate debug file in use (owned by es), or NULL when there is none. */
const char *elf_syms_debug_file(const struct elf_syms *es);

/* 1 when DWARF (own or separate) is available, else 0. */
int elf_syms_has_dwarf(struct elf_syms *es); /* loads DWARF if not done yet */

/* Heap this module holds for its symbol table: the sorted index and the symbol and string
 * sections libelf read for it, and Go's function table when one was read (none before the
 * first lookup), for the symbol cache's byte budget. DWARF is accounted apart
 * (elf_syms_dwarf_bytes). */
size_t elf_syms_size(const struct elf_syms *es);

/* 1 while a lookup may still read a table for the first time (the sorted symbol index, Go's
 * function table): such a lookup is a load, for the caller's load budget. A module whose DWARF
 * is loaded reads them only for addresses DWARF cannot answer, and says 0. */
int elf_syms_tables_pending(const struct elf_syms *es);

/* elf_syms_size() of a module just opened (before any table is read). */
size_t elf_syms_open_size(void);

/* At most the bytes a lookup may add to elf_syms_size() by reading tables for the first time
 * (also with DWARF loaded: the symbol table answers what DWARF does not), from the section
 * headers of the file and of its separate debug file; 0 once both are read. */
size_t elf_syms_tables_estimate(struct elf_syms *es);

/* Bytes libdw will hold for this module's DWARF once loaded (decompressed debug sections of
 * the file itself or of its separate debug file), as far as known now; 0 when unknown or none. */
size_t elf_syms_dwarf_bytes(const struct elf_syms *es);

/* Loads DWARF now unless it is larger than limit bytes (0: no limit); a module without DWARF
 * then answers from its symbol table. Returns 1 when DWARF is loaded, else 0. Decided once. */
int elf_syms_load_dwarf(struct elf_syms *es, size_t limit);

/* 1 once it is decided whether DWARF is used (loaded, absent or refused). */
int elf_syms_dwarf_decided(const struct elf_syms *es);

/* What elf_syms_take_refusal() reports. */
#define ELF_SYMS_REFUSED_GO_TABLE 1 /* a Go section over its stated maximum (elf_section.h) */
/* A symbol table whose string table does not end with a NUL byte: no symbol name is read. */
#define ELF_SYMS_REFUSED_STRTAB 2

/* The ELF_SYMS_REFUSED_* bits that lookups since the last call found and did not read (each
 * reported once); 0 when none. For the caller to count and log. */
int elf_syms_take_refusal(struct elf_syms *es);

/* 1 when elf_syms_load_dwarf() refused the DWARF for its size. */
int elf_syms_dwarf_refused(const struct elf_syms *es);

/* Translates a file offset (addr - mapping start + mapping offset) into an ELF virtual address
 * through the PT_LOAD segments. Returns 0, or -ENOENT when no segment maps that offset. */
int elf_syms_file_to_vaddr(const struct elf_syms *es, uint64_t offset, uint64_t *vaddr);

/* Symbolizes an ELF virtual address. Fills up to max lines, innermost inlined function first and
 * the function that really contains vaddr last. Returns the number filled (0 when no symbol
 * covers vaddr), or -ENOMEM. */
int elf_syms_lookup(struct elf_syms *es, uint64_t vaddr, struct elf_sym_line *lines, int max);

#endif /* SPANPROF_ELF_SYMS_H */
