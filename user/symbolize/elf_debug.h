/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Finds the separate debug file of an ELF module (by build id, then by .gnu_debuglink), as a
 * libdwfl find_debuginfo callback that knows the process's root directory. */
#ifndef SPANPROF_ELF_DEBUG_H
#define SPANPROF_ELF_DEBUG_H

#include <elfutils/libdwfl.h>

/* Where to look; the module's userdata slot must point at one of these (see elf_syms.c). */
struct elf_debug_ctx {
	const char *path; /* the file as its process sees it: "/usr/bin/app" */
	const char
		*root; /* prefix under which path is visible to us ("/proc/42/root"); may be "" */
	const char
		*debug_root; /* "/usr/lib/debug", or NULL to skip the build-id and global lookups */
	size_t dwarf_limit; /* refuse debug files with more DWARF bytes than this; 0: none */
	size_t debug_dwarf_bytes; /* out: DWARF bytes of the debug file accepted (or refused) */
	int refused_big; /* out: a matching debug file was refused for its size */
	/* The main file, opened by elf_syms without mmap and handed to libdwfl by its find_elf
	 * callback (then reset to NULL / -1). */
	Elf *main_elf;
	int main_fd;
	/* The debug file elf_debug_prefind() found (-1 / NULL: none), handed to libdwfl when it
	 * first asks (then reset to -1 / NULL). */
	int found_fd;
	char *found_name;
	int prefound; /* elf_debug_prefind() has looked: libdwfl gets its result, not a new search */
};

/* Debug files found inside a process's root directory (which the process may truncate or
 * rewrite) are handed to libdwfl as a private sealed copy of at most this many bytes. */
#define ELF_DEBUG_MAX_COPY (256ull << 20)

/* Looks for main's separate debug file now, as elf_debug_find() describes, while the process's
 * root directory exists, and keeps it open in ctx->found_fd / found_name for libdwfl to ask for
 * later: libdwfl asks only when it first reads the symbol table or DWARF, which the agent does
 * only for a file that is sampled. Returns 1 when one was found, else 0. */
int elf_debug_prefind(struct elf_debug_ctx *ctx, Elf *main);

/* Closes and frees what elf_debug_prefind() found and libdwfl never asked for. */
void elf_debug_release(struct elf_debug_ctx *ctx);

/* libdwfl find_debuginfo callback: hands over what elf_debug_prefind() found, when called;
 * otherwise searches itself. Tries, in order: <debug_root>/.build-id/xx/rest.debug, then
 * for a .gnu_debuglink name L: <root><dir>/L, <root><dir>/.debug/L and <debug_root><dir>/L, with
 * dir the directory of path. A candidate is accepted only when it is ELF and its build id equals
 * the module's (when the module has one). Returns an open fd and sets *debuginfo_file_name to a
 * malloc'ed path, or returns -1 with errno ENOENT. Candidates are opened without blocking or
 * following a final symlink, read without mmap (elf_guard.h), and refused when their DWARF is
 * larger than ctx->dwarf_limit. */
int elf_debug_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

#endif /* SPANPROF_ELF_DEBUG_H */
