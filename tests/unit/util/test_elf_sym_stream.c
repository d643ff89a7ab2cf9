// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the streamed symbol walk (elf_sym_stream.c) on a crafted file with 200,000
 * symbols: every defined symbol is seen once with its name and value, names that straddle the
 * string window's edges and names out of order among them; the heap stays small while the walk
 * runs, where libelf held a copy of the whole symbol and string tables; and the search of the
 * string tables that lets a reader skip the walk. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "crafted_elf.h"
#include "tmpdir.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"

#define NSYMS 200000
#define VALUE_BASE 0x1000
/* Symbols whose names lie far from their neighbours': the walk's names jump back and forth. */
#define SWAP_EVERY 1000
/* A name of the longest length read, and one a byte longer (no name). */
#define LONGEST_AT 150000
#define TOO_LONG_AT 150001
/* What the walk may add to the heap: its buffers (about 120 KiB) and slack, well below the
 * tables' 8 MiB. */
#define HEAP_GROWTH_MAX (512u << 10)

/* The name of symbol i: lengths from 4 to 30 bytes so that names cross every alignment. */
static size_t expected_name(unsigned int i, char *buf)
{
	size_t len;

	if (i == LONGEST_AT || i == TOO_LONG_AT) {
		len = i == LONGEST_AT ? ELF_NAME_MAX - 1 : ELF_NAME_MAX;
		memset(buf, 'L', len);
		buf[len] = '\0';
		return len;
	}
	len = (size_t)snprintf(buf, 32, "s%u_", i);
	memset(buf + len, 'a' + i % 26, (i * 7) % 23);
	len += (i * 7) % 23;
	buf[len] = '\0';
	return len;
}

/* Symbol i is undefined (skipped by the walk) every 97th. */
static int is_defined(unsigned int i)
{
	return i % 97 != 0;
}

/* How the names are laid out: in symbol order but for pairs swapped far apart (as a linker
 * sharing strings does now and then), or in reverse order (every name behind the previous). */
enum layout { SWAPPED_PAIRS, REVERSED };

/* Which symbol's name is laid out at the place of symbol i's. */
static unsigned int laid_out(unsigned int i, enum layout layout)
{
	if (layout == REVERSED)
		return NSYMS - i;
	if (i % SWAP_EVERY == 0 && i < NSYMS / 2)
		return NSYMS - i;
	if ((NSYMS - i) % SWAP_EVERY == 0 && NSYMS - i < NSYMS / 2)
		return NSYMS - i;
	return i;
}

struct big_file {
	enum layout layout;
	char *dir, path[512];
	size_t strtab_bytes;
};

/* Writes the file: .text, .strtab (names laid out as b->layout says) and .symtab of NSYMS
 * entries (entry 0 the null symbol). */
static void write_big_file(struct big_file *b)
{
	size_t cap = (size_t)NSYMS * 32 + 2 * ELF_NAME_MAX, len = 1, *name_off;
	char *strtab = malloc(cap), name[ELF_NAME_MAX + 1];
	Elf64_Sym *syms = calloc(NSYMS, sizeof(*syms));
	struct crafted_section secs[3];
	unsigned int i, j;

	name_off = calloc(NSYMS, sizeof(*name_off));
	assert_non_null(strtab);
	assert_non_null(syms);
	assert_non_null(name_off);
	strtab[0] = '\0';
	for (i = 1; i < NSYMS; i++) {
		j = laid_out(i, b->layout);
		name_off[j] = len;
		len += expected_name(j, name) + 1;
		memcpy(strtab + name_off[j], name, len - name_off[j]);
	}
	for (i = 1; i < NSYMS; i++)
		syms[i] = (Elf64_Sym){ .st_name = (uint32_t)name_off[i],
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = is_defined(i) ? 1 : SHN_UNDEF,
				       .st_value = VALUE_BASE + (uint64_t)i * 16,
				       .st_size = i };
	secs[0] = (struct crafted_section){ ".text", SHT_PROGBITS, 0x1000, "\xc3", 1, 0 };
	secs[1] = (struct crafted_section){ ".strtab", SHT_STRTAB, 0, strtab, len, 0 };
	secs[2] = (struct crafted_section){
		".symtab", SHT_SYMTAB, 0, syms, NSYMS * sizeof(*syms), 0
	};
	b->dir = tmpdir_new("elf-sym-stream");
	assert_non_null(b->dir);
	snprintf(b->path, sizeof(b->path), "%s/big.so", b->dir);
	assert_int_equal(crafted_elf_write(b->path, secs, 3), 0);
	/* .symtab (section 3) takes its names from .strtab (section 2). */
	assert_int_equal(crafted_elf_set_link(b->path, 3, 2, sizeof(Elf64_Sym)), 0);
	b->strtab_bytes = len;
	free(strtab);
	free(syms);
	free(name_off);
}

