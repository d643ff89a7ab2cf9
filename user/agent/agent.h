/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's run loop: wires loader, process discovery, hooks, draining and output together. */
#ifndef SPANPROF_AGENT_H
#define SPANPROF_AGENT_H

#include <signal.h>

#include "config/config.h"

/* Runs until *stop is set or cfg->duration_s passes, then flushes the last (partial) window.
 * The run loop sleeps with wait_sigmask as its signal mask (NULL: the thread's own), so the
 * caller can keep its stop signals blocked everywhere else, in every thread. Returns 0 or
 * -errno when start-up failed (already logged). */
int agent_run(const struct spanprof_config *cfg, volatile sig_atomic_t *stop,
	      const sigset_t *wait_sigmask);

#endif /* SPANPROF_AGENT_H */
