/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds an OpenTelemetry thread context publisher in an ELF file: the TLS variable
 * otel_thread_ctx_v1 defined in .dynsym, its module's TLS segment, and the GOT slots where the
 * dynamic linker writes how the variable is reached (module id, TLS descriptor, or offset from
 * the thread pointer). */
#ifndef SPANPROF_TCTX_ELF_H
#define SPANPROF_TCTX_ELF_H

#include <stdint.h>

#include "util/elf_layout.h"

#define TCTX_SYMBOL "otel_thread_ctx_v1"
/* The function spanprof's own hook library exports (include/spanprof.h): a module that defines
 * it in .dynsym is that library, told apart without parsing its probe note. */
#define TCTX_SPAN_HOOK_SYMBOL "spanprof_span_set"

struct tctx_elf {
	uint64_t sym_offset; /* st_value: the variable's offset in the module's TLS block */
	uint64_t tls_memsz, tls_align, tls_vaddr; /* PT_TLS */
	/* GOT slots (file vaddrs; 0: none) relocated for this module's TLS: */
	uint64_t dtpmod_got; /* R_X86_64_DTPMOD64: the module id (general-dynamic) */
	uint64_t dtpoff_got; /* R_X86_64_DTPOFF64 of the variable: its offset in the block */
	uint64_t tlsdesc_got; /* R_X86_64_TLSDESC: {resolver, argument} (TLSDESC) */
	uint64_t tpoff_got; /* R_X86_64_TPOFF64 of the variable: offset from the thread pointer */
	struct elf_loads loads;
	int span_hook; /* .dynsym also defines TCTX_SPAN_HOOK_SYMBOL: spanprof's hook library */
};

/* Reads fd (an ELF file, untrusted). Returns 0 with *out filled when the file defines
 * otel_thread_ctx_v1 as a TLS symbol in .dynsym, -ENOENT when it does not, -ENOEXEC when it
 * is not a native ELF, -EFBIG when its relocation sections claim more than
 * ELF_SECTION_MAX_SYMBOLS together (nothing of them was read), or another -errno. */
int tctx_elf_read(int fd, struct tctx_elf *out);

#endif /* SPANPROF_TCTX_ELF_H */
