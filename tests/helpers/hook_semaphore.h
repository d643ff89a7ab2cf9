/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: where a hook's semaphore is mapped in this process. Apart from hook_libs so that
 * a benchmark that must not link the hook itself (hook_libs references it) can use it. */
#ifndef SPANPROF_TEST_HOOK_SEMAPHORE_H
#define SPANPROF_TEST_HOOK_SEMAPHORE_H

#include <stdint.h>

/* The address in this process of file offset `offset` of path, in a writable mapping (the
 * semaphore's); NULL when none maps it. */
const volatile unsigned short *hook_semaphore_mapped(const char *path, uint64_t offset);

#endif /* SPANPROF_TEST_HOOK_SEMAPHORE_H */
