// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_layout: sections by name, kind and address, and vaddr -> file offset with
 * permissions, on this test binary itself (compared with what its own headers say); and the
 * relocation walk on a crafted file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "crafted_elf.h"
#include "tmpdir.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"

/* A string the test reads back from its own file through its vaddr. */
static const char marker[] = "elf_layout test marker";

struct self {
	int fd;
	Elf *elf;
};

static int open_self(void **state)
{
	static struct self s;

	elf_version(EV_CURRENT);
	s.fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	s.elf = s.fd >= 0 ? elf_guard_begin(s.fd) : NULL;
	*state = &s;
	return s.elf ? 0 : -1;
}

static int close_self(void **state)
{
	struct self *s = *state;

	elf_end(s->elf);
	close(s->fd);
	return 0;
}

static void test_section_by_name_and_kind(void **state)
{
	struct self *s = *state;
	GElf_Shdr shdr;

	assert_non_null(elf_section_named(s->elf, ".text", ELF_SCN_ANY, &shdr));
	assert_int_equal(shdr.sh_type, SHT_PROGBITS);
	assert_true(shdr.sh_flags & SHF_EXECINSTR);
	/* .bss has no file bytes: found as any, not as a section with bytes or as PROGBITS. */
	assert_non_null(elf_section_named(s->elf, ".bss", ELF_SCN_ANY, &shdr));
	assert_int_equal(shdr.sh_type, SHT_NOBITS);
	assert_null(elf_section_named(s->elf, ".bss", ELF_SCN_FILE_BYTES, &shdr));
	assert_null(elf_section_named(s->elf, ".bss", ELF_SCN_PROGBITS, &shdr));
	assert_null(elf_section_named(s->elf, ".no.such.section", ELF_SCN_ANY, &shdr));
}

static void test_section_at_address(void **state)
{
	struct self *s = *state;
	GElf_Shdr text, at;

	assert_non_null(elf_section_named(s->elf, ".text", ELF_SCN_ANY, &text));
	assert_non_null(elf_section_at(s->elf, text.sh_addr + text.sh_size / 2, &at));
	assert_int_equal(at.sh_addr, text.sh_addr);
	assert_null(elf_section_at(s->elf, UINT64_MAX - 16, &at));
}

static void test_vaddr_to_offset_and_read(void **state)
{
	struct self *s = *state;
	char buf[sizeof(marker)];
	uint64_t off, bias;
	GElf_Ehdr ehdr;
	GElf_Shdr text;

	assert_non_null(elf_section_named(s->elf, ".text", ELF_SCN_ANY, &text));
	/* .text is executable, not writable. */
	assert_int_equal(elf_vaddr_to_offset(s->elf, text.sh_addr, 1, PF_X, &off), 0);
	assert_int_equal(off, text.sh_offset);
	assert_int_equal(elf_vaddr_to_offset(s->elf, text.sh_addr, 1, PF_W, &off), -ENOEXEC);
	/* Past every segment, and a length past the segment's end. */
	assert_int_equal(elf_vaddr_to_offset(s->elf, UINT64_MAX - 1, 1, 0, &off), -ENOEXEC);
	assert_int_equal(elf_vaddr_to_offset(s->elf, text.sh_addr, UINT64_MAX, 0, &off), -ENOEXEC);
	/* The marker read from the file at its vaddr (running address minus this PIE's load bias,
	 * from the entry point) holds what the running copy holds. */
	assert_non_null(gelf_getehdr(s->elf, &ehdr));
	bias = getauxval(AT_ENTRY) - ehdr.e_entry;
	assert_int_equal(elf_read_vaddr(s->elf, s->fd, (uintptr_t)marker - bias, buf, sizeof(buf)),
			 0);
	assert_memory_equal(buf, marker, sizeof(marker));
	assert_int_equal(elf_read_vaddr(s->elf, s->fd, UINT64_MAX - 2, buf, 4), -ENOEXEC);
}

struct sym_find {
	const char *want;
	uint64_t value;
	int found, undefined_seen;
};

static void on_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct sym_find *f = ctx;

	if (sym->st_shndx == SHN_UNDEF)
		f->undefined_seen = 1;
	if (!strcmp(name, f->want)) {
		f->value = sym->st_value;
		f->found++;
	}
}

