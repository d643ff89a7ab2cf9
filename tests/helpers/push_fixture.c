// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The directory, receiver and agent of an integration test of pushes. */
#include <string.h>

#include "push_fixture.h"
#include "tmpdir.h"

int push_fixture_open(struct push_fixture *fx, const char *tag)
{
	memset(fx, 0, sizeof(*fx));
	if (!agent_proc_can_run())
		return 1;
	fx->dir = tmpdir_new(tag);
	fx->rx = push_receiver_new(0);
	if (fx->dir && fx->rx)
		return 0;
	push_fixture_close(fx);
	return -1;
}

void push_fixture_close(struct push_fixture *fx)
{
	if (fx->agent.pid > 0)
		agent_proc_stop(&fx->agent);
	fx->agent.pid = 0;
	push_receiver_free(fx->rx);
	fx->rx = NULL;
	tmpdir_remove(fx->dir);
	fx->dir = NULL;
}
