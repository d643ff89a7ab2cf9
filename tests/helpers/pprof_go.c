// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: asks the Go toolchain's pprof (`go tool pprof -raw`) whether a profile file parses,
 * the strictest independent reader we have. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pprof_file.h"

/* 1 when an executable named `go` is in a PATH directory. */
static int go_on_path(void)
{
	const char *path = getenv("PATH");
	char *dirs, *dir, *save = NULL, file[4096];
	int found = 0;

	if (!path || !(dirs = strdup(path)))
		return 0;
	for (dir = strtok_r(dirs, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/go", *dir ? dir : ".");
		found = access(file, X_OK) == 0;
	}
	free(dirs);
	return found;
}

/* Child side: stdout to /dev/null, stderr to the pipe, then exec go. Never returns. */
static void run_go(const char *path, int err_fd)
{
	int devnull = open("/dev/null", O_WRONLY);

	if (devnull >= 0)
		dup2(devnull, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	/* -symbolize=none: the mappings name files of this machine; only parsing is under test. */
	execlp("go", "go", "tool", "pprof", "-symbolize=none", "-raw", path, (char *)NULL);
	fprintf(stderr, "exec go: %s\n", strerror(errno));
	_exit(127);
}

/* Reads the pipe to EOF, keeping what fits in buf (NUL-terminated). */
static void drain(int fd, char *buf, size_t size)
{
	char chunk[1024];
	size_t used = 0;
	ssize_t n;

	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (size && used < size - 1) {
			size_t take = (size_t)n < size - 1 - used ? (size_t)n : size - 1 - used;

			memcpy(buf + used, chunk, take);
			used += take;
		}
	}
	if (size)
		buf[used] = '\0';
}

int pprof_file_check_with_go(const char *path, char *err, size_t errlen)
{
	char out[2048];
	int fds[2], status;
	pid_t pid;

	if (errlen)
		err[0] = '\0';
	if (!go_on_path())
		return 1;
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0)
		run_go(path, fds[1]);
	close(fds[1]);
	drain(fds[0], out, sizeof(out));
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	snprintf(err, errlen, "go tool pprof exit %d: %s",
		 WIFEXITED(status) ? WEXITSTATUS(status) : -1, out);
	return -1;
}
