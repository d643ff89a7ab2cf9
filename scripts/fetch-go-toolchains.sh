#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Downloads Debian's newer Go toolchains (golang-1.24 from trixie, golang-1.25 from
# trixie-backports or sid, golang-1.26 from sid) for the Go tests, without installing them
# (scripts/private-apt.sh), unpacked into $SPANPROF_GO_CACHE/<version> (default
# /var/cache/spanprof-go). A toolchain that cannot be had is reported and skipped: the Go
# tests then say they skipped it. Downloads are kept, so a second run costs one `apt-get update`.
#
# Usage: scripts/fetch-go-toolchains.sh [VERSION...]   (default: 1.24 1.25 1.26; 1.21-1.23
# come from bookworm-backports, for checking the layout table against their DWARF by hand)
set -uo pipefail
cache=${SPANPROF_GO_CACHE:-/var/cache/spanprof-go}
versions=${*:-1.24 1.25 1.26}
here=$(cd "$(dirname "$0")" && pwd)

say() { echo "fetch-go-toolchains: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=private-apt.sh
. "$here/private-apt.sh"

# Suites that may carry golang-<version>, newest-stable first.
suites_of() {
	case $1 in
	1.21 | 1.22 | 1.23) echo "bookworm-backports" ;;
	1.24) echo "trixie sid" ;;
	1.25) echo "trixie-backports sid" ;;
	*) echo "sid" ;;
	esac
}

if ! private_apt_setup "$cache/apt" bookworm-backports trixie trixie-backports sid; then
	say "cannot create $cache/apt; no Go toolchains fetched"
	exit 0
fi
# One update per day at most: the lists are what costs time.
if ! private_apt_update 1440; then
	say "apt-get update with the private list failed (see $apt_dir/update.log);" \
		"Go tests will run on the installed toolchain only"
	exit 0
fi

# The newest version of package $1 in suite $2, or nothing.
version_in() {
	apt-cache "${apt_opts[@]}" madison "$1" 2>/dev/null |
		awk -F'|' -v s="$2" '{ gsub(/ /, "", $2); split($3, a, " ") } a[2] ~ "^"s"/" { print $2; exit }'
}

fetch_one() { # go version, e.g. 1.25
	local v=$1 dest=$cache/$1 suite pkgver found=""

	if [ -x "$dest/usr/lib/go-$v/bin/go" ]; then
		say "Go $v: already in $dest"
		return 0
	fi
	for suite in $(suites_of "$v"); do
		pkgver=$(version_in "golang-$v-go" "$suite")
		if [ -n "$pkgver" ]; then
			found=$suite
			break
		fi
	done
	if [ -z "$found" ]; then
		say "Go $v: golang-$v-go is in none of $(suites_of "$v") at $mirror; skipped"
		return 1
	fi
	# madison lists the source version; the binary's may differ only in binNMUs.
	if ! private_apt_unpack "$dest.tmp" "golang-$v-go/$found" "golang-$v-src/$found"; then
		say "Go $v: skipped"
		return 1
	fi
	if ! "$dest.tmp/usr/lib/go-$v/bin/go" version >/dev/null 2>&1; then
		say "Go $v: the unpacked go binary does not run here; skipped"
		rm -rf "$dest.tmp"
		return 1
	fi
	rm -rf "$dest" && mv "$dest.tmp" "$dest"
	say "Go $v: golang-$v-go $pkgver ($found) unpacked in $dest"
}

failed=0
for v in $versions; do
	fetch_one "$v" || failed=$((failed + 1))
done
[ "$failed" -eq 0 ] || say "$failed toolchain(s) missing; their Go tests will be skipped"
exit 0
