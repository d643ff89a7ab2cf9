// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for hook_open: a file mapped by this very process is opened through map_files (also
 * when its path holds a newline), a file that is not the one maps named is refused, and the
 * openat2 fallback follows no symlink and opens nothing but regular files. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <cmocka.h>

#include "fixture_build.h"
#include "discover/hook_open.h"
#include "discover/proc_maps.h"
#include "tmpdir.h"

#define FILE_BYTES 8192

struct open_fx {
	char *dir;
};

static int setup(void **state)
{
	struct open_fx *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	fx->dir = tmpdir_new("hookopen");
	*state = fx;
	return fx->dir ? 0 : -1;
}

static int teardown(void **state)
{
	struct open_fx *fx = *state;

	tmpdir_remove(fx->dir);
	free(fx);
	return 0;
}

static void write_file(const char *path, char fill)
{
	char buf[FILE_BYTES];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	memset(buf, fill, sizeof(buf));
	assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	close(fd);
}

/* Maps path executable in this process; returns the mapping's address. */
static void *map_exec(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, FILE_BYTES, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

/* This process's mapping at addr, as /proc/self/maps shows it (copied into *out, path owned). */
static void own_mapping(void *addr, struct proc_maps *maps, const struct proc_map **out)
{
	assert_int_equal(proc_maps_read(getpid(), maps), 0);
	*out = proc_maps_find(maps, (uint64_t)(uintptr_t)addr);
	assert_non_null(*out);
}

static void assert_same_inode(int fd, const char *path)
{
	struct stat a, b;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &a), 0);
	assert_int_equal(stat(path, &b), 0);
	assert_int_equal(a.st_dev, b.st_dev);
	assert_int_equal(a.st_ino, b.st_ino);
}

static void test_hook_open_opens_own_mapping_through_map_files(void **state)
{
	struct open_fx *fx = *state;
	const struct proc_map *m;
	struct proc_maps maps;
	char path[PATH_MAX], fdpath[32], link[PATH_MAX];
	void *addr;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/lib.so", fx->dir);
	write_file(path, 'a');
	addr = map_exec(path);
	own_mapping(addr, &maps, &m);
	assert_string_equal(m->path, path);
	fd = hook_open_mapping("/proc", getpid(), m, NULL);
	assert_same_inode(fd, path);
	/* The path handed to the kernel names exactly this open file. */
	n = readlink(hook_open_fd_path(fd, fdpath, sizeof(fdpath)), link, sizeof(link) - 1);
	assert_true(n > 0);
	link[n] = '\0';
	assert_string_equal(link, path);
	close(fd);
	proc_maps_release(&maps);
	munmap(addr, FILE_BYTES);
}

/* The file renamed away and another put at its path: the mapping still opens its own file. */
static void test_hook_open_ignores_what_now_sits_at_the_path(void **state)
{
	struct open_fx *fx = *state;
	char path[PATH_MAX], other[PATH_MAX], moved[PATH_MAX];
	const struct proc_map *m;
	struct proc_maps maps;
	void *addr;
	int fd;

	snprintf(path, sizeof(path), "%s/lib.so", fx->dir);
	snprintf(moved, sizeof(moved), "%s/moved.so", fx->dir);
	snprintf(other, sizeof(other), "%s/other.so", fx->dir);
	write_file(path, 'a');
	write_file(other, 'b');
	addr = map_exec(path);
	own_mapping(addr, &maps, &m);
	assert_int_equal(rename(path, moved), 0);
	assert_int_equal(symlink(other, path), 0);
	fd = hook_open_mapping("/proc", getpid(), m, NULL);
	assert_same_inode(fd, moved);
	close(fd);
	proc_maps_release(&maps);
	munmap(addr, FILE_BYTES);
}

static void test_hook_open_refuses_file_other_than_maps_named(void **state)
{
	struct open_fx *fx = *state;
	struct proc_map wrong;
	const struct proc_map *m;
	struct proc_maps maps;
	char path[PATH_MAX];
	const char *why = NULL;
	void *addr;

	snprintf(path, sizeof(path), "%s/lib.so", fx->dir);
	write_file(path, 'a');
	addr = map_exec(path);
	own_mapping(addr, &maps, &m);
	wrong = *m;
	wrong.inode++;
	assert_int_equal(hook_open_mapping("/proc", getpid(), &wrong, &why), -ESTALE);
	assert_non_null(why);
	wrong = *m;
	wrong.dev++;
	assert_int_equal(hook_open_mapping("/proc", getpid(), &wrong, &why), -ESTALE);
	proc_maps_release(&maps);
	munmap(addr, FILE_BYTES);
}

