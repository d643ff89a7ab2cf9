// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hook_elf on crafted files: a real hook library whose stapsdt note or program
 * headers are patched (offsets that wrap around, huge or truncated sizes, an unaligned or
 * misplaced semaphore). Each lookup runs in a child so a crash fails the test instead of
 * killing the runner; every crafted file must be refused, never attached. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture_build.h"
#include "discover/hook_elf.h"
#include "tmpdir.h"

/* Where the parts of the hook library's note and headers sit in the file. */
struct layout {
	uint64_t nhdr_off; /* our note's header: namesz, descsz, type (4 bytes each) */
	uint64_t desc_off; /* its descriptor: pc, base, semaphore (8 bytes each), then names */
	uint64_t text_phdr_off; /* the executable PT_LOAD's header */
	uint64_t data_phdr_off; /* the writable PT_LOAD's header */
	GElf_Phdr text, data;
	uint64_t pc, sem;
};

struct crafted {
	char *dir;
	char lib[PATH_MAX]; /* the unmodified hook library */
	struct layout l;
};

static int note_layout(Elf *elf, struct layout *l)
{
	size_t shstrndx, off = 0, name_off, desc_off;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Nhdr nh;
	Elf_Data *d;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -1;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".note.stapsdt"))
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)d->d_buf + desc_off;

			if (nh.n_descsz > 24 && !strcmp(desc + 24, "spanprof")) {
				l->nhdr_off = sh.sh_offset + name_off - 12;
				l->desc_off = sh.sh_offset + desc_off;
				memcpy(&l->pc, desc, 8);
				memcpy(&l->sem, desc + 16, 8);
				return 0;
			}
		}
	}
	return -1;
}

static int phdr_layout(Elf *elf, struct layout *l)
{
	GElf_Ehdr eh;
	GElf_Phdr ph;
	size_t i, n;

	if (!gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n))
		return -1;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_flags & PF_X) {
			l->text = ph;
			l->text_phdr_off = eh.e_phoff + i * eh.e_phentsize;
		} else if (ph.p_flags & PF_W) {
			l->data = ph;
			l->data_phdr_off = eh.e_phoff + i * eh.e_phentsize;
		}
	}
	return l->text_phdr_off && l->data_phdr_off ? 0 : -1;
}

static int read_layout(const char *path, struct layout *l)
{
	int fd = open(path, O_RDONLY), err = -1;
	Elf *elf;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		goto out_close;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !note_layout(elf, l) && !phdr_layout(elf, l))
		err = 0;
	elf_end(elf);
out_close:
	if (fd >= 0)
		close(fd);
	return err;
}

static int group_setup(void **state)
{
	static struct crafted c;
	const char *root = getenv("SPANPROF_SRC") ? getenv("SPANPROF_SRC") : ".";

	c.dir = tmpdir_new("hookcraft");
	if (!c.dir)
		return -1;
	snprintf(c.lib, sizeof(c.lib), "%s/libhook.so", c.dir);
	if (fixture_sh(
		    "cc -O1 -g -I%s/include -fPIC -shared %s/hooks/c/span_hook.c "
		    "%s/hooks/c/thread_record.c %s/hooks/c/process_ctx.c %s/hooks/c/hook_owner.c "
		    "-o %s",
		    root, root, root, root, root, c.lib) ||
	    read_layout(c.lib, &c.l))
		return -1;
	*state = &c;
	return 0;
}

static int group_teardown(void **state)
{
	struct crafted *c = *state;

	tmpdir_remove(c->dir);
	return 0;
}

/* A fresh copy of the library named `name`; returns an fd open for writing patches. */
static int copy_lib(const struct crafted *c, const char *name, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/%s", c->dir, name);
	assert_int_equal(fixture_sh("cp %s %s", c->lib, path), 0);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	return fd;
}

static void patch(int fd, uint64_t off, const void *val, size_t len)
{
	assert_int_equal(pwrite(fd, val, len, (off_t)off), (ssize_t)len);
}

static void patch64(int fd, uint64_t off, uint64_t val)
{
	patch(fd, off, &val, sizeof(val));
}

static void patch32(int fd, uint64_t off, uint32_t val)
{
	patch(fd, off, &val, sizeof(val));
}

/* Looks the hook up in a child; returns its result, failing the test if the child crashed. */
static int find_in_child(const char *path)
{
	struct hook_site site;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(-hook_elf_find(path, &site) & 0xff);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("hook_elf_find(%s) died with signal %d", path, WTERMSIG(status));
	return -WEXITSTATUS(status);
}

static void test_hook_elf_crafted_baseline_is_found(void **state)
{
	struct crafted *c = *state;

	assert_int_equal(find_in_child(c->lib), 0);
}

/* The original crash: a segment whose p_offset puts the site at 2^64 - 4, so that
 * `pc_off + 1 + sizeof(nop5)` wrapped to a small number and passed the size check. */
