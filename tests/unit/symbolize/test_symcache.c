// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for symcache: a fake proc root pointing at fixtures built at run time, limits and
 * eviction, failures that must stay unsymbolized, JIT and kernel frames, and a real child that
 * exits before its addresses are resolved. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/elf_guard.h"
#include "fixture_build.h"
#include "symbolize/symcache.h"
#include "tmpdir.h"
#include "text_file.h"

#define PIE_BASE 0x555555000000ull
#define LIB_BASE 0x7f1234000000ull

struct test_state {
	struct fixture_set fs; /* built once per group */
	char *root; /* temp dir, fresh per test: the fake proc root by default */
	const char *proc_root; /* when set, used instead of root (the real "/proc") */
	struct symcache *sc;
};

static int group_setup(void **state)
{
	struct test_state *s = calloc(1, sizeof(*s));

	if (!s || fixture_build(&s->fs)) {
		free(s);
		return -1;
	}
	*state = s;
	return 0;
}

static int group_teardown(void **state)
{
	struct test_state *s = *state;

	fixture_release(&s->fs);
	free(s);
	return 0;
}

static int setup(void **state)
{
	struct test_state *s = *state;

	s->root = tmpdir_new("procroot");
	return s->root ? 0 : -1;
}

static int teardown(void **state)
{
	struct test_state *s = *state;

	symcache_free(s->sc);
	s->sc = NULL;
	tmpdir_remove(s->root);
	s->root = NULL;
	s->proc_root = NULL;
	return 0;
}

static struct symcache *new_cache(struct test_state *s, size_t modules, size_t pids, size_t bytes,
				  const char *kallsyms)
{
	struct symcache_limits lim = {
		.max_modules = modules,
		.max_pids = pids,
		.max_bytes = bytes,
		/* One cached address: consecutive lookups of different addresses go to the modules,
		 * which is what most tests here are about (the address cache has its own tests). */
		.max_addrs = 1,
		.proc_root = s->proc_root ? s->proc_root : s->root,
		.debug_root = s->fs.debug_root,
		.kallsyms_path = kallsyms,
		.perf_map_dir = "/tmp",
	};

	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	return s->sc;
}

/* Creates <root>/PID with the given maps text and a root symlink to "/" (or to root_target). */
static void fake_pid(struct test_state *s, int pid, const char *maps, const char *root_target)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%d", s->root, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/maps", s->root, pid);
	text_file_write(path, maps);
	snprintf(path, sizeof(path), "%s/%d/root", s->root, pid);
	assert_int_equal(symlink(root_target ? root_target : "/", path), 0);
}

/* The fixture PIE at PIE_BASE, the library at LIB_BASE and a vdso, as maps text. */
static void standard_maps(struct test_state *s, char *buf, size_t len)
{
	buf[0] = '\0';
	assert_int_equal(fixture_maps_lines(s->fs.pie, PIE_BASE, buf, len), 0);
	assert_int_equal(fixture_maps_lines(s->fs.lib, LIB_BASE, buf, len), 0);
	strncat(buf, "7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0 [vdso]\n",
		len - strlen(buf) - 1);
}

static uint64_t fixture_key(const char *exe, const char *key)
{
	uint64_t v = 0;

	assert_int_equal(fixture_addr(exe, key, &v), 0);
	return v;
}

