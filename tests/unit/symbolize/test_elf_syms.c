// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_syms: real fixtures built at run time (PIE, non-PIE, shared library, split
 * debug info), checked against the fixtures' own addresses, nm, readelf and marker lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture_build.h"
#include "symbolize/elf_syms.h"
#include "tmpdir.h"

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

/* Opens exe, looks up the fixture address `key` (+ adjust) and returns the lines found. */
static int lookup_key(const char *exe, const char *debug_root, const char *key, int adjust,
		      struct elf_syms **es, struct elf_sym_line *lines)
{
	uint64_t vaddr;

	assert_int_equal(fixture_addr(exe, key, &vaddr), 0);
	*es = elf_syms_open(exe, debug_root);
	assert_non_null(*es);
	return elf_syms_lookup(*es, vaddr + adjust, lines, ELF_SYMS_MAX_LINES);
}

static void test_elf_syms_reads_build_id_like_readelf(void **state)
{
	const struct fixture_set *fs = *state;
	const char *files[] = { fs->pie, fs->nopie, fs->lib, fs->dbglink };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *want = fixture_readelf_build_id(files[i]);
		struct elf_syms *es = elf_syms_open(files[i], NULL);

		assert_non_null(want);
		assert_non_null(es);
		assert_string_equal(elf_syms_build_id(es), want);
		elf_syms_free(es);
		free(want);
	}
}

static void check_leaf(const struct fixture_set *fs, const char *exe, const char *debug_root)
{
	int entry = fixture_marker_line(fs, "symfix.c", "MARK:leaf-entry");
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	struct elf_syms *es;

	assert_int_equal(lookup_key(exe, debug_root, "leaf", 0, &es, lines), 1);
	assert_string_equal(lines[0].function, "symfix_leaf");
	assert_string_equal(base_name(lines[0].file), "symfix.c");
	assert_int_equal(lines[0].line, entry);
	assert_true(elf_syms_has_dwarf(es));
	elf_syms_free(es);
}

static void test_elf_syms_resolves_pie_function_with_line(void **state)
{
	check_leaf(*state, ((struct fixture_set *)*state)->pie, NULL);
}

static void test_elf_syms_resolves_nopie_function_with_line(void **state)
{
	check_leaf(*state, ((struct fixture_set *)*state)->nopie, NULL);
}

static void test_elf_syms_reports_inline_chain_innermost_first(void **state)
{
	const struct fixture_set *fs = *state;
	int inl = fixture_marker_line(fs, "symfix.c", "MARK:inlined-call");
	int call = fixture_marker_line(fs, "symfix.c", "MARK:leaf-call");
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	struct elf_syms *es;

	/* a return address minus one lies in the call instruction, as a profiler looks it up */
	assert_int_equal(lookup_key(fs->pie, NULL, "inline_ret", -1, &es, lines), 2);
	assert_string_equal(lines[0].function, "symfix_inlined");
	assert_string_equal(base_name(lines[0].file), "symfix.c");
	assert_int_equal(lines[0].line, inl);
	assert_string_equal(lines[1].function, "symfix_leaf");
	assert_string_equal(base_name(lines[1].file), "symfix.c");
	assert_int_equal(lines[1].line, call);
	elf_syms_free(es);
}

static void test_elf_syms_demangles_cxx_names(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	struct elf_syms *es;

	assert_int_equal(lookup_key(fs->nopie, NULL, "cxx", 0, &es, lines), 1);
	assert_string_equal(lines[0].function, "symfix::widget::scale(int, double)");
	assert_string_equal(base_name(lines[0].file), "symfix_cxx.cc");
	elf_syms_free(es);
}

