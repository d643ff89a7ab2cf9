// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for elf_section (and the guarded open's use of it, xz_size included): sections are
 * read only within their stated maximum, on crafted files whose sections claim more than the
 * file holds on disk or decompress to more than it may. */
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
#include <lzma.h>

#include "crafted_elf.h"
#include "tmpdir.h"
#include "util/elf_guard.h"
#include "util/elf_layout.h"
#include "util/elf_section.h"
#include "util/xz_size.h"

static int setup(void **state)
{
	*state = tmpdir_new("elfsection");
	return *state ? 0 : -1;
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

/* xz of n zero bytes (malloc'ed), for a .gnu_debugdata section. */
static uint8_t *xz_zeros(size_t n, size_t *len)
{
	uint8_t *in = calloc(1, n), *out = malloc(n / 100 + 65536);
	size_t pos = 0;

	assert_non_null(in);
	assert_non_null(out);
	assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, in, n, out, &pos,
						 n / 100 + 65536),
			 LZMA_OK);
	free(in);
	*len = pos;
	return out;
}

/* MiniDebugInfo that decompresses past the symbol-table cap (an xz bomb of a few kilobytes)
 * refuses the file; a small one is fine. */
static void test_minidebuginfo_bomb_refuses_the_file(void **state)
{
	struct crafted_section secs[] = { { ".gnu_debugdata", SHT_PROGBITS, 0, NULL, 0, 0 } };
	size_t sizes[2] = { 1u << 20, ELF_GUARD_MAX_SYMTAB_BYTES + (1u << 20) };
	char path[4096];
	uint64_t out;
	Elf *elf;
	int i, fd;

	for (i = 0; i < 2; i++) {
		uint8_t *xz = xz_zeros(sizes[i], &secs[0].len);

		secs[0].data = xz;
		assert_int_equal(xz_size(xz, secs[0].len, ELF_GUARD_MAX_SYMTAB_BYTES, &out),
				 i ? -EFBIG : 0);
		snprintf(path, sizeof(path), "%s/minidebug%d.so", (char *)*state, i);
		assert_int_equal(crafted_elf_write(path, secs, 1), 0);
		fd = open(path, O_RDONLY);
		assert_true(fd >= 0);
		elf = elf_guard_begin(fd);
		if (i) {
			printf("  %zu bytes of xz claiming %zu MB: refused\n", secs[0].len,
			       sizes[i] >> 20);
			assert_null(elf);
			assert_int_equal(errno, E2BIG);
		} else {
			assert_int_equal(out, sizes[0]);
			assert_non_null(elf);
			elf_end(elf);
		}
		close(fd);
		free(xz);
	}
	assert_int_equal(xz_size("not xz", 6, 100, &out), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_section_over_its_maximum_is_not_read, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_oversized_note_refuses_the_file, setup,
						tmpdir_teardown),
		cmocka_unit_test_setup_teardown(test_minidebuginfo_bomb_refuses_the_file, setup,
						tmpdir_teardown),
	};

	return cmocka_run_group_tests_name("elf_section", tests, NULL, NULL);
}
