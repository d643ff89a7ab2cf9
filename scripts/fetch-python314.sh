#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Downloads Debian's CPython 3.14 (python3.14-minimal, libpython3.14-minimal,
# libpython3.14-stdlib and the libexpat1 it links, from sid) for the per-task spans test,
# without installing it: a private apt sources list and state directory fetch the .debs, and
# `dpkg -x` unpacks them into $SPANPROF_PYTHON_CACHE/3.14 (default /var/cache/spanprof-python).
# Bookworm's own apt state and packages are never touched. It needs a newer glibc than Debian
# 12's, so the test runs it inside the Debian 13 root (.ci/ruby-root.sh) with this directory
# bound in. If it cannot be had, this says so and the test skips it.
set -uo pipefail
cache=${SPANPROF_PYTHON_CACHE:-/var/cache/spanprof-python}
dest=$cache/3.14
suite=sid
packages="python3.14-minimal libpython3.14-minimal libpython3.14-stdlib libexpat1"
here=$(cd "$(dirname "$0")" && pwd)

say() { echo "fetch-python314: $*" >&2; }

if [ -x "$dest/usr/bin/python3.14" ]; then
	say "already in $dest"
	exit 0
fi
mirror=$("$here/../.ci/apt-sources.sh" --mirror bookworm 2>/dev/null) || mirror=http://deb.debian.org/debian
apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc" || {
	say "cannot create $apt_dir; CPython 3.14 not fetched"
	exit 0
}
echo "deb $mirror $suite main" >"$apt_dir/etc/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir"
	-o "Dir::Cache::archives=$apt_dir/archives" -o "Dir::State::status=/dev/null"
	-o "APT::Default-Release=" -o "Debug::NoLocking=1")
if ! apt-get "${apt_opts[@]}" -qq update >"$apt_dir/update.log" 2>&1; then
	say "apt-get update with the private list failed (see $apt_dir/update.log); skipped"
	exit 0
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
for pkg in $packages; do
	if ! (cd "$apt_dir/archives" &&
		apt-get "${apt_opts[@]}" -qq download "$pkg" >>"$apt_dir/download.log" 2>&1); then
		say "apt-get download $pkg ($suite) failed (see $apt_dir/download.log); skipped"
		rm -rf "$dest.tmp"
		exit 0
	fi
done
for pkg in $packages; do
	for deb in "$apt_dir"/archives/"$pkg"_*.deb; do
		dpkg -x "$deb" "$dest.tmp" || {
			say "dpkg -x $deb failed; skipped"
			rm -rf "$dest.tmp"
			exit 0
		}
	done
done
if [ ! -x "$dest.tmp/usr/bin/python3.14" ]; then
	say "the packages held no usr/bin/python3.14; skipped"
	rm -rf "$dest.tmp"
	exit 0
fi
rm -rf "$dest" && mv "$dest.tmp" "$dest"
say "CPython 3.14 from $suite unpacked in $dest (runs in the Debian 13 root)"
