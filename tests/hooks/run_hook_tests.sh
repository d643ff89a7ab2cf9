#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs the language-hook suites: the given cmocka binaries (the C helper), then hooks/python's
# unittest suite and hooks/ruby's minitest suite. Each suite runs even if an earlier one failed;
# the last line sums them all: "N passed, N failed, N skipped". Exit status 1 on any failure.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
RUBY=${RUBY:-ruby}
passed=0 failed=0 skipped=0 status=0

add() { # passed failed skipped
	passed=$((passed + $1)) failed=$((failed + $2)) skipped=$((skipped + $3))
}

# A suite that crashed before printing its summary still counts as one failure.
crashed() {
	echo "FAILED: $1 printed no summary"
	add 0 1 0
	status=1
}

for bin in "$@"; do
	echo "=== $bin"
	out=$(mktemp)
	"$bin" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -n 1)
	rm -f "$out"
	add "${p:-0}" "${f:-0}" "${s:-0}"
	if [ "$rc" -ne 0 ]; then
		status=1
		[ -z "${f:-}" ] && crashed "$bin"
	fi
done

# Adds one unittest run's counts ("Ran N tests" and the OK/FAILED line of its output file).
add_unittest() { # output-file status what
	local ran last f e s bad

	ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$1" | tail -n 1)
	last=$(grep -E '^(OK|FAILED)' "$1" | tail -n 1)
	if [ -z "$ran" ] || [ -z "$last" ]; then
		crashed "$3"
		return
	fi
	f=$(echo "$last" | sed -n 's/.*failures=\([0-9]*\).*/\1/p')
	e=$(echo "$last" | sed -n 's/.*errors=\([0-9]*\).*/\1/p')
	s=$(echo "$last" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
	bad=$((${f:-0} + ${e:-0}))
	add $((ran - bad - ${s:-0})) "$bad" "${s:-0}"
	[ "$2" -ne 0 ] && status=1
}

echo "=== python: hooks/python (unittest)"
out=$(mktemp)
(cd "$top/hooks/python" && "$PYTHON" -m unittest discover -s tests -t . -v) 2>&1 | tee "$out"
add_unittest "$out" "${PIPESTATUS[0]}" "the python suite"
rm -f "$out"

# The binding and the span processor (no agent needed) under every Python that pyenv provides
# and pyproject.toml's requires-python admits; a fresh machine has none, and says so.
min_minor=$(sed -n 's/^requires-python = ">=3\.\([0-9]*\)".*/\1/p' \
	"$top/hooks/python/pyproject.toml")
pythons=()
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
	[ -x "$py" ] || continue
	minor=$(basename "$(dirname "$(dirname "$py")")" | cut -d. -f2)
	[ "$minor" -ge "${min_minor:-0}" ] && pythons+=("$py")
done
echo "=== python: hooks/python's binding and processor under pyenv's Pythons (3.${min_minor}+)"
if [ ${#pythons[@]} -eq 0 ]; then
	echo "SKIP: no pyenv Python 3.${min_minor}+ under ${PYENV_ROOT:-$HOME/.pyenv}/versions;" \
		"the hooks were tested with $PYTHON only"
	add 0 0 1
fi
for py in "${pythons[@]}"; do
	echo "--- $py"
	out=$(mktemp)
	(cd "$top/hooks/python" && "$py" -m unittest discover -s tests -t . -p 'test_[bo]*.py') \
		>"$out" 2>&1
	rc=$?
	tail -n 3 "$out"
	add_unittest "$out" "$rc" "the python suite under $py"
	rm -f "$out"
done

# Adds one minitest run's counts (its "N runs, ... N skips" line in the output file).
add_minitest() { # output-file status what
	local line runs f e s

	line=$(grep -E '^[0-9]+ runs, [0-9]+ assertions, [0-9]+ failures, [0-9]+ errors, [0-9]+ skips' "$1" | tail -n 1)
	if [ -z "$line" ]; then
		crashed "$3"
		return
	fi
	read -r runs f e s <<<"$(echo "$line" | sed 's/^\([0-9]*\) runs, [0-9]* assertions, \([0-9]*\) failures, \([0-9]*\) errors, \([0-9]*\) skips.*/\1 \2 \3 \4/')"
	add $((runs - f - e - s)) $((f + e)) "$s"
	[ "$2" -ne 0 ] && status=1
}

# Test files come first, then "--", then minitest's own options (read from ARGV at exit).
# shellcheck disable=SC2016 # Ruby code, expanded by Ruby
minitest_main='
	files = ARGV.take_while { |a| a != "--" }
	ARGV.replace(ARGV.drop(files.size + 1))
	files.sort.each { |f| require File.expand_path(f) }'

echo "=== ruby: hooks/ruby (minitest)"
out=$(mktemp)
(cd "$top/hooks/ruby" && "$RUBY" -Ilib -Itest -e "$minitest_main" test/test_*.rb -- -v) 2>&1 | tee "$out"
add_minitest "$out" "${PIPESTATUS[0]}" "the ruby suite"
rm -f "$out"

# The binding and the processor (no agent needed) under the Rubies of the Debian 13 root that
# .ci/ruby-root.sh makes: their libruby needs its glibc, so they run there, pivot_root'ed in a
# private mount namespace with this checkout bound in (read-only) at /spanprof.
ruby_root=${SPANPROF_RUBY_ROOT:-/var/lib/spanprof-test/trixie-ruby}
rubies=()
for rb in "$ruby_root"/usr/bin/ruby3.*; do
	[ -x "$rb" ] && rubies+=("$(basename "$rb")")
done
echo "=== ruby: hooks/ruby's binding and processor under the Debian 13 root's Rubies"
if [ ${#rubies[@]} -eq 0 ] || [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: no Debian 13 root with Ruby 3.3+ at $ruby_root (.ci/ruby-root.sh, run by" \
		"scripts/setup-debian.sh, makes it), or not root; the hooks were tested with $RUBY only"
	add 0 0 1
	rubies=()
fi
lib=${SPANPROF_LIBRARY:-$top/build/libspanprof.so}
[[ "$lib" == "$top"/* ]] && lib=/spanprof/${lib#"$top"/}
for rb in "${rubies[@]}"; do
	echo "--- $rb"
	out=$(mktemp)
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private bash -ec '
		root=$1 top=$2 lib=$3 rb=$4 main=$5
		mount --bind "$root" "$root"
		mkdir -p "$root/spanprof"
		mount --bind "$top" "$root/spanprof"
		mount -o remount,bind,ro "$root/spanprof"
		mount -t proc proc "$root/proc"
		mount --rbind /dev "$root/dev"
		cd "$root"
		pivot_root . .
		umount -l .
		cd /spanprof/hooks/ruby
		exec env -i PATH=/usr/bin:/bin LANG=C.UTF-8 SPANPROF_LIBRARY="$lib" "$rb" -Ilib -Itest \
			-e "$main" test/test_binding.rb test/test_span_processor.rb \
			test/test_sdk_behaviour.rb -- -v' _ "$ruby_root" "$top" "$lib" "$rb" "$minitest_main" \
		>"$out" 2>&1
	rc=$?
	grep -E '^[A-Za-z:]+#test_.* = .* [SEF]$|Failure|Error' "$out" | head -n 20
	tail -n 3 "$out"
	add_minitest "$out" "$rc" "the ruby suite under $rb"
	rm -f "$out"
done

echo "$passed passed, $failed failed, $skipped skipped"
exit $status
