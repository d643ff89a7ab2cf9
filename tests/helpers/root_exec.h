/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: puts a forked child under another root file system, as a container runtime does,
 * so a workload whose libraries live only there (a newer Debian's Ruby) can be profiled from
 * this machine. Everything mounted lives in the child's private mount namespace and goes with
 * it; the root itself is only read, beyond making the binds' mount points once. */
#ifndef SPANPROF_TEST_ROOT_EXEC_H
#define SPANPROF_TEST_ROOT_EXEC_H

/* A directory of this machine shown read-only at in_root (an absolute path) inside the root. */
struct root_bind {
	const char *host;
	const char *in_root;
};

/* In a child about to exec: a private mount namespace, the binds (NULL-terminated array: host
 * NULL), a fresh /proc and this machine's /dev inside root, then pivot_root(2) into root (its
 * mount namespace's / from then on, as a container's is).
 * Returns 0 or -errno after printing what failed. */
int root_enter(const char *root, const struct root_bind *binds);

#endif /* SPANPROF_TEST_ROOT_EXEC_H */
