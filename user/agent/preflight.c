// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Pre-load checks: kernel version, kernel BTF, and the capabilities the agent needs. */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "agent/preflight.h"
#include "util/log.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

int preflight_parse_release(const char *release, int *major, int *minor)
{
	if (sscanf(release, "%d.%d", major, minor) != 2)
		return -EINVAL;
	return 0;
}

static int kernel_version(int *major, int *minor)
{
	struct utsname uts;

	if (uname(&uts))
		return -errno;
	return preflight_parse_release(uts.release, major, minor);
}

static int has_cap(const struct __user_cap_data_struct *data, int cap)
{
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

static int check_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	int admin;

	if (syscall(SYS_capget, &hdr, data))
		return log_err(-errno, "cannot read this process's capabilities");
	admin = has_cap(data, CAP_SYS_ADMIN);
	if (!admin && !has_cap(data, CAP_BPF))
		return log_err(-EPERM,
			       "missing capability CAP_BPF (or CAP_SYS_ADMIN): run as root");
	if (!admin && !has_cap(data, CAP_PERFMON))
		return log_err(-EPERM,
			       "missing capability CAP_PERFMON (or CAP_SYS_ADMIN): run as root");
	/* Since mid-2025 (mainline and stable kernels) perf uprobes need CAP_SYS_ADMIN again:
	 * without it sampling works but the span hook cannot be attached. */
	if (!admin)
		log_warn(0, "no CAP_SYS_ADMIN: on kernels that require it for uprobes the span "
			    "hook cannot be attached and samples will carry no span labels");
	return 0;
}

int preflight_check(void)
{
	int major, minor, err;

	err = kernel_version(&major, &minor);
	if (err)
		return log_err(err, "cannot read the kernel version");
	if (major < PREFLIGHT_MIN_KERNEL_MAJOR ||
	    (major == PREFLIGHT_MIN_KERNEL_MAJOR && minor < PREFLIGHT_MIN_KERNEL_MINOR))
		return log_err(
			-ENOSYS, "unsupported kernel %d.%d: spanprof needs Linux %d.%d or later",
			major, minor, PREFLIGHT_MIN_KERNEL_MAJOR, PREFLIGHT_MIN_KERNEL_MINOR);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return log_err(-ENOENT,
			       "no kernel BTF at /sys/kernel/btf/vmlinux: spanprof needs a kernel "
			       "built with CONFIG_DEBUG_INFO_BTF=y");
	return check_caps();
}

void preflight_mount_tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK) ||
	    !access("/sys/kernel/debug/tracing/events", F_OK))
		return;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		log_warn(-errno, "mount tracefs at /sys/kernel/tracing");
	else
		log_info("mounted tracefs at /sys/kernel/tracing");
}

int preflight_uprobe_nop5_optimized(void)
{
#if defined(__x86_64__)
	int major, minor;

	if (kernel_version(&major, &minor))
		return 0;
	return major > 6 || (major == 6 && minor >= 18);
#else
	return 0;
#endif
}
