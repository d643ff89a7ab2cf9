/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Where things are in an ELF file opened with libelf: sections by name or by address, and
 * the file offset of a virtual address. Headers are written by whoever made the file, so every
 * sum is checked and a lookup that does not fit fails instead of wrapping. */
#ifndef SPANPROF_ELF_LAYOUT_H
#define SPANPROF_ELF_LAYOUT_H

#include <stdint.h>
#include <gelf.h>

/* Which sections a lookup accepts. */
enum elf_scn_kind {
	ELF_SCN_ANY, /* any type */
	ELF_SCN_FILE_BYTES, /* any type with bytes in the file (not SHT_NOBITS) */
	ELF_SCN_PROGBITS, /* SHT_PROGBITS only */
};

/* Names longer than this are none the readers look for: a string with no NUL within it is not
 * read as a name. */
#define ELF_NAME_MAX 4096

/* The NUL-terminated string at offset off of string table strndx (an SHT_STRTAB section read
 * within ELF_SECTION_MAX_SYMBOLS), or NULL when strndx is no such section, off lies outside it
 * or no NUL ends the string within ELF_NAME_MAX bytes. Its cost is the name's: elf_strptr()
 * looks for the table's last NUL from the table's end at every call when the table does not end
 * with one, so a crafted table of megabytes made every lookup scan it (quadratic in the file). */
const char *elf_name_at(Elf *elf, size_t strndx, size_t off);

/* The first section named name of that kind; its header in *shdr. NULL when none. */
Elf_Scn *elf_section_named(Elf *elf, const char *name, enum elf_scn_kind kind, GElf_Shdr *shdr);

/* The allocated SHT_PROGBITS section whose addresses hold vaddr; NULL when none. */
Elf_Scn *elf_section_at(Elf *elf, uint64_t vaddr, GElf_Shdr *shdr);

/* File offset of [vaddr, vaddr + len) through the PT_LOAD segment whose file bytes hold all of
 * it; the segment must have every permission bit in need (PF_X, PF_W; 0: none asked).
 * Returns 0, or -ENOEXEC when no segment holds it or the one that does lacks a permission. */
int elf_vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t len, uint32_t need, uint64_t *offset);

/* The first PT_LOAD segments of a file: what places it in a process's memory. */
#define ELF_LOADS_MAX 8
struct elf_loads {
	struct {
		uint64_t vaddr, offset, filesz;
	} seg[ELF_LOADS_MAX];
	int n;
};

/* Notes the first ELF_LOADS_MAX PT_LOAD segments of elf in *out (none when the headers cannot
 * be read). */
void elf_loads_read(Elf *elf, struct elf_loads *out);

/* The load bias of the file when its bytes at file offset map_offset are mapped at map_start:
 * runtime address = file vaddr + bias. Returns 0, or -ENOENT when no PT_LOAD holds map_offset. */
int elf_loads_bias(const struct elf_loads *l, uint64_t map_start, uint64_t map_offset,
		   uint64_t *bias);

/* Reads len bytes at file vaddr (elf_vaddr_to_offset(), then pread on fd). Returns 0, -ENOEXEC
 * (not in the file) or -EIO (short read). */
int elf_read_vaddr(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t len);

/* Calls fn for every defined symbol of .dynsym and .symtab of elf, open on fd (elf_guard_begin()).
 * The tables are read from fd with pread, a chunk of entries at a time, and names through a
 * window of the string table (elf_sym_stream.c): a walk holds about 120 KiB whatever the sizes
 * of the tables, where libelf would copy each whole section into the heap. A symbol whose name
 * cannot be read (outside its table, no NUL within ELF_NAME_MAX) is skipped, and so is a table
 * whose entries are not the size of the file's class or that does not lie in the file. A symbol
 * or string table claiming more than ELF_SECTION_MAX_SYMBOLS bytes is not read. Returns 0,
 * -EFBIG when a table was left out so (the others were walked), -ENOMEM, or fstat()'s -errno.
 * The name passed to fn lives until fn returns. */
typedef void (*elf_symbol_fn)(void *ctx, const char *name, const GElf_Sym *sym);
int elf_each_defined_symbol(Elf *elf, int fd, elf_symbol_fn fn, void *ctx);

/* The same walk over one symbol table scn (SHT_DYNSYM or SHT_SYMTAB) of elf, open on fd, with
 * each symbol's index in the table, until fn returns nonzero. Returns 0 (walked, or stopped by
 * fn), -EFBIG (the table or its string table is over ELF_SECTION_MAX_SYMBOLS: not read),
 * -ENOEXEC (scn is not a symbol table, or cannot be read as one: none or part of it walked),
 * -ENOMEM or fstat()'s -errno. */
typedef int (*elf_symbol_at_fn)(void *ctx, size_t ndx, const char *name, const GElf_Sym *sym);
int elf_each_symbol_in(Elf *elf, int fd, Elf_Scn *scn, elf_symbol_at_fn fn, void *ctx);

/* Whether a string table of a symbol table of elf (open on fd) may hold the n bytes at bytes:
 * searched through a small buffer (file_find()), so a walk that looks for names can be ruled
 * out by one read of the string tables when none of them holds the name. Returns 0 when none
 * does, 1 when one does or a read failed (unsure). Tables elf_each_defined_symbol() would not
 * read are not searched. */
int elf_symbol_names_hold(Elf *elf, int fd, const void *bytes, size_t n);

/* A symbol asked for by name: found and sym tell the first defined symbol of that name (in
 * elf_each_defined_symbol()'s order: table by table, entry by entry). */
struct elf_wanted_sym {
	const char *name;
	int found;
	GElf_Sym sym;
};

/* Notes sym in the entry of want[0..n) named name when that entry is not found yet. Returns 1
 * when name is one of want's (found now or before), else 0: for a walk that also looks at other
 * symbols. */
int elf_wanted_sym_note(struct elf_wanted_sym *want, size_t n, const char *name,
			const GElf_Sym *sym);

/* Walks the defined symbols of elf (open on fd) once, noting the first of each name in
 * want[0..n). Returns elf_each_defined_symbol()'s result. */
int elf_find_symbols(Elf *elf, int fd, struct elf_wanted_sym *want, size_t n);

/* Calls fn for every entry of the SHT_RELA sections of elf (open on fd), read with pread a
 * chunk at a time (about 50 KiB held, whatever the sections' sizes: libelf would copy each whole
 * section, and the symbol table it names, into the heap). sym is the symbol the relocation names
 * when its type t is in sym_types (bit t, for t < 64) and the section's sh_link is a symbol table
 * (SHT_DYNSYM, SHT_SYMTAB) holding that entry: read with one pread, so only the relocation types
 * a caller looks at cost a read each; NULL otherwise. The relocation sections together may claim
 * at most ELF_SECTION_MAX_SYMBOLS bytes, checked before any is read (a sparse file can claim
 * gigabytes). Returns 0, -EFBIG (nothing was read) or -errno (the file could not be read: fn
 * saw the entries before). */
typedef void (*elf_rela_fn)(void *ctx, const GElf_Rela *rela, const GElf_Sym *sym);
int elf_each_rela(Elf *elf, int fd, uint64_t sym_types, elf_rela_fn fn, void *ctx);

/* The bit of sym_types for relocation type t (t < 64). */
#define ELF_RELA_TYPE_BIT(t) (1ull << (t))

#endif /* SPANPROF_ELF_LAYOUT_H */
