// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: compiles tests/fixtures/ into a temp dir and queries the results (fixture_build.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fixture_build.h"
#include "tmpdir.h"

#define FIXTURE_CFLAGS "-O1 -g -fno-omit-frame-pointer -Wl,--build-id"

int fixture_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "fixture command failed (%d): %s\n", rc, cmd);
		return -1;
	}
	return 0;
}

char *fixture_src_dir(const char *probe)
{
	char exe[PATH_MAX], cwd_probe[PATH_MAX], *dir, *path;
	const char *env = getenv("SPANPROF_FIXTURES");
	ssize_t n;

	if (env)
		return strdup(env);
	snprintf(cwd_probe, sizeof(cwd_probe), "tests/fixtures/%s", probe);
	if (!access(cwd_probe, R_OK))
		return realpath("tests/fixtures", NULL);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return NULL;
	exe[n] = '\0';
	dir = dirname(exe);
	/* build/tests/<kind>[/<stage>]/test_x: try both depths. */
	if (asprintf(&path, "%s/../../../tests/fixtures", dir) < 0)
		return NULL;
	if (access(path, R_OK)) {
		free(path);
		if (asprintf(&path, "%s/../../../../tests/fixtures", dir) < 0)
			return NULL;
	}
	return path;
}

char *fixture_join(const char *dir, const char *name)
{
	char *p;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

static int build_exes(struct fixture_set *fs)
{
	const char *d = fs->dir, *s = fs->src_dir;

	if (fixture_sh("cd %s && cc " FIXTURE_CFLAGS " -fPIE -c %s/symfix.c -o pie.o && "
		       "cc " FIXTURE_CFLAGS " -fPIE -DSYMFIX_VARIANT='\"bid\"' -c %s/symfix.c "
		       "-o bid.o && c++ " FIXTURE_CFLAGS
		       " -fPIE -c %s/symfix_cxx.cc -o pie_cxx.o && "
		       "c++ " FIXTURE_CFLAGS " -pie pie.o pie_cxx.o -o symfix_pie && "
		       "c++ " FIXTURE_CFLAGS " -pie bid.o pie_cxx.o -o symfix_bid",
		       d, s, s, s))
		return -1;
	if (fixture_sh("cd %s && cc " FIXTURE_CFLAGS " -fno-pie -c %s/symfix.c -o nopie.o && "
		       "c++ " FIXTURE_CFLAGS " -fno-pie -c %s/symfix_cxx.cc -o nopie_cxx.o && "
		       "c++ " FIXTURE_CFLAGS " -no-pie nopie.o nopie_cxx.o -o symfix_nopie",
		       d, s, s))
		return -1;
	return fixture_sh("cd %s && cc " FIXTURE_CFLAGS " -fPIC -shared %s/symfix_lib.c "
			  "-o libsymfix.so",
			  d, s);
}

/* One copy whose debug info sits next to it through .gnu_debuglink, and one whose debug info
 * is only reachable by build id under the fake debug root. */
static int split_debug(struct fixture_set *fs)
{
	const char *d = fs->dir;
	char *id;
	int err;

	if (fixture_sh(
		    "cd %s && cp symfix_pie symfix_dbglink && "
		    "objcopy --only-keep-debug symfix_dbglink symfix_dbglink.debug && "
		    "objcopy --strip-all --add-gnu-debuglink=symfix_dbglink.debug symfix_dbglink",
		    d))
		return -1;
	id = fixture_readelf_build_id(fs->buildid);
	if (!id || strlen(id) < 4) {
		free(id);
		return -1;
	}
	err = fixture_sh("cd %s && mkdir -p %s/.build-id/%.2s && "
			 "objcopy --only-keep-debug symfix_bid %s/.build-id/%.2s/%s.debug && "
			 "objcopy --strip-all symfix_bid",
			 d, fs->debug_root, id, fs->debug_root, id, id + 2);
	free(id);
	return err;
}

int fixture_build(struct fixture_set *fs)
{
	memset(fs, 0, sizeof(*fs));
	fs->src_dir = fixture_src_dir("symfix.c");
	fs->dir = tmpdir_new("fixtures");
	if (!fs->src_dir || !fs->dir)
		goto err_release;
	fs->pie = fixture_join(fs->dir, "symfix_pie");
	fs->nopie = fixture_join(fs->dir, "symfix_nopie");
	fs->lib = fixture_join(fs->dir, "libsymfix.so");
	fs->dbglink = fixture_join(fs->dir, "symfix_dbglink");
	fs->buildid = fixture_join(fs->dir, "symfix_bid");
	fs->debug_root = fixture_join(fs->dir, "debugroot");
	if (!fs->pie || !fs->nopie || !fs->lib || !fs->dbglink || !fs->buildid || !fs->debug_root)
		goto err_release;
	if (build_exes(fs) || split_debug(fs))
		goto err_release;
	return 0;

err_release:
	fixture_release(fs);
	return -EIO;
}

void fixture_release(struct fixture_set *fs)
{
	if (!fs)
		return;
	tmpdir_remove(fs->dir);
	free(fs->src_dir);
	free(fs->pie);
	free(fs->nopie);
	free(fs->lib);
	free(fs->dbglink);
	free(fs->buildid);
	free(fs->debug_root);
	memset(fs, 0, sizeof(*fs));
}

int fixture_group_setup(void **state)
{
	struct fixture_set *fs = calloc(1, sizeof(*fs));

	if (!fs || fixture_build(fs)) {
		free(fs);
		return -1;
	}
	*state = fs;
	return 0;
}

int fixture_group_teardown(void **state)
{
	fixture_release(*state);
	free(*state);
	return 0;
}

int fixture_marker_line(const struct fixture_set *fs, const char *file, const char *marker)
{
	char path[PATH_MAX], line[1024];
	int lineno = 0, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", fs->src_dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		if (strstr(line, marker))
			found = lineno;
	}
	fclose(f);
	return found;
}

