#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Installs spanprof's build and test dependencies on Debian (run as root), and mounts tracefs if
# it is missing (the agent's mmap tracepoint needs it).
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
	python3 ruby ruby-minitest musl-tools \
	libcap2-bin >/dev/null # the Docker image's setcap: tests/deploy follows its dependencies
if [ ! -e /sys/kernel/tracing/events ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "note: could not mount tracefs; dlopen'ed hooks will be found by the periodic rescan"
fi
