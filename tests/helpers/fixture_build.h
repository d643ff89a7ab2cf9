/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: builds the ELF fixtures of tests/fixtures/ at run time and answers questions about
 * them with independent tools (the fixture itself, nm, readelf, libelf). */
#ifndef SPANPROF_TEST_FIXTURE_BUILD_H
#define SPANPROF_TEST_FIXTURE_BUILD_H

#include <stddef.h>
#include <stdint.h>

/* Paths of the built fixtures (all malloc'ed, under dir). */
struct fixture_set {
	char *dir; /* temp dir holding everything below */
	char *src_dir; /* tests/fixtures */
	char *pie; /* PIE executable with full DWARF */
	char *nopie; /* -no-pie executable with full DWARF */
	char *lib; /* shared library libsymfix.so with DWARF */
	char *dbglink; /* stripped PIE, debug file next to it via .gnu_debuglink */
	char *buildid; /* stripped PIE, debug file only under debug_root/.build-id/ */
	char *debug_root; /* fake /usr/lib/debug */
};

/* Builds all fixtures into a new temp dir. Returns 0 or -errno (after printing the failing
 * command). */
int fixture_build(struct fixture_set *fs);

/* Removes the temp dir and frees the paths. NULL-safe. */
void fixture_release(struct fixture_set *fs);

/* A cmocka group setup: *state becomes a fixture_set built with fixture_build(). Returns 0 or -1
 * (nothing left allocated). */
int fixture_group_setup(void **state);

/* The matching group teardown: releases and frees *state. Returns 0. */
int fixture_group_teardown(void **state);

/* Line number (1-based) of the first line of fixture source `file` containing `marker`, or -1. */
int fixture_marker_line(const struct fixture_set *fs, const char *file, const char *marker);

/* Runs `exe addrs` and returns the value printed after `key` ("leaf", "inline_ret", "cxx"): the
 * ELF virtual address of that code. Returns 0 or -errno. */
int fixture_addr(const char *exe, const char *key, uint64_t *vaddr);

/* The value of symbol `sym` as printed by `nm`. Returns 0 or -ENOENT. */
int fixture_nm(const char *file, const char *sym, uint64_t *vaddr);

/* The build id printed by `readelf -n`, lower-case hex, malloc'ed; NULL when absent. */
char *fixture_readelf_build_id(const char *file);

/* Appends /proc/PID/maps lines for every executable PT_LOAD of file (read with libelf), placed
 * the way the kernel maps them at load bias `base` (0 for ET_EXEC), with the file's real device
 * and inode. Returns 0 or -errno. */
int fixture_maps_lines(const char *file, uint64_t base, char *buf, size_t len);

/* tests/fixtures, malloc'ed: $SPANPROF_FIXTURES, else relative to the cwd when it holds
 * tests/fixtures/<probe> (make runs tests from the top), else relative to the test binary.
 * NULL when out of memory. */
char *fixture_src_dir(const char *probe);

/* dir/name, malloc'ed; NULL when out of memory. */
char *fixture_join(const char *dir, const char *name);

/* Runs a shell command; returns 0 when it exits 0, else -1. */
int fixture_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SPANPROF_TEST_FIXTURE_BUILD_H */
