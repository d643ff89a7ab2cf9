/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: a throwaway unprivileged user for attacks a local user could make, and processes
 * started as that user. */
#ifndef SPANPROF_TEST_UNPRIV_USER_H
#define SPANPROF_TEST_UNPRIV_USER_H

#include <stddef.h>
#include <sys/types.h>

struct unpriv_user {
	char name[32];
	int uid; /* -1: not created */
};

/* Creates a user without home or login shell (useradd). Returns 0, or -1 when that is not
 * possible here (the caller prints why and skips). */
int unpriv_user_create(struct unpriv_user *u);

/* Removes the user; NULL-safe, and a no-op when it was never created. */
void unpriv_user_remove(struct unpriv_user *u);

/* Starts argv[0] (a path the user can execute) as uid (-1: as ourselves) with
 * OTEL_SERVICE_NAME=service and, when lib_dir is not NULL, LD_LIBRARY_PATH=lib_dir; stdout into
 * out_path (created 0666 so the user can write it). Returns the pid, or -1. */
pid_t unpriv_user_start(int uid, const char *service, const char *lib_dir, const char *out_path,
			const char *const *argv);

/* Begins what a test stages for the user: u not created yet (uid -1) and *dir a fresh
 * tmpdir_new(name) the user may read and list (0755; it holds the copies the user runs and their
 * stdout). Returns 0, or -1 when the directory cannot be made. */
int unpriv_stage_begin(struct unpriv_user *u, char **dir, const char *name);

/* Ends what a test staged for the user: kills and reaps pids (n of them), removes the user and
 * frees dir, removed unless the environment variable keep_env is set (then printed). */
void unpriv_stage_end(const pid_t *pids, int n, struct unpriv_user *u, char *dir,
		      const char *keep_env);

/* Polls path until it contains text; returns 0, or -1 after timeout_s. */
int unpriv_wait_file_has(const char *path, const char *text, double timeout_s);

#endif /* SPANPROF_TEST_UNPRIV_USER_H */
