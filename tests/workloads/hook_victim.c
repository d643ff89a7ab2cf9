// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Victim workload, run as root: maps a root-owned hook library that no profiled process uses
 * and reports its semaphore (the 16-bit counter a uprobe's ref_ctr_offset raises). Any raise
 * means someone attached a uprobe to this file. Usage: hook_victim LIB; prints "ready", then
 * "active=N" whenever the value changes, until killed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*active_fn)(void);

int main(int argc, char **argv)
{
	active_fn active;
	int last = 0, now;
	void *h;

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW);
	active = h ? (active_fn)dlsym(h, "spanprof_active") : NULL;
	if (!active)
		return 1;
	printf("ready active=%d\n", active());
	fflush(stdout);
	for (;;) {
		now = active();
		if (now != last) {
			printf("active=%d\n", now);
			fflush(stdout);
			last = now;
		}
		usleep(1000);
	}
}
