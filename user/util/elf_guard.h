/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Opens untrusted ELF files for libelf without mmap (a file truncated under a mapping would
 * raise SIGBUS in the agent) and only when their headers are within caps that bound the time
 * and memory libelf spends on them. */
#ifndef SPANPROF_ELF_GUARD_H
#define SPANPROF_ELF_GUARD_H

#include <stddef.h>
#include <libelf.h>

/* Caps on what one ELF file may declare; beyond them the file is refused (-E2BIG). Real
 * binaries and debug files have tens of sections and about ten program headers. */
#define ELF_GUARD_MAX_SECTIONS 8192
#define ELF_GUARD_MAX_PHDRS 512
/* Symbol and string tables read whole by libdwfl, per file. */
#define ELF_GUARD_MAX_SYMTAB_BYTES (64ull << 20)

/* Checks fd's ELF header (read with pread, nothing mapped): native byte order and class, header
 * tables inside the file, section and program header counts (extended numbering included)
 * within the caps. Returns 0, -ENOEXEC (not native ELF), -EINVAL (inconsistent), -E2BIG (over
 * a cap), or pread()'s error. */
int elf_guard_check(int fd);

/* elf_guard_check(), then elf_begin(fd, ELF_C_READ) (libelf reads with pread on demand and
 * never maps the file), then checks that the symbol and string tables fit
 * ELF_GUARD_MAX_SYMTAB_BYTES, the notes ELF_SECTION_MAX_NOTES, and that a .gnu_debugdata
 * section (at most ELF_SECTION_MAX_MINIDEBUG) decompresses to at most
 * ELF_GUARD_MAX_SYMTAB_BYTES (E2BIG otherwise). fd is not consumed and must outlive the Elf.
 * Returns the Elf, or NULL with errno set as above. */
Elf *elf_guard_begin(int fd);

/* Bytes the DWARF sections of elf take once libdw has opened (and decompressed) them: the sum of
 * .debug_* section sizes, the uncompressed size for SHF_COMPRESSED ones (read from their
 * compression header with pread on fd). 0 when there is no DWARF. */
size_t elf_guard_dwarf_bytes(Elf *elf, int fd);

/* Copies fd's regular file (at most max_bytes) into a sealed memfd nobody else can change, for
 * libraries that map what they are given. Returns the memfd, or -errno (-E2BIG when larger). */
int elf_guard_private_copy(int fd, size_t max_bytes);

#endif /* SPANPROF_ELF_GUARD_H */
