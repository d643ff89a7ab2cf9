// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: processes holding every hook-file slot (see hook_hogs.h). */
#define _GNU_SOURCE
#include <stdio.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "hook_hogs.h"
#include "unpriv_user.h"

int hook_hogs_stage(const char *dir)
{
	return fixture_sh("cp '%s' '%s/fair_workload' && chmod 0755 '%s/fair_workload' && "
			  "mkdir -m 0755 '%s/libs' && for i in $(seq 0 %d); do cp '%s' "
			  "\"%s/libs/hog-$i.so\"; done && cp '%s' '%s/root-hook.so' && "
			  "chmod 0755 '%s'/libs/*",
			  build_path("tests/workloads/fair_workload"), dir, dir, dir,
			  HOOK_SLOTS - 1, build_path("libspanprof.so"), dir,
			  build_path("libspanprof.so"), dir, dir) ?
		       -1 :
		       0;
}

int hook_hogs_start(const char *dir, int uid, double timeout_s, pid_t *pids, int *started)
{
	char workload[600], libs[HOOK_LIBS_PER_HOG][600], out[600];
	const char *argv[HOOK_LIBS_PER_HOG + 3];
	int h, i;

	*started = 0;
	snprintf(workload, sizeof(workload), "%s/fair_workload", dir);
	argv[0] = workload;
	argv[1] = "hog";
	argv[HOOK_LIBS_PER_HOG + 2] = NULL;
	for (h = 0; h < HOOK_HOGS; h++) {
		for (i = 0; i < HOOK_LIBS_PER_HOG; i++) {
			snprintf(libs[i], sizeof(libs[i]), "%s/libs/hog-%d.so", dir,
				 h * HOOK_LIBS_PER_HOG + i);
			argv[i + 2] = libs[i];
		}
		snprintf(out, sizeof(out), "%s/hog%d.out", dir, h);
		pids[h] = unpriv_user_start(uid, "it-fair-hog", NULL, out, argv);
		if (pids[h] < 0)
			return -1;
		*started = h + 1;
		if (unpriv_wait_file_has(out, "ready", timeout_s)) {
			fprintf(stderr, "hook hog %d (pid %d) never mapped its libraries\n", h,
				(int)pids[h]);
			return -1;
		}
	}
	return 0;
}
