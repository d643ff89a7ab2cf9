#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Proves the README on a clean machine: a fresh Debian 12 (bookworm, debootstrap minbase) root,
# the committed checkout cloned into /root/spanprof, and inside it the README's own commands
# (.ci/readme-commands.sh). The bare root is cached as a tarball per day and mirror; downloaded
# .deb files are kept between runs too (apt still resolves every package from the mirror).
# Run as root. SPANPROF_CI_CACHE overrides the cache directory.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${SPANPROF_CI_CACHE:-/var/cache/spanprof-ci}
suite=bookworm

log() { printf 'clean-root: %s\n' "$*"; }

# shellcheck source-path=SCRIPTDIR source=root-cache.sh
. "$src/.ci/root-cache.sh"

mirror= # the Debian archive the bare root is made from

build_bare_root() { # dir
	debootstrap --variant=minbase "$suite" "$1" "$mirror"
}

# The checkout's committed HEAD, cloned as a user would, into root's 0700 home.
clone_checkout() { # root
	local head

	head=$(git -C "$src" rev-parse HEAD)
	[ -z "$(git -C "$src" status --porcelain --untracked-files=no)" ] ||
		log "note: uncommitted changes in $src are not part of the clean-root run"
	chmod 0700 "$1/root"
	git clone -q --no-checkout "$src" "$1/root/spanprof"
	git -C "$1/root/spanprof" checkout -q --detach "$head"
	log "cloned $src at $(git -C "$src" log -1 --format='%h %s' "$head")"
}

root= # global: the EXIT trap removes it after main has returned

# This machine's own trust for the package registries, which apt's sources alone do not carry:
# its local CA certificates (a TLS-inspecting proxy's, say; update-ca-certificates adds them when
# the set-up installs ca-certificates) and npm's settings, so the root reaches npm as it does.
copy_registry_trust() { # root
	local f

	for f in /usr/local/share/ca-certificates/*.crt; do
		[ -f "$f" ] || continue
		mkdir -p "$1/usr/local/share/ca-certificates"
		cp "$f" "$1/usr/local/share/ca-certificates/"
	done
	if [ -f /etc/npmrc ]; then cp /etc/npmrc "$1/etc/npmrc"; fi
	return 0
}

main() {
	local tarball sources rc=0

	[ "$(id -u)" -eq 0 ] || { log "must run as root"; return 1; }
	root_cache_ensure_debootstrap
	mirror=$("$src/.ci/apt-sources.sh" --mirror "$suite")
	tarball=$(root_cache_tarball "$suite-minbase" "$mirror" build_bare_root)
	root=$(mktemp -d /var/tmp/spanprof-ci-root.XXXXXX)
	# The binds live in a private mount namespace, so they end with it even on SIGKILL;
	# the root directory itself is removed here, never across a mount (--one-file-system).
	trap 'rm -rf --one-file-system "$root"' EXIT
	trap 'exit 130' INT TERM
	tar -C "$root" --numeric-owner -xpf "$tarball"
	chmod 0755 "$root" # it becomes /; mktemp made it 0700
	sources=$(root_cache_sources "$suite" "$suite")
	root_cache_configure_apt "$root" "${sources:-deb $mirror $suite main}"
	copy_registry_trust "$root"
	mkdir -p "$cache/apt-archives/partial"
	clone_checkout "$root"
	unshare --mount --propagation private "$src/.ci/root-binds.sh" "$root" \
		"$cache/apt-archives" "$cache" || rc=$?
	if grep -qF " $root/" /proc/self/mountinfo; then
		log "mounts under $root are still present; leaving it in place"
		trap - EXIT
		return 1
	fi
	return "$rc"
}

main "$@"
