#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Runs the shell commands written in README.md and docs/*.md, as written, so the docs cannot
# drift from the code. Run as root from a built checkout (after `make`).
#
# Every fenced block whose info string is sh, bash, shell or console is a shell block, and the
# line just before its fence must say what to do with it:
#   <!-- docs-commands: run -->             the block runs as one bash script (set -euo pipefail)
#                                           and must exit 0 within BLOCK_TIMEOUT_S
#   <!-- docs-commands: run; output has: A, B; lacks: C -->
#                                           and its output must hold A and B, and not C
#                                           (what the text after the block says it shows)
#   <!-- docs-commands: serve -->           each line starts a server that runs until Ctrl-C
#                                           (spanprof view): it must still run after
#                                           SERVE_SECONDS, then exit 0 on SIGINT
#   <!-- docs-commands: not run: REASON --> not run here; REASON says why (a cluster, a server)
# A shell block without one of these fails, as does a block in another language (or none) whose
# lines look like commands, and a run block that starts the agent without --duration: everything
# the docs ask a reader to type is either run here or says why not.
# The blocks of one file run in order in one scratch directory holding links to the checkout's
# top-level entries, so `build/spanprof`, `examples/...` and `$PWD/build` work as in a clone,
# while the files they write (./spanprof-data) start empty and are removed afterwards.
# Also checked: every option `spanprof --help` lists is in docs/running.md, every option of
# `spanprof view --help` in docs/view.md, every relative link leads to a file and heading, every
# file under user/ and tests/helpers/ has its line in docs/layout.md, and every metric and label
# value of user/output/ is in docs/metrics.md, and no tracked file points outside the repository.
# Usage: .ci/docs-commands.sh [--check] [FILE.md]...   (--check: the checks only, nothing run)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
BLOCK_TIMEOUT_S=${BLOCK_TIMEOUT_S:-300}
SERVE_SECONDS=${SERVE_SECONDS:-3}

failures=0
fail() {
	echo "docs-commands: FAIL: $*" >&2
	failures=$((failures + 1))
}

# One line per block: "file<TAB>line<TAB>info<TAB>marker", then the block's lines each prefixed
# with "|", a block ending with a line "." (awk: fences are ``` at a line's start).
blocks() { # file
	awk -v f="$1" '
	!inside && /^```/ {
		info = substr($0, 4); gsub(/^[ \t]+|[ \t]+$/, "", info)
		marker = ""
		if (prev ~ /^<!-- docs-commands: .* -->$/) {
			marker = prev; sub(/^<!-- docs-commands: /, "", marker); sub(/ -->$/, "", marker)
		}
		printf "%s\t%d\t%s\t%s\n", f, NR, info, marker
		inside = 1; next
	}
	inside && /^```/ { print "."; inside = 0; prev = ""; next }
	inside { print "|" $0; next }
	NF { prev = $0 }' "$1"
}

is_shell() { # info
	case "${1%% *}" in sh | bash | shell | console) return 0 ;; *) return 1 ;; esac
}

# A line of a non-shell block that a reader would type into a shell.
looks_like_command() { # line
	[[ "$1" =~ ^[[:space:]]*(\$\ |sudo\ |make(\ |$)|build/|\./|kubectl\ |helm\ |docker\ |go\ (tool|build|get|run)|cc\ |curl\ |python3?\ |ruby\ |apt-get\ ) ]]
}

# A command of a run block that starts the agent: it must be bounded.
starts_unbounded_agent() { # line
	[[ "$1" =~ build/spanprof([[:space:]]|$) ]] || return 1
	[[ "$1" =~ build/spanprof[[:space:]]+(view|--help|-h|--version|-V)([[:space:]]|$) ]] && return 1
	[[ "$1" =~ (--duration|[[:space:]]-d)[[:space:]=] ]] && return 1
	return 0
}

scratch=
trap '[ -z "$scratch" ] || rm -rf "$scratch"' EXIT

