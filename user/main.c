// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* spanprof: parse flags, install signal handlers, run the agent. No logic of its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "config/config.h"
#include "util/log.h"
#include "view/view_cmd.h"

/* The stop flag the signal handler sets; the one global besides libbpf's state. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

int main(int argc, char **argv)
{
	struct spanprof_config cfg;
	struct sigaction sa;
	sigset_t stop_signals, wait_mask;
	enum config_result parsed;
	int status;

	if (argc > 1 && !strcmp(argv[1], "view")) {
		/* The local span explorer: no BPF, no agent; stopped by SIGINT/SIGTERM. */
		sigemptyset(&stop_signals);
		sigaddset(&stop_signals, SIGINT);
		sigaddset(&stop_signals, SIGTERM);
		sigprocmask(SIG_BLOCK, &stop_signals, NULL);
		return view_main(argc - 1, argv + 1, &stop_signals);
	}
	config_init(&cfg);
	parsed = config_parse(&cfg, argc, argv, environ, stdout, stderr);
	if (parsed != CONFIG_RUN) {
		config_release(&cfg);
		return parsed == CONFIG_EXIT_OK ? EXIT_SUCCESS : 2;
	}
	log_set_level(cfg.log_level);
	log_set_format(cfg.log_format);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* Blocked here, before any thread starts, and so in every thread: they arrive only while
	 * the run loop sleeps (wait_mask), which they wake at once. Delivered to some other thread,
	 * they would wait for the loop's next wake-up, up to a second. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
	sigdelset(&wait_mask, SIGINT);
	sigdelset(&wait_mask, SIGTERM);
	/* One malloc arena for all threads: the unwind worker's large transient tables would
	 * otherwise stay resident in an arena of their own, never reused by the drain (measured
	 * whole-node: 109 MB resident against 71 MB with one arena). The threads rarely allocate
	 * at the same time, so they do not contend. */
	mallopt(M_ARENA_MAX, 1);
	/* Blocks of 1 MiB and more are mapped on their own and unmapped when freed. By default
	 * glibc raises that threshold to the size of each large block freed (up to 32 MiB), after
	 * which the unwind worker's and the symbol reader's transient arrays came from the heap and
	 * stayed resident when anything newer sat above them. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	/* libcurl is loaded and initialised by its first user (util/curl_lib). */
	status = agent_run(&cfg, &stop_requested, &wait_mask) ? EXIT_FAILURE : EXIT_SUCCESS;
	log_flush_suppressed();
	config_release(&cfg);
	return status;
}
