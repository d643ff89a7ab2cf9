// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload: an exec storm. Starts N short-lived children (this program again, exec'd),
 * BATCH at a time and waited for only when the batch is done (so some linger as zombies); each
 * burns SPIN_MS of CPU in storm_child_spin() and exits. Prints the children's CPU seconds.
 * Usage: exec_storm N SPIN_MS */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 4

static volatile unsigned long sink;

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void storm_child_spin(double seconds)
{
	double end = cpu_s() + seconds;
	unsigned long i;

	while (cpu_s() < end)
		for (i = 0; i < 10000; i++)
			sink += i;
}

static int run_batch(const char *spin_arg, int n)
{
	char *argv[] = { "exec_storm", "--child", (char *)spin_arg, NULL };
	int i, status, failed = 0;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
	}
	for (i = 0; i < n; i++)
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int n, done;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		storm_child_spin(atof(argv[2]) / 1000);
		return 0;
	}
	if (argc != 3)
		return 2;
	n = atoi(argv[1]);
	for (done = 0; done < n; done += BATCH)
		if (run_batch(argv[2], n - done < BATCH ? n - done : BATCH))
			return 1;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("children %d cpu %.3f\n", n,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		       ru.ru_stime.tv_usec / 1e6);
	return 0;
}