static void test_symcache_resolves_pie_library_and_inline_frames(void **state)
{
	struct test_state *s = *state;
	char maps[4096], *id = fixture_readelf_build_id(s->fs.pie);
	uint64_t lib_entry;
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	new_cache(s, 8, 8, 0, NULL);
	assert_int_equal(symcache_snapshot_pid(s->sc, 100), 0);

	symcache_resolve_user(s->sc, 100, PIE_BASE + fixture_key(s->fs.pie, "leaf"), &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	assert_true(f.has_mapping);
	assert_string_equal(f.mapping.path, s->fs.pie);
	assert_string_equal(f.mapping.build_id, id);

	symcache_resolve_user(s->sc, 100, PIE_BASE + fixture_key(s->fs.pie, "inline_ret") - 1, &f);
	assert_int_equal(f.nlines, 2);
	assert_string_equal(f.lines[0].function, "symfix_inlined");
	assert_string_equal(f.lines[1].function, "symfix_leaf");
	assert_int_equal(f.lines[1].line,
			 fixture_marker_line(&s->fs, "symfix.c", "MARK:leaf-call"));

	assert_int_equal(fixture_nm(s->fs.lib, "symfix_lib_entry", &lib_entry), 0);
	symcache_resolve_user(s->sc, 100, LIB_BASE + lib_entry + 2, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_lib_entry");
	assert_string_equal(f.mapping.path, s->fs.lib);
	free(id);
}

/* prepare reads a process once; its samples are then symbolized without reading its maps
 * again, here gone before the first sample, and a second prepare reads nothing. */
static void test_symcache_prepare_reads_a_pid_once(void **state)
{
	struct test_state *s = *state;
	char maps[4096], path[PATH_MAX];
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	new_cache(s, 8, 8, 0, NULL);
	assert_int_equal(symcache_prepare_pid(s->sc, 100), 0);
	snprintf(path, sizeof(path), "%s/100/maps", s->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symcache_prepare_pid(s->sc, 100), 0);
	symcache_resolve_user(s->sc, 100, PIE_BASE + fixture_key(s->fs.pie, "leaf"), &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	/* A process never seen and gone: prepare says so. */
	assert_int_equal(symcache_prepare_pid(s->sc, 101), -ENOENT);
}

static void test_symcache_leaves_vdso_and_unmapped_addresses_unsymbolized(void **state)
{
	struct test_state *s = *state;
	struct symcache_stats st;
	char maps[4096];
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	new_cache(s, 8, 8, 0, NULL);
	symcache_resolve_user(s->sc, 100, 0x7ffff7fc1500, &f);
	assert_true(f.has_mapping);
	assert_string_equal(f.mapping.path, "[vdso]");
	assert_int_equal(f.nlines, 0);
	symcache_resolve_user(s->sc, 100, 0x10, &f);
	assert_false(f.has_mapping);
	assert_int_equal(f.nlines, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.pids, 1);
	assert_int_equal(st.modules, 2);
}

static void test_symcache_evicts_oldest_module_when_full(void **state)
{
	struct test_state *s = *state;
	uint64_t leaf = PIE_BASE + fixture_key(s->fs.pie, "leaf"), lib_entry;
	struct symcache_stats st;
	char maps[4096];
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	assert_int_equal(fixture_nm(s->fs.lib, "symfix_lib_entry", &lib_entry), 0);
	new_cache(s, 1, 8, 0, NULL);
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.modules, 1);
	assert_true(st.evictions >= 1); /* the snapshot opened both; only one may stay */

	symcache_resolve_user(s->sc, 100, LIB_BASE + lib_entry, &f);
	assert_string_equal(f.lines[0].function, "symfix_lib_entry");
	symcache_resolve_user(s->sc, 100, leaf, &f); /* reopened after eviction */
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_resolve_user(s->sc, 100, leaf, &f);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.modules, 1);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.misses, 3);
}

/* Hot addresses are answered from the address cache: the module is not asked again, and may
 * even be closed once idle (the agent calls symcache_release_idle after each drain). */
static void test_symcache_answers_hot_addresses_after_idle_modules_close(void **state)
{
	struct test_state *s = *state;
	uint64_t leaf = PIE_BASE + fixture_key(s->fs.pie, "leaf");
	struct symcache_limits lim = {
		.max_modules = 8,
		.max_pids = 8,
		.max_addrs = 64,
		.proc_root = s->proc_root ? s->proc_root : s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
	};
	struct symcache_stats st, before;
	char maps[4096];
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_get_stats(s->sc, &before);
	assert_int_equal(before.modules, 2); /* the executable and the library, both opened */

	symcache_release_idle(s->sc, 0); /* everything with DWARF loaded is idle by now */
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.modules,
			 1); /* the executable closed; the library's DWARF never loaded */
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	assert_non_null(f.lines[0].file);
	assert_non_null(f.mapping.build_id);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.hits, before.hits + 1);
	assert_int_equal(st.misses, before.misses); /* answered without reopening the executable */
	assert_int_equal(st.modules, 1);
}

