// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit tests for interp_stack through its two users: Ruby frames go in runs (one per rb_vm_exec
 * activation, ended by a FINISH frame) and CPython frames in runs (one per
 * _PyEval_EvalFrameDefault activation, ended by an ENTRY frame) above their own native frame;
 * runs without one become the outermost frames; a full stack counts what it dropped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "interp/python_stack.h"
#include "interp/ruby_stack.h"

#define EXEC_LO 0x2000
#define EXEC_HI 0x2100
#define COLD_LO 0x5000 /* _PyEval_EvalFrameDefault.cold */
#define COLD_HI 0x5080
#define INTERP_ADDR (1ull << 63)

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
static void ruby_stack(struct interp_stack *rb, const uint32_t *flags, uint32_t n)
{
	uint32_t i;

	memset(rb, 0, sizeof(*rb));
	rb->interp = SPANPROF_INTERP_RUBY;
	for (i = 0; i < n; i++)
		rb->frames[i].flags = SPANPROF_RB_FRAME_CFUNC | flags[i];
	rb->nframes = n;
}

/* "R" for an interpreter frame, else the native frame's address in hex, one per frame. */
static void shape(const struct stack_resolve *r, char *out, size_t size)
{
	size_t i, used = 0;

	out[0] = '\0';
	for (i = 0; i < r->nframes && used < size; i++) {
		if (r->frames[i].addr & INTERP_ADDR)
			used += snprintf(out + used, size - used, "R ");
		else
			used += snprintf(out + used, size - used, "%llx ",
					 (unsigned long long)r->frames[i].addr);
	}
}

/* The merged stack has the wanted shape and nothing was dropped. */
static void expect_shape(const struct stack_resolve *r, uint64_t dropped, const char *want)
{
	char got[256];

	shape(r, got, sizeof(got));
	assert_string_equal(got, want);
	assert_int_equal(dropped, 0);
}

static void merge_and_check(const uint64_t *addrs, size_t n, const uint32_t *flags, uint32_t nrb,
			    const char *want)
{
	struct ruby_proc proc = { .exec_lo = EXEC_LO, .exec_hi = EXEC_HI };
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 4, NULL);
	struct stack_resolve *r = native_stack(addrs, n);
	uint64_t dropped = 0;
	struct interp_stack rb;
	size_t i;

	assert_non_null(rs);
	proc.off = ruby_offsets_for(3, 1);
	ruby_stack(&rb, flags, nrb);
	ruby_stack_merge(r, rs, getpid(), &proc, &rb, &dropped);
	expect_shape(r, dropped, want);
	for (i = 0; i < r->nframes; i++)
		if (r->frames[i].addr & INTERP_ADDR)
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

/* CPython: frames (innermost first) with the given flags, named without reading memory (code
 * address 0 reads as unreadable). */
static void python_merge_and_check(const uint64_t *addrs, size_t n, const uint32_t *flags,
				   uint32_t npy, const char *want, int truncated)
{
	struct python_proc proc = { .eval_lo = EXEC_LO,
				    .eval_hi = EXEC_HI,
				    .eval_cold_lo = COLD_LO,
				    .eval_cold_hi = COLD_HI };
	struct python_symbols *ps = python_symbols_new("/proc", 4, NULL);
	struct stack_resolve *r = native_stack(addrs, n);
	struct interp_stack py = { .nframes = npy, .truncated = truncated };
	uint64_t dropped = 0;
	uint32_t i;

	assert_non_null(ps);
	proc.off = python_offsets_for(3, 11);
	for (i = 0; i < npy; i++)
		py.frames[i].flags = flags[i];
	python_stack_merge(r, ps, getpid(), &proc, &py, &dropped);
	expect_shape(r, dropped, want);
	python_symbols_free(ps);
	free(r);
}

/* 3.11+: sum() over a generator. The generator's frame is the entry of the inner activation;
 * parse_order, in_span and <module> run in the outer one (its entry is <module>). builtin_sum
 * (0x3000) then sits between <genexpr> and parse_order. */
