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

fail() {
	echo "readme-commands: $*" >&2
	exit 1
}

# "command<TAB>comment" per command of the first ``` block; a trailing \ joins lines.
readme_commands() {
	awk '/^```/ { if (inside) exit; inside = 1; next }
	     inside { line = line $0; if (sub(/\\$/, "", line)) next; print line; line = "" }' \
		README.md | sed -E 's/^[[:space:]]+//; s/[[:space:]]+#[[:space:]]*/\t/; s/[[:space:]]+$//'
}

# The command runs in its own process group (setsid), its output both shown and kept.
run_until_ctrl_c() { # command
	local out pid rc=0

	out=$(mktemp)
	setsid bash -c "$1" </dev/null >"$out" 2>&1 &
	pid=$!
	tail -n +1 -f --pid="$pid" "$out" &
	[ "$(cut -d' ' -f5 "/proc/$pid/stat")" = "$pid" ] || fail "setsid did not start a group"
	SECONDS=0
	until grep -q '^.*profiling ' "$out"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" || rc=$?
			fail "'$1' ended (status $rc) before the agent said it was profiling"
		fi
		[ "$SECONDS" -lt "$START_TIMEOUT_S" ] || fail "no agent after ${START_TIMEOUT_S}s"
		sleep 1
	done
	echo "readme-commands: the agent is profiling; 3 CPU seconds of work, then Ctrl-C"
	timeout 3 sh -c 'while :; do :; done' || true
	kill -INT -- "-$pid"
	wait "$pid" || rc=$?
	sleep 0.2 # let tail print the last lines
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
