// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for python_elf: Debian's stripped python3.11 and every pyenv CPython 3.8-3.13
 * present on the machine (absent ones are skipped with a message), plus file names and a
 * non-Python file. */
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

#include "interp/python_elf.h"

static int read_file(const char *path, struct python_elf *pe)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = python_elf_read(fd, path, pe);
	close(fd);
	return err;
}

/* The symbol's value and size as binutils' nm prints them (from .dynsym, or from .symtab when
 * table is ""): an independent reader, so the test holds for whichever build is installed. */
static int nm_table_symbol(const char *path, const char *table, const char *name, uint64_t *value,
			   uint64_t *size)
{
	char cmd[512], line[512], sym[256], type[8];
	unsigned long long v, sz;
	FILE *p;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "nm %s -S --defined-only '%s' 2>/dev/null", table, path);
	p = popen(cmd, "r");
	if (!p)
		return 0;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %llx %7s %255s", &v, &sz, type, sym) == 4 &&
		    !strcmp(sym, name)) {
			*value = v;
			*size = sz;
			found = 1;
		}
	pclose(p);
	return found;
}

static int nm_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	return nm_table_symbol(path, "-D", name, value, size);
}

static void test_debian_python311(void **state)
{
	struct python_elf pe;
	uint64_t rt, rt_size, ev, ev_size;

	(void)state;
	if (access("/usr/bin/python3.11", R_OK))
		skip();
	/* Like Debian's python3.11: stripped, but .dynsym keeps both symbols. */
	assert_true(nm_symbol("/usr/bin/python3.11", "_PyRuntime", &rt, &rt_size));
	assert_true(nm_symbol("/usr/bin/python3.11", "_PyEval_EvalFrameDefault", &ev, &ev_size));
	assert_int_equal(read_file("/usr/bin/python3.11", &pe), 0);
	assert_int_equal(pe.major, 3);
	assert_int_equal(pe.minor, 11);
	assert_int_equal(pe.runtime_vaddr, rt);
	assert_int_equal(pe.eval_lo, ev);
	assert_int_equal(pe.eval_hi - pe.eval_lo, ev_size);
	assert_true(ev_size > 10000); /* the eval loop, not a stub */
	assert_false(pe.has_debug_offsets);
}

static void test_pyenv_versions(void **state)
{
	static const char *const vers[] = { "3.8.18", "3.9.18", "3.10.13",
					    "3.11.7", "3.12.1", "3.13.0" };
	const char *root = getenv("PYENV_ROOT") ? getenv("PYENV_ROOT") : "/root/.pyenv";
	struct python_elf pe;
	uint64_t cold, cold_size;
	char path[512];
	int i, maj, min, found = 0;

	(void)state;
	for (i = 0; i < 6; i++) {
		sscanf(vers[i], "%d.%d", &maj, &min);
		snprintf(path, sizeof(path), "%s/versions/%s/lib/libpython%d.%d.so.1.0", root,
			 vers[i], maj, min);
		if (access(path, R_OK)) {
			print_message("skip: no pyenv CPython %s (%s)\n", vers[i], path);
			continue;
		}
		found++;
		assert_int_equal(read_file(path, &pe), 0);
		assert_int_equal(pe.major, 3);
		assert_int_equal(pe.minor, min);
		assert_true(pe.runtime_vaddr != 0);
		assert_true(pe.eval_hi > pe.eval_lo);
		/* GCC's split-off part of the eval loop (3.11 and 3.12 builds here), .symtab only */
		if (nm_table_symbol(path, "", "_PyEval_EvalFrameDefault.cold", &cold, &cold_size)) {
			assert_int_equal(pe.eval_cold_lo, cold);
			assert_int_equal(pe.eval_cold_hi - pe.eval_cold_lo, cold_size);
		} else {
			assert_int_equal(pe.eval_cold_hi, 0);
		}
		assert_int_equal(pe.has_debug_offsets, min >= 13);
	}
	if (!found)
		skip();
}

static void test_not_python(void **state)
{
	struct python_elf pe;

	(void)state;
	assert_int_equal(read_file("/bin/true", &pe), -ENOENT);
	assert_true(read_file("/etc/hostname", &pe) < 0);
}

static void test_names(void **state)
{
	int maj, min;

	(void)state;
	assert_int_equal(python_elf_name_version("/usr/bin/python3.9", &maj, &min), 0);
	assert_int_equal(min, 9);
	assert_int_equal(python_elf_name_version("libpython3.10.so.1.0", &maj, &min), 0);
	assert_int_equal(min, 10);
	assert_int_equal(python_elf_name_version("/x/python3.8dm", &maj, &min), 0);
	assert_int_equal(min, 8);
	assert_int_equal(python_elf_name_version("python3.8-config", &maj, &min), -EINVAL);
	assert_int_equal(python_elf_name_version("python2.7", &maj, &min), -EINVAL);
	assert_int_equal(python_elf_name_version("python3", &maj, &min), -EINVAL);
	assert_int_equal(python_elf_name_version("libpython3.12x", &maj, &min), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_python311),
		cmocka_unit_test(test_pyenv_versions),
		cmocka_unit_test(test_not_python),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
