#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs cmocka test binaries, or commands that print cmocka-style summaries or a final
# "N passed, N failed, N skipped" line, in order; stops at the first failing one, and ends with
# one line "N passed, N failed, N skipped" summing the test cases of all of them.
set -u
passed=0 failed=0 skipped=0
for bin in "$@"; do
	echo "=== $bin"
	out=$(mktemp)
	t0=$SECONDS
	bash -c "$bin" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	echo "=== $bin took $((SECONDS - t0)) s"
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	# A command that sums up several suites itself ends with "N passed, N failed, N skipped".
	if [ -z "$p$f$s" ]; then
		sum=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
		p=$(echo "$sum" | sed -n 's/^\([0-9]*\) passed.*/\1/p')
		f=$(echo "$sum" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
		s=$(echo "$sum" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
		[ "${f:-0}" -eq 0 ] && f=
	fi
	rm -f "$out"
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ "$rc" -ne 0 ]; then
		# A crash or a failed group setup may print no summary: still count the binary once.
		[ -z "${f:-}" ] && failed=$((failed + 1))
		echo "FAILED: $bin exited with status $rc"
		echo "$passed passed, $failed failed, $skipped skipped"
		exit 1
	fi
done
echo "$passed passed, $failed failed, $skipped skipped"
