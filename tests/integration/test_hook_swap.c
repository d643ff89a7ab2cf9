// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The hook-swap attack, for real: a throwaway unprivileged user maps a hook library from its own
 * directory and, whenever the agent opens it, renames a symlink to a root-owned victim library
 * over the path. A root victim process maps that library; if the agent ever attached by path
 * after the swap, the kernel would raise the 16-bit counter at the victim's semaphore offset. It
 * must not: the probe goes only into the file the user's process maps (or is refused with a
 * logged reason).
 * The victim is the hook library with its note's provider renamed (no agent takes it for a hook,
 * same layout), on a tmpfs mounted in this test's own mount namespace: other agents on the
 * machine cannot resolve the symlink, so only the agent under test can be tricked. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent_proc.h"
#include "fixture_build.h"
#include "tmpdir.h"

#define ITERATIONS 12
#define LIB_MAX (4 << 20)

struct swap_fx {
	char *base; /* root-owned temp dir, 0711 */
	char user[32];
	/* Build outputs, resolved before private_tmpfs(): after unshare(CLONE_NEWNS), in a chroot
	 * whose / is a bind mount (CI's clean root), /proc/self/exe reads as a path outside it. */
	char lib[4096 + 256], swapper_bin[4096 + 256], victim_bin[4096 + 256];
	uid_t uid;
	gid_t gid;
	char user_dir[256], victim_lib[256], out[256];
	pid_t victim, swapper;
	int go_fd; /* the swapper's stdin: one byte starts the attack */
	struct agent_proc agent;
	int have_user, skip;
};

static int sh_quiet(const char *cmd)
{
	return fixture_sh("%s >/dev/null 2>&1", cmd);
}

/* A throwaway system account with no home and no login shell. */
static int make_user(struct swap_fx *fx)
{
	struct passwd *pw;
	char cmd[256];

	snprintf(fx->user, sizeof(fx->user), "spt%05d", (int)getpid() % 100000);
	snprintf(cmd, sizeof(cmd), "useradd --system --no-create-home --shell /usr/sbin/nologin %s",
		 fx->user);
	if (sh_quiet(cmd))
		return -1;
	fx->have_user = 1;
	pw = getpwnam(fx->user);
	if (!pw)
		return -1;
	fx->uid = pw->pw_uid;
	fx->gid = pw->pw_gid;
	return 0;
}

static int copy_file(const char *src, const char *dst, mode_t mode, uid_t uid, gid_t gid)
{
	if (fixture_sh("cp %s %s", src, dst) || chmod(dst, mode) || chown(dst, uid, gid))
		return -1;
	return 0;
}

/* Starts argv as uid/gid (when uid != 0) with stdin from a pipe (returned in *go_fd) and stdout
 * into out. */
static pid_t start_as(const char *const *argv, uid_t uid, gid_t gid, const char *out, int *go_fd)
{
	int pipefd[2], fd;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(pipefd[0], 0) < 0)
			_exit(126);
		if (uid && (setgroups(0, NULL) || setgid(gid) || setuid(uid)))
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pipefd[0]);
	*go_fd = pipefd[1];
	return pid;
}

/* Waits until file contains text. Returns 1, or 0 after timeout_s. */
static int wait_for_text(const char *file, const char *text, int timeout_s)
{
	char buf[8192];
	ssize_t n;
	int i, fd;

	for (i = 0; i < timeout_s * 20; i++) {
		fd = open(file, O_RDONLY);
		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = '\0';
			if (strstr(buf, text))
				return 1;
		}
		usleep(50000);
	}
	return 0;
}

/* The hook library with its note's provider renamed: same bytes and layout, no hook. */
static int make_victim_lib(const char *src, const char *dst)
{
	static const char provider[] = "spanprof\0span_set";
	static char buf[LIB_MAX];
	ssize_t n;
	char *at;
	int fd;

	fd = open(src, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	at = n > 0 ? memmem(buf, n, provider, sizeof(provider)) : NULL;
	if (!at)
		return -1;
	at[7] = 'X'; /* "spanproX" */
	fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, buf, n) != n)
		return -1;
	return close(fd);
}

