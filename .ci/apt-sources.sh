#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Prints this machine's enabled binary apt sources, one "URI SUITE [COMPONENT]..." line per
# source, read from /etc/apt/sources.list, sources.list.d/*.list (one-line format) and
# sources.list.d/*.sources (deb822 format). Other files in sources.list.d are ignored, as apt does.
# With --mirror SUITE it prints only the URI of the first source that carries SUITE.
set -euo pipefail
APT_DIR=${APT_DIR:-/etc/apt}

one_line_format() { # file
	# "deb [options] uri suite component..."; comments and deb-src lines are skipped.
	sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$1" |
		awk '$1 == "deb" && NF >= 3 { $1 = ""; sub(/^ +/, ""); print }'
}

deb822_format() { # file
	# Paragraphs of "Field: value" separated by blank lines; a line starting with a blank
	# continues the previous field. Types may list deb and deb-src; Enabled: no turns one off.
	awk '
	function flush(  nu, ns, u, s, uris, suites) {
		if (f["types"] ~ /(^| )deb( |$)/ && tolower(f["enabled"]) != "no") {
			nu = split(f["uris"], uris, " ")
			ns = split(f["suites"], suites, " ")
			for (u = 1; u <= nu; u++)
				for (s = 1; s <= ns; s++)
					print uris[u], suites[s], f["components"]
		}
		delete f
	}
	/^#/ { next }
	/^[ \t]*$/ { flush(); next }
	/^[ \t]/ { f[key] = f[key] " " $0; gsub(/[ \t]+/, " ", f[key]); next }
	{
		key = tolower($1); sub(/:$/, "", key)
		val = $0; sub(/^[^:]*:[ \t]*/, "", val); gsub(/[ \t]+/, " ", val)
		f[key] = val
	}
	END { flush() }' "$1"
}

all_sources() {
	local f

	for f in "$APT_DIR/sources.list" "$APT_DIR"/sources.list.d/*.list; do
		[ -f "$f" ] && one_line_format "$f"
	done
	for f in "$APT_DIR"/sources.list.d/*.sources; do
		[ -f "$f" ] && deb822_format "$f"
	done
	return 0
}

if [ "${1:-}" = "--mirror" ]; then
	uri=$(all_sources | awk -v suite="${2:?--mirror needs a suite}" '$2 == suite { print $1; exit }')
	if [ -z "$uri" ]; then
		echo "apt-sources: no enabled apt source of this machine carries suite '$2'" >&2
		exit 1
	fi
	echo "$uri"
else
	all_sources
fi
