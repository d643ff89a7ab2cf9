# shellcheck shell=bash disable=SC2154 # $src, $cache and log come from the sourcing script
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Sourced by the scripts that make Debian roots with debootstrap (.ci/clean-root.sh, the bare
# Debian 12 root CI proves the README in; .ci/ruby-root.sh, the Debian 13 root the Ruby 3.3 test
# runs its interpreter in). A built root is cached as a tarball per name, day and spec (mirror
# and packages), so a machine pays each debootstrap once a day. Needs $src (the checkout) and
# $cache (the cache directory) set by the caller, and a log function.

root_cache_ensure_debootstrap() {
	command -v debootstrap >/dev/null && return 0
	log "installing debootstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=600 \
		debootstrap >/dev/null
}

# Prints the path of the cached root tarball NAME for today and SPEC, building it if needed with
# BUILD_FN DIR (which fills the empty directory DIR; its output goes to CACHE/NAME.log, whose
# tail is shown on failure).
# One builder per name at a time: a second caller waits for the first and reuses its tarball.
root_cache_tarball() { # name spec build_fn
	local name=$1 key tarball tmp lock rc=0

	key=$(printf '%s' "$2" | sha256sum | cut -c1-12)
	tarball=$cache/$name-$(date -u +%Y%m%d)-$key.tar
	mkdir -p "$cache"
	exec {lock}>"$cache/$name.lock"
	flock "$lock"
	if [ ! -s "$tarball" ]; then
		log "building the $name root (cold cache)" >&2
		SECONDS=0
		tmp=$(mktemp -d "$cache/build.XXXXXX")
		"$3" "$tmp" >"$tmp.log" 2>&1 || rc=$?
		if [ "$rc" -ne 0 ]; then
			tail -n 30 "$tmp.log" >&2
			log "building the $name root failed (status $rc)" >&2
		else
			tar -C "$tmp" --numeric-owner -cpf "$tarball.part" . &&
				mv "$tarball.part" "$tarball" || rc=$?
		fi
		cp "$tmp.log" "$cache/$name.log" # the last build's log, kept for reading
		rm -rf --one-file-system "$tmp" "$tmp.log" "$tarball.part"
		if [ "$rc" -eq 0 ]; then
			find "$cache" -maxdepth 1 -name "$name-*.tar" ! -path "$tarball" -delete
			log "built the $name root in ${SECONDS}s: $tarball" >&2
		fi
	else
		log "reusing the $name root $tarball (warm cache)" >&2
	fi
	exec {lock}>&-
	[ "$rc" -eq 0 ] && echo "$tarball"
	return "$rc"
}

# Prints "deb URI SUITE COMPONENT..." lines for ROOT_SUITE: this machine's own sources for
# HOST_SUITE (bookworm, bookworm-updates, bookworm-security), renamed to ROOT_SUITE; MIRROR alone
# when this machine has none.
root_cache_sources() { # host_suite root_suite mirror
	"$src/.ci/apt-sources.sh" |
		awk -v h="$1" -v r="$2" '$2 ~ "^" h "(-|$)" { sub("^" h, r, $2); print "deb " $0 }'
}

# apt inside ROOT: SOURCES_LIST, this machine's Acquire:: settings (proxies, snapshot validity)
# and its resolver.
root_cache_configure_apt() { # root sources_list
	local f

	printf '%s\n' "$2" >"$1/etc/apt/sources.list"
	for f in /etc/apt/apt.conf.d/*; do
		[ -f "$f" ] && grep -q '^[[:space:]]*Acquire::' "$f" && cp "$f" "$1/etc/apt/apt.conf.d/"
	done
	cp -L /etc/resolv.conf "$1/etc/resolv.conf"
}
