// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: compiles the unwinding fixtures (unwind_fixture.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture_build.h"
#include "tmpdir.h"
#include "unwind_fixture.h"

#define UNWFIX_CFLAGS "-O2 -g -fomit-frame-pointer -fno-optimize-sibling-calls -Wl,--build-id"

static int compile(const struct unwind_fixture *f, const char *s)
{
	const char *d = f->dir;

	return fixture_sh("cd %s && cc " UNWFIX_CFLAGS " -fPIC -shared %s/unwfix_lib.c "
			  "-o libunwfix.so",
			  d, s) ||
	       fixture_sh("cd %s && cc " UNWFIX_CFLAGS " -fPIC -shared %s/unwfix_dl.c "
			  "-o libunwfix_dl.so",
			  d, s) ||
	       /* No -g (no .debug_frame) and no unwind tables: .eh_frame is only a terminator. */
	       fixture_sh("cd %s && cc -O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls "
			  "-fno-asynchronous-unwind-tables -fno-unwind-tables -fPIC -shared "
			  "%s/unwfix_nocfi.c -o libunwfix_nocfi.so",
			  d, s) ||
	       fixture_sh(
		       "cd %s && cc " UNWFIX_CFLAGS " -fPIE -pie %s/unwfix_main.c %s/unwfix_jit.c "
		       "-o unwfix -L. -lunwfix -lunwfix_nocfi -ldl -pthread -Wl,-rpath,'$ORIGIN'",
		       d, s, s);
}

int unwind_fixture_build(struct unwind_fixture *f)
{
	char *s = fixture_src_dir("unwfix_main.c");

	memset(f, 0, sizeof(*f));
	f->dir = tmpdir_new("unwfix");
	if (!s || !f->dir)
		goto err;
	f->exe = fixture_join(f->dir, "unwfix");
	f->lib = fixture_join(f->dir, "libunwfix.so");
	f->dl = fixture_join(f->dir, "libunwfix_dl.so");
	f->nocfi = fixture_join(f->dir, "libunwfix_nocfi.so");
	if (!f->exe || !f->lib || !f->dl || !f->nocfi || compile(f, s))
		goto err;
	free(s);
	return 0;
err:
	free(s);
	unwind_fixture_release(f);
	return -EIO;
}

void unwind_fixture_release(struct unwind_fixture *f)
{
	if (!f)
		return;
	tmpdir_remove(f->dir);
	free(f->exe);
	free(f->lib);
	free(f->dl);
	free(f->nocfi);
	memset(f, 0, sizeof(*f));
}
