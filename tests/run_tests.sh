#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs cmocka test binaries, or commands that print cmocka-style summaries or a final
# "N passed, N failed, N skipped" line; stops at the first failing one, and ends with one line
# "N passed, N failed, N skipped" summing the test cases of all of them.
# Each one's wall and CPU time are printed when it ends ("=== CMD took N s (CPU N s)"), and the
# ten slowest are listed, slowest first, before the sum: where a run's time went.
# Usage: tests/run_tests.sh [-j N] [-a ERE] CMD...
#   (TEST_JOBS=N and TEST_ALONE=ERE in the environment do the same as -j N and -a ERE)
# With N = 1 (the default) the commands run one at a time in the order given, their output shown
# as it comes. With N > 1 up to N run at once, each started in the order given as a place frees;
# each one's output is kept and shown whole when it ends, so the log reads as a serial run's
# (only the order of the commands differs). After a failure no further command starts; those
# already running finish and are counted. The integration tests each run their own agent on
# processes they started (--pid), wait for exact events and compare what the agent saw with
# what their workload measured itself, so a second test beside them is one more load they are
# written to hold. A command matching ERE (grep -E) still runs with nothing beside it (for tests
# that bound the agent's wall-clock latency: windows every second, a stop within 2 s); while
# others run, the commands after it start first.
set -u
jobs=${TEST_JOBS:-1}
alone=${TEST_ALONE:-}
while [ $# -gt 0 ]; do
	case "$1" in
	-j) jobs=${2:-}; shift 2 || shift ;;
	-j*) jobs=${1#-j}; shift ;;
	-a) alone=${2:-}; shift 2 || shift ;;
	*) break ;;
	esac
done
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "run_tests.sh: -j/TEST_JOBS must be a number >= 1, not '$jobs'" >&2; exit 2; }

passed=0 failed=0 skipped=0 status=0
times=() # "SECONDS<TAB>CMD" per command that ended
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Adds the test-case counts of one command's output to the totals and records its time; prints
# why it failed when its status is not 0 and sets status.
tally() { # cmd output-file rc seconds
	local p f s sum

	# A command that sums up several suites itself ends with "N passed, N failed, N skipped":
	# that line counts them all (the hook suites print cmocka summaries of their C binaries
	# first, then Python's and Ruby's). Otherwise the cmocka summary counts.
	sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$2" | tail -n 1)
	if [ -n "$sum" ]; then
		p=$(echo "$sum" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
		f=$(echo "$sum" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
		s=$(echo "$sum" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
		[ "${f:-0}" -eq 0 ] && f=
	else
		p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$2" | tail -n 1)
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$2" | tail -n 1)
		s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$2" | tail -n 1)
	fi
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	times+=("$4"$'\t'"$1")
	if [ "$3" -ne 0 ]; then
		# A crash or a failed group setup may print no summary: still count the binary once.
		[ -z "${f:-}" ] && failed=$((failed + 1))
		echo "FAILED: $1 exited with status $3"
		status=1
	fi
}

# The ten slowest commands, then the sum of all test cases; exits 1 after a failure.
finish() {
	local secs cmd

	if [ "${#times[@]}" -gt 1 ]; then
		echo "=== slowest of ${#times[@]} (wall seconds):"
		printf '%s\n' "${times[@]}" | sort -t $'\t' -k1,1nr | head -n 10 |
			while IFS=$'\t' read -r secs cmd; do
				# A long command line (environment, flags) is cut: its start names it.
				[ "${#cmd}" -le 110 ] || cmd="${cmd:0:107}..."
				printf '%6s s  %s\n' "$secs" "$cmd"
			done
	fi
	echo "$passed passed, $failed failed, $skipped skipped"
	exit "$status"
}

# From a file holding bash's "real user sys" of one command: wall, its wall seconds, and cpu,
# the CPU seconds of it and of every process it waited for (its agents and workloads). CPU well
# below wall means it mostly waited, leaving a CPU to a command beside it.
read_time() { # time-file
	read -r wall cpu < <(awk '{ printf "%.0f %.1f\n", $1, $2 + $3 }' "$1" 2>/dev/null)
	wall=${wall:-0} cpu=${cpu:-?}
}
TIMEFORMAT='%R %U %S'

if [ "$jobs" -eq 1 ]; then
	for bin in "$@"; do
		echo "=== $bin"
		out=$work/out
		{ time bash -c "$bin" 2>&1 | tee "$out"; } 2>"$work/time"
		rc=${PIPESTATUS[0]}
		read_time "$work/time"
		echo "=== $bin took $wall s (CPU $cpu s)"
		tally "$bin" "$out" "$rc" "$wall"
		[ "$status" -eq 0 ] || finish
	done
	finish
fi

# Parallel: running maps pid -> index of the command it runs; pending holds the indexes not yet
# started, in order; alone_pid is the command running by itself, if any.
declare -A running=()
cmds=("$@")
pending=("${!cmds[@]}")
alone_pid=
solo=() # 1 for a command that runs alone
for i in "${!cmds[@]}"; do
	solo[i]=0
	if [ -n "$alone" ] && printf '%s\n' "${cmds[i]}" | grep -qE -- "$alone"; then solo[i]=1; fi
done

# Starts the first pending command that may start now: one that runs alone only when nothing
# runs, so while others run the commands after it go first. Returns 1 when none may start.
start_next() {
	local k i

	for k in "${!pending[@]}"; do
		i=${pending[k]}
		if [ "${solo[i]}" -eq 1 ]; then
			[ "${#running[@]}" -eq 0 ] || continue
			echo "=== started, alone: ${cmds[i]}"
		else
			echo "=== started: ${cmds[i]}"
		fi
		{ time bash -c "${cmds[i]}" >"$work/$i.out" 2>&1 </dev/null; } 2>"$work/$i.time" &
		running[$!]=$i
		[ "${solo[i]}" -eq 0 ] || alone_pid=$!
		unset "pending[k]"
		return 0
	done
	return 1
}

# Ends the commands still running when this script is stopped: none is left behind.
trap 'for p in "${!running[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done; exit 130' INT TERM
set -m # each command in its own process group, so the trap above reaches its children too
while [ "${#pending[@]}" -gt 0 ] || [ "${#running[@]}" -gt 0 ]; do
	while [ "$status" -eq 0 ] && [ -z "$alone_pid" ] && [ "${#running[@]}" -lt "$jobs" ] &&
		start_next; do :; done
	[ "${#running[@]}" -gt 0 ] || break
	rc=0
	wait -n -p done_pid "${!running[@]}" || rc=$?
	i=${running[$done_pid]}
	unset "running[$done_pid]"
	[ "$done_pid" != "$alone_pid" ] || alone_pid=
	echo "=== ${cmds[i]}"
	cat "$work/$i.out"
	read_time "$work/$i.time"
	echo "=== ${cmds[i]} took $wall s (CPU $cpu s)"
	tally "${cmds[i]}" "$work/$i.out" "$rc" "$wall"
	rm -f "$work/$i.out" "$work/$i.time"
done
finish
