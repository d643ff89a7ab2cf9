#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs the integration suites N times in a row (default 10) on a machine made hostile to them:
# another spanprof agent profiles every process meanwhile, and one busy loop per CPU keeps every
# CPU loaded. Stops at the first failing run. Run as root; it builds what it runs first.
# Usage: tests/stress_integration.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
out=$(mktemp -d "${TMPDIR:-/tmp}/spanprof-stress-XXXXXX")
pids=()

cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

suites=($(ls tests/integration/test_*.c | sed 's|^tests/\(.*\)\.c$|build/tests/\1|'))
# What `make integration-tests` builds (the agent, the suites, every workload), without running.
make -s -j"$(nproc)" all "${suites[@]}"
make -s -j"$(nproc)" $(make -s -p -n integration-tests 2>/dev/null |
	awk -F: '/^integration-tests:/ { print $2; exit }')

# The other agent: system-wide, as a node agent would run beside the tests, until the end (10
# runs take one to two hours on a loaded 2-CPU machine; a --duration once ended it mid-run).
build/spanprof --output "$out/other-agent" 2>"$out/other-agent.log" &
pids+=($!)
for _ in $(seq "$(nproc)"); do
	sh -c 'while :; do :; done' &
	pids+=($!)
done
echo "stress: another agent (pid ${pids[0]}) and $(nproc) busy loops; $runs runs of ${suites[*]}"

start=$(date +%s)
for i in $(seq "$runs"); do
	t0=$(date +%s)
	if ! tests/run_tests.sh "${suites[@]}" >"$out/run.log" 2>&1; then
		cat "$out/run.log"
		echo "stress: run $i of $runs FAILED after $(($(date +%s) - start)) s"
		exit 1
	fi
	if ! kill -0 "${pids[0]}" 2>/dev/null; then
		tail -n 20 "$out/other-agent.log"
		echo "stress: the other agent died"
		exit 1
	fi
	echo "stress: run $i of $runs passed in $(($(date +%s) - t0)) s: $(tail -n 1 "$out/run.log")"
done
echo "stress: $runs of $runs runs passed in $(($(date +%s) - start)) s, with another agent and" \
	"every CPU busy"
