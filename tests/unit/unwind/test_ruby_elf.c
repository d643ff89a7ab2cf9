// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ruby_elf and ruby_offsets: Debian's stripped libruby against binutils' view of
 * it (nm, readelf) and Ruby's own RUBY_VERSION, the thin ruby executable and a non-Ruby file,
 * version strings, and the offsets table's versions. */
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

#include "unwind/ruby_elf.h"
#include "unwind/ruby_offsets.h"

static int read_file(const char *path, struct ruby_elf *re)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = ruby_elf_read(fd, re);
	close(fd);
	return err;
}

/* The first line a shell command prints (newline cut), or "" when it fails. */
static void command_line(const char *cmd, char *out, size_t size)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	if (!p)
		return;
	if (!fgets(out, size, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

/* The value and size of a dynamic symbol as nm prints them. */
static int nm_symbol(const char *path, const char *name, uint64_t *value, uint64_t *size)
{
	char cmd[600], line[128];
	unsigned long long v, sz;

	snprintf(cmd, sizeof(cmd),
		 "nm -D -S --defined-only '%s' 2>/dev/null | awk '$4 == \"%s\" {print $1, $2}'",
		 path, name);
	command_line(cmd, line, sizeof(line));
	if (sscanf(line, "%llx %llx", &v, &sz) != 2)
		return 0;
	*value = v;
	*size = sz;
	return 1;
}

static int have_ruby(char *lib, size_t size)
{
	/* The library the dynamic linker gives Debian's ruby (rbconfig's libdir is not it). */
	command_line("ldd \"$(command -v ruby)\" 2>/dev/null | awk '/libruby/ {print $3}'", lib,
		     size);
	if (!lib[0] || access(lib, R_OK)) {
		printf("  skip: no ruby with a shared libruby on this machine\n");
		return 0;
	}
	return 1;
}

static void test_debian_libruby(void **state)
{
	uint64_t ec, ec_size, ex, ex_size, got = 0;
	char lib[512], version[64], want[64], line[1024];
	struct ruby_elf re;

	(void)state;
	if (!have_ruby(lib, sizeof(lib)))
		skip();
	assert_int_equal(read_file(lib, &re), 0);
	command_line("ruby -e 'print RUBY_VERSION'", want, sizeof(want));
	snprintf(version, sizeof(version), "%d.%d.%d", re.major, re.minor, re.patch);
	assert_string_equal(version, want);
	assert_true(nm_symbol(lib, "ruby_current_ec", &ec, &ec_size));
	assert_true(nm_symbol(lib, "rb_vm_exec", &ex, &ex_size));
	assert_true(re.has_tls_ec);
	assert_int_equal(re.tls_ec_offset, ec);
	assert_int_equal(re.exec_lo, ex);
	assert_int_equal(re.exec_hi, ex + ex_size);
	assert_false(re.is_exec);
	/* The general-dynamic GOT slot readelf shows for the symbol. */
	snprintf(line, sizeof(line),
		 "readelf -rW '%s' | awk '$3 == \"R_X86_64_DTPMOD64\" && $5 == \"ruby_current_ec\" "
		 "{print $1}'",
		 lib);
	command_line(line, version, sizeof(version));
	assert_int_equal(sscanf(version, "%llx", (unsigned long long *)&got), 1);
	assert_int_equal(re.dtpmod_got, got);
	assert_true(re.loads.n >= 2);
	/* Debian does not export ruby_global_symbols: candidates from rb_sym_all_symbols' code
	 * (test_ruby_symbols checks the one that holds in a live process). */
	assert_int_equal(re.global_symbols, 0);
	assert_true(re.nguesses >= 1);
}

/* Debian's /usr/bin/ruby is a stub linking libruby: no interpreter in it. So is libc. */
static void test_files_without_ruby(void **state)
{
	struct ruby_elf re;

	(void)state;
	if (!access("/usr/bin/ruby", R_OK))
		assert_int_equal(read_file("/usr/bin/ruby", &re), -ENOENT);
	assert_int_equal(read_file("/lib/x86_64-linux-gnu/libc.so.6", &re), -ENOENT);
	assert_int_equal(read_file("/nonexistent/libruby.so", &re), -ENOENT);
}

static void test_version_strings(void **state)
{
	int a, b, c;

	(void)state;
	assert_int_equal(ruby_elf_parse_version("3.1.7", &a, &b, &c), 0);
	assert_true(a == 3 && b == 1 && c == 7);
	assert_int_equal(ruby_elf_parse_version("2.7.8p225", &a, &b, &c), 0);
	assert_true(a == 2 && b == 7 && c == 8);
	assert_int_equal(ruby_elf_parse_version("3.1", &a, &b, &c), -EINVAL);
	assert_int_equal(ruby_elf_parse_version("", &a, &b, &c), -EINVAL);
	assert_int_equal(ruby_elf_parse_version("300.1.1", &a, &b, &c), -EINVAL);
}

/* The table's columns (UNWIND.md B4): 3.1/3.2 frames carry jit_return, 3.2 moved insns_info
 * and made first_lineno an int; 2.6 and 3.5 are not supported; only 3.1 is marked tested. */
static void test_offsets_table(void **state)
{
	const struct ruby_offsets *o;
	int minor;

	(void)state;
	assert_null(ruby_offsets_for(2, 6));
	assert_null(ruby_offsets_for(3, 5));
	assert_null(ruby_offsets_for(4, 0));
	o = ruby_offsets_for(2, 7);
	assert_non_null(o);
	assert_int_equal(o->bpf.cfp_size, 56);
	assert_int_equal(o->insn_entry_size, 8);
	o = ruby_offsets_for(3, 1);
	assert_non_null(o);
	assert_true(o->tested);
	assert_int_equal(o->bpf.cfp_size, 64);
	assert_int_equal(o->insns_body, 120);
	assert_int_equal(o->insns_succ, 144);
	assert_true(o->first_lineno_fixnum && o->str_embed_len_in_flags);
	o = ruby_offsets_for(3, 2);
	assert_int_equal(o->bpf.cfp_size, 64);
	assert_int_equal(o->insns_body, 112);
	assert_false(o->first_lineno_fixnum);
	assert_int_equal(o->str_embed_data, 24);
	for (minor = 3; minor <= 4; minor++)
		assert_int_equal(ruby_offsets_for(3, minor)->bpf.cfp_size, 56);
	for (minor = 0; minor <= 4; minor++)
		assert_int_equal(ruby_offsets_for(3, minor)->tested, minor == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_libruby),
		cmocka_unit_test(test_files_without_ruby),
		cmocka_unit_test(test_version_strings),
		cmocka_unit_test(test_offsets_table),
	};

	return cmocka_run_group_tests_name("ruby_elf", tests, NULL, NULL);
}