static void test_each_defined_symbol(void **state)
{
	struct self *s = *state;
	struct sym_find f = { .want = "marker" };
	struct sym_find und = { .want = "getauxval" }; /* imported from libc: undefined here */
	GElf_Ehdr ehdr;

	elf_each_defined_symbol(s->elf, s->fd, on_symbol, &f);
	assert_int_equal(f.found, 1); /* in .symtab (a static object), not in .dynsym */
	assert_non_null(gelf_getehdr(s->elf, &ehdr));
	assert_int_equal(f.value, (uintptr_t)marker - (getauxval(AT_ENTRY) - ehdr.e_entry));
	assert_false(f.undefined_seen);
	elf_each_defined_symbol(s->elf, s->fd, on_symbol, &und);
	assert_int_equal(und.found, 0);
}

/* The first of each wanted name, as the walk sees it; a name the file lacks stays not found. */
static void test_find_symbols(void **state)
{
	struct self *s = *state;
	struct elf_wanted_sym w[] = {
		{ .name = "marker" },
		{ .name = "getauxval" }, /* imported: undefined here */
		{ .name = "no_such_symbol_in_this_test" },
	};
	struct sym_find f = { .want = "marker" };

	assert_int_equal(elf_find_symbols(s->elf, s->fd, w, 3), 0);
	elf_each_defined_symbol(s->elf, s->fd, on_symbol, &f);
	assert_true(w[0].found);
	assert_int_equal(w[0].sym.st_value, f.value);
	assert_false(w[1].found);
	assert_false(w[2].found);
}

/* A note keeps the first symbol of a name and says which names are wanted. */
static void test_wanted_sym_note_keeps_the_first(void **state)
{
	struct elf_wanted_sym w[] = { { .name = "a" }, { .name = "b" } };
	GElf_Sym first = { .st_value = 0x1000 }, second = { .st_value = 0x2000 };

	(void)state;
	assert_int_equal(elf_wanted_sym_note(w, 2, "b", &first), 1);
	assert_int_equal(elf_wanted_sym_note(w, 2, "b", &second), 1);
	assert_int_equal(elf_wanted_sym_note(w, 2, "c", &second), 0);
	assert_false(w[0].found);
	assert_true(w[1].found);
	assert_int_equal(w[1].sym.st_value, 0x1000);
}

/* dl_iterate_phdr's first object is the program itself; its dlpi_addr is its load bias. */
static int main_program_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

/* The bias computed from this binary's own PT_LOAD segments and the mapping of its last one
 * equals the dynamic linker's; an offset past every segment has none. */
static void test_loads_give_the_load_bias(void **state)
{
	struct self *s = *state;
	struct elf_loads loads;
	uint64_t want = 0, bias = 0, start;
	int last;

	elf_loads_read(s->elf, &loads);
	assert_true(loads.n >= 2);
	dl_iterate_phdr(main_program_bias, &want);
	/* A segment whose file offset is not its vaddr (a PIE's data segment, usually the last), so
	 * that the two cannot be confused, mapped where the linker put its vaddr. Some layouts (the
	 * sanitizer build's) place every segment at its own offset: the bias is checked all the
	 * same, on the last one. */
	for (last = loads.n - 1; last > 0 && loads.seg[last].vaddr == loads.seg[last].offset;
	     last--)
		;
	if (loads.seg[last].vaddr == loads.seg[last].offset)
		last = loads.n - 1;
	start = want + loads.seg[last].vaddr;
	assert_int_equal(elf_loads_bias(&loads, start, loads.seg[last].offset, &bias), 0);
	assert_int_equal(bias, want);
	assert_int_equal(elf_loads_bias(&loads, start, UINT64_MAX - 1, &bias), -ENOENT);
}

static void count_rela(void *ctx, const GElf_Rela *rela, const GElf_Sym *sym)
{
	int *n = ctx;

	(void)rela;
	n[0]++;
	n[1] += sym != NULL;
}

