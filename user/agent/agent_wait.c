// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where the run loop sleeps: one epoll set holding the BPF ring buffers (process events, ended
 * spans), the unwind worker's finished-table signal and the hook parser's finished-parse signal.
 * The loop sleeps until the next thing it has to do, so an idle agent wakes once per drain; SIGINT
 * and SIGTERM reach it only here. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "agent/agent_int.h"
#include "agent/hook_registry.h"
#include "unwind/unwind.h"
#include "util/log.h"

static int watch(int epfd, int fd, const char *what)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return log_err(-errno, "watch %s for the run loop", what);
	return 0;
}

int agent_wait_open(struct agent *a)
{
	int err, fd;

	a->wait.fd = epoll_create1(EPOLL_CLOEXEC);
	if (a->wait.fd < 0)
		return log_err(-errno, "create the run loop's epoll set");
	/* libbpf's own epoll set over every ring of a->events: it polls readable when any does. */
	err = watch(a->wait.fd, ring_buffer__epoll_fd(a->events), "the BPF ring buffers");
	fd = unwind_wake_fd(a->unwind);
	if (!err && fd >= 0)
		err = watch(a->wait.fd, fd, "finished unwind tables");
	if (!err)
		err = watch(a->wait.fd, hook_registry_wake_fd(a->hooks), "parsed hook files");
	return err;
}

void agent_wait_close(struct agent *a)
{
	if (a->wait.fd >= 0)
		close(a->wait.fd);
	a->wait.fd = -1;
}

void agent_wait(struct agent *a, uint64_t wait_ns)
{
	/* Rounded up, so the loop does not wake just before its deadline and spin. */
	uint64_t ms = wait_ns ? (wait_ns + NS_PER_MS - 1) / NS_PER_MS : 0;
	struct epoll_event evs[3];
	int n;

	n = epoll_pwait(a->wait.fd, evs, 3, ms > INT32_MAX ? INT32_MAX : (int)ms, a->wait.sigmask);
	if (n < 0 && errno != EINTR)
		log_warn(-errno, "wait for events");
	/* Read every ring whether or not it woke us: BPF skips most wake-ups on purpose. */
	if (ring_buffer__consume(a->events) < 0)
		log_debug("read the BPF ring buffers: %s", strerror(errno));
}
