// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for cfi_table: rows built with libdw from fixtures compiled at test time
 * (-O2 -fomit-frame-pointer) and from Debian's libc, compared with every row that
 * `readelf --debug-dump=frames-interp` prints. */
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

#include "agent_proc.h"
#include "unwind/cfi_table.h"
#include "unwind_fixture.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

struct compare {
	uint64_t rows, rsp, rbp_cfa, plt, stop, rbp_saved, mismatches;
};

/* Index of column name in readelf's header line ("LOC CFA rbx rbp ra"), or -1. */
static int column(char *header, const char *name)
{
	char *save = NULL, *tok;
	int i = 0;

	for (tok = strtok_r(header, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++)
		if (!strcmp(tok, name))
			return i;
	return -1;
}

static void check_rule(const struct cfi_row *row, char **tok, int n, int rbp_col, int ra_col,
		       struct compare *c);

static void check_row(const struct cfi_table *t, char *line, int rbp_col, int ra_col,
		      struct compare *c)
{
	char *tok[32], *save = NULL;
	const struct cfi_row *row;
	uint64_t pc, before;
	int n = 0;

	/* "r10 (r10)" is one column. */
	for (tok[n] = strtok_r(line, " \t\n", &save); tok[n] && n < 31;
	     tok[n] = strtok_r(NULL, " \t\n", &save))
		if (tok[n][0] != '(')
			n++;
	if (n < 2 || strstr(tok[1], "ZERO") || sscanf(tok[0], "%lx", &pc) != 1)
		return;
	row = cfi_table_find(t, pc);
	c->rows++;
	before = c->mismatches;
	check_rule(row, tok, n, rbp_col, ra_col, c);
	if (c->mismatches != before)
		printf("# mismatch at 0x%lx: readelf CFA %s, table kind %d off %d rbp %d/%d\n", pc,
		       tok[1], row ? row->rule.cfa_kind : -1, row ? row->rule.cfa_off : 0,
		       row ? row->rule.rbp_kind : -1, row ? row->rule.rbp_off : 0);
}

static void check_rule(const struct cfi_row *row, char **tok, int n, int rbp_col, int ra_col,
		       struct compare *c)
{
	long off;

	if (!row) {
		c->mismatches++;
		return;
	}
	if (ra_col >= 0 && ra_col < n && !strcmp(tok[ra_col], "u")) {
		c->stop++;
		c->mismatches += row->rule.cfa_kind != SPANPROF_CFA_STOP;
		return;
	}
	if (ra_col >= 0 && ra_col < n && strcmp(tok[ra_col], "c-8")) {
		c->mismatches += row->rule.cfa_kind != SPANPROF_CFA_INVALID &&
				 row->rule.cfa_kind != SPANPROF_CFA_SIGNAL;
		return;
	}
	if (!strcmp(tok[1], "exp")) {
		c->plt++;
		c->mismatches += row->rule.cfa_kind != SPANPROF_CFA_PLT1 &&
				 row->rule.cfa_kind != SPANPROF_CFA_PLT2 &&
				 row->rule.cfa_kind != SPANPROF_CFA_SIGNAL &&
				 row->rule.cfa_kind != SPANPROF_CFA_INVALID;
		return;
	}
	if (sscanf(tok[1], "rsp+%ld", &off) == 1) {
		c->rsp++;
		c->mismatches += row->rule.cfa_kind != SPANPROF_CFA_RSP || row->rule.cfa_off != off;
	} else if (sscanf(tok[1], "rbp+%ld", &off) == 1) {
		c->rbp_cfa++;
		c->mismatches += row->rule.cfa_kind != SPANPROF_CFA_RBP || row->rule.cfa_off != off;
	} else {
		return; /* another register: the row must only not claim rsp/rbp */
	}
	if (rbp_col >= 0 && rbp_col < n && sscanf(tok[rbp_col], "c%ld", &off) == 1) {
		c->rbp_saved++;
		c->mismatches +=
			row->rule.rbp_kind != SPANPROF_RBP_AT_CFA || row->rule.rbp_off != off;
	} else if (rbp_col < 0 || (rbp_col < n && !strcmp(tok[rbp_col], "u"))) {
		c->mismatches += row->rule.rbp_kind != SPANPROF_RBP_SAME;
	}
}

/* Compares t with every row readelf prints for path. */
static void compare_with_readelf(const char *path, const struct cfi_table *t, struct compare *c)
{
	char cmd[4200], line[1024], header[1024];
	int rbp_col = -1, ra_col = -1, in_fde = 0;
	FILE *p;

	memset(c, 0, sizeof(*c));
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames-interp '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, " FDE cie=")) {
			in_fde = 1;
			rbp_col = ra_col = -1;
			continue;
		}
		if (strstr(line, " CIE ")) {
			in_fde = 0;
			continue;
		}
		if (in_fde && strstr(line, "LOC") && strstr(line, "CFA")) {
			snprintf(header, sizeof(header), "%s", line);
			rbp_col = column(header, "rbp");
			snprintf(header, sizeof(header), "%s", line);
			ra_col = column(header, "ra");
			continue;
		}
		if (in_fde && line[0] == '0')
			check_row(t, line, rbp_col, ra_col, c);
	}
	pclose(p);
}

static void build(const char *path, struct cfi_table *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(cfi_table_build_fd(fd, t, NULL), 0);
	close(fd);
	assert_true(t->nrows > 0);
}

