// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_section: sections are read only within their stated maximum, on crafted
 * files whose sections claim more than the file holds on disk. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

#include "crafted_elf.h"
#include "tmpdir.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"

static int setup(void **state)
{
	*state = tmpdir_new("elfsection");
	return *state ? 0 : -1;
}

static int teardown(void **state)
{
	tmpdir_remove(*state);
	return 0;
}

/* A sparse .gopclntab claiming 1 GiB is refused before libelf reads it; a small section within
 * its maximum is read. */
static void test_section_over_its_maximum_is_not_read(void **state)
{
	static const char small[] = "sixteen bytes...";
	struct crafted_section secs[] = {
		{ ".small", SHT_PROGBITS, 0x1000, small, 16, 0 },
		{ ".gopclntab", SHT_PROGBITS, 0x2000, small, 16, 1ull << 30 },
	};
	char path[4096];
	Elf_Data *data;
	GElf_Shdr sh;
	Elf *elf;
	int fd;

	snprintf(path, sizeof(path), "%s/sparse.so", (char *)*state);
	assert_int_equal(crafted_elf_write(path, secs, 2), 0);
	assert_true(crafted_elf_disk_bytes(path) < (1u << 20));
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	assert_int_equal(elf_section_data(elf_section_named(elf, ".gopclntab", ELF_SCN_ANY, &sh),
					  ELF_SECTION_MAX_GO_TABLE, &data),
			 -EFBIG);
	assert_null(data);
	assert_int_equal(
		elf_section_data(elf_section_named(elf, ".small", ELF_SCN_ANY, &sh), 16, &data), 0);
	assert_int_equal(data->d_size, 16);
	assert_memory_equal(data->d_buf, small, 16);
	assert_int_equal(
		elf_section_data(elf_section_named(elf, ".small", ELF_SCN_ANY, &sh), 15, &data),
		-EFBIG);
	assert_int_equal(elf_section_data(NULL, 16, &data), -ENOEXEC);
	elf_end(elf);
	close(fd);
}

/* A note section claiming more than notes may: the guarded open refuses the whole file. */
static void test_oversized_note_refuses_the_file(void **state)
{
	struct crafted_section secs[] = {
		{ ".note.gnu.build-id", SHT_NOTE, 0x1000, NULL, 0, 64ull << 20 },
	};
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/note.so", (char *)*state);
	assert_int_equal(crafted_elf_write(path, secs, 1), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_null(elf_guard_begin(fd));
	assert_int_equal(errno, E2BIG);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_section_over_its_maximum_is_not_read, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_oversized_note_refuses_the_file, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("elf_section", tests, NULL, NULL);
}
