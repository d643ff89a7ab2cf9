/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One ELF file's unwind table, built from its own CFI (.eh_frame, else .debug_frame) with libdw:
 * rows sorted by PC, each saying how to find the CFA, the return address and the caller's rbp. */
#ifndef SPANPROF_CFI_TABLE_H
#define SPANPROF_CFI_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <libelf.h>
#include <linux/types.h>

#include "spanprof_abi.h"

/* A row applies from pc up to the next row's pc. */
struct cfi_row {
	uint64_t pc; /* ELF virtual address */
	struct spanprof_unwind_rule rule;
};

struct cfi_table_stats {
	uint64_t fdes; /* FDEs read */
	uint64_t text_bytes; /* size of the executable PT_LOAD segments */
	uint64_t invalid_rows; /* rows with a rule the unwinder cannot follow (counted, kept) */
	uint64_t plt_rows, signal_rows, stop_rows;
	uint64_t build_us; /* time the build took */
	uint64_t rows_read; /* CFI rows asked of libdw */
	uint64_t
		replay_bytes; /* CFA program bytes those lookups may have run (the budget's unit) */
};

struct cfi_table {
	struct cfi_row *rows; /* sorted by pc, no two neighbours with the same rule */
	size_t nrows;
	struct cfi_table_stats stats;
};

/* Files with more executable bytes than this are not read: at 18-30k rows per MB their table
 * would exceed what the BPF unwinder can hold (SPANPROF_UNWIND_TABLE_CHUNKS chunks). */
#define CFI_TABLE_MAX_TEXT (40ull << 20)

/* The budget of one file's build, so a crafted CFI section cannot hold the worker (and every file
 * queued behind it) for long. libdw answers each row by replaying its FDE's program from the
 * start, so an FDE of n rows costs about n x its program's length: the build stops once the
 * program bytes so charged exceed CFI_TABLE_MAX_REPLAY_BYTES (under a second; libclang-14, with
 * 37,000 FDEs, uses 14% of it, libc and libpython 1% or less), or once it used
 * CFI_TABLE_MAX_BUILD_CPU_MS of the thread's CPU time, whichever comes first. */
#define CFI_TABLE_MAX_REPLAY_BYTES (512ull << 20)
#define CFI_TABLE_MAX_BUILD_CPU_MS 2000
/* .debug_frame is read through libdw's whole-DWARF reader: files with more DWARF than this
 * (inflated) are not read for it. */
#define CFI_TABLE_MAX_DWARF_BYTES (256ull << 20)

/* Builds the table of elf (not consumed). Returns 0, -ENOENT when the file has no CFI at all
 * (callers fall back to frame pointers), -E2BIG above CFI_TABLE_MAX_TEXT, -EFBIG when a section
 * it would read is over its stated maximum (elf_section.h) or the DWARF over
 * CFI_TABLE_MAX_DWARF_BYTES, -ETIME when the build spent its budget, -ENOMEM, -EINVAL for an
 * unreadable CFI section, or -ECANCELED once *cancel (NULL: never) is set, which is looked at
 * before every row: another thread can stop a long build within microseconds. */
int cfi_table_build(Elf *elf, struct cfi_table *out, const atomic_int *cancel);

/* Same, from an open file descriptor (not closed), whose ELF header tables must be within
 * elf_guard.h's caps (-EFBIG otherwise). */
int cfi_table_build_fd(int fd, struct cfi_table *out, const atomic_int *cancel);

/* Frees the rows and empties t. NULL-safe. */
void cfi_table_release(struct cfi_table *t);

/* The row that applies at pc, or NULL before the first row. */
const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t pc);

#endif /* SPANPROF_CFI_TABLE_H */
