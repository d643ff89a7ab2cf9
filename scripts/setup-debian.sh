#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs spanprof's build and test dependencies on Debian (run as root), mounts tracefs if
# it is missing (the agent's mmap tracepoint needs it), and makes the Debian 13 root the tests run
# Ruby 3.3/3.4 in (.ci/ruby-root.sh: debootstrap, cached per day; a failure there only means those
# tests skip).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	make gcc g++ libc6-dev pkg-config git ca-certificates \
	clang llvm libbpf-dev bpftool \
	libelf-dev libdw-dev zlib1g-dev liblzma-dev \
	libcurl4-openssl-dev libprotobuf-c-dev protobuf-c-compiler \
	libyaml-dev libmicrohttpd-dev libjson-c-dev \
	libcmocka-dev golang-go binutils linux-perf \
	golang-github-masterminds-sprig-dev golang-github-xeipuuv-gojsonschema-dev \
	golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev golang-opentelemetry-otel-dev yamllint \
	python3 python3-gevent ruby ruby-minitest musl-tools \
	libcap2-bin debootstrap curl iproute2 >/dev/null
# setcap: tests/deploy; debootstrap: .ci/ruby-root.sh; python3-gevent: test_task_spans runs two
# greenlets; curl, ip: the docs' commands (.ci/docs-commands.sh: curl on /metrics, ip to bring up
# a viewer's network namespace)
# The span explorer's browser test: Debian's Chromium, driven by playwright-core from the npm
# registry (a pinned version, outside the repository; it downloads no browser of its own). 1.61
# is the last release that runs on Debian 12's node 18; it drives Chromium 156 as well.
PLAYWRIGHT_CORE_VERSION=1.61.1
apt-get install -y -qq --no-install-recommends chromium >/dev/null ||
	echo "note: chromium not installed; the browser test will skip"
# Debian's node and npm, unless a node (with its npm) is installed already.
command -v node >/dev/null && command -v npm >/dev/null ||
	apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null ||
	echo "note: nodejs/npm not installed; the browser test will skip"
if command -v npm >/dev/null &&
	[ "$(cat /opt/spanprof-test/node_modules/playwright-core/package.json 2>/dev/null |
		sed -n 's/^ *"version": "\(.*\)",$/\1/p')" != "$PLAYWRIGHT_CORE_VERSION" ]; then
	mkdir -p /opt/spanprof-test
	npm install --prefix /opt/spanprof-test --save-exact --no-audit --no-fund --silent \
		"playwright-core@$PLAYWRIGHT_CORE_VERSION" >/dev/null ||
		echo "note: npm could not install playwright-core; the browser test will skip"
fi
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "note: could not mount tracefs; dlopen'ed hooks will be found by the periodic rescan"
fi
# Newer Go toolchains for the Go tests (Debian's golang-1.24/1.25/1.26, unpacked under
# /var/cache/spanprof-go, never installed); a missing one only makes its tests skip.
"$(dirname "$0")/fetch-go-toolchains.sh" ||
	echo "note: fetching the newer Go toolchains failed; the Go tests run on golang-go only"
# Debian's CPython 3.14 (from sid, unpacked under /var/cache/spanprof-python, never installed)
# for test_task_spans, which runs it in the Debian 13 root; a failure only makes that case skip.
"$(dirname "$0")/fetch-python314.sh" ||
	echo "note: fetching CPython 3.14 failed; test_task_spans skips it"
"$(dirname "$0")/../.ci/ruby-root.sh" ||
	echo "note: no Debian 13 root for Ruby 3.3/3.4 (see above); test_ruby_frames skips those Rubies"
