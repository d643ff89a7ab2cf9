// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only temporary directories (see tmpdir.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tmpdir.h"

char *tmpdir_new(const char *tag)
{
	const char *base = getenv("TMPDIR");
	char *path;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/spanprof-%s-XXXXXX", base, tag) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	if (!mkdtemp(path)) {
		int err = errno;

		free(path);
		errno = err;
		return NULL;
	}
	return path;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void tmpdir_remove(char *path)
{
	if (!path)
		return;
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(path);
}

int tmpdir_teardown(void **state)
{
	tmpdir_remove(*state);
	*state = NULL;
	return 0;
}
