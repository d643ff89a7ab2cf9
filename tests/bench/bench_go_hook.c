// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: one OpenTelemetry span start+end in Go with and without the spanprof integration,
 * first with no agent, then with the agent attached. Ratios are measured in this one run.
 * Another spanprof agent on the machine that profiles every process attaches to go_hook's hook
 * too, and its uprobe entries would land in the no-agent row. bench_hook hides its hooks from
 * such agents by running from copies without their probe notes; a Go hook has no note (the agent
 * finds it by its symbols, or in .gopclntab when stripped), so no copy can hide it. Instead
 * go_hook says whether an agent's uprobe was on its hook, and a no-agent row that had one says
 * so. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_proc.h"
#include "tmpdir.h"

/* Runs the Go bench; parses "go <state> <plain ns> <wrapped ns>" (*attached: state is
 * "attached"). */
static int run(const char *arg, double *plain, double *wrapped, int *attached)
{
	char cmd[4200], line[256], state[16];
	int ok = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s", build_path("tests/bench/go_hook"), arg);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "go %15s %lf %lf", state, plain, wrapped) == 3) {
			ok = 1;
			*attached = !strcmp(state, "attached");
		}
	}
	return pclose(p) == 0 && ok ? 0 : -1;
}

int main(void)
{
	double plain0, wrapped0, plain1 = 0, wrapped1 = 0;
	char *dir = tmpdir_new("bench-go");
	const char *argv[] = { "--output", dir, NULL };
	struct agent_proc agent;
	int attached = 0, foreign = 0;

	if (!dir || run("none", &plain0, &wrapped0, &foreign)) {
		fprintf(stderr, "bench_go_hook: go bench failed\n");
		return 1;
	}
	if (agent_proc_can_run() && !agent_proc_start(&agent, dir, argv)) {
		if (run("wait-agent", &plain1, &wrapped1, &attached))
			attached = 0;
		agent_proc_stop(&agent);
	}
	tmpdir_remove(dir);
	printf("\n== Go: one span start+end through the OpenTelemetry SDK ==\n");
	printf("  no agent:       SDK %7.0f ns, with spanprof %7.0f ns (+%.0f ns, %.2fx)\n", plain0,
	       wrapped0, wrapped0 - plain0, wrapped0 / plain0);
	if (foreign)
		printf("    ... another agent's uprobe was on go_hook's hook: the no-agent row is "
		       "its\n");
	if (attached)
		printf("  agent attached: SDK %7.0f ns, with spanprof %7.0f ns (+%.0f ns, %.2fx)\n",
		       plain1, wrapped1, wrapped1 - plain1, wrapped1 / plain1);
	return 0;
}
