/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds the spanprof_span_set() probe site in an ELF file: its stapsdt note (provider
 * "spanprof", probe "span_set") gives the site and the semaphore, turned into file offsets. */
#ifndef SPANPROF_HOOK_ELF_H
#define SPANPROF_HOOK_ELF_H

#include <stdint.h>

struct hook_site {
	uint64_t site_offset; /* file offset of the 1-byte nop (the classic USDT site) */
	uint64_t nop5_offset; /* file offset of the following 5-byte nop; 0 if absent */
	uint64_t semaphore_offset; /* file offset of the 2-byte semaphore; 0 if none */
	int is_go; /* a Go executable: spans belong to goroutines */
	/* Go only: runtime.g's pprof labels (go_runtime.h GO_LABELS_*; kind 0: not readable). */
	uint32_t go_labels_offset, go_labels_kind;
	uint32_t go_m_offset, go_curg_offset; /* g.m, m.curg; 0: unknown */
	uint32_t go_goid_offset; /* g.goid; 0: unknown */
	int32_t go_g_offset; /* Go only: of the g pointer from FS base (go_tls.h) */
	/* A Go file whose runtime layout is not in the table: its version, for the log */
	char go_version[64];
	int go_layout_from_dwarf; /* the layout was read from the file's DWARF */
};

/* The Go hook has no ELF note (Go's linker cannot emit one): it is found by these symbol name
 * suffixes in .symtab (the prefix is the package path). */
#define HOOK_GO_FUNC_SUFFIX ".spanprofGoSpanSet"
#define HOOK_GO_SEMAPHORE_SUFFIX ".spanprofGoSemaphore"
/* Without .symtab (stripped), the function is found by name in .gopclntab and the semaphore
 * through its first instruction; the Go side stores this tag after the 2-byte count. */
#define HOOK_GO_SEMAPHORE_TAG 0x5350

/* Looks for the hook in the ELF file at path: the C hook's stapsdt note, else the Go hook's
 * symbols, else (stripped Go) the Go hook in .gopclntab. A Go executable of a version whose pprof
 * labels the sampler can read counts even without the hook: 0 with site_offset 0 and is_go set
 * (nothing to probe, but its goroutines' span labels are read). Returns 0 and fills *site,
 * -ENODATA when the file is an ELF without the hook, -ENOTSUP for a Go executable whose g
 * pointer cannot be located in TLS (stripped PIE with external linking, Go shared library:
 * refused, as its goroutines could not be told apart), -EPROTONOSUPPORT for a Go executable (hook
 * or not) whose runtime layout is neither in the version table nor readable from its DWARF
 * (site->go_version says which: spans could outlive their goroutine, so none are read), -ENOEXEC
 * when it is not an ELF (or is malformed), -EFBIG when a section it needs claims more than its
 * stated maximum (elf_section.h) or its .gopclntab names more bytes than the search budget
 * (refused: nothing larger was read), or
 * -errno when it cannot be opened or read. Never crashes on malformed input. */
int hook_elf_find(const char *path, struct hook_site *site);

/* Same, on an already open file descriptor (not closed). */
int hook_elf_find_fd(int fd, struct hook_site *site);

#endif /* SPANPROF_HOOK_ELF_H */
