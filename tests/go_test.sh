#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs `go test -v` on the given packages (GOPATH mode, offline) and ends with cmocka-style
# summary lines so tests/run_tests.sh can add them to the total.
# GO names the go command (default: go from PATH). `--skip WHY` runs nothing and reports one
# skipped suite, saying why.
set -u
if [ "${1:-}" = "--skip" ]; then
	echo "SKIP: ${2:-}"
	echo "[  PASSED  ] 0 test(s)."
	echo "[  SKIPPED ] 1 test(s)."
	exit 0
fi
out=$(mktemp)
"${GO:-go}" version
"${GO:-go}" test -count=1 -v "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
pass=$(grep -c -- '^--- PASS' "$out")
fail=$(grep -c -- '^--- FAIL' "$out")
skip=$(grep -c -- '^--- SKIP' "$out")
rm -f "$out"
echo "[  PASSED  ] $pass test(s)."
[ "$skip" -gt 0 ] && echo "[  SKIPPED ] $skip test(s)."
[ "$fail" -gt 0 ] && echo "[  FAILED  ] $fail test(s)."
exit "$rc"