/* The byte budget bounds what stays across rounds: within a round the modules in use stay
 * open; the next round closes what does not fit (here every module is over the 1-byte budget). */
/* The lazy symbol-table read of a lookup is a load within the round's budget: once an open has
 * spent it, the table waits for the next round (the frame unsymbolized, counted as deferred). */
static void test_symcache_symbol_table_read_is_within_the_load_budget(void **state)
{
	struct test_state *s = *state;
	uint64_t leaf = PIE_BASE + fixture_key(s->fs.pie, "leaf");
	struct symcache_limits lim = {
		.max_modules = 64,
		.max_pids = 8,
		.max_addrs = 1,
		.max_dwarf_bytes = 1, /* symbol tables answer */
		.load_budget_ns = 1, /* any load spends a round's budget */
		.proc_root = s->proc_root ? s->proc_root : s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
	};
	struct symcache_stats st, before;
	char maps[4096];
	struct sym_frame f;

	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	assert_int_equal(symcache_prepare_pid(s->sc, 100), 0); /* the executable's open */
	symcache_get_stats(s->sc, &before);
	/* A fresh round: deciding on DWARF (refused) spends it, the table read waits. */
	symcache_new_round(s->sc);
	symcache_resolve_user(s->sc, 100, leaf, &f);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(f.nlines, 0);
	assert_int_equal(st.loads_deferred, before.loads_deferred + 1);
	symcache_new_round(s->sc);
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_true(f.nlines > 0);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
}

static void test_symcache_evicts_oldest_pid_when_full(void **state)
{
	struct test_state *s = *state;
	uint64_t leaf = PIE_BASE + fixture_key(s->fs.pie, "leaf");
	struct symcache_stats st;
	char maps[4096], path[PATH_MAX];
	struct sym_frame f;
	int pid;

	standard_maps(s, maps, sizeof(maps));
	for (pid = 100; pid <= 102; pid++)
		fake_pid(s, pid, maps, NULL);
	new_cache(s, 8, 2, 0, NULL);
	assert_int_equal(symcache_snapshot_pid(s->sc, 100), 0);
	assert_int_equal(symcache_snapshot_pid(s->sc, 101), 0);
	symcache_resolve_user(s->sc, 100, leaf, &f); /* 100 is now the most recent */
	assert_int_equal(symcache_snapshot_pid(s->sc, 102), 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.pids, 2);
	assert_int_equal(st.evictions, 1);

	/* all three "exit": only the snapshots still cached can answer */
	for (pid = 100; pid <= 102; pid++) {
		snprintf(path, sizeof(path), "%s/%d/maps", s->root, pid);
		assert_int_equal(unlink(path), 0);
	}
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_resolve_user(s->sc, 102, leaf, &f);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_resolve_user(s->sc, 101, leaf, &f);
	assert_false(f.has_mapping);
	assert_int_equal(f.nlines, 0);
	symcache_forget_pid(s->sc, 100);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.pids, 1);
}