static void test_rows_match_readelf(const char *path, int want_rbp_saved)
{
	struct cfi_table t;
	struct compare c;

	build(path, &t);
	compare_with_readelf(path, &t, &c);
	printf("# %s: %lu readelf rows (%lu rsp, %lu rbp, %lu plt/expr, %lu stop, %lu rbp saved), "
	       "%zu table rows, %lu mismatches, %lu invalid\n",
	       path, c.rows, c.rsp, c.rbp_cfa, c.plt, c.stop, c.rbp_saved, t.nrows, c.mismatches,
	       t.stats.invalid_rows);
	assert_true(c.rows > 10);
	assert_true(c.rsp > 5);
	if (want_rbp_saved)
		assert_true(c.rbp_saved > 0);
	assert_int_equal(c.mismatches, 0);
	assert_true(t.stats.plt_rows > 0); /* .plt's expression */
	cfi_table_release(&t);
}

static void test_fixture_exe_rows_match_readelf(void **state)
{
	const struct unwind_fixture *f = *state;

	test_rows_match_readelf(f->exe, 1);
}

static void test_fixture_lib_rows_match_readelf(void **state)
{
	const struct unwind_fixture *f = *state;

	test_rows_match_readelf(f->lib, 0);
}

static void test_libc_rows_match_readelf(void **state)
{
	struct cfi_table t;

	(void)state;
	test_rows_match_readelf(LIBC, 1);
	build(LIBC, &t);
	/* __restore_rt carries the 'S' augmentation; clone and _start end the stack. */
	assert_true(t.stats.signal_rows >= 1);
	assert_true(t.stats.stop_rows >= 1);
	assert_true(t.stats.fdes > 3000);
	cfi_table_release(&t);
}

/* The gap after an FDE is "no row", and a PC before the first FDE has none at all. */
static void test_gaps_are_marked(void **state)
{
	const struct unwind_fixture *f = *state;
	const struct cfi_row *row;
	struct cfi_table t;
	size_t i, gaps = 0;

	build(f->exe, &t);
	assert_null(cfi_table_find(&t, 0));
	for (i = 0; i < t.nrows; i++) {
		if (i)
			assert_true(t.rows[i].pc > t.rows[i - 1].pc);
		gaps += t.rows[i].rule.cfa_kind == SPANPROF_CFA_NONE;
	}
	assert_true(gaps >= 1);
	assert_int_equal(t.rows[t.nrows - 1].rule.cfa_kind, SPANPROF_CFA_NONE);
	row = cfi_table_find(&t, t.rows[t.nrows - 1].pc + 100);
	assert_int_equal(row->rule.cfa_kind, SPANPROF_CFA_NONE);
	cfi_table_release(&t);
}

/* A Go executable linked with C (cgo): .eh_frame covers the C code only, so the Go code before
 * it and the gaps are frame-pointer rows, not "no row". */
static void test_go_code_without_fde_is_walked_by_frame_pointers(void **state)
{
	const char *path = build_path("tests/workloads/go_spans_cgo_stripped");
	const struct cfi_row *row;
	struct cfi_table t;
	size_t i, cfi = 0;

	(void)state;
	if (access(path, R_OK)) {
		printf("SKIP: %s missing (is golang-go installed?)\n", path);
		skip();
	}
	build(path, &t);
	row = cfi_table_find(&t, 0x401000); /* Go's .text starts there (non-PIE) */
	assert_non_null(row);
	assert_int_equal(row->rule.cfa_kind, SPANPROF_CFA_FP);
	for (i = 0; i < t.nrows; i++) {
		assert_true(t.rows[i].rule.cfa_kind != SPANPROF_CFA_NONE);
		cfi += t.rows[i].rule.cfa_kind == SPANPROF_CFA_RSP;
	}
	assert_true(cfi >= 1); /* the C code's own rows are kept */
	assert_int_equal(t.rows[t.nrows - 1].rule.cfa_kind, SPANPROF_CFA_FP);
	cfi_table_release(&t);
	/* A cgo PIE has no .gopclntab section: it is known as Go by its build info. */
	path = build_path("tests/workloads/go_spans_cgo_pie");
	if (access(path, R_OK))
		return;
	build(path, &t);
	assert_int_equal(t.rows[0].pc, 0);
	assert_int_equal(t.rows[0].rule.cfa_kind, SPANPROF_CFA_FP);
	cfi_table_release(&t);
}

static void test_file_without_cfi_is_enoent(void **state)
{
	const struct unwind_fixture *f = *state;
	struct cfi_table t;
	int fd = open(f->nocfi, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(cfi_table_build_fd(fd, &t, NULL), -ENOENT);
	assert_int_equal(t.nrows, 0);
	close(fd);
}

/* A cancel flag already set stops the build at its first FDE: nothing built, nothing held. */
static void test_cancelled_build_stops(void **state)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	atomic_int cancel = 1;
	struct cfi_table t;
	int fd = open(libc, O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(cfi_table_build_fd(fd, &t, &cancel), -ECANCELED);
	assert_int_equal(t.nrows, 0);
	assert_null(t.rows);
	assert_int_equal(t.stats.fdes, 0);
	atomic_store(&cancel, 0);
	assert_int_equal(cfi_table_build_fd(fd, &t, &cancel), 0);
	assert_true(t.nrows > 1000);
	cfi_table_release(&t);
	close(fd);
}

static int group_setup(void **state)
{
	struct unwind_fixture *f = calloc(1, sizeof(*f));

	if (!f || unwind_fixture_build(f)) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	unwind_fixture_release(*state);
	free(*state);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_exe_rows_match_readelf),
		cmocka_unit_test(test_fixture_lib_rows_match_readelf),
		cmocka_unit_test(test_libc_rows_match_readelf),
		cmocka_unit_test(test_gaps_are_marked),
		cmocka_unit_test(test_file_without_cfi_is_enoent),
		cmocka_unit_test(test_cancelled_build_stops),
		cmocka_unit_test(test_go_code_without_fde_is_walked_by_frame_pointers),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
