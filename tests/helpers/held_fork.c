// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: fork() with the child's stdin on a pipe the parent holds (see held_fork.h). */
#include <errno.h>
#include <unistd.h>

#include "held_fork.h"

pid_t held_fork(int *gate_fd)
{
	int fds[2], err;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	err = errno;
	close(fds[0]);
	if (pid < 0) {
		close(fds[1]);
		errno = err;
		return -1;
	}
	*gate_fd = fds[1];
	return pid;
}
