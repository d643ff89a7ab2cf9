// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ruby_elf and ruby_offsets: Debian's stripped libruby against binutils' view of
 * it (nm, readelf) and Ruby's own RUBY_VERSION, the thin ruby executable and a non-Ruby file,
 * version strings, and the offsets table's versions. The libruby 3.3/3.4 of the Debian 13 root
 * (.ci/ruby-root.sh), which exports neither ruby_current_ec nor rb_vm_exec, against objdump's
 * and readelf's reading of the code and CFI they are found from. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "interp/ruby_elf.h"
#include "interp/ruby_elf_hidden.h"
#include "interp/ruby_offsets.h"

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

/* rb_errinfo's TLS access gives what the export gives, on the libruby that has both. */
static void test_ec_from_code_agrees_with_the_export(void **state)
{
	struct ruby_elf re, from_code = { 0 };
	uint64_t value, size;
	GElf_Sym errinfo = { 0 };
	char lib[512];
	Elf *elf;
	int fd;

	(void)state;
	if (!have_ruby(lib, sizeof(lib)))
		skip();
	assert_int_equal(read_file(lib, &re), 0);
	assert_true(nm_symbol(lib, "rb_errinfo", &value, &size));
	errinfo.st_value = value;
	errinfo.st_size = size;
	elf_version(EV_CURRENT);
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(ruby_elf_ec_from_code(elf, fd, &errinfo, &from_code), 0);
	elf_end(elf);
	close(fd);
	assert_true(from_code.has_tls_ec);
	assert_int_equal(from_code.tls_ec_offset, re.tls_ec_offset);
	assert_int_equal(from_code.dtpmod_got, re.dtpmod_got);
}

/* A hex number a shell command prints first, or 0. */
static uint64_t command_hex(const char *cmd)
{
	char line[256];
	unsigned long long v = 0;

	command_line(cmd, line, sizeof(line));
	return sscanf(line, "%llx", &v) == 1 ? v : 0;
}

/* The target of the first "jmp" out of [lo, lo + size) in objdump's disassembly of it. */
static uint64_t objdump_outward_jmp(const char *lib, uint64_t lo, uint64_t size)
{
	char cmd[700], line[512];
	unsigned long long at, target;
	uint64_t found = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd),
		 "objdump -d --no-show-raw-insn --start-address=0x%llx --stop-address=0x%llx "
		 "'%s' 2>/dev/null",
		 (unsigned long long)lo, (unsigned long long)(lo + size), lib);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p))
		if (!found && sscanf(line, " %llx: jmp %llx", &at, &target) == 2 &&
		    (target < lo || target >= lo + size))
			found = target;
	pclose(p);
	return found;
}

/* Ruby 3.3/3.4 as Debian 13 builds them: ruby_current_ec found through rb_errinfo's code (the
 * GOT slot its lea names, per objdump; an offset inside the TLS segment, per readelf) and
 * rb_vm_exec through rb_iseq_eval_main's tail jump (objdump) and its FDE (readelf). */
static void test_libruby_without_exports(void **state)
{
	const char *root = getenv("SPANPROF_RUBY_ROOT") ?: "/var/lib/spanprof-test/trixie-ruby";
	uint64_t value, size, slot, tls, target, end;
	char pattern[600], cmd[900], *lib;
	struct ruby_elf re;
	glob_t g;
	size_t i;

	(void)state;
	snprintf(pattern, sizeof(pattern), "%s/usr/lib/x86_64-linux-gnu/libruby-3.*.so.3.*.*",
		 root);
	if (glob(pattern, 0, NULL, &g) || !g.gl_pathc) {
		printf("  skip: no libruby 3.x in the Debian 13 root %s (.ci/ruby-root.sh, run by "
		       "scripts/setup-debian.sh, builds it)\n",
		       root);
		skip();
	}
	for (i = 0; i < g.gl_pathc; i++) {
		lib = g.gl_pathv[i];
		assert_int_equal(read_file(lib, &re), 0);
		printf("  %s: CRuby %d.%d.%d\n", lib, re.major, re.minor, re.patch);
		assert_false(nm_symbol(lib, "ruby_current_ec", &value, &size));
		assert_false(nm_symbol(lib, "rb_vm_exec", &value, &size));
		assert_true(nm_symbol(lib, "rb_errinfo", &value, &size));
		snprintf(
			cmd, sizeof(cmd),
			"objdump -d --no-show-raw-insn --start-address=0x%llx "
			"--stop-address=0x%llx '%s' | sed -n 's/.*lea .*(%%rip),%%rdi *# *\\([0-9a-f]*\\).*/\\1/p'",
			(unsigned long long)value, (unsigned long long)(value + size), lib);
		slot = command_hex(cmd);
		snprintf(cmd, sizeof(cmd), "readelf -lW '%s' | awk '$1 == \"TLS\" {print $6}'",
			 lib);
		tls = command_hex(cmd);
		assert_true(re.has_tls_ec);
		assert_int_equal(re.dtpmod_got, slot);
		assert_true(re.tls_ec_offset + 8 <= tls);
		assert_int_equal(re.tls_ec_offset % 8, 0);
		assert_true(nm_symbol(lib, "rb_iseq_eval_main", &value, &size));
		target = objdump_outward_jmp(lib, value, size);
		snprintf(
			cmd, sizeof(cmd),
			"readelf --debug-dump=frames '%s' | sed -n 's/.*pc=0*%llx\\.\\.\\([0-9a-f]*\\).*/\\1/p'",
			lib, (unsigned long long)target);
		end = command_hex(cmd);
		printf("    ruby_current_ec at TLS offset %llu (GOT slot 0x%llx); rb_vm_exec "
		       "[0x%llx, 0x%llx)\n",
		       (unsigned long long)re.tls_ec_offset, (unsigned long long)slot,
		       (unsigned long long)re.exec_lo, (unsigned long long)re.exec_hi);
		assert_true(target != 0 && end > target);
		assert_int_equal(re.exec_lo, target);
		assert_int_equal(re.exec_hi, end);
	}
	globfree(&g);
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

/* The table's columns (docs/interpreters.md): 3.1/3.2 frames carry jit_return, 3.2 moved insns_info
 * and made first_lineno an int; 2.6 and 3.5 are not supported; 3.1, 3.3 and 3.4 are marked
 * tested (test_ruby_frames runs them). */
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
		assert_int_equal(ruby_offsets_for(3, minor)->tested, minor == 1 || minor >= 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debian_libruby),
		cmocka_unit_test(test_ec_from_code_agrees_with_the_export),
		cmocka_unit_test(test_libruby_without_exports),
		cmocka_unit_test(test_files_without_ruby),
		cmocka_unit_test(test_version_strings),
		cmocka_unit_test(test_offsets_table),
	};

	return cmocka_run_group_tests_name("ruby_elf", tests, NULL, NULL);
}
