/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only: what an integration test of pushes starts from: a fresh directory for the agent's
 * log and output, a push receiver on 127.0.0.1, and room for the agent it runs. */
#ifndef SPANPROF_TEST_PUSH_FIXTURE_H
#define SPANPROF_TEST_PUSH_FIXTURE_H

#include "agent_proc.h"
#include "push_receiver.h"

struct push_fixture {
	char *dir; /* tmpdir_new()'s */
	struct push_receiver *rx;
	struct agent_proc agent; /* pid 0 when not running */
};

/* Zeroes fx, then makes its directory (spanprof-<tag>-XXXXXX) and receiver. Returns 0 when
 * ready, 1 when the agent cannot run here (agent_proc_can_run() said why; nothing made), or -1
 * when either could not be made (fx released). */
int push_fixture_open(struct push_fixture *fx, const char *tag);

/* Stops the agent when a failed assertion left it running, frees the receiver and removes the
 * directory. Safe on a zeroed fixture. */
void push_fixture_close(struct push_fixture *fx);

#endif /* SPANPROF_TEST_PUSH_FIXTURE_H */
