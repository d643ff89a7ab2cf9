#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Downloads Debian's newer Go toolchains (golang-1.24 from trixie, golang-1.25 from
# trixie-backports or sid, golang-1.26 from sid) for the Go tests, without installing them: a
# private apt sources list and state directory fetch the .debs, and `dpkg -x` unpacks them into
# $SPANPROF_GO_CACHE/<version> (default /var/cache/spanprof-go). Bookworm's own apt state and
# packages are never touched. A toolchain that cannot be had is reported and skipped: the Go
# tests then say they skipped it. Downloads are kept, so a second run costs one `apt-get update`.
#
# Usage: scripts/fetch-go-toolchains.sh [VERSION...]   (default: 1.24 1.25 1.26; 1.21-1.23
# come from bookworm-backports, for checking the layout table against their DWARF by hand)
set -uo pipefail
cache=${SPANPROF_GO_CACHE:-/var/cache/spanprof-go}
versions=${*:-1.24 1.25 1.26}
here=$(cd "$(dirname "$0")" && pwd)

say() { echo "fetch-go-toolchains: $*" >&2; }

# Suites that may carry golang-<version>, newest-stable first.
suites_of() {
	case $1 in
	1.21 | 1.22 | 1.23) echo "bookworm-backports" ;;
	1.24) echo "trixie sid" ;;
	1.25) echo "trixie-backports sid" ;;
	*) echo "sid" ;;
	esac
}

mirror=$("$here/../.ci/apt-sources.sh" --mirror bookworm 2>/dev/null) || mirror=http://deb.debian.org/debian
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc" || {
	say "cannot create $apt_dir; no Go toolchains fetched"
	exit 0
}
sources=$apt_dir/etc/sources.list
{
	for suite in bookworm-backports trixie trixie-backports sid; do
		echo "deb $mirror $suite main"
	done
} >"$sources"
apt_opts=(-o "Dir::Etc::SourceList=$sources" -o "Dir::Etc::SourceParts=/nonexistent"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir"
	-o "Dir::Cache::archives=$apt_dir/archives" -o "Dir::State::status=/dev/null"
	-o "APT::Default-Release=" -o "Debug::NoLocking=1")

# One update per day at most: the lists are what costs time.
stamp=$apt_dir/updated
if [ -z "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
	if ! apt-get "${apt_opts[@]}" -qq update >"$apt_dir/update.log" 2>&1; then
		say "apt-get update with the private list failed (see $apt_dir/update.log);" \
			"Go tests will run on the installed toolchain only"
		exit 0
	fi
	touch "$stamp"
fi

# The newest version of package $1 in suite $2, or nothing.
version_in() {
	apt-cache "${apt_opts[@]}" madison "$1" 2>/dev/null |
		awk -F'|' -v s="$2" '{ gsub(/ /, "", $2); split($3, a, " ") } a[2] ~ "^"s"/" { print $2; exit }'
}

fetch_one() { # go version, e.g. 1.25
	local v=$1 dest=$cache/$1 suite pkgver pkg found=""

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
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	for pkg in "golang-$v-go" "golang-$v-src"; do
		# madison lists the source version; the binary's may differ only in binNMUs.
		if ! (cd "$apt_dir/archives" &&
			apt-get "${apt_opts[@]}" -qq download "$pkg/$found" >>"$apt_dir/download.log" 2>&1); then
			say "Go $v: apt-get download $pkg/$found failed (see $apt_dir/download.log); skipped"
			rm -rf "$dest.tmp"
			return 1
		fi
	done
	for deb in "$apt_dir"/archives/golang-"$v"-go_*.deb "$apt_dir"/archives/golang-"$v"-src_*.deb; do
		dpkg -x "$deb" "$dest.tmp" || {
			say "Go $v: dpkg -x $deb failed; skipped"
			rm -rf "$dest.tmp"
			return 1
		}
	done
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
