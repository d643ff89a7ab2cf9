// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* spanprof: parse flags, install signal handlers, run the agent. No logic of its own. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "config.h"
#include "log.h"

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

	config_init(&cfg);
	switch (config_parse(&cfg, argc, argv, stdout, stderr)) {
	case CONFIG_EXIT_OK:
		return EXIT_SUCCESS;
	case CONFIG_ERROR:
		return 2;
	case CONFIG_RUN:
		break;
	}
	log_set_level(cfg.verbose ? LOG_LEVEL_DEBUG : LOG_LEVEL_INFO);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return agent_run(&cfg, &stop_requested) ? EXIT_FAILURE : EXIT_SUCCESS;
}