static void test_symcache_missing_or_malformed_files_stay_unsymbolized(void **state)
{
	struct test_state *s = *state;
	struct symcache_stats st;
	char maps[8192], bad[PATH_MAX];
	struct sym_frame f;
	struct stat sb;

	snprintf(bad, sizeof(bad), "%s/garbage.so", s->root);
	text_file_write(bad, "\177ELF but not really an ELF file");
	assert_int_equal(stat(bad, &sb), 0);
	maps[0] = '\0';
	assert_int_equal(fixture_maps_lines(s->fs.pie, PIE_BASE, maps, sizeof(maps)), 0);
	snprintf(maps + strlen(maps), sizeof(maps) - strlen(maps),
		 "7f0000000000-7f0000001000 r-xp 00000000 fd:07 123456 /nonexistent/libgone.so\n"
		 "7f0000100000-7f0000101000 r-xp 00000000 %02x:%02x %lu %s\n",
		 major(sb.st_dev), minor(sb.st_dev), (unsigned long)sb.st_ino, bad);
	fake_pid(s, 100, maps, NULL);
	new_cache(s, 8, 8, 0, NULL);
	assert_int_equal(symcache_snapshot_pid(s->sc, 100), 0);
	symcache_resolve_user(s->sc, 100, 0x7f0000000100, &f);
	symcache_resolve_user(s->sc, 100, 0x7f0000000200, &f);
	assert_true(f.has_mapping);
	assert_string_equal(f.mapping.path, "/nonexistent/libgone.so");
	assert_null(f.mapping.build_id);
	assert_int_equal(f.nlines, 0);
	symcache_resolve_user(s->sc, 100, 0x7f0000100010, &f);
	symcache_resolve_user(s->sc, 100, 0x7f0000100020, &f);
	assert_string_equal(f.mapping.path, bad);
	assert_int_equal(f.nlines, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.errors, 2); /* one failure per file, not per frame */

	symcache_resolve_user(s->sc, 4242, PIE_BASE, &f); /* a pid never seen alive */
	assert_false(f.has_mapping);
	assert_int_equal(f.nlines, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.errors, 3);
	assert_int_equal(symcache_snapshot_pid(s->sc, 4242), -ENOENT);
}