/* A private tmpfs at dir, seen only by this process and its children. */
static int private_tmpfs(const char *dir)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, "mode=0755"))
		return -1;
	return 0;
}

/* Prints what failed (errno still tells why) and returns -1; 0 when ok. */
static int step(int failed, const char *what)
{
	if (failed)
		printf("  set-up failed: %s: %s\n", what, strerror(errno));
	return failed ? -1 : 0;
}

static int prepare_files(struct swap_fx *fx)
{
	char victim_dir[128], src[512], swapper[512];
	const char *lib = fx->lib;

	snprintf(victim_dir, sizeof(victim_dir), "%s/victim", fx->base);
	snprintf(fx->victim_lib, sizeof(fx->victim_lib), "%s/libvictim.so", victim_dir);
	snprintf(fx->user_dir, sizeof(fx->user_dir), "%s/user", fx->base);
	snprintf(src, sizeof(src), "%s/src.so", fx->user_dir);
	snprintf(swapper, sizeof(swapper), "%s/hook_swapper", fx->user_dir);
	snprintf(fx->out, sizeof(fx->out), "%s/out", fx->base);
	if (step(chmod(fx->base, 0711) || mkdir(victim_dir, 0755), "make the test directories") ||
	    step(private_tmpfs(victim_dir), "mount a private tmpfs for the victim's library") ||
	    step(mkdir(fx->user_dir, 0700) || mkdir(fx->out, 0700) ||
			 chown(fx->user_dir, fx->uid, fx->gid),
		 "make the user's directory"))
		return -1;
	if (step(make_victim_lib(lib, fx->victim_lib), "write the victim's library") ||
	    step(copy_file(lib, src, 0644, fx->uid, fx->gid) ||
			 copy_file(fx->swapper_bin, swapper, 0755, fx->uid, fx->gid),
		 "copy the hook and the swapper for the user"))
		return -1;
	return 0;
}

static int start_processes(struct swap_fx *fx)
{
	char src[512], swapper[512], victim_out[600], swapper_out[600], pid_arg[16], n_arg[16];
	const char *victim_argv[] = { fx->victim_bin, fx->victim_lib, NULL };
	const char *swap_argv[] = { swapper, fx->user_dir, src, fx->victim_lib, n_arg, NULL };
	const char *agent_argv[] = {
		"--pid", pid_arg, "--output", fx->out, "--interval", "1", NULL
	};
	int victim_go;

	snprintf(src, sizeof(src), "%s/src.so", fx->user_dir);
	snprintf(swapper, sizeof(swapper), "%s/hook_swapper", fx->user_dir);
	snprintf(victim_out, sizeof(victim_out), "%s/victim.out", fx->base);
	snprintf(swapper_out, sizeof(swapper_out), "%s/swapper.out", fx->base);
	snprintf(n_arg, sizeof(n_arg), "%d", ITERATIONS);
	fx->victim = start_as(victim_argv, 0, 0, victim_out, &victim_go);
	if (step(fx->victim < 0, "start the victim") ||
	    step(!wait_for_text(victim_out, "ready active=0", 20),
		 "wait for the victim's ready line"))
		return -1;
	close(victim_go);
	fx->swapper = start_as(swap_argv, fx->uid, fx->gid, swapper_out, &fx->go_fd);
	if (fx->swapper < 0)
		return -1;
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)fx->swapper);
	return agent_proc_start(&fx->agent, fx->base, agent_argv);
}

static int group_setup(void **state)
{
	static struct swap_fx fx = { .go_fd = -1 };

	*state = &fx;
	if (!agent_proc_can_run()) {
		fx.skip = 1;
		return 0;
	}
	if (access("/usr/sbin/useradd", X_OK) || access("/usr/sbin/userdel", X_OK)) {
		printf("SKIP: useradd/userdel missing: the attack needs a real unprivileged user\n");
		fx.skip = 1;
		return 0;
	}
	snprintf(fx.lib, sizeof(fx.lib), "%s", build_path("libspanprof.so"));
	snprintf(fx.swapper_bin, sizeof(fx.swapper_bin), "%s",
		 build_path("tests/workloads/hook_swapper"));
	snprintf(fx.victim_bin, sizeof(fx.victim_bin), "%s",
		 build_path("tests/workloads/hook_victim"));
	fx.base = tmpdir_new("hookswap");
	if (step(!fx.base, "make a temporary directory") ||
	    step(make_user(&fx), "add a system user (useradd)") || prepare_files(&fx) ||
	    start_processes(&fx))
		return -1;
	return 0;
}

