#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Downloads Debian's CPython 3.14 (python3.14-minimal, libpython3.14-minimal,
# libpython3.14-stdlib and the libexpat1 it links, from sid) for the per-task spans test,
# without installing it (scripts/private-apt.sh), unpacked into $SPANPROF_PYTHON_CACHE/3.14
# (default /var/cache/spanprof-python). It needs a newer glibc than Debian 12's, so the test
# runs it inside the Debian 13 root (.ci/ruby-root.sh) with this directory bound in. If it cannot be had, this says so and the test skips it.
set -uo pipefail
cache=${SPANPROF_PYTHON_CACHE:-/var/cache/spanprof-python}
dest=$cache/3.14
suite=sid
packages="python3.14-minimal libpython3.14-minimal libpython3.14-stdlib libexpat1"
here=$(cd "$(dirname "$0")" && pwd)

say() { echo "fetch-python314: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=private-apt.sh
. "$here/private-apt.sh"

if [ -x "$dest/usr/bin/python3.14" ]; then
	say "already in $dest"
	exit 0
fi
if ! private_apt_setup "$cache/apt" "$suite"; then
	say "cannot create $cache/apt; CPython 3.14 not fetched"
	exit 0
fi
if ! private_apt_update 0; then
	say "apt-get update with the private list failed (see $apt_dir/update.log); skipped"
	exit 0
fi
# shellcheck disable=SC2086 # one word a package
if ! private_apt_unpack "$dest.tmp" $packages; then
	say "CPython 3.14 from $suite skipped"
	exit 0
fi
if [ ! -x "$dest.tmp/usr/bin/python3.14" ]; then
	say "the packages held no usr/bin/python3.14; skipped"
	rm -rf "$dest.tmp"
	exit 0
fi
rm -rf "$dest" && mv "$dest.tmp" "$dest"
say "CPython 3.14 from $suite unpacked in $dest (runs in the Debian 13 root)"
