// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: where the kernel maps a fixture's code (unwind_fixture.h); apart from the builder
 * because it asserts with cmocka, which the benchmarks do not link. */
#include <fcntl.h>
#include <gelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "unwind_fixture.h"

struct proc_map unwind_fixture_map(const char *path, uint64_t base, uint64_t *vaddr)
{
	struct proc_map m = { 0 };
	struct stat st;
	GElf_Phdr ph;
	size_t i, n;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n; i++) {
		assert_non_null(gelf_getphdr(elf, i, &ph));
		if (ph.p_type == PT_LOAD && ph.p_flags & PF_X)
			break;
	}
	assert_true(i < n);
	m.offset = ph.p_offset & ~0xfffull;
	m.start = base + (ph.p_vaddr & ~0xfffull);
	m.end = base + ph.p_vaddr + ph.p_memsz;
	m.dev = st.st_dev;
	m.inode = st.st_ino;
	m.path = (char *)path;
	if (vaddr)
		*vaddr = ph.p_vaddr & ~0xfffull;
	elf_end(elf);
	close(fd);
	return m;
}
