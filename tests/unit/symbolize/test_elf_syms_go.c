// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_syms on a stripped Go executable: with no .symtab and no DWARF, functions
 * are named, with file and line, from the .gopclntab the Go linker leaves in. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "symbolize/elf_syms.h"
#include "util/gopclntab.h"

#define STRIPPED "tests/workloads/go_spans_stripped"

/* The entry of the function called name in path's .gopclntab, or 0. */
static uint64_t gopclntab_entry(const char *path, const char *name)
{
	struct gopclntab_func f;
	struct gopclntab t;
	uint64_t entry = 0;
	Elf *elf = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !gopclntab_from_elf(&t, elf))
		for (uint64_t i = 0; i < t.nfunc && !entry; i++)
			if (!gopclntab_func_at(&t, i, &f) && !strcmp(f.name, name))
				entry = f.entry;
	if (elf)
		elf_end(elf);
	close(fd);
	return entry;
}

static void test_elf_syms_names_stripped_go_functions_from_gopclntab(void **state)
{
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	struct elf_syms *es;
	uint64_t entry;
	int n;

	(void)state;
	if (access(build_path(STRIPPED), R_OK)) {
		print_message("SKIP: %s missing (is golang-go installed?)\n", STRIPPED);
		skip();
	}
	entry = gopclntab_entry(build_path(STRIPPED), "main.goWorkB");
	assert_true(entry != 0);
	es = elf_syms_open(build_path(STRIPPED), NULL);
	assert_non_null(es);
	n = elf_syms_lookup(es, entry + 4, lines, ELF_SYMS_MAX_LINES);
	assert_int_equal(n, 1);
	assert_string_equal(lines[0].function, "main.goWorkB");
	assert_non_null(lines[0].file);
	assert_non_null(strstr(lines[0].file, "go_spans/main.go"));
	assert_true(lines[0].line > 0);
	elf_syms_free(es);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_syms_names_stripped_go_functions_from_gopclntab),
	};

	return cmocka_run_group_tests_name("elf_syms_go", tests, NULL, NULL);
}