new_scratch() {
	local e

	[ -z "$scratch" ] || rm -rf "$scratch"
	scratch=$(mktemp -d /tmp/spanprof-docs.XXXXXX)
	for e in "$top"/* "$top"/.ci; do
		ln -s "$e" "$scratch/$(basename "$e")"
	done
	rm -f "$scratch/spanprof-data" # the checkout's own profiles stay out of the docs' runs
}

# The words of "has: A, B" / "lacks: C" in a run marker.
marker_list() { # marker key
	local part

	IFS=';' read -ra parts <<<"$1"
	for part in "${parts[@]}"; do
		part=${part#"${part%%[![:space:]]*}"}
		[[ "$part" == "$2: "* ]] || continue
		tr ',' '\n' <<<"${part#"$2: "}" | sed -E 's/^[[:space:]]+//; s/[[:space:]]+$//' | grep .
	done
}

run_block() { # where script marker
	local rc=0 t0=$SECONDS out word failed=$failures

	echo "===== $1: run"
	out=$scratch/.docs-commands.out
	(cd "$scratch" && exec setsid timeout -k 10 "$BLOCK_TIMEOUT_S" bash -euo pipefail -c "$2") \
		</dev/null > >(tee "$out") 2>&1 || rc=$?
	wait $! 2>/dev/null || true # tee has written all of it
	if [ "$rc" -ne 0 ]; then
		fail "$1: exited with status $rc"
		return
	fi
	while IFS= read -r word; do
		grep -qF -- "$word" "$out" || fail "$1: the output lacks '$word', which the text promises"
	done < <(marker_list "$3" 'output has')
	while IFS= read -r word; do
		! grep -qF -- "$word" "$out" || fail "$1: the output shows '$word', which the text rules out"
	done < <(marker_list "$3" lacks)
	[ "$failures" -ne "$failed" ] || echo "----- $1: passed in $((SECONDS - t0)) s"
}

# Each line in its own network namespace (so the port it asks for is free here) and process
# group; SIGINT after SERVE_SECONDS, as Ctrl-C.
serve_block() { # where script
	local line pid rc

	mkdir -p "$scratch/spanprof-data" # what the agent would have written; empty is enough
	while IFS= read -r line; do
		[ -n "${line// /}" ] || continue
		line=${line%%  #*}
		echo "===== $1: serve: $line"
		(cd "$scratch" && exec setsid unshare --net bash -c "ip link set lo up && exec $line") \
			</dev/null &
		pid=$!
		sleep "$SERVE_SECONDS"
		if ! kill -0 "$pid" 2>/dev/null; then
			rc=0
			wait "$pid" || rc=$?
			fail "$1: '$line' ended (status $rc) before Ctrl-C"
			continue
		fi
		kill -INT -- "-$pid" 2>/dev/null || kill -INT "$pid"
		rc=0
		timeout 30 tail --pid="$pid" -f /dev/null || kill -KILL -- "-$pid" 2>/dev/null || true
		wait "$pid" || rc=$?
		[ "$rc" -eq 0 ] || fail "$1: '$line' exited with status $rc after Ctrl-C"
	done <<<"$2"
}

# Every long option of a --help text must appear, in backquotes, in the doc.
check_flags() { # doc help-command...
	local doc=$1 flag
	shift
	for flag in $("$@" 2>&1 | grep -oE '(^|[[:space:],])--[a-z][a-z-]*' | grep -oE -- '--[a-z-]+' |
		sort -u); do
		grep -qF -- "\`$flag" "$doc" || fail "$doc does not describe $flag (from '$*')"
	done
}

# Every relative link of the pages points at a file that exists, and at a heading of it when it
# names one (GitHub's anchors: lower case, punctuation dropped, spaces to dashes).
check_links() { # file...
	local bad

	bad=$(python3 - "$@" <<'PY'
import os, re, sys
code = re.compile(r"^```.*?^```", re.S | re.M)
def anchors(path):
    text = code.sub("", open(path, encoding="utf-8").read())
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}
for page in sys.argv[1:]:
    text = code.sub("", open(page, encoding="utf-8").read())
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
        if not os.path.exists(dest):
            print(f"{page}: link to {target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            print(f"{page}: link to {target}: no such heading")
PY
	)
	[ -z "$bad" ] || while IFS= read -r l; do fail "$l"; done <<<"$bad"
}

# Every file under user/ and tests/helpers/ has its line in docs/layout.md ("`util/lru`" for
# user/util/lru.c and lru.h), and every line names a file that exists.
check_layout_files() { # doc
	local bad files

	mapfile -t files < <(find user tests/helpers -type f | sort)
	bad=$(python3 - "$1" "${files[@]}" <<'PY'
import os, re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
rows = set()  # the names in the first cell of each table row
for row in re.findall(r"^\|([^|]*)\|", doc.partition("## Every file")[2], re.M):
    rows |= set(re.findall(r"`([\w./-]+)`", row))
names = set()
for path in sys.argv[2:]:
    stem, ext = os.path.splitext(path.split("/", 1)[1])
    name = stem if ext in (".c", ".h") else stem + ext
    names.add(name)
    if name not in rows:
        print(f"{sys.argv[1]}: no line for {path} (add `{name}` under Every file)")
for row in sorted(rows):
    if row not in names:
        print(f"{sys.argv[1]}: `{row}` names no file under user/ or tests/helpers/")
PY
	)
	[ -z "$bad" ] || while IFS= read -r l; do fail "$l"; done <<<"$bad"
}

# Every metric the agent defines, and every value of their labels, appears in backquotes in
# docs/metrics.md.
check_metrics() { # doc
	local bad

	bad=$(python3 - "$1" user/output/metrics.c user/output/span_stats.c <<'PY'
import re, sys
doc = open(sys.argv[1], encoding="utf-8").read()
names, values = set(), set()
for src in sys.argv[2:]:
    text = re.sub(r"_Static_assert\(.*?\);", "", open(src, encoding="utf-8").read(), flags=re.S)
    names |= set(re.findall(r'"(spanprof_[a-z0-9_]+)', text))
    if src.endswith("metrics.c"):
        tables = text[text.index("drop_reasons"):text.index("struct metric_def defs")]
        values |= set(re.findall(r'"([a-z0-9_]+)"', tables))
for name in sorted(names):
    if f"`{name}" not in doc:
        print(f"{sys.argv[1]}: metric {name} is not described")
for value in sorted(values):
    if f"`{value}`" not in doc:
        print(f"{sys.argv[1]}: label value {value} is not described")
PY
	)
	[ -z "$bad" ] || while IFS= read -r l; do fail "$l"; done <<<"$bad"
}

# The project stands on its own: no tracked file points at notes outside the repository (the
# facts they held are in docs/) or at an issue tracker's numbers.
check_self_contained() {
	local bad

	bad=$(git grep -nIE '(WIRE|UNWIND|STYLE)\.md|/work/shared|[Ii]ssues? #?[0-9]+\b' -- . \
		':!.ci/docs-commands.sh' || true)
	[ -z "$bad" ] || while IFS= read -r l; do fail "points outside the repository: $l"; done <<<"$bad"
}

check_file() { # file run?
	local file=$1 run=$2 header f line info marker body where l bounded

	[ "$run" = 0 ] || new_scratch
	while IFS= read -r -u 3 header; do
		IFS=$'\t' read -r f line info marker <<<"$header"
		body=
		while IFS= read -r -u 3 l && [ "$l" != . ]; do
			body+="${l#|}"$'\n'
		done
		where="$f:$line"
		if ! is_shell "$info"; then
			while IFS= read -r l; do
				looks_like_command "$l" || continue
				fail "$where: a '${info:-plain}' block holds a command ('$l'); make it sh and mark it"
				break
			done <<<"$body"
			continue
		fi
		case "$marker" in
		run | "run; "*)
			bounded=1
			while IFS= read -r l; do
				starts_unbounded_agent "$l" || continue
				fail "$where: starts the agent without --duration: '$l'"
				bounded=0
			done <<<"$body"
			[ "$run" = 0 ] || [ "$bounded" = 0 ] || run_block "$where" "$body" "$marker"
			;;
		serve) [ "$run" = 0 ] || serve_block "$where" "$body" ;;
		"not run: "?*) echo "===== $where: not run (${marker#not run: })" ;;
		*) fail "$where: shell block without <!-- docs-commands: run|serve|not run: REASON -->" ;;
		esac
	done 3< <(blocks "$file")
}

main() {
	local run=1 files=() f t0=$SECONDS

	if [ "${1:-}" = --check ]; then
		run=0
		shift
	fi
	if [ $# -gt 0 ]; then files=("$@"); else files=(README.md docs/*.md); fi
	[ -x build/spanprof ] || { echo "docs-commands: build/spanprof missing: run make" >&2; exit 1; }
	check_flags docs/running.md build/spanprof --help
	check_flags docs/view.md build/spanprof view --help
	check_links "${files[@]}"
	check_layout_files docs/layout.md
	check_metrics docs/metrics.md
	check_self_contained
	for f in "${files[@]}"; do
		check_file "$f" "$run"
	done
	if [ "$failures" -ne 0 ]; then
		echo "docs-commands: $failures failures" >&2
		exit 1
	fi
	echo "docs-commands: all commands of ${files[*]} passed or are marked, in $((SECONDS - t0)) s"
}

main "$@"
