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

ensure_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
		debootstrap >/dev/null
}

# Prints the path of the cached bare root for today and this mirror, building it if needed.
bare_root_tarball() { # mirror
	local key tarball tmp

	key=$(printf '%s' "$1" | sha256sum | cut -c1-12)
	tarball=$cache/$suite-minbase-$(date -u +%Y%m%d)-$key.tar
	mkdir -p "$cache"
	exec 9>"$cache/lock" # one builder at a time; a second run waits and reuses the result
	flock 9
	if [ ! -s "$tarball" ]; then
		log "building a bare $suite root from $1 (cold cache)" >&2
		tmp=$(mktemp -d "$cache/build.XXXXXX")
		if ! debootstrap --variant=minbase "$suite" "$tmp" "$1" >"$tmp.log" 2>&1; then
			tail -n 30 "$tmp.log" >&2
			rm -rf --one-file-system "$tmp" "$tmp.log"
			return 1
		fi
		tar -C "$tmp" --numeric-owner -cpf "$tarball.part" .
		mv "$tarball.part" "$tarball"
		rm -rf --one-file-system "$tmp" "$tmp.log"
		find "$cache" -maxdepth 1 -name "$suite-minbase-*.tar" ! -path "$tarball" -delete
	else
		log "reusing the bare root $tarball (warm cache)" >&2
	fi
	flock -u 9
	echo "$tarball"
}

# apt inside the root: this machine's Debian sources for the suite, its Acquire:: settings
# (proxies, snapshot validity) and its resolver.
configure_apt() { # root mirror
	local f

	"$src/.ci/apt-sources.sh" | awk -v s="$suite" '$2 ~ "^" s "(-|$)" { print "deb " $0 }' \
		>"$1/etc/apt/sources.list"
	[ -s "$1/etc/apt/sources.list" ] || echo "deb $2 $suite main" >"$1/etc/apt/sources.list"
	for f in /etc/apt/apt.conf.d/*; do
		[ -f "$f" ] && grep -q '^[[:space:]]*Acquire::' "$f" && cp "$f" "$1/etc/apt/apt.conf.d/"
	done
	cp -L /etc/resolv.conf "$1/etc/resolv.conf"
	mkdir -p "$cache/apt-archives/partial"
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

main() {
	local mirror tarball rc=0

	[ "$(id -u)" -eq 0 ] || { log "must run as root"; return 1; }
	ensure_debootstrap
	mirror=$("$src/.ci/apt-sources.sh" --mirror "$suite")
	tarball=$(bare_root_tarball "$mirror")
	root=$(mktemp -d /var/tmp/spanprof-ci-root.XXXXXX)
	# The binds live in a private mount namespace, so they end with it even on SIGKILL;
	# the root directory itself is removed here, never across a mount (--one-file-system).
	trap 'rm -rf --one-file-system "$root"' EXIT
	trap 'exit 130' INT TERM
	tar -C "$root" --numeric-owner -xpf "$tarball"
	chmod 0755 "$root" # it becomes /; mktemp made it 0700
	configure_apt "$root" "$mirror"
	clone_checkout "$root"
	unshare --mount --propagation private "$src/.ci/root-binds.sh" "$root" \
		"$cache/apt-archives" || rc=$?
	if grep -qF " $root/" /proc/self/mountinfo; then
		log "mounts under $root are still present; leaving it in place"
		trap - EXIT
		return 1
	fi
	return "$rc"
}

main "$@"