/* Resident memory of this process in bytes (VmRSS), 0 when unknown. */
static uint64_t rss_bytes(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

#define LINKED_CLAIM (48ull << 20)

/* A relocation section whose sh_link names a section that is not a symbol table (here one that
 * claims 48 MiB, a hole after two symbols): that section is not read (the guard caps only symbol
 * tables together, so each such section could make libelf read up to the per-section cap, one
 * per relocation section), and its relocation has no symbol. */
static void test_rela_names_symbols_only_from_a_symbol_table(void **state)
{
	Elf64_Rela rela = { .r_offset = 0x2000, .r_info = ELF64_R_INFO(1, R_X86_64_64) };
	Elf64_Sym syms[2] = { { 0 },
			      { .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = 0x1234 } };
	const struct crafted_section secs[] = {
		{ ".rela.dyn", SHT_RELA, 0, &rela, sizeof(rela), 0 },
		{ ".data", SHT_PROGBITS, 0, syms, sizeof(syms), LINKED_CLAIM },
	};
	char *dir = tmpdir_new("elf-layout"), path[512];
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	int fd, seen[2] = { 0, 0 };
	uint64_t before, grew;
	Elf *elf;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/rela.so", dir);
	assert_int_equal(crafted_elf_write(path, secs, 2), 0);
	/* .rela.dyn (section 1) names .data (section 2) as its symbol table. */
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + sizeof(sh))), sizeof(sh));
	sh.sh_link = 2;
	sh.sh_entsize = sizeof(Elf64_Rela);
	assert_int_equal(pwrite(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + sizeof(sh))), sizeof(sh));
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	before = rss_bytes();
	assert_int_equal(elf_each_rela(elf, fd, ELF_RELA_TYPE_BIT(R_X86_64_64), count_rela, seen),
			 0);
	/* libelf keeps what it read until elf_end(). */
	grew = rss_bytes() - before;
	elf_end(elf);
	close(fd);
	tmpdir_remove(dir);
	printf("  resident memory grew by %llu KiB while walking the relocations\n",
	       (unsigned long long)grew >> 10);
	assert_true(before > 0);
	assert_true(grew < LINKED_CLAIM / 4);
	assert_int_equal(seen[0], 1);
	assert_int_equal(seen[1], 0);
}

/* What each relocation was handed: its type, and the value of its symbol (0: none). */
struct rela_seen {
	int n;
	unsigned int type[4];
	uint64_t sym_value[4];
};

static void note_rela(void *ctx, const GElf_Rela *rela, const GElf_Sym *sym)
{
	struct rela_seen *seen = ctx;

	if (seen->n >= 4)
		return;
	seen->type[seen->n] = (unsigned int)GELF_R_TYPE(rela->r_info);
	seen->sym_value[seen->n++] = sym ? sym->st_value : 0;
}

/* The walk reads the symbol a relocation names from the section's symbol table, only for the
 * types asked for; an index past the table's end names none. */
static void test_rela_reads_symbols_only_for_the_types_asked(void **state)
{
	Elf64_Rela rela[3] = {
		{ .r_offset = 0x2000, .r_info = ELF64_R_INFO(1, R_X86_64_DTPMOD64) },
		{ .r_offset = 0x2008, .r_info = ELF64_R_INFO(1, R_X86_64_GLOB_DAT) },
		{ .r_offset = 0x2010, .r_info = ELF64_R_INFO(7, R_X86_64_DTPMOD64) },
	};
	Elf64_Sym syms[2] = {
		{ 0 },
		{ .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_TLS), .st_shndx = 1, .st_value = 0x1234 }
	};
	const struct crafted_section secs[] = {
		{ ".rela.dyn", SHT_RELA, 0, rela, sizeof(rela), 0 },
		{ ".dynsym", SHT_DYNSYM, 0, syms, sizeof(syms), 0 },
	};
	char *dir = tmpdir_new("elf-layout"), path[512];
	struct rela_seen seen = { 0 };
	Elf *elf;
	int fd;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/rela.so", dir);
	assert_int_equal(crafted_elf_write(path, secs, 2), 0);
	assert_int_equal(crafted_elf_set_link(path, 1, 2, sizeof(Elf64_Rela)), 0);
	assert_int_equal(crafted_elf_set_link(path, 2, 0, sizeof(Elf64_Sym)), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	assert_int_equal(
		elf_each_rela(elf, fd, ELF_RELA_TYPE_BIT(R_X86_64_DTPMOD64), note_rela, &seen), 0);
	elf_end(elf);
	close(fd);
	tmpdir_remove(dir);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.type[0], R_X86_64_DTPMOD64);
	assert_int_equal(seen.sym_value[0], 0x1234);
	assert_int_equal(seen.type[1], R_X86_64_GLOB_DAT);
	assert_int_equal(seen.sym_value[1], 0); /* not asked for: not read */
	assert_int_equal(seen.sym_value[2], 0); /* past the table's end */
}

