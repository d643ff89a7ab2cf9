/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where a Go amd64 executable keeps the running goroutine's g pointer: its offset from the
 * thread's FS base, read from the ELF (internal linking: -8; external linking, as with cgo: the
 * TLS variable runtime.tlsg inside the executable's TLS block). */
#ifndef SPANPROF_GO_TLS_H
#define SPANPROF_GO_TLS_H

#include <stdint.h>

#include <libelf.h>

/* The offset internally linked Go programs use: the runtime sets FS itself (no PT_TLS), or
 * its linker resolves every g access to it. */
#define GO_TLS_G_INTERNAL (-8)

/* Caps on the PT_TLS segment (a crafted file could declare anything): the whole static TLS
 * block glibc gives a process is a few KiB, so these are generous. */
#define GO_TLS_MAX_BLOCK (1u << 20)
#define GO_TLS_MAX_ALIGN (1u << 12)

/* Size of the executable's TLS block as the loader places it under the thread pointer (x86-64
 * TLS variant II): the least size >= memsz that keeps the block start congruent to vaddr
 * modulo align. Returns 0 and fills *block, or -ENOEXEC when align is not a power of two or
 * memsz / align are over the caps. */
int go_tls_block_size(uint64_t memsz, uint64_t vaddr, uint64_t align, uint64_t *block);

/* The g pointer's offset from FS base in the Go executable elf (read through fd too). In order:
 * no PT_TLS -> GO_TLS_G_INTERNAL; runtime.tlsg in .symtab -> st_value - block size; a TLS
 * segment holding only runtime.tlsg (8 bytes) -> -block size; otherwise (stripped and
 * externally linked) the %fs displacement of runtime.morestack's g loads, found through
 * .gopclntab, which must all agree. Every value must lie inside the TLS block.
 * Returns 0 and fills *offset, -ENOTSUP when the slot cannot be located soundly (stripped
 * PIE with external linking; a shared library, -buildmode=c-shared), -ENOEXEC when the
 * ELF's TLS values are inconsistent, or -EFBIG when a section it reads is over its stated
 * maximum (elf_section.h, gopclntab.h). */
int go_tls_g_offset(Elf *elf, int fd, int32_t *offset);

#endif /* SPANPROF_GO_TLS_H */
