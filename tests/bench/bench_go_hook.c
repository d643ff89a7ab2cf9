// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Benchmark: one OpenTelemetry span start+end in Go with and without the spanprof integration,
 * first with no agent, then with the agent attached. Ratios are measured in this one run. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_proc.h"
#include "tmpdir.h"

/* Runs the Go bench; parses "go <state> <plain ns> <wrapped ns>". */
static int run(const char *arg, double *plain, double *wrapped)
{
	char cmd[4200], line[256];
	int ok = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s", build_path("tests/bench/go_hook"), arg);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		ok |= sscanf(line, "go %*s %lf %lf", plain, wrapped) == 2;
	return pclose(p) == 0 && ok ? 0 : -1;
}

int main(void)
{
	double plain0, wrapped0, plain1 = 0, wrapped1 = 0;
	char *dir = tmpdir_new("bench-go");
	const char *argv[] = { "--output", dir, NULL };
	struct agent_proc agent;
	int attached = 0;

	if (!dir || run("none", &plain0, &wrapped0)) {
		fprintf(stderr, "bench_go_hook: go bench failed\n");
		return 1;
	}
	if (agent_proc_can_run() && !agent_proc_start(&agent, dir, argv)) {
		attached = !run("wait-agent", &plain1, &wrapped1);
		agent_proc_stop(&agent);
	}
	tmpdir_remove(dir);
	printf("\n== Go: one span start+end through the OpenTelemetry SDK ==\n");
	printf("  no agent:       SDK %7.0f ns, with spanprof %7.0f ns (+%.0f ns, %.2fx)\n", plain0,
	       wrapped0, wrapped0 - plain0, wrapped0 / plain0);
	if (attached)
		printf("  agent attached: SDK %7.0f ns, with spanprof %7.0f ns (+%.0f ns, %.2fx)\n",
		       plain1, wrapped1, wrapped1 - plain1, wrapped1 / plain1);
	return 0;
}