/* maps prints the newline as \012; the path is decoded and the file still opens. */
static void test_hook_open_handles_newline_in_path(void **state)
{
	struct open_fx *fx = *state;
	const struct proc_map *m;
	struct proc_maps maps;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	void *addr;
	int fd;

	snprintf(dir, sizeof(dir), "%s/new\nline", fx->dir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	write_file(path, 'a');
	addr = map_exec(path);
	own_mapping(addr, &maps, &m);
	assert_string_equal(m->path, path);
	fd = hook_open_mapping("/proc", getpid(), m, NULL);
	assert_same_inode(fd, path);
	close(fd);
	proc_maps_release(&maps);
	munmap(addr, FILE_BYTES);
}

/* A fake proc root for the openat2 fallback: <dir>/proc/<pid>/root -> <dir>/rootfs. */
static void fake_root(const struct open_fx *fx, char *rootfs, size_t len, char *proc, size_t plen)
{
	snprintf(proc, plen, "%s/proc", fx->dir);
	snprintf(rootfs, len, "%s/rootfs", fx->dir);
	assert_int_equal(fixture_sh("mkdir -p %s/42 %s/d && ln -s %s %s/42/root", proc, rootfs,
				    rootfs, proc),
			 0);
}

static struct proc_map map_of(const char *file, char *inner)
{
	struct proc_map m = { .start = 0x1000, .end = 0x2000, .path = inner };
	struct stat st;

	if (!lstat(file, &st)) {
		m.dev = st.st_dev;
		m.inode = st.st_ino;
	}
	return m;
}

static void test_hook_open_in_root_follows_no_symlink(void **state)
{
	struct open_fx *fx = *state;
	char rootfs[PATH_MAX], proc[PATH_MAX], real[PATH_MAX + 16], victim[PATH_MAX];
	char inner_real[] = "/d/real.so", inner_link[] = "/d/link.so", inner_dir[] = "/l/real.so";
	const char *why = NULL;
	struct proc_map m;
	int fd;

	fake_root(fx, rootfs, sizeof(rootfs), proc, sizeof(proc));
	snprintf(real, sizeof(real), "%s/d/real.so", rootfs);
	snprintf(victim, sizeof(victim), "%s/victim.so", fx->dir);
	write_file(real, 'a');
	write_file(victim, 'v');
	m = map_of(real, inner_real);
	fd = hook_open_in_root(proc, 42, &m, NULL);
	assert_same_inode(fd, real);
	close(fd);
	/* A symlink as the last component, to a file with the inode maps named: still refused. */
	assert_int_equal(fixture_sh("ln -s %s %s/d/link.so", victim, rootfs), 0);
	m = map_of(victim, inner_link);
	assert_int_equal(hook_open_in_root(proc, 42, &m, &why), -ELOOP);
	assert_string_equal(why, "a symlink on the path");
	/* A symlink as a directory on the way. */
	assert_int_equal(fixture_sh("ln -s %s/d %s/l", rootfs, rootfs), 0);
	m = map_of(real, inner_dir);
	assert_true(hook_open_in_root(proc, 42, &m, NULL) < 0);
}

static void test_hook_open_in_root_refuses_fifo_and_deleted(void **state)
{
	struct open_fx *fx = *state;
	char rootfs[PATH_MAX], proc[PATH_MAX], fifo[PATH_MAX + 16];
	char inner_fifo[] = "/d/fifo", inner_deleted[] = "/d/gone.so (deleted)";
	const char *why = NULL;
	struct proc_map m;

	fake_root(fx, rootfs, sizeof(rootfs), proc, sizeof(proc));
	snprintf(fifo, sizeof(fifo), "%s/d/fifo", rootfs);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	m = map_of(fifo, inner_fifo);
	/* Opened without blocking (no writer), then refused: not a regular file. */
	assert_int_equal(hook_open_in_root(proc, 42, &m, &why), -EINVAL);
	assert_string_equal(why, "not a regular file");
	m = map_of(fifo, inner_deleted);
	assert_int_equal(hook_open_in_root(proc, 42, &m, NULL), -ENOENT);
}

/* A device node (here a second /dev/null) is located with O_PATH and refused unopened. */
static void test_hook_open_in_root_refuses_device_node(void **state)
{
	struct open_fx *fx = *state;
	char rootfs[PATH_MAX], proc[PATH_MAX], dev[PATH_MAX + 16];
	char inner_dev[] = "/d/null";
	const char *why = NULL;
	struct proc_map m;

	fake_root(fx, rootfs, sizeof(rootfs), proc, sizeof(proc));
	snprintf(dev, sizeof(dev), "%s/d/null", rootfs);
	if (mknod(dev, S_IFCHR | 0600, makedev(1, 3)))
		skip(); /* no CAP_MKNOD here */
	m = map_of(dev, inner_dev);
	assert_int_equal(hook_open_in_root(proc, 42, &m, &why), -EINVAL);
	assert_string_equal(why, "not a regular file");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hook_open_opens_own_mapping_through_map_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_ignores_what_now_sits_at_the_path,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_refuses_file_other_than_maps_named,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_handles_newline_in_path, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_in_root_follows_no_symlink, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_in_root_refuses_fifo_and_deleted,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_hook_open_in_root_refuses_device_node, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("hook_open", tests, NULL, NULL);
}
