/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The agent's run loop: wires loader, process discovery, hooks, draining and output together. */
#ifndef SPANPROF_AGENT_H
#define SPANPROF_AGENT_H

#include <signal.h>

#include "config/config.h"

/* Runs until *stop is set or cfg->duration_s passes, then flushes the last (partial) window.
 * Returns 0 or -errno when start-up failed (already logged). */
int agent_run(const struct spanprof_config *cfg, volatile sig_atomic_t *stop);

#endif /* SPANPROF_AGENT_H */
