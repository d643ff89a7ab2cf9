// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for the pid -> interpreter table: what a scan keeps, the bound on processes, the
 * once-per-file warning for unsupported interpreters, and the counters. A fake interpreter kind
 * answers each scan with what the test set. */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "interp/interp_procs.h"
#include "util/log.h"

struct fake_proc {
	struct interp_file file;
	int scanned_pid; /* what the table must hand back untouched */
};

/* The fake kind's answer to the next scans (tests run one at a time). */
static struct {
	int err; /* what find returns */
	int supported;
	uint64_t inode;
} answer;

static int fake_find(const char *proc_root, pid_t pid, const struct proc_maps *maps,
		     struct file_verdicts *verdicts, void *value)
{
	struct fake_proc *p = value;

	(void)proc_root;
	(void)verdicts;
	(void)maps;
	memset(p, 0, sizeof(*p));
	if (answer.err)
		return answer.err;
	p->file.dev = 8;
	p->file.inode = answer.inode;
	p->file.major = 3;
	p->file.minor = 99;
	p->file.supported = answer.supported;
	p->file.remark = answer.supported ? NULL : "a test version";
	snprintf(p->file.path, sizeof(p->file.path), "/opt/fake%llu",
		 (unsigned long long)answer.inode);
	p->scanned_pid = pid;
	return 0;
}

static const struct interp_kind fake_kind = {
	.name = "FakeInterp",
	.value_size = sizeof(struct fake_proc),
	.find = fake_find,
};

static const struct proc_maps no_maps;

/* Captures the log so the test can count the warnings. */
struct captured {
	char *buf;
	size_t len;
	FILE *out;
};

static void capture_start(struct captured *c)
{
	memset(c, 0, sizeof(*c));
	c->out = open_memstream(&c->buf, &c->len);
	assert_non_null(c->out);
	log_set_output(c->out);
	log_set_level(LOG_LEVEL_DEBUG);
}

