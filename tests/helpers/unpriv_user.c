// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: throwaway unprivileged users and their processes (see unpriv_user.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixture_build.h"
#include "tmpdir.h"
#include "unpriv_user.h"

int unpriv_user_create(struct unpriv_user *u)
{
	char cmd[64];
	FILE *p;

	u->uid = -1;
	snprintf(u->name, sizeof(u->name), "spp%d", (int)getpid() % 1000000);
	if (fixture_sh("useradd -M -N -s /usr/sbin/nologin %s 2>/dev/null", u->name))
		return -1;
	snprintf(cmd, sizeof(cmd), "id -u %s", u->name);
	p = popen(cmd, "r");
	if (!p || fscanf(p, "%d", &u->uid) != 1)
		u->uid = -1;
	if (p)
		pclose(p);
	if (u->uid <= 0) {
		fixture_sh("userdel %s", u->name);
		u->uid = -1;
		return -1;
	}
	return 0;
}

void unpriv_user_remove(struct unpriv_user *u)
{
	if (!u || u->uid < 0)
		return;
	fixture_sh("userdel %s", u->name);
	u->uid = -1;
}

pid_t unpriv_user_start(int uid, const char *service, const char *lib_dir, const char *out_path,
			const char *const *argv)
{
	char env[128];
	pid_t pid;
	int fd;

	fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	if (fd < 0)
		return -1;
	fchmod(fd, 0666);
	pid = fork();
	if (pid != 0) {
		close(fd);
		return pid;
	}
	snprintf(env, sizeof(env), "OTEL_SERVICE_NAME=%s", service);
	putenv(env);
	if (lib_dir)
		setenv("LD_LIBRARY_PATH", lib_dir, 1);
	dup2(fd, 1);
	if (uid >= 0 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
		_exit(126);
	execv(argv[0], (char *const *)argv);
	_exit(127);
}

static int file_has(const char *path, const char *text)
{
	char buf[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, text) != NULL;
}

int unpriv_wait_file_has(const char *path, const char *text, double timeout_s)
{
	struct timespec ts;
	double start, now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = ts.tv_sec + ts.tv_nsec / 1e9;
	while (!file_has(path, text)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ts.tv_sec + ts.tv_nsec / 1e9;
		if (now - start > timeout_s)
			return -1;
		usleep(20000);
	}
	return 0;
}

int unpriv_stage_begin(struct unpriv_user *u, char **dir, const char *name)
{
	u->uid = -1;
	*dir = tmpdir_new(name);
	if (!*dir)
		return -1;
	chmod(*dir, 0755);
	return 0;
}

void unpriv_stage_end(const pid_t *pids, int n, struct unpriv_user *u, char *dir,
		      const char *keep_env)
{
	for (int i = 0; i < n; i++) {
		kill(pids[i], SIGKILL);
		waitpid(pids[i], NULL, 0);
	}
	unpriv_user_remove(u);
	if (getenv(keep_env)) {
		printf("  kept %s\n", dir);
		free(dir);
	} else {
		tmpdir_remove(dir); /* frees the path */
	}
}