static void test_python_runs_go_above_their_own_eval(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x2005, 0x3000, 0x2100, 0x4000 };
	static const uint32_t flags[] = { SPANPROF_PY_FRAME_ENTRY, 0, 0, SPANPROF_PY_FRAME_ENTRY };

	(void)state;
	python_merge_and_check(addrs, 5, flags, 4, "1000 R 2005 3000 R R R 2100 4000 ", 0);
}

/* Up to 3.10 every frame is an entry: one Python frame above each eval frame. */
static void test_python_old_one_frame_per_eval(void **state)
{
	static const uint64_t addrs[] = { 0x2001, 0x3000, 0x2002, 0x2003, 0x4000 };
	static const uint32_t flags[] = { SPANPROF_PY_FRAME_ENTRY, SPANPROF_PY_FRAME_ENTRY,
					  SPANPROF_PY_FRAME_ENTRY };

	(void)state;
	python_merge_and_check(addrs, 5, flags, 3, "R 2001 3000 R 2002 R 2003 4000 ", 0);
}

/* A return address in the eval loop's .cold part is an eval frame too. */
static void test_python_cold_part_is_eval(void **state)
{
	static const uint64_t addrs[] = { 0x2001, 0x3000, 0x5010, 0x4000 };
	static const uint32_t flags[] = { SPANPROF_PY_FRAME_ENTRY, SPANPROF_PY_FRAME_ENTRY };

	(void)state;
	python_merge_and_check(addrs, 4, flags, 2, "R 2001 3000 R 5010 4000 ", 0);
}

/* Fewer runs than eval frames: the sample caught the innermost eval activation before it pushed
 * its frame (or after it popped it). The runs belong to the outer eval frames. */
static void test_python_inner_eval_without_frames(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x2001, 0x3000, 0x2002 };
	static const uint32_t flags[] = { 0, SPANPROF_PY_FRAME_ENTRY };

	(void)state;
	python_merge_and_check(addrs, 4, flags, 2, "1000 2001 3000 R R 2002 ", 0);
}

/* A stack cut short (more frames than the sampler keeps) has runs missing: match from the
 * innermost eval frame, the outer ones being beyond the cut. */
static void test_python_truncated_matches_innermost(void **state)
{
	static const uint64_t addrs[] = { 0x1000, 0x2001, 0x3000, 0x2002 };
	static const uint32_t flags[] = { 0, 0 };

	(void)state;
	python_merge_and_check(addrs, 4, flags, 2, "1000 R R 2001 3000 2002 ", 1);
}

static void test_full_stack_counts_dropped(void **state)
{
	struct ruby_proc proc = { .exec_lo = EXEC_LO, .exec_hi = EXEC_HI };
	struct ruby_symbols *rs = ruby_symbols_new("/proc", 4, NULL);
	struct stack_resolve *r = calloc(1, sizeof(*r));
	uint32_t flags[SPANPROF_INTERP_MAX_FRAMES] = { 0 };
	uint64_t dropped = 0;
	struct interp_stack rb;

	(void)state;
	assert_non_null(rs);
	assert_non_null(r);
	proc.off = ruby_offsets_for(3, 1);
	r->nframes = STACK_RESOLVE_MAX_FRAMES - 5;
	ruby_stack(&rb, flags, SPANPROF_INTERP_MAX_FRAMES);
	ruby_stack_merge(r, rs, getpid(), &proc, &rb, &dropped);
	assert_int_equal(r->nframes, STACK_RESOLVE_MAX_FRAMES);
	assert_int_equal(dropped, SPANPROF_INTERP_MAX_FRAMES - 5);
	ruby_symbols_free(rs);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runs_go_above_their_own_vm_exec),
		cmocka_unit_test(test_without_vm_exec_frames_go_outermost),
		cmocka_unit_test(test_extra_runs_go_outermost),
		cmocka_unit_test(test_python_runs_go_above_their_own_eval),
		cmocka_unit_test(test_python_old_one_frame_per_eval),
		cmocka_unit_test(test_python_cold_part_is_eval),
		cmocka_unit_test(test_python_inner_eval_without_frames),
		cmocka_unit_test(test_python_truncated_matches_innermost),
		cmocka_unit_test(test_full_stack_counts_dropped),
	};

	return cmocka_run_group_tests_name("interp_stack", tests, NULL, NULL);
}
