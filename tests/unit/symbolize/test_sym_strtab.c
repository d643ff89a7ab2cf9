// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the symbol index against a crafted string table: a .strtab of 16 MiB whose
 * last byte is not NUL, named by 20,000 symbols, one of them by the table's last 16 bytes.
 * libdwfl hands out symbol names as pointers into the table without elf_strptr()'s search for a
 * terminator, so the index build stays linear (4 ms here, as for the terminated table), but the
 * name at the end runs past the table: read past a heap buffer (ASan: heap-buffer-overflow).
 * The index refuses such a table and answers as for a file without symbols; a terminated table
 * of the same size is indexed as usual. The time bound guards against a quadratic build. */
#define _GNU_SOURCE
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "crafted_elf.h"
#include "tmpdir.h"
#include "symbolize/elf_syms.h"

#define BOMB_STRTAB_BYTES (16u << 20)
#define BOMB_SYMBOLS 20000u

/* A well-formed file indexes these many symbols well within this (linear work). */
#define INDEX_BUDGET_SEC 2.0

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sections 1, 2, 3: .text, .strtab (names first, then filler), .symtab of nsym functions, the
 * last named by the table's last 16 bytes. When terminated, the table's last byte is NUL, else
 * the filler runs to its end. */
static int write_strtab_file(const char *path, unsigned int nsym, int terminated)
{
	static const uint8_t text[16] = { 0xc3 };
	char *strtab = malloc(BOMB_STRTAB_BYTES);
	Elf64_Sym *syms = calloc(nsym + 1, sizeof(*syms));
	size_t off = 1;
	unsigned int i;
	int err = -1;

	if (!strtab || !syms)
		goto out;
	strtab[0] = '\0';
	for (i = 1; i <= nsym; i++) {
		syms[i] = (Elf64_Sym){ .st_name = (uint32_t)off,
				       .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				       .st_shndx = 1,
				       .st_value = 0x1000 + i,
				       .st_size = 1 };
		off += (size_t)sprintf(strtab + off, "crafted_%u", i) + 1;
	}
	memset(strtab + off, 'A', BOMB_STRTAB_BYTES - off);
	syms[nsym].st_name = BOMB_STRTAB_BYTES - 16; /* the filler up to the table's end */
	if (terminated)
		strtab[BOMB_STRTAB_BYTES - 1] = '\0';
	const struct crafted_section secs[] = {
		{ ".text", SHT_PROGBITS, 0x1000, text, sizeof(text), 0 },
		{ ".strtab", SHT_STRTAB, 0, strtab, BOMB_STRTAB_BYTES, 0 },
		{ ".symtab", SHT_SYMTAB, 0, syms, (nsym + 1) * sizeof(*syms), 0 },
	};
	if (!crafted_elf_write(path, secs, 3) &&
	    !crafted_elf_set_link(path, 3, 2, sizeof(Elf64_Sym)))
		err = 0;
out:
	free(strtab);
	free(syms);
	return err;
}

/* Opens path and names the address of symbol nsym (which builds the symbol index), then that
 * of symbol 7; returns the seconds taken and the second name found (static buffer) in *name, ""
 * for none. */
static double time_first_lookup(const char *path, unsigned int nsym, const char **name)
{
	static char found[64];
	struct elf_sym_line line;
	struct elf_syms *es;
	double t0 = now_sec();
	int n;

	es = elf_syms_open(path, NULL);
	assert_non_null(es);
	n = elf_syms_lookup(es, 0x1000 + nsym, &line, 1);
	assert_true(n >= 0);
	/* Read the name as every consumer does (the terminated table's gives 15 'A's). */
	snprintf(found, sizeof(found), "%s", n > 0 ? line.function : "");
	assert_true(strlen(found) == (n > 0 ? 15 : 0));
	n = elf_syms_lookup(es, 0x1000 + 7, &line, 1);
	assert_true(n >= 0);
	snprintf(found, sizeof(found), "%s", n > 0 ? line.function : "");
	elf_syms_free(es);
	*name = found;
	return now_sec() - t0;
}

static void run(void **state, unsigned int nsym, int terminated, const char *want)
{
	char *dir = tmpdir_new("strtab");
	char path[4096];
	const char *name;
	double sec;

	assert_non_null(dir);
	*state = dir;
	snprintf(path, sizeof(path), "%s/crafted", dir);
	assert_int_equal(write_strtab_file(path, nsym, terminated), 0);
	sec = time_first_lookup(path, nsym, &name);
	print_message("%u symbols over a %u MiB .strtab (%s): first lookup %.3f s, name '%s'\n",
		      nsym, BOMB_STRTAB_BYTES >> 20, terminated ? "NUL-terminated" : "no final NUL",
		      sec, name);
	assert_string_equal(name, want);
	assert_true(sec < INDEX_BUDGET_SEC);
}

/* The control: the same table, terminated, is indexed and names the address. */
static void test_terminated_table_is_indexed(void **state)
{
	run(state, BOMB_SYMBOLS, 1, "crafted_7");
}

/* The attack: refused at linear cost, no name read (as a file without symbols). */
static void test_unterminated_table_is_refused_quickly(void **state)
{
	run(state, BOMB_SYMBOLS, 0, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_terminated_table_is_indexed, tmpdir_teardown),
		cmocka_unit_test_teardown(test_unterminated_table_is_refused_quickly,
					  tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("sym_strtab", tests, NULL, NULL);
}
