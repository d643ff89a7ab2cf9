#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs the commands of README.md's first code block, exactly as written and in order, from the
# repository's top directory (the README says: as root, in a clone). The commands are read from
# the README, never copied here, so the two cannot drift apart.
# A command whose comment mentions Ctrl-C starts the agent, which runs until stopped: it runs
# until the agent has started and this machine has run a few CPU seconds, then gets the Ctrl-C
# a user would type (SIGINT to its process group); it must then exit 0 and have left at least
# one profile in ./spanprof-data, where the README says files land. Every other command must
# exit 0.
set -euo pipefail
cd "$(dirname "$0")/.."
START_TIMEOUT_S=${START_TIMEOUT_S:-3600} # set-up and build may download and compile a lot
AGENT_START_TIMEOUT_S=${AGENT_START_TIMEOUT_S:-120}
STOP_TIMEOUT_S=${STOP_TIMEOUT_S:-60}

fail() {
	echo "readme-commands: $*" >&2
	exit 1
}

group= # the process group of a command run until Ctrl-C; killed if this script ends early
trap '[ -z "$group" ] || kill -KILL -- "-$group" 2>/dev/null || true' EXIT

# "command<TAB>comment" per command of the first ``` block; a trailing \ joins lines.
readme_commands() {
	awk '/^```/ { if (inside) exit; inside = 1; next }
	     inside { line = line $0; if (sub(/\\$/, "", line)) next; print line; line = "" }' \
		README.md | sed -E 's/^[[:space:]]+//; s/[[:space:]]+#[[:space:]]*/\t/; s/[[:space:]]+$//'
}

# 1 when a process named spanprof runs in process group $1.
agent_in_group() { # pgid
	local p

	for p in /proc/[0-9]*; do
		[ "$(cut -d' ' -f5 "$p/stat" 2>/dev/null)" = "$1" ] &&
			[ "$(cat "$p/comm" 2>/dev/null)" = spanprof ] && return 0
	done
	return 1
}

# Waits until the output says the agent is profiling. Set-up and build may take long; the agent,
# once running, gets AGENT_START_TIMEOUT_S.
wait_profiling() { # pid out command
	local rc=0 agent_since=

	SECONDS=0
	until grep -q 'profiling ' "$2"; do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1" || rc=$?
			fail "'$3' ended (status $rc) before the agent said it was profiling"
		fi
		[ "$SECONDS" -lt "$START_TIMEOUT_S" ] || fail "no agent after ${START_TIMEOUT_S}s"
		if [ -z "$agent_since" ] && agent_in_group "$1"; then
			agent_since=$SECONDS
		fi
		[ -z "$agent_since" ] || [ $((SECONDS - agent_since)) -lt "$AGENT_START_TIMEOUT_S" ] ||
			fail "the agent runs but did not say it was profiling in ${AGENT_START_TIMEOUT_S}s"
		sleep 1
	done
}

# Where a spanprof in process group $1 is blocked: its kernel wait channel and what it has open.
where_agent_waits() { # pgid
	local p

	for p in /proc/[0-9]*; do
		[ "$(cut -d' ' -f5 "$p/stat" 2>/dev/null)" = "$1" ] || continue
		[ "$(cat "$p/comm" 2>/dev/null)" = spanprof ] || continue
		echo "readme-commands: agent ${p#/proc/} waits in $(cat "$p/wchan" 2>/dev/null);" \
			"its open files:" $(ls -l "$p/fd" 2>/dev/null | sed -n 's/.* -> //p' |
				grep -v '^anon_inode\|^pipe\|^socket' | sort -u) >&2
	done
}

# Ctrl-C as a terminal sends it: SIGINT to the process group; SIGKILL if it is still there after
# STOP_TIMEOUT_S. Returns the command's status.
ctrl_c() { # pid
	local i rc=0

	kill -INT -- "-$1"
	for ((i = 0; i < STOP_TIMEOUT_S * 10; i++)); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$1" 2>/dev/null; then
		where_agent_waits "$1"
		kill -KILL -- "-$1"
		echo "readme-commands: still running ${STOP_TIMEOUT_S}s after Ctrl-C; killed" >&2
	fi
	wait "$1" || rc=$?
	return "$rc"
}

# The command runs in its own process group (setsid), its output both shown and kept.
run_until_ctrl_c() { # command
	local out pid rc=0

	out=$(mktemp)
	setsid bash -c "$1" </dev/null >"$out" 2>&1 &
	pid=$!
	group=$pid
	tail -n +1 -f --pid="$pid" "$out" &
	# setsid(2) runs in the child a moment after the fork: give it up to 5 s on a loaded machine.
	for _ in $(seq 50); do
		[ "$(cut -d' ' -f5 "/proc/$pid/stat" 2>/dev/null)" = "$pid" ] && break
		sleep 0.1
	done
	[ "$(cut -d' ' -f5 "/proc/$pid/stat")" = "$pid" ] || fail "setsid did not start a group"
	wait_profiling "$pid" "$out" "$1"
	echo "readme-commands: the agent is profiling; 3 CPU seconds of work, then Ctrl-C"
	timeout 3 sh -c 'while :; do :; done' || true
	ctrl_c "$pid" || rc=$?
	group=
	sleep 1.1 # tail checks every second whether the command is gone; let it print the end
	rm -f "$out"
	[ "$rc" -eq 0 ] || fail "'$1' exited with status $rc after Ctrl-C"
	compgen -G 'spanprof-data/*.pb.gz' >/dev/null || fail "no profile in ./spanprof-data"
	echo "readme-commands: after Ctrl-C: status 0, $(ls spanprof-data/*.pb.gz | wc -l)" \
		"profiles in ./spanprof-data, e.g. $(ls spanprof-data/*.pb.gz | head -n 1)"
}

main() {
	local cmd comment n=0

	echo "readme-commands: in $(. /etc/os-release && echo "$PRETTY_NAME"), $PWD" \
		"(home $(stat -c %a "$HOME"), uid $(id -u)), PATH=$PATH"
	while IFS=$'\t' read -r -u 3 cmd comment; do
		[ -n "$cmd" ] || continue
		n=$((n + 1))
		printf '\n===== README command %d, run as written:\n# %s\n' "$n" "$cmd"
		if [[ "$comment" == *Ctrl-C* ]]; then
			run_until_ctrl_c "$cmd"
		else
			bash -c "$cmd" </dev/null || fail "'$cmd' failed with status $?"
		fi
	done 3< <(readme_commands)
	[ "$n" -ge 2 ] || fail "README.md's first code block gave $n commands, expected set-up and test"
	echo "readme-commands: all $n README commands passed"
}

main "$@"
