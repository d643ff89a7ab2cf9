// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: asks the Go toolchain's pprof (`go tool pprof -raw`) whether a profile file parses,
 * the strictest independent reader we have, and what it shows of it (`-traces`). */
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

/* Child side: the stream `piped` (STDOUT_FILENO or STDERR_FILENO) to the pipe, the other one to
 * /dev/null, then exec `go tool pprof <args...> path`. Never returns. */
static void run_go(const char *const *args, const char *path, int piped, int pipe_fd)
{
	const char *argv[8] = { "go", "tool", "pprof" };
	int devnull = open("/dev/null", O_WRONLY), n = 3;

	while (*args && n < 6)
		argv[n++] = *args++;
	argv[n++] = path;
	argv[n] = NULL;
	if (devnull >= 0)
		dup2(devnull, piped == STDOUT_FILENO ? STDERR_FILENO : STDOUT_FILENO);
	dup2(pipe_fd, piped);
	execvp("go", (char *const *)argv);
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

/* Runs go tool pprof with args on path, keeping the stream `piped` in out. Returns its exit
 * status, or -1 (err says why) when it could not run. */
static int go_pprof(const char *const *args, const char *path, int piped, char *out, size_t size,
		    char *err, size_t errlen)
{
	int fds[2], status;
	pid_t pid;

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
		run_go(args, path, piped, fds[1]);
	close(fds[1]);
	drain(fds[0], out, size);
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int pprof_file_check_with_go(const char *path, char *err, size_t errlen)
{
	/* -symbolize=none: the mappings name files of this machine; only parsing is under test. */
	static const char *const args[] = { "-symbolize=none", "-raw", NULL };
	char out[2048];
	int rc;

	if (errlen)
		err[0] = '\0';
	if (!go_on_path())
		return 1;
	rc = go_pprof(args, path, STDERR_FILENO, out, sizeof(out), err, errlen);
	if (rc == 0)
		return 0;
	if (rc > 0)
		snprintf(err, errlen, "go tool pprof exit %d: %s", rc, out);
	return -1;
}

int pprof_file_go_traces(const char *path, char *out, size_t size)
{
	static const char *const args[] = { "-traces", NULL };
	char err[256];

	if (!go_on_path())
		return 1;
	return go_pprof(args, path, STDOUT_FILENO, out, size, err, sizeof(err)) ? -1 : 0;
}
