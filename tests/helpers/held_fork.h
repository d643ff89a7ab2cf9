/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: a child held on a pipe, so that a test can start an agent on its pid (--pid) before
 * the workload it execs runs: the child's stdin is the pipe, the parent writes a line to go. */
#ifndef SPANPROF_TEST_HELD_FORK_H
#define SPANPROF_TEST_HELD_FORK_H

#include <sys/types.h>

/* fork() with the child's stdin the read end of a new pipe. Returns 0 in the child (no other
 * end of the pipe open there), the child's pid in the parent with the pipe's write end in
 * *gate_fd, or -1 (errno set, nothing left open). */
pid_t held_fork(int *gate_fd);

#endif /* SPANPROF_TEST_HELD_FORK_H */