static void test_symcache_resolves_jit_frames_from_container_perf_map(void **state)
{
	struct test_state *s = *state;
	char maps[16], path[PATH_MAX], croot[PATH_MAX / 2];
	struct sym_frame f;

	snprintf(croot, sizeof(croot), "%s/container", s->root);
	assert_int_equal(mkdir(croot, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp", croot);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-9.map", croot);
	text_file_write(path, "7e0000001000 80 Interpreted:hot_loop\n");
	maps[0] = '\0';
	fake_pid(s, 300, maps, croot);
	snprintf(path, sizeof(path), "%s/300/status", s->root);
	text_file_write(path, "Name:\tnode\nUid:\t0\t0\t0\t0\nNSpid:\t300\t9\n");
	new_cache(s, 8, 8, 0, NULL);
	symcache_resolve_user(s->sc, 300, 0x7e0000001040, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "Interpreted:hot_loop");
	assert_false(f.has_mapping);
}

/* Code a JIT named with prctl(PR_SET_VMA_ANON_NAME), shown as [anon:NAME] in maps, is named
 * from the perf map too. */
static void test_symcache_names_named_anonymous_jit_code_from_perf_map(void **state)
{
	struct test_state *s = *state;
	char path[PATH_MAX], croot[PATH_MAX / 2];
	struct sym_frame f;

	snprintf(croot, sizeof(croot), "%s/named-jit", s->root);
	assert_int_equal(mkdir(croot, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp", croot);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-301.map", croot);
	text_file_write(path, "7e0000001000 80 jit_compiled_loop\n");
	fake_pid(s, 301, "7e0000001000-7e0000002000 r-xp 00000000 00:00 0 [anon:jit code]\n",
		 croot);
	snprintf(path, sizeof(path), "%s/301/status", s->root);
	text_file_write(path, "Name:\tjit\nUid:\t0\t0\t0\t0\nNSpid:\t301\n");
	new_cache(s, 8, 8, 0, NULL);
	symcache_resolve_user(s->sc, 301, 0x7e0000001040, &f);
	assert_true(f.has_mapping);
	assert_string_equal(f.mapping.path, "[anon:jit code]");
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "jit_compiled_loop");
}

/* A container process (root dir croot_name under the test root) whose perf map has n entries. */
static void jit_pid(struct test_state *s, int pid, const char *croot_name, int n)
{
	char path[PATH_MAX], croot[PATH_MAX / 2];
	FILE *f;
	int i;

	snprintf(croot, sizeof(croot), "%s/%s", s->root, croot_name);
	assert_int_equal(mkdir(croot, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp", croot);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", croot, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	for (i = 0; i < n; i++)
		fprintf(f, "%llx 40 jit_function_number_%d\n", 0x7e0000001000ull + 0x40ull * i, i);
	fclose(f);
	fake_pid(s, pid, "", croot);
	snprintf(path, sizeof(path), "%s/%d/status", s->root, pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "Name:\tjit\nUid:\t0\t0\t0\t0\nNSpid:\t%d\n", pid);
	fclose(f);
}

/* Perf maps of all processes share one byte budget: a map that would pass it is not kept
 * (counted), the ones within it still name their frames, and the bytes held are reported. */
static void test_symcache_keeps_perf_maps_within_their_budget(void **state)
{
	struct test_state *s = *state;
	struct symcache_limits lim = {
		.max_modules = 8,
		.max_pids = 8,
		.max_addrs = 1,
		.proc_root = s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
		.perf_map_budget = 64 << 10,
	};
	struct symcache_stats st;
	struct sym_frame f;

	jit_pid(s, 302, "small-jit", 10);
	jit_pid(s, 303, "big-jit", 5000); /* about 200 KiB of entries and names */
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	symcache_resolve_user(s->sc, 302, 0x7e0000001000ull + 0x40 * 3 + 8, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "jit_function_number_3");
	symcache_resolve_user(s->sc, 303, 0x7e0000001000ull + 0x40 * 7 + 8, &f);
	assert_int_equal(f.nlines, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.perf_maps_over_budget, 1);
	assert_true(st.perf_map_bytes > 10 * 16);
	assert_true(st.perf_map_bytes <= lim.perf_map_budget);
	/* The small map's process goes: its bytes are given back. */
	symcache_forget_pid(s->sc, 302);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.perf_map_bytes, 0);
}

/* A perf map that fits the budget and then grows past it by appends is dropped as a whole map
 * that passes it would be: counted, its bytes given back, and not read again while unchanged. */
static void test_symcache_perf_map_growing_past_the_budget_is_dropped(void **state)
{
	struct test_state *s = *state;
	struct symcache_limits lim = {
		.max_modules = 8,
		.max_pids = 8,
		.max_addrs = 1,
		.proc_root = s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
		.perf_map_budget = 64 << 10,
	};
	const uint64_t miss = 0x7e0000001000ull + 0x40ull * 9000;
	struct symcache_stats st = { 0 };
	char path[PATH_MAX];
	struct sym_frame f;
	struct timespec t;
	double end;
	FILE *fp;
	int i;

	jit_pid(s, 304, "growing-jit", 10);
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	symcache_resolve_user(s->sc, 304, 0x7e0000001000ull + 0x40 * 3 + 8, &f);
	assert_int_equal(f.nlines, 1);
	snprintf(path, sizeof(path), "%s/growing-jit/tmp/perf-304.map", s->root);
	fp = fopen(path, "a");
	assert_non_null(fp);
	for (i = 10; i < 5000; i++) /* about 200 KiB more */
		fprintf(fp, "%llx 40 jit_function_number_%d\n", 0x7e0000001000ull + 0x40ull * i, i);
	fclose(fp);
	/* A miss reads the map again at most once a second: wait for that read. */
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (end = t.tv_sec + 10.0; t.tv_sec < end && !st.perf_maps_over_budget;
	     clock_gettime(CLOCK_MONOTONIC, &t)) {
		symcache_resolve_user(s->sc, 304, miss, &f);
		symcache_get_stats(s->sc, &st);
		usleep(50000);
	}
	assert_int_equal(st.perf_maps_over_budget, 1);
	assert_int_equal(st.perf_map_bytes, 0);
	symcache_resolve_user(s->sc, 304, 0x7e0000001000ull + 0x40 * 3 + 8, &f);
	assert_int_equal(f.nlines, 0);
}

static size_t dwarf_bytes_of(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t n;
	Elf *elf;

	assert_true(fd >= 0);
	elf = elf_guard_begin(fd);
	assert_non_null(elf);
	n = elf_guard_dwarf_bytes(elf, fd);
	elf_end(elf);
	close(fd);
	return n;
}

/* Room for the larger of the two modules' DWARF only: loading the other's closes the least
 * recently used one; with no room at all, names come from the symbol tables. */
static void test_symcache_keeps_dwarf_within_its_budget(void **state)
{
	struct test_state *s = *state;
	size_t pie = dwarf_bytes_of(s->fs.pie), lib = dwarf_bytes_of(s->fs.lib);
	struct symcache_limits lim = {
		.max_modules = 8,
		.max_pids = 8,
		.max_addrs = 1,
		.proc_root = s->root,
		.debug_root = s->fs.debug_root,
		.perf_map_dir = "/tmp",
		.max_dwarf_bytes = (pie > lib ? pie : lib) + 16,
	};
	uint64_t leaf = PIE_BASE + fixture_key(s->fs.pie, "leaf");
	struct symcache_stats st;
	uint64_t lib_entry;
	char maps[4096];
	struct sym_frame f;

	assert_true(pie > 0 && lib > 0);
	assert_int_equal(fixture_nm(s->fs.lib, "symfix_lib_entry", &lib_entry), 0);
	standard_maps(s, maps, sizeof(maps));
	fake_pid(s, 100, maps, NULL);
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	symcache_resolve_user(s->sc, 100, leaf, &f);
	assert_true(f.nlines >= 1 && f.lines[0].line > 0); /* DWARF: a line number */
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.dwarf_bytes, pie);
	symcache_resolve_user(s->sc, 100, LIB_BASE + lib_entry, &f);
	assert_string_equal(f.lines[f.nlines - 1].function, "symfix_lib_entry");
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.dwarf_evictions, 1);
	assert_int_equal(st.dwarf_bytes, lib);
	symcache_free(s->sc);

	lim.max_dwarf_bytes = 1;
	s->sc = symcache_new(&lim);
	assert_non_null(s->sc);
	symcache_resolve_user(s->sc, 100, LIB_BASE + lib_entry, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_lib_entry"); /* from .symtab */
	assert_int_equal(f.lines[0].line, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.dwarf_refused, 1);
	assert_int_equal(st.dwarf_bytes, 0);
}

static void test_symcache_resolves_kernel_symbols_and_modules(void **state)
{
	struct test_state *s = *state;
	char path[PATH_MAX];
	struct sym_frame f;

	snprintf(path, sizeof(path), "%s/kallsyms", s->root);
	text_file_write(path, "ffffffff81000000 T _stext\nffffffff81100000 T do_syscall_64\n"
			      "ffffffffc0001000 t ext4_file_read_iter\t[ext4]\n");
	new_cache(s, 8, 8, 0, path);
	symcache_resolve_kernel(s->sc, 0xffffffff81100010ull, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "do_syscall_64");
	assert_string_equal(f.mapping.path, "[kernel.kallsyms]");
	symcache_resolve_kernel(s->sc, 0xffffffffc0001008ull, &f);
	assert_string_equal(f.lines[0].function, "ext4_file_read_iter");
	assert_string_equal(f.mapping.path, "[ext4]");
}

static void test_symcache_reports_hidden_kernel_addresses(void **state)
{
	struct test_state *s = *state;
	struct symcache_stats st;
	char path[PATH_MAX];
	struct sym_frame f;

	snprintf(path, sizeof(path), "%s/kallsyms", s->root);
	text_file_write(path, "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n");
	new_cache(s, 8, 8, 0, path);
	symcache_resolve_kernel(s->sc, 0xffffffff81100010ull, &f);
	assert_true(f.has_mapping);
	assert_string_equal(f.mapping.path, "[kernel.kallsyms]");
	assert_int_equal(f.nlines, 0);
	symcache_get_stats(s->sc, &st);
	assert_int_equal(st.errors, 1);
}

/* Starts exe "live" and reads the run-time address printed after key (and waits for "ready"). */
static pid_t spawn_live(const char *exe, uint64_t *leaf, uint64_t *inl, uint64_t *cxx)
{
	char line[256], key[64];
	uint64_t v;
	int fds[2];
	FILE *out;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(exe, exe, "live", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	assert_non_null(out);
	while (fgets(line, sizeof(line), out) && strncmp(line, "ready", 5)) {
		if (sscanf(line, "%63s %lx", key, &v) != 2)
			continue;
		if (!strcmp(key, "leaf"))
			*leaf = v;
		else if (!strcmp(key, "inline_ret"))
			*inl = v;
		else if (!strcmp(key, "cxx"))
			*cxx = v;
	}
	fclose(out);
	return pid;
}

static void check_exited_child(struct test_state *s, const char *exe, int unlink_exe)
{
	uint64_t leaf = 0, inl = 0, cxx = 0;
	struct sym_frame f;
	pid_t pid;

	pid = spawn_live(exe, &leaf, &inl, &cxx);
	assert_true(leaf && inl && cxx);
	if (unlink_exe)
		assert_int_equal(unlink(exe), 0); /* only map_files can reach it now */
	s->proc_root = "/proc";
	new_cache(s, 8, 8, 0, NULL);
	assert_int_equal(symcache_snapshot_pid(s->sc, pid), 0);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);

	symcache_resolve_user(s->sc, pid, leaf, &f);
	assert_int_equal(f.nlines, 1);
	assert_string_equal(f.lines[0].function, "symfix_leaf");
	symcache_resolve_user(s->sc, pid, inl - 1, &f);
	assert_int_equal(f.nlines, 2);
	assert_string_equal(f.lines[0].function, "symfix_inlined");
	symcache_resolve_user(s->sc, pid, cxx, &f);
	assert_string_equal(f.lines[0].function, "symfix::widget::scale(int, double)");
}

static void test_symcache_resolves_addresses_of_exited_process(void **state)
{
	check_exited_child(*state, ((struct test_state *)*state)->fs.pie, 0);
}

static void test_symcache_resolves_deleted_binary_through_map_files(void **state)
{
	struct test_state *s = *state;
	char copy[PATH_MAX];

	snprintf(copy, sizeof(copy), "%s/symfix_copy", s->root);
	assert_int_equal(fixture_sh("cp %s %s", s->fs.pie, copy), 0);
	check_exited_child(s, copy, 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_symcache_resolves_pie_library_and_inline_frames),
		T(test_symcache_prepare_reads_a_pid_once),
		T(test_symcache_leaves_vdso_and_unmapped_addresses_unsymbolized),
		T(test_symcache_evicts_oldest_module_when_full),
		T(test_symcache_answers_hot_addresses_after_idle_modules_close),
		T(test_symcache_symbol_table_read_is_within_the_load_budget),
		T(test_symcache_evicts_oldest_pid_when_full),
		T(test_symcache_missing_or_malformed_files_stay_unsymbolized),
		T(test_symcache_resolves_jit_frames_from_container_perf_map),
		T(test_symcache_names_named_anonymous_jit_code_from_perf_map),
		T(test_symcache_keeps_perf_maps_within_their_budget),
		T(test_symcache_perf_map_growing_past_the_budget_is_dropped),
		T(test_symcache_keeps_dwarf_within_its_budget),
		T(test_symcache_resolves_kernel_symbols_and_modules),
		T(test_symcache_reports_hidden_kernel_addresses),
		T(test_symcache_resolves_addresses_of_exited_process),
		T(test_symcache_resolves_deleted_binary_through_map_files),
	};

	return cmocka_run_group_tests_name("symcache", tests, group_setup, group_teardown);
}
