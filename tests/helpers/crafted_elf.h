/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: writes small crafted ELF files (one executable PT_LOAD, the sections asked for),
 * including sections that claim more bytes than the file holds on disk (sparse). */
#ifndef SPANPROF_TEST_CRAFTED_ELF_H
#define SPANPROF_TEST_CRAFTED_ELF_H

#include <stddef.h>
#include <stdint.h>

struct crafted_section {
	const char *name;
	uint32_t type; /* SHT_* */
	uint64_t addr; /* sh_addr */
	const void *data; /* the bytes written at the section's start (may be NULL) */
	size_t len; /* of data */
	uint64_t claimed; /* sh_size when larger than len: the rest is a hole in the file */
};

/* Writes an x86-64 ET_DYN file at path (mode 0644) with the n sections (plus .shstrtab) and a
 * PT_LOAD (read, execute) over its first page. Returns 0 or -errno. */
int crafted_elf_write(const char *path, const struct crafted_section *secs, size_t n);

/* Copies the ELF file src to dst and gives the copy nsec (zeroed) section headers through
 * extended numbering: e_shnum 0, the count in section header 0's sh_size, the table appended
 * (sparse). Returns 0 or -errno. */
int crafted_elf_extend_sections(const char *src, const char *dst, uint64_t nsec);

/* Sets sh_link and sh_entsize of section ndx of the file at path (sections count from 1 in the
 * order given to crafted_elf_write()): what a symbol table needs to name its string table.
 * Returns 0 or -errno. */
int crafted_elf_set_link(const char *path, unsigned int ndx, uint32_t link, uint64_t entsize);

/* Bytes the file really occupies on disk (st_blocks), to show a claim is sparse. */
uint64_t crafted_elf_disk_bytes(const char *path);

#endif /* SPANPROF_TEST_CRAFTED_ELF_H */
