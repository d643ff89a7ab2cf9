#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Refuses an arrow pointing up the pipeline: check-layout.sh OUTPUT STAGE... (lowest first, as
# the Makefile's STAGES). A file of user/<stage>/ or tests/unit/<stage>/ may include
# "<other>/x.h" only for a stage at or below its own; and no object of a stage's archive
# (OUTPUT/stages/lib<stage>.a) may leave undefined a function or variable that only a later
# stage's archive defines. Prints each arrow as FILE: STAGE -> LATER and fails when it found one.
set -eu
out=$1
shift
stages="$*"
bad=0

rank() { # rank NAME: position of NAME in the stage list (1 = lowest), 0 when it is none
	i=1
	for s in $stages; do
		[ "$s" = "$1" ] && echo $i && return
		i=$((i + 1))
	done
	echo 0
}

# Includes: the folder a quoted include names is its stage.
files=$(for s in $stages; do ls user/"$s"/*.[ch] tests/unit/"$s"/*.[ch] 2>/dev/null || :; done)
if [ -n "$files" ] &&
	! awk -v stages="$stages" '
		BEGIN { n = split(stages, s, " "); for (i = 1; i <= n; i++) rank[s[i]] = i }
		FNR == 1 { split(FILENAME, p, "/"); own = (p[1] == "user") ? p[2] : p[3] }
		/^#include "[a-z0-9_]+\// {
			dir = $2; gsub(/^"|\/.*$/, "", dir)
			if ((dir in rank) && rank[dir] > rank[own] && !seen[FILENAME, dir]++) {
				print FILENAME ": " own " -> " dir " (includes a later stage)"; bad = 1
			}
		}
		END { exit bad }' $files; then
	bad=1
fi

# Calls and data: an undefined symbol of a stage that a later stage defines.
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
for stage in $stages; do
	nm -g --defined-only "$out/stages/lib$stage.a" 2>/dev/null |
		awk -v s="$(rank "$stage")" 'NF == 3 { print $3, s }' >>"$defs"
done
for stage in $stages; do
	own=$(rank "$stage")
	lib=$out/stages/lib$stage.a
	if [ ! -f "$lib" ]; then
		echo "$lib: missing (run make first)"
		bad=1
		continue
	fi
	nm -A -u "$lib" | awk -v own="$own" -v stage="$stage" '
		NR == FNR { rank[$1] = $2; next }
		($NF in rank) && rank[$NF] > own {
			split($1, p, ":")
			print "user/" stage "/" p[2] ": " stage " -> " $NF " (defined by a later stage)"
		}' "$defs" - | sort -u >"$defs.up"
	if [ -s "$defs.up" ]; then
		cat "$defs.up"
		bad=1
	fi
	rm -f "$defs.up"
done

[ $bad -eq 0 ] && echo "layout: no arrow points up ($(echo $stages | sed 's/ / < /g'))"
exit $bad
