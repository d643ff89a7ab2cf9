/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reader of Go's .gopclntab (Go 1.16+ layouts, little-endian, 8-byte pointers): function
 * entries and names, and file:line of a pc, from what `-ldflags="-s -w"` keeps in a binary. */
#ifndef SPANPROF_GOPCLNTAB_H
#define SPANPROF_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* A view over the table bytes; owns nothing. Every offset read from the bytes is checked
 * against size before use: a hostile file yields errors, never an out-of-bounds read. */
struct gopclntab {
	const uint8_t *data;
	size_t size;
	uint32_t version; /* 116 (Go 1.16-1.17), 118 (1.18-1.19) or 120 (1.20+) */
	uint32_t quantum; /* instruction size quantum of pc deltas (1 on x86-64) */
	uint64_t nfunc;
	uint64_t text; /* vaddr that 1.18+ entry offsets are relative to */
	uint64_t funcname, cu, filetab, pctab, functab; /* sub-table offsets into data */
	uint64_t functab_entry; /* bytes per functab row: 8 (1.18+) or 16 */
	uint64_t vaddr; /* where the table is loaded (set by gopclntab_from_elf, else 0) */
};

/* Longest name or file name read (longer ones make the table malformed): Go's longest
 * generic instantiation names are a few kilobytes. */
#define GOPCLNTAB_NAME_MAX (64u << 10)

/* One function of the table. name points into the table bytes (NUL-terminated there). */
struct gopclntab_func {
	uint64_t entry, end; /* [entry, end) in ELF virtual addresses */
	const char *name;
	size_t name_len; /* strlen(name) */
	uint64_t func_off; /* offset of its _func record in data (internal) */
};

/* Checks the header of the table at data (size bytes) and fills t. text_vaddr is the start of
 * .text, used when the header has none (Go < 1.18) or a zero one (externally linked PIE).
 * Returns 0, -ENOEXEC for an unknown magic or header/offsets that do not fit in size. */
int gopclntab_init(struct gopclntab *t, const void *data, size_t size, uint64_t text_vaddr);

/* The i-th function (0 <= i < t->nfunc) in entry order. Returns 0 or -ENOEXEC (malformed). */
int gopclntab_func_at(const struct gopclntab *t, uint64_t i, struct gopclntab_func *f);

/* Most functions a table searched by name may list: the largest Go programs have a few hundred
 * thousand. The search is a linear walk; this bounds it to tens of milliseconds. */
#define GOPCLNTAB_MAX_SEARCH_FUNCS 500000

/* The first function (in entry order) named want, or whose name ends with want when suffix.
 * Linear in the table's size whatever its rows say: the names compared add up to at most twice
 * the table. Returns 0 and fills *f, -ENOENT when no function matches, -E2BIG when the table
 * lists more than GOPCLNTAB_MAX_SEARCH_FUNCS functions or its rows name more bytes than that
 * budget (a crafted table), or -ENOEXEC (malformed). */
int gopclntab_find_name(const struct gopclntab *t, const char *want, int suffix,
			struct gopclntab_func *f);

/* The function containing pc. Returns 0, -ENOENT (no function covers pc) or -ENOEXEC. */
int gopclntab_find(const struct gopclntab *t, uint64_t pc, struct gopclntab_func *f);

/* Source file and line of pc inside f. Returns 0, -ENOENT (no entry for pc) or -ENOEXEC. */
int gopclntab_source(const struct gopclntab *t, const struct gopclntab_func *f, uint64_t pc,
		     const char **file, int *line);

/* Most steps of one pc-value walk: one per change of the value (line, file) inside a function,
 * so far above what the largest generated functions have. */
#define GOPCLNTAB_MAX_PCVALUE_STEPS (1u << 20)

/* Runs the pc-value table at table_off (from a _func) from entry to pc (runtime.pcvalue).
 * Returns 0 and the value, -ENOENT when the table has no entry for pc, or -ENOEXEC (malformed,
 * or over GOPCLNTAB_MAX_PCVALUE_STEPS). */
int gopclntab_pcvalue(const struct gopclntab *t, uint32_t table_off, uint64_t entry, uint64_t pc,
		      int32_t *value);

/* The function name at nameoff in the name table, or NULL when it runs off the table. */
const char *gopclntab_name(const struct gopclntab *t, int64_t nameoff);

/* Finds the table in an ELF (section .gopclntab, or .data.rel.ro.gopclntab in PIE) and inits t
 * over the bytes libelf holds for it (valid while elf is), read only when the section claims at
 * most ELF_SECTION_MAX_GO_TABLE bytes. Returns 0, -ENODATA when the file has no such section,
 * -EFBIG when it is larger than that (nothing read), or -ENOEXEC. */
int gopclntab_from_elf(struct gopclntab *t, Elf *elf);

#endif /* SPANPROF_GOPCLNTAB_H */
