#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Stages hooks/go as a module-mode build root in $1 (offline): its go.mod, links to its sources
# and to the Go test workloads, and a vendor directory of links into Debian's packaged modules
# (/usr/share/gocode/src) at the versions go.mod requires. Nothing third-party is copied.
set -eu
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
src=${GOCODE:-/usr/share/gocode/src}
rm -rf "$out"
mkdir -p "$out/vendor/go.opentelemetry.io" "$out/vendor/golang.org/x" "$out/internal/testworkloads"
cp "$root/hooks/go/go.mod" "$out/go.mod"
for f in "$root"/hooks/go/*.go "$root"/hooks/go/*.s "$root/hooks/go/otelspanprof"; do
	ln -s "$f" "$out/$(basename "$f")"
done
for d in "$root"/tests/workloads/go_* "$root"/tests/bench/go_hook; do
	ln -s "$d" "$out/internal/testworkloads/$(basename "$d")"
done
ln -s "$src/go.opentelemetry.io/otel" "$out/vendor/go.opentelemetry.io/otel"
ln -s "$src/golang.org/x/sys" "$out/vendor/golang.org/x/sys"

# Package directories of module $1 (a path under $src), without nested modules' packages.
packages() {
	(cd "$src" && find "$1" -name testdata -prune -o -type f -name '*.go' ! -name '*_test.go' \
		-printf '%h\n' | sort -u | grep -v -E "$2")
}
otel=go.opentelemetry.io/otel
{
	for mod in "$otel" "$otel/sdk" "$otel/trace" golang.org/x/sys; do
		version=$(awk -v m="$mod" '$1 == m || ($1 == "require" && $2 == m) { print $NF == "indirect" ? $(NF-2) : $NF }' "$out/go.mod")
		echo "# $mod $version"
		case $mod in
		golang.org/x/sys) echo "## explicit; go 1.17" ;;
		*) echo "## explicit; go 1.15" ;;
		esac
		case $mod in
		"$otel") packages "$otel" "^$otel/(sdk|trace|metric|exporters|bridge|example|internal/metric|internal/tools|schema)(/|$)" ;;
		"$otel/sdk") packages "$mod" "^$otel/sdk/(metric|export/metric)(/|$)" ;;
		*) packages "$mod" '^$' ;;
		esac
	done
} >"$out/vendor/modules.txt"