static void test_elf_syms_resolves_shared_library_symbols(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	uint64_t entry, local;
	struct elf_syms *es;
	int decl;

	assert_int_equal(fixture_nm(fs->lib, "symfix_lib_entry", &entry), 0);
	assert_int_equal(fixture_nm(fs->lib, "symfix_lib_local", &local), 0);
	es = elf_syms_open(fs->lib, NULL);
	assert_non_null(es);
	assert_int_equal(elf_syms_lookup(es, entry + 1, lines, ELF_SYMS_MAX_LINES), 1);
	assert_string_equal(lines[0].function, "symfix_lib_entry");
	assert_int_equal(elf_syms_lookup(es, local, lines, ELF_SYMS_MAX_LINES), 1);
	assert_string_equal(lines[0].function, "symfix_lib_local");
	/* the first instruction's line depends on the prologue: anywhere in the 4-line body */
	decl = fixture_marker_line(fs, "symfix_lib.c", "int symfix_lib_local(int v)");
	assert_string_equal(base_name(lines[0].file), "symfix_lib.c");
	assert_in_range(lines[0].line, decl, decl + 4);
	elf_syms_free(es);
}

static void test_elf_syms_finds_debuglink_file_next_to_exe(void **state)
{
	const struct fixture_set *fs = *state;
	char want[4096];
	struct elf_syms *es;

	check_leaf(fs, fs->dbglink, NULL);
	es = elf_syms_open(fs->dbglink, NULL);
	assert_non_null(es);
	snprintf(want, sizeof(want), "%s.debug", fs->dbglink);
	assert_string_equal(elf_syms_debug_file(es), want);
	elf_syms_free(es);
}

/* The debug file is found when the module is opened and read at its first lookup: a process's
 * root directory may be gone by then, so it must be held open from the start. */
static void test_elf_syms_keeps_the_debug_file_found_at_open(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	char *dir = tmpdir_new("elf-syms-debug");
	char exe[2048], dbg[2100], cmd[8192];
	struct elf_syms *es;
	uint64_t vaddr;

	assert_non_null(dir);
	snprintf(exe, sizeof(exe), "%s/%s", dir, strrchr(fs->dbglink, '/') + 1);
	snprintf(dbg, sizeof(dbg), "%s.debug", exe);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && cp '%s.debug' '%s'", fs->dbglink, exe,
		 fs->dbglink, dbg);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(fixture_addr(fs->dbglink, "leaf", &vaddr), 0);
	es = elf_syms_open(exe, NULL);
	assert_non_null(es);
	assert_string_equal(elf_syms_debug_file(es), dbg);
	assert_int_equal(unlink(dbg), 0);
	assert_true(elf_syms_lookup(es, vaddr, lines, ELF_SYMS_MAX_LINES) >= 1);
	assert_string_equal(lines[0].function, "symfix_leaf");
	assert_non_null(lines[0].file); /* from the DWARF of the vanished debug file */
	elf_syms_free(es);
	tmpdir_remove(dir);
}

static void test_elf_syms_finds_debug_file_by_build_id(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	struct elf_syms *es;

	/* without the debug root only .dynsym is left: no name for a local function */
	es = elf_syms_open(fs->buildid, NULL);
	assert_non_null(es);
	assert_false(elf_syms_has_dwarf(es));
	elf_syms_free(es);

	check_leaf(fs, fs->buildid, fs->debug_root);
	assert_int_equal(lookup_key(fs->buildid, fs->debug_root, "inline_ret", -1, &es, lines), 2);
	assert_string_equal(lines[0].function, "symfix_inlined");
	assert_non_null(strstr(elf_syms_debug_file(es), "/.build-id/"));
	elf_syms_free(es);
}

/* A stripped file's lookups read the .symtab of its separate debug file (DWARF refused or
 * not): the estimate the symbol budget makes room with covers what that read holds. */
