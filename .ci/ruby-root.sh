#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Makes the Debian 13 (trixie) root the Ruby frames test runs newer Rubies in: their libruby needs
# a newer glibc than Debian 12's, so they run under their own root, as in a container, and the
# agent on this machine reads their files through /proc/PID/root. The root holds trixie's ruby3.3
# and, when Debian's experimental suite has it, ruby3.4. It is built with debootstrap (minbase),
# cached as a tarball per day and mirror (.ci/root-cache.sh), and unpacked into RUBY_ROOT, which
# the test only reads (it binds what it needs in a private mount namespace).
# Run as root. SPANPROF_CI_CACHE overrides the cache directory, SPANPROF_RUBY_ROOT the root.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${SPANPROF_CI_CACHE:-/var/cache/spanprof-ci}
ruby_root=${SPANPROF_RUBY_ROOT:-/var/lib/spanprof-test/trixie-ruby}
suite=trixie
extra_suite=experimental # ruby3.4 lives only here so far

log() { printf 'ruby-root: %s\n' "$*"; }

# shellcheck source-path=SCRIPTDIR source=root-cache.sh
. "$src/.ci/root-cache.sh"

mirror= # the Debian archive the root is made from
sources= # the root's apt sources

# Debian's ruby3.4 from experimental, if it installs; its absence is not a failure.
add_ruby34() { # dir
	mount -t proc proc "$1/proc"
	if chroot "$1" apt-get update -qq &&
		chroot "$1" apt-get install -y -qq --no-install-recommends -t "$extra_suite" ruby3.4; then
		echo "ruby3.4 from $extra_suite installed"
	else
		echo "ruby3.4 from $extra_suite did not install; the root has ruby3.3 only"
	fi
	chroot "$1" apt-get clean
	umount "$1/proc"
}

# Called where set -e does not hold (root_cache_tarball's "||"): each step returns on failure.
build_ruby_root() { # dir
	debootstrap --variant=minbase --include=ruby3.3 "$suite" "$1" "$mirror" || return
	root_cache_configure_apt "$1" "$sources" || return
	export DEBIAN_FRONTEND=noninteractive
	export -f add_ruby34
	unshare --mount --propagation private \
		bash -ec "$(declare -p extra_suite); add_ruby34 '$1'" || return
	rm -f "$1/etc/resolv.conf"
}

# Unpacks TARBALL into ruby_root unless it holds that tarball already; the old root is swapped
# out whole, so a reader sees one root or the other.
unpack() { # tarball
	local stamp=$ruby_root/.spanprof-root tmp rubies

	if [ "$(cat "$stamp" 2>/dev/null)" = "$(basename "$1")" ]; then
		log "$ruby_root holds $(basename "$1") already"
		return 0
	fi
	mkdir -p "$(dirname "$ruby_root")"
	tmp=$(mktemp -d "$ruby_root.new.XXXXXX")
	tar -C "$tmp" --numeric-owner -xpf "$1"
	chmod 0755 "$tmp"
	basename "$1" >"$tmp/.spanprof-root"
	if [ -e "$ruby_root" ]; then
		mv "$ruby_root" "$tmp.old"
	fi
	mv "$tmp" "$ruby_root"
	rm -rf --one-file-system "$tmp.old"
	rubies=("$ruby_root"/usr/bin/ruby3.*)
	log "unpacked $(basename "$1") into $ruby_root: ${rubies[*]##*/}"
}

main() {
	local host_suite tarball

	[ "$(id -u)" -eq 0 ] || { log "must run as root"; return 1; }
	root_cache_ensure_debootstrap
	host_suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	mirror=$("$src/.ci/apt-sources.sh" --mirror "$host_suite")
	sources=$(root_cache_sources "$host_suite" "$suite")
	sources=$(printf '%s\ndeb %s %s main' "${sources:-deb $mirror $suite main}" "$mirror" \
		"$extra_suite")
	tarball=$(root_cache_tarball "$suite-ruby" "$sources" build_ruby_root)
	unpack "$tarball"
}

main "$@"
