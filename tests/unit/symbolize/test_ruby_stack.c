// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for ruby_stack: Ruby frames go in runs (one per rb_vm_exec activation, ended by a
 * FINISH frame) above their own native rb_vm_exec frame; runs without one become the outermost
 * frames; a full stack counts what it dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "symbolize/ruby_stack.h"

#define EXEC_LO 0x2000
#define EXEC_HI 0x2100
#define RUBY_ADDR (1ull << 63)

/* A user stack of native addresses, leaf first (no kernel frames). */
static struct stack_resolve *native_stack(const uint64_t *addrs, size_t n)
{
	struct stack_resolve *r = calloc(1, sizeof(*r));
	size_t i;

	assert_non_null(r);
	for (i = 0; i < n; i++) {
		r->frames[i].addr = addrs[i];
		r->frames[i].has_mapping = 1;
	}
	r->nframes = n;
	return r;
}

/* Ruby C-function frames (named without reading memory); flags per frame. */
static void ruby_stack(struct py_stack *rb, const uint32_t *flags, uint32_t n)
{
	uint32_t i;

	memset(rb, 0, sizeof(*rb));
	rb->interp = SPANPROF_INTERP_RUBY;
	for (i = 0; i < n; i++)
		rb->frames[i].flags = SPANPROF_RB_FRAME_CFUNC | flags[i];
	rb->nframes = n;
}

/* "R" for a Ruby frame, else the native frame's address in hex, one per frame. */
static void shape(const struct stack_resolve *r, char *out, size_t size)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < r->nframes && used < size; i++) {
		if (r->frames[i].addr & RUBY_ADDR)
			used += snprintf(out + used, size - used, "R ");
		else
			used += snprintf(out + used, size - used, "%llx ",
					 (unsigned long long)r->frames[i].addr);
	}
}

static void merge_and_check(const uint64_t *addrs, size_t n, const uint32_t *flags, uint32_t nrb,
			    const char *want)
{
	struct ruby_proc proc = { .exec_lo = EXEC_LO, .exec_hi = EXEC_HI };
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 4);
	struct stack_resolve *r = native_stack(addrs, n);
	uint64_t dropped = 0;
	struct py_stack rb;
	char got[256];
	size_t i;

	assert_non_null(rs);
	proc.off = ruby_offsets_for(3, 1);
	ruby_stack(&rb, flags, nrb);
	ruby_stack_merge(r, rs, getpid(), &proc, &rb, &dropped);
	shape(r, got, sizeof(got));
	assert_string_equal(got, want);
	assert_int_equal(dropped, 0);
	for (i = 0; i < r->nframes; i++)
		if (r->frames[i].addr & RUBY_ADDR)
			assert_string_equal(r->frames[i].lines[0].function, RUBY_CFUNC_PLACEHOLDER);
	ruby_symbols_free(rs);
	free(r);
}

/* Two activations: block (FINISH) | cfunc, method, <main> (FINISH). Return addresses are looked
 * up at addr - 1, so 0x2100 still counts as inside rb_vm_exec. */
static void test_runs_go_above_their_own_vm_exec(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x2005, 0x3000, 0x2100, 0x4000 };
	static const uint32_t flags[] = { SPANPROF_RB_FRAME_FINISH, 0, 0,
					  SPANPROF_RB_FRAME_FINISH };

	(void)state;
	merge_and_check(addrs, 5, flags, 4, "1000 R 2005 3000 R R R 2100 4000 ");
}

/* No rb_vm_exec frame (a frame-pointer stack): all Ruby frames outermost, in order. */
static void test_without_vm_exec_frames_go_outermost(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x3000 };
	static const uint32_t flags[] = { 0, SPANPROF_RB_FRAME_FINISH, 0 };

	(void)state;
	merge_and_check(addrs, 2, flags, 3, "1000 3000 R R R ");
}

/* More runs than rb_vm_exec frames (a truncated native stack): the rest go outermost. */
static void test_extra_runs_go_outermost(void **state)
{
	static const uint64_t addrs[] = { 0x2001, 0x3000 };
	static const uint32_t flags[] = { SPANPROF_RB_FRAME_FINISH, 0, SPANPROF_RB_FRAME_FINISH };

	(void)state;
	merge_and_check(addrs, 2, flags, 3, "R 2001 3000 R R ");
}

static void test_full_stack_counts_dropped(void **state)
{
	struct ruby_proc proc = { .exec_lo = EXEC_LO, .exec_hi = EXEC_HI };
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 4);
	struct stack_resolve *r = calloc(1, sizeof(*r));
	uint32_t flags[SPANPROF_PY_MAX_FRAMES] = { 0 };
	uint64_t dropped = 0;
	struct py_stack rb;

	(void)state;
	assert_non_null(rs);
	assert_non_null(r);
	proc.off = ruby_offsets_for(3, 1);
	r->nframes = STACK_RESOLVE_MAX_FRAMES - 5;
	ruby_stack(&rb, flags, SPANPROF_PY_MAX_FRAMES);
	ruby_stack_merge(r, rs, getpid(), &proc, &rb, &dropped);
	assert_int_equal(r->nframes, STACK_RESOLVE_MAX_FRAMES);
	assert_int_equal(dropped, SPANPROF_PY_MAX_FRAMES - 5);
	ruby_symbols_free(rs);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_go_above_their_own_vm_exec),
		cmocka_unit_test(test_without_vm_exec_frames_go_outermost),
		cmocka_unit_test(test_extra_runs_go_outermost),
		cmocka_unit_test(test_full_stack_counts_dropped),
	};

	return cmocka_run_group_tests_name("ruby_stack", tests, NULL, NULL);
}