struct walk_check {
	unsigned char *seen; /* per symbol: times seen */
	size_t visits, wrong, heap_base, heap_peak;
};

/* Bytes malloc hands out: from its arenas, and in chunks of their own mapping (large ones). */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void on_symbol(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct walk_check *c = ctx;
	char want[ELF_NAME_MAX + 1];
	uint64_t i = (sym->st_value - VALUE_BASE) / 16;
	size_t heap;

	if (c->visits++ % 1024 == 0 && (heap = heap_in_use()) > c->heap_peak)
		c->heap_peak = heap;
	if (sym->st_value < VALUE_BASE || i >= NSYMS || sym->st_size != i) {
		c->wrong++;
		return;
	}
	expected_name((unsigned int)i, want);
	if (strcmp(name, want))
		c->wrong++;
	c->seen[i]++;
}

/* mallinfo2() tells what glibc's allocator holds; under a sanitizer's allocator it stays still. */
static int heap_is_measurable(void)
{
	size_t before = heap_in_use();
	/* volatile: the compiler may drop an allocation nothing reads */
	char *volatile p = malloc(1u << 20);
	int moved;

	assert_non_null(p);
	p[0] = 1;
	moved = heap_in_use() >= before + (1u << 20);
	free(p);
	return moved;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Walks a file laid out so: every defined symbol seen once, with its name and value, and the
 * heap's growth during the walk under HEAP_GROWTH_MAX. */
static void walk_and_check(enum layout layout)
{
	struct walk_check c = { 0 };
	struct big_file b = { .layout = layout };
	size_t i, missing = 0, twice = 0, unexpected = 0;
	double took;
	int fd, err;
	Elf *elf;

	elf_version(EV_CURRENT);
	write_big_file(&b);
	c.seen = calloc(NSYMS, 1);
	assert_non_null(c.seen);
	fd = open(b.path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	c.heap_base = c.heap_peak = heap_in_use();
	took = mono_s();
	err = elf_each_defined_symbol(elf, fd, on_symbol, &c);
	took = mono_s() - took;
	if (heap_in_use() > c.heap_peak)
		c.heap_peak = heap_in_use();
	elf_end(elf);
	close(fd);
	tmpdir_remove(b.dir);
	assert_int_equal(err, 0);
	for (i = 1; i < NSYMS; i++) {
		int want = is_defined((unsigned int)i) && i != TOO_LONG_AT;

		missing += want && !c.seen[i];
		twice += c.seen[i] > 1;
		unexpected += !want && c.seen[i];
	}
	printf("  %zu symbols, %zu KiB of names: %zu visits in %.3f s, heap +%zu KiB during the "
	       "walk\n",
	       (size_t)NSYMS, b.strtab_bytes >> 10, c.visits, took,
	       (c.heap_peak - c.heap_base) >> 10);
	assert_int_equal(c.wrong, 0);
	assert_int_equal(missing, 0);
	assert_int_equal(twice, 0);
	assert_int_equal(unexpected, 0);
	assert_true(c.seen[LONGEST_AT] == 1);
	free(c.seen);
	if (!heap_is_measurable()) {
		printf("  heap bound not checked: mallinfo2() does not see this allocator\n");
		return;
	}
	assert_true(c.heap_peak - c.heap_base < HEAP_GROWTH_MAX);
}

static void test_walk_sees_every_symbol_in_a_small_heap(void **state)
{
	(void)state;
	walk_and_check(SWAPPED_PAIRS);
}

/* Every name behind the previous one: each read aside, none missed, the heap as small. */
static void test_names_in_reverse_order_are_all_read(void **state)
{
	(void)state;
	walk_and_check(REVERSED);
}

/* A string table of a few names: the search finds a name with its NUL, not a name that is only
 * the start of another, and nothing in a file without a symbol table. */
static void test_names_hold_searches_the_string_tables(void **state)
{
	static const char strtab[] = "\0alpha\0beta_gamma\0";
	Elf64_Sym syms[2] = { { 0 },
			      { .st_name = 1,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = 1,
				.st_value = 0x1000 } };
	struct crafted_section secs[3] = {
		{ ".text", SHT_PROGBITS, 0x1000, "\xc3", 1, 0 },
		{ ".strtab", SHT_STRTAB, 0, strtab, sizeof(strtab), 0 },
		{ ".symtab", SHT_SYMTAB, 0, syms, sizeof(syms), 0 },
	};
	char *dir = tmpdir_new("elf-names-hold"), path[512];
	int fd;
	Elf *elf;

	(void)state;
	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/few.so", dir);
	assert_int_equal(crafted_elf_write(path, secs, 3), 0);
	assert_int_equal(crafted_elf_set_link(path, 3, 2, sizeof(Elf64_Sym)), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	assert_int_equal(elf_symbol_names_hold(elf, fd, "alpha", sizeof("alpha")), 1);
	assert_int_equal(elf_symbol_names_hold(elf, fd, "gamma", sizeof("gamma")), 1);
	assert_int_equal(elf_symbol_names_hold(elf, fd, "beta", sizeof("beta")), 0);
	assert_int_equal(elf_symbol_names_hold(elf, fd, "delta", sizeof("delta")), 0);
	elf_end(elf);
	close(fd);
	/* The same file without a link from .symtab to .strtab: no string table to search. */
	assert_int_equal(crafted_elf_set_link(path, 3, 0, sizeof(Elf64_Sym)), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	assert_int_equal(elf_symbol_names_hold(elf, fd, "alpha", sizeof("alpha")), 0);
	elf_end(elf);
	close(fd);
	tmpdir_remove(dir);
}

struct indexed {
	size_t calls, ndx;
};

static int stop_at_first(void *ctx, size_t ndx, const char *name, const GElf_Sym *sym)
{
	struct indexed *x = ctx;
	char want[32];

	expected_name(5, want);
	x->calls++;
	x->ndx = ndx;
	return !strcmp(name, want) && sym->st_value == VALUE_BASE + 5 * 16;
}

/* One table, symbols with their index, and a stop: the walk ends where the callback says. */
static void test_one_table_gives_indexes_and_stops(void **state)
{
	struct indexed x = { 0 };
	struct big_file b = { .layout = SWAPPED_PAIRS };
	GElf_Shdr sh;
	Elf_Scn *scn;
	int fd;
	Elf *elf;

	(void)state;
	elf_version(EV_CURRENT);
	write_big_file(&b);
	fd = open(b.path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	scn = elf_section_named(elf, ".symtab", ELF_SCN_ANY, &sh);
	assert_non_null(scn);
	assert_int_equal(elf_each_symbol_in(elf, fd, scn, stop_at_first, &x), 0);
	assert_int_equal(x.ndx, 5);
	assert_int_equal(x.calls, 5); /* 1..5: all defined */
	scn = elf_section_named(elf, ".strtab", ELF_SCN_ANY, &sh);
	assert_int_equal(elf_each_symbol_in(elf, fd, scn, stop_at_first, &x), -ENOEXEC);
	elf_end(elf);
	close(fd);
	tmpdir_remove(b.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_sees_every_symbol_in_a_small_heap),
		cmocka_unit_test(test_names_in_reverse_order_are_all_read),
		cmocka_unit_test(test_names_hold_searches_the_string_tables),
		cmocka_unit_test(test_one_table_gives_indexes_and_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
