// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for sym_index: across the code of real files (glibc, Debian's stripped python3.11
 * with only .dynsym, a pyenv libpython with a full .symtab, the agent itself), every address is
 * named exactly as libdwfl's own lookup (dwfl_module_addrinfo) names it; addresses outside any
 * symbol get none. */
#define _GNU_SOURCE
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/sym_index.h"

/* Addresses compared per file (libdwfl takes 0.1-0.7 ms for each). */
#define PROBES 2000

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

/* Compares both lookups over the file's executable sections; returns how many addresses had a
 * name. */
static long compare_file(const char *path)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct sym_index idx;
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Shdr shdr;
	Elf_Scn *scn = NULL;
	uint64_t a, step, off;
	const char *want, *got;
	GElf_Sym sym;
	GElf_Off doff;
	long named = 0;
	size_t estimate;
	Dwarf *dw;
	Elf *elf;

	assert_non_null(dwfl);
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, path, path, -1, 0, false);
	assert_non_null(mod);
	dwfl_report_end(dwfl, NULL, NULL);
	elf = dwfl_module_getelf(mod, &bias);
	assert_non_null(elf);
	/* Before the build, from section headers: of the file, and of a separate debug file
	 * libdwfl takes the table from when the file has only .dynsym (libc with libc6-dbg). */
	estimate = sym_index_estimate(elf);
	dw = dwfl_module_getdwarf(mod, &bias);
	if (dw && dwarf_getelf(dw) != elf && sym_index_estimate(dwarf_getelf(dw)) > estimate)
		estimate = sym_index_estimate(dwarf_getelf(dw));
	assert_int_equal(sym_index_build(&idx, mod), 0);
	assert_true(idx.n > 0);
	assert_true(idx.bytes <= estimate); /* the symbol budget makes room for this much */
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR) || !shdr.sh_size)
			continue;
		step = shdr.sh_size / PROBES + 1;
		for (a = shdr.sh_addr + bias; a < shdr.sh_addr + bias + shdr.sh_size; a += step) {
			want = dwfl_module_addrinfo(mod, a, &doff, &sym, NULL, NULL, NULL);
			got = sym_index_lookup(&idx, a, &off);
			if (!want) {
				assert_null(got);
				continue;
			}
			assert_non_null(got);
			assert_string_equal(got, want);
			assert_int_equal(off, doff);
			named++;
		}
	}
	sym_index_free(&idx);
	dwfl_end(dwfl);
	print_message("%s: %ld addresses named alike\n", path, named);
	return named;
}

static void test_glibc(void **state)
{
	(void)state;
	/* With libc6-dbg, libdwfl reads its .symtab and names nearly every address; without it (a
	 * fresh machine) only .dynsym names some: 705 of the ~2000 probes on Debian 12's glibc. */
	assert_true(compare_file("/lib/x86_64-linux-gnu/libc.so.6") > PROBES / 4);
}

static void test_stripped_python(void **state)
{
	(void)state;
	if (access("/usr/bin/python3.11", R_OK))
		skip();
	/* .dynsym only: most of its code (static functions) has no name at all. */
	assert_true(compare_file("/usr/bin/python3.11") > PROBES / 10);
}

static void test_pyenv_libpython(void **state)
{
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	char path[512];

	(void)state;
	snprintf(path, sizeof(path), "%s/versions/3.12.1/lib/libpython3.12.so.1.0", root);
	if (access(path, R_OK)) {
		print_message("skip: no pyenv CPython 3.12 (%s)\n", path);
		skip();
	}
	assert_true(compare_file(path) > PROBES / 2);
}

static void test_own_binary(void **state)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	assert_true(n > 0);
	self[n] = '\0';
	assert_true(compare_file(self) > PROBES / 2);
}

/* An empty index names nothing. */
static void test_empty(void **state)
{
	struct sym_index idx = { 0 };
	uint64_t off;

	(void)state;
	assert_null(sym_index_lookup(&idx, 0x1000, &off));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glibc),		cmocka_unit_test(test_stripped_python),
		cmocka_unit_test(test_pyenv_libpython), cmocka_unit_test(test_own_binary),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests_name("sym_index", tests, NULL, NULL);
}