static void end_process(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int group_teardown(void **state)
{
	struct swap_fx *fx = *state;
	char cmd[128];

	if (fx->skip)
		return 0;
	if (fx->agent.pid > 0)
		agent_proc_stop(&fx->agent);
	end_process(fx->swapper);
	end_process(fx->victim);
	if (fx->have_user) {
		snprintf(cmd, sizeof(cmd), "userdel %s", fx->user);
		sh_quiet(cmd);
	}
	snprintf(cmd, sizeof(cmd), "%s/victim", fx->base);
	umount(cmd);
	tmpdir_remove(fx->base);
	return 0;
}

static size_t read_all(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	size_t got = 0;
	ssize_t n;

	assert_true(fd >= 0);
	while (got < cap && (n = read(fd, buf + got, cap - got)) > 0)
		got += n;
	close(fd);
	return got;
}

static void test_swapped_path_never_redirects_the_uprobe(void **state)
{
	struct swap_fx *fx = *state;
	static char before[LIB_MAX], after[LIB_MAX];
	char path[600], deleted[600], summary[4096];
	int swapped = -1, attached = -1, status;
	pid_t swapper_pid;
	size_t n_before, n_after;
	const char *done;
	int i, mine = 0;

	if (fx->skip)
		skip();
	n_before = read_all(fx->victim_lib, before, sizeof(before));
	assert_int_equal(write(fx->go_fd, "g", 1), 1);
	swapper_pid = fx->swapper;
	assert_int_equal(waitpid(fx->swapper, &status, 0), fx->swapper);
	fx->swapper = 0;
	snprintf(path, sizeof(path), "%s/swapper.out", fx->base);
	summary[read_all(path, summary, sizeof(summary) - 1)] = '\0';
	printf("swapper:\n%s", summary);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	done = strstr(summary, "done swapped");
	assert_non_null(done);
	assert_int_equal(sscanf(done, "done swapped %d attached %d", &swapped, &attached), 2);
	/* The race really ran: the agent opened the user's file and the path was swapped. */
	assert_true(swapped > 0);
	/* The root victim's counter never moved, and its file is byte for byte the same. */
	snprintf(path, sizeof(path), "%s/victim.out", fx->base);
	assert_false(wait_for_text(path, "active=1", 1));
	n_after = read_all(fx->victim_lib, after, sizeof(after));
	assert_int_equal(n_before, n_after);
	assert_memory_equal(before, after, n_before);
	/* This agent probed the user's own library (by its mapping: once the swapper replaced
	 * the file, maps shows it "(deleted)"), or refused it with a reason in its log. An agent
	 * slowed down by ASan may log it a while after the swapper is done, and the swapper's own
	 * count may come from another agent on the machine. */
	snprintf(path, sizeof(path), "/user/lib.so (pid %d,", (int)swapper_pid);
	snprintf(deleted, sizeof(deleted), "/user/lib.so (deleted) (pid %d,", (int)swapper_pid);
	for (i = 0; i < 300; i++) {
		mine = agent_proc_log_contains(&fx->agent, path) ||
		       agent_proc_log_contains(&fx->agent, deleted);
		if (mine || agent_proc_log_contains(&fx->agent, "not opened"))
			break;
		usleep(100000);
	}
	if (!((attached > 0 && mine) || agent_proc_log_contains(&fx->agent, "not opened"))) {
		agent_proc_print_log(&fx->agent);
		fail_msg("this agent neither attached %s nor refused it", path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swapped_path_never_redirects_the_uprobe),
	};

	return cmocka_run_group_tests_name("hook_swap", tests, group_setup, group_teardown);
}
