// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: where a hook's semaphore is mapped in this process (see hook_semaphore.h). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hook_semaphore.h"

const volatile unsigned short *hook_semaphore_mapped(const char *path, uint64_t offset)
{
	char real[4096], line[4600], file[4200], perms[8];
	unsigned long long start, end, off;
	const volatile unsigned short *at = NULL;
	FILE *f;

	if (!realpath(path, real) || !(f = fopen("/proc/self/maps", "r")))
		return NULL;
	while (!at && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4199s", &start, &end, perms, &off,
			   file) == 5 &&
		    perms[1] == 'w' && !strcmp(file, real) && offset >= off &&
		    offset + 2 <= off + (end - start))
			at = (const volatile unsigned short *)(uintptr_t)(start + offset - off);
	fclose(f);
	return at;
}
