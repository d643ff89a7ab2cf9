/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A module's symbol table sorted by address, for address -> name lookups by binary search.
 * libdwfl's dwfl_module_addrinfo scans every symbol on each call (0.1-0.7 ms here for libc,
 * python3.11 or a libpython's 15,000 symbols), and the agent asks for every new sampled
 * address. */
#ifndef SPANPROF_SYM_INDEX_H
#define SPANPROF_SYM_INDEX_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

struct sym_index_entry {
	uint64_t addr; /* in the module's reported address space */
	uint64_t size; /* 0: a symbol without size */
	const char *name; /* owned by libelf: valid while the module is */
	uint64_t sec_lo, sec_hi; /* a sizeless symbol's section: it names no address outside it */
	uint32_t rank; /* binding: global 2, weak 1, local 0 (the better name for an alias) */
	/* Its index in the table: of equal aliases, the first wins, as in libdwfl. */
	uint32_t order;
};

struct sym_index {
	struct sym_index_entry *v;
	size_t n;
	/* Heap behind it: the entries, and the symbol and string sections libelf read for them. */
	size_t bytes;
};

/* Fills idx from mod's symbol table (its .symtab, else .dynsym, as libdwfl finds them).
 * Returns 0 (an empty index when there are no symbols), -ENOMEM, or -EBADMSG (idx empty) when
 * the table's string table does not end with a NUL byte: its names cannot be trusted to end
 * inside it, so none is read (libdwfl's own lookups must not be used on it either). */
int sym_index_build(struct sym_index *idx, Dwfl_Module *mod);
void sym_index_free(struct sym_index *idx);

/* At most the heap sym_index_build() will hold (and need at once) for elf's listed table, from
 * its section headers alone: every symbol's entry, and the sections libelf reads. */
size_t sym_index_estimate(Elf *elf);

/* The symbol for addr, as dwfl_module_addrinfo names it: the closest sized symbol containing it
 * (the better-bound of aliases), else the closest symbol below it when that one has no size and
 * sits in the same section; NULL when none. *off gets addr's offset into it. */
const char *sym_index_lookup(const struct sym_index *idx, uint64_t addr, uint64_t *off);

#endif /* SPANPROF_SYM_INDEX_H */
