// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: a child under another root file system (see root_exec.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "root_exec.h"

static int fail(const char *what, const char *path)
{
	int err = errno;

	fprintf(stderr, "root_exec: %s %s: %s\n", what, path, strerror(err));
	return -err;
}

/* Makes root/in_root and its parents (directories of the root, owned by root). */
static int make_dirs(const char *root, const char *in_root, char *path, size_t len)
{
	char *p;

	if (snprintf(path, len, "%s%s", root, in_root) >= (int)len)
		return -ENAMETOOLONG;
	for (p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return fail("mkdir", path);
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return fail("mkdir", path);
	return 0;
}

static int bind_dir(const char *root, const char *host, const char *in_root, int read_only)
{
	char path[PATH_MAX];
	int err = make_dirs(root, in_root, path, sizeof(path));

	if (err)
		return err;
	if (mount(host, path, NULL, MS_BIND | MS_REC, NULL))
		return fail("bind-mount onto", path);
	if (read_only && mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, NULL))
		return fail("read-only remount of", path);
	return 0;
}

int root_enter(const char *root, const struct root_bind *binds)
{
	char path[PATH_MAX];
	int err;

	if (unshare(CLONE_NEWNS))
		return fail("unshare(CLONE_NEWNS) for", root);
	/* Nothing mounted here may reach this machine's mount namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return fail("making / private before entering", root);
	/* The root becomes a mount point, which pivot_root needs. */
	if (mount(root, root, NULL, MS_BIND | MS_REC, NULL))
		return fail("bind-mounting onto itself", root);
	for (; binds && binds->host; binds++)
		if ((err = bind_dir(root, binds->host, binds->in_root, 1)))
			return err;
	if ((err = bind_dir(root, "/dev", "/dev", 0)))
		return err;
	if ((err = make_dirs(root, "/proc", path, sizeof(path))))
		return err;
	if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return fail("mounting proc on", path);
	/* pivot_root, not chroot: the root becomes the namespace's /, so /proc/PID/maps shows the
	 * files at their paths inside it, to this machine too, as for a container. The old root
	 * is stacked under the new one by pivot_root(".", ".") and detached. */
	if (chdir(root) || syscall(SYS_pivot_root, ".", "."))
		return fail("pivot_root into", root);
	if (umount2(".", MNT_DETACH) || chdir("/"))
		return fail("detaching the old root from", root);
	return 0;
}