static void test_elf_syms_table_estimate_covers_the_debug_files_symtab(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	size_t before, estimate;
	struct elf_syms *es;
	uint64_t vaddr;

	assert_int_equal(fixture_addr(fs->buildid, "leaf", &vaddr), 0);
	es = elf_syms_open(fs->buildid, fs->debug_root);
	assert_non_null(es);
	assert_int_equal(elf_syms_load_dwarf(es, 1), 0); /* refused: the symbol table answers */
	before = elf_syms_size(es);
	estimate = elf_syms_tables_estimate(es);
	assert_true(elf_syms_lookup(es, vaddr, lines, ELF_SYMS_MAX_LINES) >= 1);
	assert_string_equal(lines[0].function, "symfix_leaf"); /* only the debug file names it */
	assert_true(elf_syms_size(es) > before);
	assert_true(elf_syms_size(es) - before <= estimate);
	assert_int_equal(elf_syms_tables_estimate(es), 0); /* nothing left to read */
	elf_syms_free(es);
}

static void test_elf_syms_translates_file_offset_through_pt_load(void **state)
{
	const struct fixture_set *fs = *state;
	char maps[1024] = "";
	uint64_t start, end, off, leaf, vaddr;
	struct elf_syms *es;

	/* the executable mapping as the kernel would place it at bias 0x10000000 */
	assert_int_equal(fixture_maps_lines(fs->pie, 0x10000000, maps, sizeof(maps)), 0);
	assert_int_equal(sscanf(maps, "%lx-%lx r-xp %lx", &start, &end, &off), 3);
	assert_int_equal(fixture_addr(fs->pie, "leaf", &leaf), 0);
	es = elf_syms_open(fs->pie, NULL);
	assert_non_null(es);
	assert_int_equal(elf_syms_file_to_vaddr(es, 0x10000000 + leaf - start + off, &vaddr), 0);
	assert_int_equal(vaddr, leaf);
	assert_int_equal(elf_syms_file_to_vaddr(es, 1ull << 40, &vaddr), -ENOENT);
	elf_syms_free(es);
}

static void test_elf_syms_rejects_garbage_and_survives_truncation(void **state)
{
	const struct fixture_set *fs = *state;
	struct elf_sym_line lines[ELF_SYMS_MAX_LINES];
	char *dir = tmpdir_new("elfbad");
	char path[4096];
	struct elf_syms *es;
	int sizes[] = { 0, 16, 64, 700, 3000, 9000 };
	size_t i;

	assert_non_null(dir);
	snprintf(path, sizeof(path), "%s/garbage", dir);
	assert_int_equal(fixture_sh("echo 'not an elf file at all' > %s", path), 0);
	assert_null(elf_syms_open(path, NULL));
	assert_int_equal(errno, EINVAL);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		snprintf(path, sizeof(path), "%s/trunc%d", dir, sizes[i]);
		assert_int_equal(fixture_sh("head -c %d %s > %s", sizes[i], fs->pie, path), 0);
		es = elf_syms_open(path, NULL);
		/* either refused, or opened and answers nothing: never a crash */
		if (es)
			assert_int_equal(elf_syms_lookup(es, 0x1139, lines, ELF_SYMS_MAX_LINES), 0);
		elf_syms_free(es);
	}
	tmpdir_remove(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_syms_reads_build_id_like_readelf),
		cmocka_unit_test(test_elf_syms_resolves_pie_function_with_line),
		cmocka_unit_test(test_elf_syms_resolves_nopie_function_with_line),
		cmocka_unit_test(test_elf_syms_reports_inline_chain_innermost_first),
		cmocka_unit_test(test_elf_syms_demangles_cxx_names),
		cmocka_unit_test(test_elf_syms_resolves_shared_library_symbols),
		cmocka_unit_test(test_elf_syms_finds_debuglink_file_next_to_exe),
		cmocka_unit_test(test_elf_syms_keeps_the_debug_file_found_at_open),
		cmocka_unit_test(test_elf_syms_finds_debug_file_by_build_id),
		cmocka_unit_test(test_elf_syms_table_estimate_covers_the_debug_files_symtab),
		cmocka_unit_test(test_elf_syms_translates_file_offset_through_pt_load),
		cmocka_unit_test(test_elf_syms_rejects_garbage_and_survives_truncation),
	};

	return cmocka_run_group_tests_name("elf_syms", tests, fixture_group_setup,
					   fixture_group_teardown);
}
