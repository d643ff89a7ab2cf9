#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Run by .ci/clean-root.sh inside a private mount namespace (unshare --mount): binds what the
# agent and the tests need into ROOT (/proc, /sys, /sys/fs/bpf, tracefs, debugfs when this machine
# has it, cgroups, /dev, /dev/pts, /dev/shm, the shared .deb cache, and the root cache, so the
# set-up's Debian 13 root for the Ruby tests is built once a day for both), runs the README's
# commands in ROOT as root with a clean environment, and unmounts everything again on any exit.
set -euo pipefail
root=${1:?usage: root-binds.sh ROOT DEB_CACHE ROOT_CACHE}
debs=${2:?usage: root-binds.sh ROOT DEB_CACHE ROOT_CACHE}
roots=${3:?usage: root-binds.sh ROOT DEB_CACHE ROOT_CACHE}
mounted=() # in mount order; unmounted in reverse

bind() { # source target [--rbind]
	mkdir -p "$root$2"
	mount "${3:---bind}" "$1" "$root$2"
	mounted+=("$root$2")
}

# A bind of a file system this machine has mounted, or else a fresh instance of it.
bind_or_mount() { # path fstype
	mkdir -p "$root$1"
	if mountpoint -q "$1"; then
		mount --bind "$1" "$root$1"
	else
		mount -t "$2" "$2" "$root$1"
	fi
	mounted+=("$root$1")
}

teardown() {
	local i p

	# Anything still running inside the root (an agent a failed test left behind) goes first.
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -R "${mounted[i]}" 2>/dev/null || umount -R -l "${mounted[i]}" ||
			echo "root-binds: cannot unmount ${mounted[i]}" >&2
	done
}
trap teardown EXIT
trap 'exit 130' INT TERM

# ROOT becomes a mount point, as / is on a real machine (a test makes / private with
# mount(MS_PRIVATE), which refuses a directory that is no mount point).
mount --bind "$root" "$root"
mounted+=("$root")
bind /proc /proc
bind /sys /sys
bind_or_mount /sys/fs/bpf bpf
bind_or_mount /sys/kernel/tracing tracefs
if mountpoint -q /sys/kernel/debug; then
	bind /sys/kernel/debug /sys/kernel/debug
fi
if mountpoint -q /sys/fs/cgroup; then
	bind /sys/fs/cgroup /sys/fs/cgroup --rbind
fi
bind /dev /dev
bind /dev/pts /dev/pts
if mountpoint -q /dev/shm; then
	bind /dev/shm /dev/shm
fi
bind "$debs" /var/cache/apt/archives
bind "$roots" /var/cache/spanprof-ci
echo "root-binds: mounted ${mounted[*]#"$root"}"

# A root login's environment: nothing of this machine's PATH (pyenv, cargo) leaks in. TEST_JOBS
# alone is passed on (.ci/run sets it): how many test binaries `make test` runs at once.
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
	LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	TEST_JOBS="${TEST_JOBS:-1}" \
	/bin/bash -c 'cd /root/spanprof && exec .ci/readme-commands.sh'
