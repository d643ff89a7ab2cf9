# shellcheck shell=bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the fetch-*.sh scripts: Debian packages of other suites fetched with a private apt
# sources list and state directory, and unpacked with `dpkg -x` rather than installed, so that
# Bookworm's own apt state and packages are never touched. The sourcing script defines say().

# private_apt_setup DIR SUITE...: lists and archives under DIR, a sources list naming each suite
# at the mirror Bookworm's own sources use; sets apt_dir, apt_opts and mirror. Returns 1 when
# DIR cannot be made.
private_apt_setup() {
	local suite here
	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	apt_dir=$1
	shift
	mirror=$("$here/../.ci/apt-sources.sh" --mirror bookworm 2>/dev/null) || mirror=http://deb.debian.org/debian
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/etc" || return 1
	for suite in "$@"; do
		echo "deb $mirror $suite main"
	done >"$apt_dir/etc/sources.list"
	apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir"
		-o "Dir::Cache::archives=$apt_dir/archives" -o "Dir::State::status=/dev/null"
		-o "APT::Default-Release=" -o "Debug::NoLocking=1")
}

# private_apt_update MINUTES: apt-get update with the private list (log: $apt_dir/update.log),
# skipped when the last one is younger than MINUTES (0: never skipped). Returns apt-get's
# failure.
private_apt_update() {
	local stamp=$apt_dir/updated
	if [ "$1" -gt 0 ] && [ -n "$(find "$stamp" -mmin -"$1" 2>/dev/null)" ]; then
		return 0
	fi
	apt-get "${apt_opts[@]}" -qq update >"$apt_dir/update.log" 2>&1 || return 1
	touch "$stamp"
}

# private_apt_unpack DEST PACKAGE[/SUITE]...: downloads each package into $apt_dir/archives
# (kept for the next run) and unpacks every .deb of it there into DEST, made afresh. On a
# failure says which, removes DEST and returns 1.
private_apt_unpack() {
	local dest=$1 spec deb
	shift
	rm -rf "$dest"
	mkdir -p "$dest"
	for spec in "$@"; do
		if ! (cd "$apt_dir/archives" &&
			apt-get "${apt_opts[@]}" -qq download "$spec" >>"$apt_dir/download.log" 2>&1); then
			say "apt-get download $spec failed (see $apt_dir/download.log)"
			rm -rf "$dest"
			return 1
		fi
	done
	for spec in "$@"; do
		for deb in "$apt_dir"/archives/"${spec%%/*}"_*.deb; do
			dpkg -x "$deb" "$dest" || {
				say "dpkg -x $deb failed"
				rm -rf "$dest"
				return 1
			}
		done
	done
}
