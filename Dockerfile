# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The spanprof agent image: built on Debian 12 with the build dependencies, run on
# bookworm-slim with only the runtime libraries, as a non-root user with file capabilities.
#
#   docker build -t spanprof:0.1.0 .
#
# The image alone grants nothing: the agent still needs the host PID namespace and the
# capabilities below from the runtime, and AppArmor off (see docs/kubernetes.md):
#
#   docker run --rm --pid=host --cap-drop=ALL --cap-add=BPF --cap-add=PERFMON \
#     --cap-add=SYS_PTRACE --cap-add=DAC_READ_SEARCH --cap-add=CHECKPOINT_RESTORE \
#     --cap-add=SYS_RESOURCE --cap-add=SYSLOG --security-opt apparmor=unconfined \
#     -v /sys/kernel/btf:/sys/kernel/btf:ro -v /sys/kernel/tracing:/sys/kernel/tracing:ro \
#     spanprof:0.1.0 --server http://pyroscope:4040
#
# Because the file capabilities are "effective", the kernel refuses to start the binary
# ("exec: operation not permitted") unless all seven are in the container's bounding set.
# Uprobes for the span hook also need CAP_SYS_ADMIN on current kernels, which a non-root
# user cannot get from file capabilities here: add `--user 0 --cap-add=SYS_ADMIN`.
# The BPF objects are built against vmlinux/vmlinux.h, which is x86-64's.

FROM debian:bookworm AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		make gcc g++ libc6-dev pkg-config ca-certificates \
		clang llvm libbpf-dev bpftool \
		libelf-dev libdw-dev zlib1g-dev liblzma-dev \
		libcurl4-openssl-dev libprotobuf-c-dev protobuf-c-compiler \
		libyaml-dev libmicrohttpd-dev libjson-c-dev \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" build/spanprof

FROM debian:bookworm-slim
LABEL org.opencontainers.image.title="spanprof" \
	org.opencontainers.image.description="eBPF span profiler agent" \
	org.opencontainers.image.licenses="LGPL-2.1 OR BSD-2-Clause"
COPY --from=build /src/build/spanprof /usr/bin/spanprof
# The runtime libraries (tests/deploy checks them against `ldd build/spanprof`; libcurl4,
# libmicrohttpd12 and libstdc++6 are not among them: the agent loads libcurl when it first pushes
# or reads the Kubernetes API, libmicrohttpd when it serves /metrics, libstdc++ at the first C++
# name it demangles), then the file
# capabilities, set here and not in the build stage so that no copy can lose the xattr. setuid
# and setgid bits are cleared: with allowPrivilegeEscalation a setuid-root program would give a
# non-root agent back everything in its bounding set.
RUN apt-get update \
	&& apt-get install -y --no-install-recommends \
		libbpf1 libelf1 libdw1 zlib1g liblzma5 libbz2-1.0 libzstd1 \
		libcurl4 libprotobuf-c1 libyaml-0-2 libmicrohttpd12 libjson-c5 \
		libstdc++6 libgcc-s1 ca-certificates libcap2-bin \
	&& setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,cap_checkpoint_restore,cap_sys_resource,cap_syslog+ep /usr/bin/spanprof \
	&& apt-get purge -y --auto-remove libcap2-bin \
	&& rm -rf /var/lib/apt/lists/* \
	&& find / -xdev -type f -perm /6000 -exec chmod a-s {} + \
	&& groupadd --system --gid 65532 spanprof \
	&& useradd --system --uid 65532 --gid spanprof --no-create-home \
		--home-dir /var/lib/spanprof --shell /usr/sbin/nologin spanprof \
	&& install -d -o spanprof -g spanprof -m 0750 /var/lib/spanprof /var/lib/spanprof/spool
USER 65532:65532
WORKDIR /var/lib/spanprof
ENTRYPOINT ["/usr/bin/spanprof"]
