/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What one ELF file (libruby*.so or a statically linked ruby) tells about the CRuby it holds:
 * its version, where the current execution context lives (the ruby_current_ec TLS variable and
 * its module-id GOT slot, or 2.7's global pointer), the VM loop's range and the symbol table a
 * C function's name needs. Read with libelf under elf_guard's caps: the file is untrusted. */
#ifndef SPANPROF_RUBY_ELF_H
#define SPANPROF_RUBY_ELF_H

#include <stdint.h>

#include "util/elf_layout.h"

#define RUBY_ELF_MAX_GUESSES 4

struct ruby_elf {
	int major, minor, patch; /* from the ruby_version string ("3.1.7") */
	int is_exec; /* the file is the program (ET_EXEC, or a PIE with an interpreter) */
	int has_tls_ec; /* ruby_current_ec (3.0+) is defined */
	uint64_t tls_ec_offset; /* ... its offset in the file's TLS block */
	uint64_t dtpmod_got; /* vaddr of the R_X86_64_DTPMOD64 slot for it; 0 when none */
	uint64_t ec_ptr_vaddr; /* ruby_current_execution_context_ptr (2.x); 0 when absent */
	uint64_t global_symbols; /* ruby_global_symbols (C function names); 0 when absent */
	/* Where ruby_global_symbols may be when it is not exported (Debian): the targets of the
	 * first RIP-relative loads in rb_sym_all_symbols, less 8 (the load of its str_sym). To be
	 * checked against process memory before use. */
	uint64_t global_symbols_guess[RUBY_ELF_MAX_GUESSES];
	int nguesses;
	uint64_t exec_lo, exec_hi; /* rb_vm_exec [lo, hi) as file vaddrs; 0 when absent */
	struct elf_loads loads; /* to place the file in memory (elf_loads_bias()) */
};

/* Reads fd (a regular file opened by the caller). Returns 0, -ENOENT when the file has no
 * ruby_version (not a CRuby interpreter), -ENOEXEC when the version cannot be parsed, or
 * elf_guard's error. */
int ruby_elf_read(int fd, struct ruby_elf *out);

/* Parses "X.Y.Z" (any suffix after Z). Returns 0 or -EINVAL. */
int ruby_elf_parse_version(const char *s, int *major, int *minor, int *patch);

#endif /* SPANPROF_RUBY_ELF_H */
