// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only fault injection for the agent binary (linked with -Wl,--wrap= into
 * build/tests/faults/spanprof_faulty): the constructor named by SPANPROF_FAULT fails as if out
 * of memory, so a test can check that the agent names the part whose set-up failed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "profile/drain.h"
#include "interp/ruby_symbols.h"
#include "symbolize/symcache.h"

struct symcache *__real_symcache_new(const struct symcache_limits *limits);
struct symcache *__wrap_symcache_new(const struct symcache_limits *limits);
struct ruby_symbols *__real_ruby_symbols_new(const char *proc_root, size_t max_entries,
					     struct interp_budget *budget);
struct ruby_symbols *__wrap_ruby_symbols_new(const char *proc_root, size_t max_entries,
					     struct interp_budget *budget);
struct drain *__real_drain_new(uint32_t max_keys, uint32_t max_stacks);
struct drain *__wrap_drain_new(uint32_t max_keys, uint32_t max_stacks);

static int fail(const char *constructor)
{
	const char *which = getenv("SPANPROF_FAULT");

	if (!which || strcmp(which, constructor))
		return 0;
	errno = ENOMEM;
	return 1;
}

struct symcache *__wrap_symcache_new(const struct symcache_limits *limits)
{
	return fail("symcache_new") ? NULL : __real_symcache_new(limits);
}

struct ruby_symbols *__wrap_ruby_symbols_new(const char *proc_root, size_t max_entries,
					     struct interp_budget *budget)
{
	return fail("ruby_symbols_new") ? NULL :
					  __real_ruby_symbols_new(proc_root, max_entries, budget);
}

struct drain *__wrap_drain_new(uint32_t max_keys, uint32_t max_stacks)
{
	return fail("drain_new") ? NULL : __real_drain_new(max_keys, max_stacks);
}