static void count_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	size_t *n = ctx;

	(void)sym;
	n[0]++;
	n[1] += !strcmp(name, "crafted_symbol");
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define STRTAB_BYTES (16u << 20)
#define NSYMS 20000

/* A string table of 16 MiB that does not end with a NUL (its names at its start, then no NUL at
 * all), and 20,000 symbols naming its first name: every name is found at the cost of the name,
 * where elf_strptr() looked for the table's last NUL from its end each time (6 s for 8 MiB and
 * 20,000 symbols). A name with no NUL within ELF_NAME_MAX is no name. */
static void test_names_cost_their_length_in_a_table_without_final_nul(void **state)
{
	char *dir = tmpdir_new("elf-names"), path[512], *strtab = malloc(STRTAB_BYTES);
	Elf64_Sym *syms = calloc(NSYMS, sizeof(*syms));
	struct crafted_section secs[3];
	size_t seen[2] = { 0, 0 };
	double took;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	int fd, i;
	Elf *elf;

	(void)state;
	assert_non_null(dir);
	assert_non_null(strtab);
	assert_non_null(syms);
	memset(strtab, 'A', STRTAB_BYTES);
	memcpy(strtab, "\0crafted_symbol", sizeof("\0crafted_symbol"));
	for (i = 1; i < NSYMS; i++)
		syms[i] = (Elf64_Sym){ .st_name = 1,
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = 1,
				       .st_value = 0x1000 };
	/* The last symbol names the unterminated run of 'A's. */
	syms[NSYMS - 1].st_name = 100;
	secs[0] = (struct crafted_section){ ".text", SHT_PROGBITS, 0x1000, "\xc3", 1, 0 };
	secs[1] = (struct crafted_section){ ".strtab", SHT_STRTAB, 0, strtab, STRTAB_BYTES, 0 };
	secs[2] = (struct crafted_section){
		".symtab", SHT_SYMTAB, 0, syms, NSYMS * sizeof(*syms), 0
	};
	snprintf(path, sizeof(path), "%s/names.so", dir);
	assert_int_equal(crafted_elf_write(path, secs, 3), 0);
	free(strtab);
	free(syms);
	/* .symtab (section 3) takes its names from .strtab (section 2). */
	fd = open(path, O_RDWR | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	assert_int_equal(pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + 3 * sizeof(sh))),
			 sizeof(sh));
	sh.sh_link = 2;
	sh.sh_entsize = sizeof(Elf64_Sym);
	assert_int_equal(pwrite(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + 3 * sizeof(sh))),
			 sizeof(sh));
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	took = mono_s();
	assert_int_equal(elf_each_defined_symbol(elf, fd, count_symbol, seen), 0);
	took = mono_s() - took;
	assert_string_equal(elf_name_at(elf, 2, 1), "crafted_symbol");
	assert_null(elf_name_at(elf, 2, 100));
	assert_null(elf_name_at(elf, 2, STRTAB_BYTES));
	assert_null(elf_name_at(elf, 3, 0)); /* not a string table */
	assert_non_null(elf_section_named(elf, ".symtab", ELF_SCN_ANY, &sh));
	elf_end(elf);
	close(fd);
	tmpdir_remove(dir);
	printf("  %zu names read in %.3f s\n", seen[0], took);
	assert_int_equal(seen[0], NSYMS - 2);
	assert_int_equal(seen[1], NSYMS - 2);
	assert_true(took < 1.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_section_by_name_and_kind),
		cmocka_unit_test(test_section_at_address),
		cmocka_unit_test(test_vaddr_to_offset_and_read),
		cmocka_unit_test(test_each_defined_symbol),
		cmocka_unit_test(test_find_symbols),
		cmocka_unit_test(test_wanted_sym_note_keeps_the_first),
		cmocka_unit_test(test_loads_give_the_load_bias),
		cmocka_unit_test(test_rela_names_symbols_only_from_a_symbol_table),
		cmocka_unit_test(test_rela_reads_symbols_only_for_the_types_asked),
		cmocka_unit_test(test_names_cost_their_length_in_a_table_without_final_nul),
	};

	return cmocka_run_group_tests(tests, open_self, close_self);
}