/* Runs cmd and scans its output for a line "<key> <hex>" (or "<hex> <type> <key>" for nm). */
static int scan_output(const char *cmd, const char *key, int nm_format, uint64_t *value)
{
	char line[1024], name[512], type;
	uint64_t v;
	int err = -ENOENT;
	FILE *p;

	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		if (nm_format && sscanf(line, "%" SCNx64 " %c %511s", &v, &type, name) == 3 &&
		    !strcmp(name, key))
			err = 0;
		if (!nm_format && sscanf(line, "%511s %" SCNx64, name, &v) == 2 &&
		    !strcmp(name, key))
			err = 0;
		if (!err) {
			*value = v;
			break;
		}
	}
	pclose(p);
	return err;
}

int fixture_addr(const char *exe, const char *key, uint64_t *vaddr)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "%s addrs", exe);
	return scan_output(cmd, key, 0, vaddr);
}

int fixture_nm(const char *file, const char *sym, uint64_t *vaddr)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "nm %s", file);
	return scan_output(cmd, sym, 1, vaddr);
}

char *fixture_readelf_build_id(const char *file)
{
	char cmd[PATH_MAX + 32], line[1024], id[256];
	char *out = NULL;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "readelf -n %s", file);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		char *at = strstr(line, "Build ID: ");

		if (!out && at && sscanf(at + 10, "%255s", id) == 1)
			out = strdup(id);
	}
	pclose(p);
	return out;
}

static int append_segments(Elf *elf, const struct stat *st, const char *file, uint64_t base,
			   char *buf, size_t len)
{
	size_t i, n, used = strlen(buf);
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		uint64_t start, end;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		start = base + (ph.p_vaddr & ~(uint64_t)0xfff);
		end = (base + ph.p_vaddr + ph.p_memsz + 0xfff) & ~(uint64_t)0xfff;
		used += snprintf(buf + used, len - used,
				 "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " %02x:%02x %lu %s\n",
				 start, end, ph.p_offset & ~(uint64_t)0xfff, major(st->st_dev),
				 minor(st->st_dev), (unsigned long)st->st_ino, file);
		if (used >= len)
			return -ENOSPC;
	}
	return 0;
}

int fixture_maps_lines(const char *file, uint64_t base, char *buf, size_t len)
{
	struct stat st;
	Elf *elf;
	int fd, err;

	elf_version(EV_CURRENT);
	fd = open(file, O_RDONLY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	err = elf ? append_segments(elf, &st, file, base, buf, len) : -EINVAL;
	elf_end(elf);
	close(fd);
	return err;
}
