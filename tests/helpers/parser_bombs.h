/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: crafted files a local user maps to attack the agent's parsers: a .gopclntab whose
 * rows all name one long string, sections claiming gigabytes of a sparse file, an .eh_frame FDE
 * of very many CFI rows, and a thread context module with huge tables. */
#ifndef SPANPROF_TEST_PARSER_BOMBS_H
#define SPANPROF_TEST_PARSER_BOMBS_H

#include <stdint.h>
#include <stddef.h>

/* An ELF with a Go 1.20 .gopclntab of nfunc functab rows that all name one name_len-byte
 * string, and the Go hook's name once (the agent reads no table without it). Returns 0 or -1. */
int parser_bomb_gopclntab(const char *path, uint64_t nfunc, size_t name_len);

/* The same, with a .gopclntab of table_bytes (a hole after the rows, nothing on disk): the
 * agent's name search budget grows with the table's size, so each parse costs it more. */
int parser_bomb_gopclntab_sized(const char *path, uint64_t nfunc, size_t name_len,
				uint64_t table_bytes);

#define SPARSE_GOPCLNTAB 1u /* a .gopclntab claiming 2 GiB (read by hook discovery) */
#define SPARSE_BUILDINFO 2u /* a .go.buildinfo claiming 1 GiB (the Go version) */
#define SPARSE_EH_FRAME 4u /* an .eh_frame claiming 1 GiB (unwind tables) */

/* An ELF of a few kilobytes on disk with the SPARSE_* sections in which. Returns 0 or -1. */
int parser_bomb_sparse(const char *path, unsigned int which);

/* A shared library whose one function cfi_bomb has an FDE of rows CFI rows (the CFA offset
 * alternates after every 1-byte instruction); its assembly source goes into dir. Returns 0 or
 * -1. */
int parser_bomb_cfi(const char *dir, const char *lib, int rows);

/* An ELF whose .symtab claims symtab_bytes (a hole after its first, defined symbol: nothing on
 * disk), so that whoever reads its symbols walks symtab_bytes / 24 entries. Named like an
 * interpreter (libpython3.11.so.1.0, libruby.so) it is a file the agent parses to look for one.
 * Returns 0 or -1. */
int parser_bomb_symtab(const char *path, uint64_t symtab_bytes);

/* Relocation sections of parser_bomb_thread_ctx() that each name a section of their own as
 * their symbol table. */
#define THREAD_CTX_BOMB_LINKED 6

/* A module that exports the OpenTelemetry thread context variable (otel_thread_ctx_v1, TLS, in
 * .dynsym, and a PT_TLS), with a .dynsym and a .rela.dyn that each claim table_bytes (holes
 * after their first entries: nothing on disk), and THREAD_CTX_BOMB_LINKED relocation sections
 * of one entry whose symbol table is a section of its own claiming linked_bytes (not a symbol
 * table: a hole). Returns 0 or -1. */
int parser_bomb_thread_ctx(const char *path, uint64_t table_bytes, uint64_t linked_bytes);

#endif /* SPANPROF_TEST_PARSER_BOMBS_H */