static void test_hook_elf_refuses_site_offset_that_wraps(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	uint64_t delta = c->l.pc - c->l.text.p_vaddr;
	int fd = copy_lib(c, "wrap.so", path, sizeof(path));

	patch64(fd, c->l.text_phdr_off + offsetof(Elf64_Phdr, p_offset), UINT64_MAX - 3 - delta);
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

/* A segment claiming 2^63 bytes of file: the site maps far beyond the end of the file. */
static void test_hook_elf_refuses_site_beyond_end_of_file(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "huge.so", path, sizeof(path));

	patch64(fd, c->l.text_phdr_off + offsetof(Elf64_Phdr, p_filesz), 1ull << 63);
	patch64(fd, c->l.desc_off, c->l.text.p_vaddr + (1ull << 40));
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

/* p_vaddr + p_filesz wraps: an address below the segment must not be taken as inside it. */
static void test_hook_elf_refuses_segment_end_that_wraps(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "vwrap.so", path, sizeof(path));

	patch64(fd, c->l.text_phdr_off + offsetof(Elf64_Phdr, p_vaddr), UINT64_MAX - 0xff);
	patch64(fd, c->l.text_phdr_off + offsetof(Elf64_Phdr, p_filesz), 0x10000);
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

static void test_hook_elf_refuses_unaligned_semaphore(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "odd_sem.so", path, sizeof(path));

	patch64(fd, c->l.desc_off + 16, c->l.sem + 1);
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

/* The semaphore pointed into code (where the kernel would add 1 to an instruction), or the site
 * into data: both refused. */
static void test_hook_elf_refuses_semaphore_in_code_and_site_in_data(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "sem_code.so", path, sizeof(path));

	patch64(fd, c->l.desc_off + 16, c->l.pc & ~1ull);
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
	fd = copy_lib(c, "site_data.so", path, sizeof(path));
	patch64(fd, c->l.desc_off, c->l.sem);
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

/* Semaphore at the last byte of the file's data: a 2-byte counter would cross the end. */
static void test_hook_elf_refuses_semaphore_past_end_of_file(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "sem_end.so", path, sizeof(path));

	patch64(fd, c->l.data_phdr_off + offsetof(Elf64_Phdr, p_filesz), 1ull << 40);
	patch64(fd, c->l.desc_off + 16, c->l.data.p_vaddr + (1ull << 39));
	close(fd);
	assert_int_equal(find_in_child(path), -ENOEXEC);
}

/* Descriptor and name sizes that are too small, huge, or not a multiple of 4. None crashes and
 * none yields a site. */
static void test_hook_elf_survives_truncated_and_huge_note_sizes(void **state)
{
	static const uint32_t descsz[] = { 0, 10, 25, 27, 0x7fffffff, 0xffffffff };
	static const uint32_t namesz[] = { 0, 3, 7, 9, 0x7fffffff, 0xffffffff };
	struct crafted *c = *state;
	char path[PATH_MAX], name[32];
	size_t i;
	int fd, err;

	for (i = 0; i < sizeof(descsz) / sizeof(descsz[0]); i++) {
		snprintf(name, sizeof(name), "descsz%zu.so", i);
		fd = copy_lib(c, name, path, sizeof(path));
		patch32(fd, c->l.nhdr_off + 4, descsz[i]);
		close(fd);
		err = find_in_child(path);
		assert_true(err == -ENODATA || err == -ENOEXEC);
		snprintf(name, sizeof(name), "namesz%zu.so", i);
		fd = copy_lib(c, name, path, sizeof(path));
		patch32(fd, c->l.nhdr_off, namesz[i]);
		close(fd);
		err = find_in_child(path);
		assert_true(err == -ENODATA || err == -ENOEXEC);
	}
}

/* Provider and probe names without their terminating NUL before the descriptor ends. */
static void test_hook_elf_survives_unterminated_names(void **state)
{
	struct crafted *c = *state;
	char path[PATH_MAX];
	int fd = copy_lib(c, "noterm.so", path, sizeof(path));

	/* descsz ends the descriptor right after "spanprof" (no NUL, no probe name) */
	patch32(fd, c->l.nhdr_off + 4, 24 + 8);
	close(fd);
	assert_int_equal(find_in_child(path), -ENODATA);
}

/* The file cut inside the note section and inside the code. */
static void test_hook_elf_survives_truncation_at_every_part(void **state)
{
	struct crafted *c = *state;
	uint64_t cuts[] = { c->l.nhdr_off + 6, c->l.desc_off + 20, c->l.text.p_offset + 3 };
	char path[PATH_MAX], name[32];
	size_t i;
	int fd, err;

	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		snprintf(name, sizeof(name), "cut%zu.so", i);
		fd = copy_lib(c, name, path, sizeof(path));
		assert_int_equal(ftruncate(fd, (off_t)cuts[i]), 0);
		close(fd);
		err = find_in_child(path);
		assert_true(err == -ENODATA || err == -ENOEXEC);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hook_elf_crafted_baseline_is_found),
		cmocka_unit_test(test_hook_elf_refuses_site_offset_that_wraps),
		cmocka_unit_test(test_hook_elf_refuses_site_beyond_end_of_file),
		cmocka_unit_test(test_hook_elf_refuses_segment_end_that_wraps),
		cmocka_unit_test(test_hook_elf_refuses_unaligned_semaphore),
		cmocka_unit_test(test_hook_elf_refuses_semaphore_in_code_and_site_in_data),
		cmocka_unit_test(test_hook_elf_refuses_semaphore_past_end_of_file),
		cmocka_unit_test(test_hook_elf_survives_truncated_and_huge_note_sizes),
		cmocka_unit_test(test_hook_elf_survives_unterminated_names),
		cmocka_unit_test(test_hook_elf_survives_truncation_at_every_part),
	};

	return cmocka_run_group_tests_name("hook_elf_crafted", tests, group_setup, group_teardown);
}