static int capture_count(struct captured *c, const char *needle)
{
	const char *p;
	int n = 0;

	fflush(c->out);
	for (p = c->buf; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void capture_end(struct captured *c)
{
	log_set_output(stderr);
	log_set_level(LOG_LEVEL_INFO);
	fclose(c->out);
	free(c->buf);
}

static void test_supported_kept_and_forgotten(void **state)
{
	struct interp_procs *ip = interp_procs_new(&fake_kind, "/proc", 4);
	const struct fake_proc *p;
	struct interp_procs_stats st;

	(void)state;
	assert_non_null(ip);
	answer = (typeof(answer)){ .supported = 1, .inode = 11 };
	p = interp_procs_update(ip, 100, &no_maps);
	assert_non_null(p);
	assert_int_equal(p->scanned_pid, 100);
	assert_int_equal(p->file.inode, 11);
	assert_ptr_equal(interp_procs_get(ip, 100), p);
	assert_null(interp_procs_get(ip, 101));
	/* A rescan that finds no interpreter (an exec) forgets what the last one found. */
	answer = (typeof(answer)){ .err = -ENOENT };
	assert_null(interp_procs_update(ip, 100, &no_maps));
	assert_null(interp_procs_get(ip, 100));
	interp_procs_get_stats(ip, &st);
	assert_int_equal(st.supported, 0);
	interp_procs_free(ip);
}

static void test_bound_counted(void **state)
{
	struct interp_procs *ip = interp_procs_new(&fake_kind, "/proc", 2);
	struct interp_procs_stats st;

	(void)state;
	assert_non_null(ip);
	answer = (typeof(answer)){ .supported = 1, .inode = 11 };
	assert_non_null(interp_procs_update(ip, 1, &no_maps));
	assert_non_null(interp_procs_update(ip, 2, &no_maps));
	assert_null(interp_procs_update(ip, 3, &no_maps));
	assert_null(interp_procs_get(ip, 3));
	/* Rescanning a held pid replaces it rather than counting as full. */
	assert_non_null(interp_procs_update(ip, 2, &no_maps));
	interp_procs_get_stats(ip, &st);
	assert_int_equal(st.supported, 2);
	assert_int_equal(st.full, 1);
	/* Room again once a process is forgotten (it exited). */
	interp_procs_forget(ip, 1);
	interp_procs_forget(ip, 1); /* twice: no effect */
	assert_non_null(interp_procs_update(ip, 3, &no_maps));
	interp_procs_get_stats(ip, &st);
	assert_int_equal(st.supported, 2);
	interp_procs_free(ip);
}

static void test_unsupported_logged_once_per_file(void **state)
{
	struct interp_procs *ip = interp_procs_new(&fake_kind, "/proc", 8);
	struct interp_procs_stats st;
	struct captured c;
	pid_t pid;

	(void)state;
	assert_non_null(ip);
	capture_start(&c);
	answer = (typeof(answer)){ .supported = 0, .inode = 21 };
	for (pid = 10; pid < 15; pid++)
		assert_null(interp_procs_update(ip, pid, &no_maps));
	answer.inode = 22; /* another file: its own warning */
	assert_null(interp_procs_update(ip, 15, &no_maps));
	assert_int_equal(capture_count(&c, "is not supported (a test version)"), 2);
	assert_int_equal(capture_count(&c, "FakeInterp 3.99.0 in /opt/fake21"), 1);
	assert_int_equal(capture_count(&c, "FakeInterp 3.99.0 in /opt/fake22"), 1);
	interp_procs_get_stats(ip, &st);
	assert_int_equal(st.unsupported, 6);
	assert_int_equal(st.supported, 0);
	assert_null(interp_procs_get(ip, 10));
	capture_end(&c);
	interp_procs_free(ip);
}

/* Every mmap and every periodic rescan scans a process again: the line that says its frames are
 * read comes once, and again only when an exec brought another interpreter. */
static void test_reading_logged_once_per_process(void **state)
{
	struct interp_procs *ip = interp_procs_new(&fake_kind, "/proc", 8);
	struct captured c;
	int i;

	(void)state;
	assert_non_null(ip);
	capture_start(&c);
	answer = (typeof(answer)){ .supported = 1, .inode = 31 };
	for (i = 0; i < 5; i++)
		assert_non_null(interp_procs_update(ip, 40, &no_maps));
	assert_non_null(interp_procs_update(ip, 41, &no_maps));
	assert_int_equal(capture_count(&c, "pid 40: reading FakeInterp 3.99.0 frames"), 1);
	assert_int_equal(capture_count(&c, "pid 41: reading FakeInterp 3.99.0 frames"), 1);
	answer.inode = 32; /* pid 40 exec'd another interpreter */
	assert_non_null(interp_procs_update(ip, 40, &no_maps));
	assert_int_equal(capture_count(&c, "pid 40: reading FakeInterp 3.99.0 frames"), 2);
	assert_int_equal(capture_count(&c, "/opt/fake32"), 1);
	capture_end(&c);
	interp_procs_free(ip);
}

static void test_unreadable_not_kept(void **state)
{
	struct interp_procs *ip = interp_procs_new(&fake_kind, "/proc", 8);
	struct interp_procs_stats st;
	struct captured c;

	(void)state;
	assert_non_null(ip);
	capture_start(&c);
	answer = (typeof(answer)){ .err = -EACCES };
	assert_null(interp_procs_update(ip, 7, &no_maps));
	assert_int_equal(capture_count(&c, "pid 7: no FakeInterp frames"), 1);
	interp_procs_get_stats(ip, &st);
	assert_int_equal(st.supported + st.unsupported + st.full, 0);
	capture_end(&c);
	interp_procs_free(ip);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supported_kept_and_forgotten),
		cmocka_unit_test(test_bound_counted),
		cmocka_unit_test(test_unsupported_logged_once_per_file),
		cmocka_unit_test(test_reading_logged_once_per_process),
		cmocka_unit_test(test_unreadable_not_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
