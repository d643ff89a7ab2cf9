// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: copies of hook builds without their probe notes (see hook_copies.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hook_copies.h"
#include "hook_libs.h"

#define COPY_DIR_PREFIX "/tmp/spanprof-hook-copy."
#define V2_LIB "libspanprof_v2.so"

int hook_copy_without_notes(const char *src, const char *dst)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		execlp("objcopy", "objcopy", "-R", ".note.stapsdt", src, dst, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

/* Removes what hook_copies_reexec made in dir (name: the executable's file name); quiet about
 * what is not there. Returns 0, or -1 when dir is left. */
static int remove_copies_in(const char *dir, const char *name)
{
	char path[8400];

	snprintf(path, sizeof(path), "%s/bench/%s", dir, name);
	unlink(path);
	snprintf(path, sizeof(path), "%s/workloads/" V2_LIB, dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/workloads", dir);
	rmdir(path);
	return rmdir(dir) ? -1 : 0;
}

/* At exit of a copy: its directory (COPY_DIR_PREFIX..., the executable in its bench/). */
static void remove_own_copies(void)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *name, *bench;

	if (n < 0)
		return;
	exe[n] = '\0';
	name = strrchr(exe, '/');
	if (!name || strncmp(exe, COPY_DIR_PREFIX, strlen(COPY_DIR_PREFIX)))
		return;
	*name++ = '\0';
	bench = strrchr(exe, '/');
	if (!bench || strcmp(bench, "/bench") ||
	    strchr(exe + strlen(COPY_DIR_PREFIX), '/') != bench)
		return;
	*bench = '\0';
	if (remove_copies_in(exe, name))
		fprintf(stderr, "could not remove the hook copies in %s\n", exe);
}

void hook_copies_reexec(const char *name, char **argv)
{
	char exe[4096], dir[] = COPY_DIR_PREFIX "XXXXXX", sub[128], copy[4200], lib[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *slash = NULL;

	if (getenv(HOOK_LIBS_ORIGIN_ENV)) {
		atexit(remove_own_copies);
		return;
	}
	if (n < 0 || !mkdtemp(dir))
		goto in_place;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	snprintf(sub, sizeof(sub), "%s/bench", dir);
	if (!slash || mkdir(sub, 0700))
		goto remove;
	snprintf(sub, sizeof(sub), "%s/workloads", dir);
	if (mkdir(sub, 0700))
		goto remove;
	snprintf(copy, sizeof(copy), "%s/bench/%s", dir, slash + 1);
	snprintf(lib, sizeof(lib), "%.*s/../workloads/" V2_LIB, (int)(slash - exe), exe);
	snprintf(sub, sizeof(sub), "%s/workloads/" V2_LIB, dir);
	if (hook_copy_without_notes(exe, copy) || hook_copy_without_notes(lib, sub))
		goto remove;
	setenv(HOOK_LIBS_ORIGIN_ENV, exe, 1);
	execv(copy, argv);
	unsetenv(HOOK_LIBS_ORIGIN_ENV);
remove:
	if (remove_copies_in(dir, slash ? slash + 1 : ""))
		fprintf(stderr, "%s: could not remove %s\n", name, dir);
in_place:
	fprintf(stderr,
		"%s: no copy without the probe notes (objcopy): running in place, other "
		"agents may attach to the hooks\n",
		name);
}
