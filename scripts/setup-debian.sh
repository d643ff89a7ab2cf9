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
	libelf-dev libdw-dev zlib1g-dev \
	libcurl4-openssl-dev libprotobuf-c-dev protobuf-c-compiler \
	libyaml-dev libmicrohttpd-dev libjson-c-dev \
	libcmocka-dev golang-go binutils linux-perf \
	golang-github-masterminds-sprig-dev golang-github-xeipuuv-gojsonschema-dev \
	golang-gopkg-yaml.v2-dev golang-gopkg-yaml.v3-dev golang-opentelemetry-otel-dev yamllint \
	python3 ruby ruby-minitest \
	libcap2-bin debootstrap >/dev/null # setcap: tests/deploy; debootstrap: .ci/ruby-root.sh
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "note: could not mount tracefs; dlopen'ed hooks will be found by the periodic rescan"
fi
"$(dirname "$0")/../.ci/ruby-root.sh" ||
	echo "note: no Debian 13 root for Ruby 3.3/3.4 (see above); test_ruby_frames skips those Rubies"
