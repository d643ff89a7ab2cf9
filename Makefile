# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# spanprof: one non-recursive Makefile; everything is built under build/.

OUTPUT := build
CLANG ?= clang
BPFTOOL ?= bpftool
LLVM_STRIP ?= llvm-strip
PROTOC_C ?= protoc-c
prefix ?= /usr/local
ARCH ?= $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/' \
			 | sed 's/ppc64le/powerpc/' | sed 's/mips.*/mips/' \
			 | sed 's/riscv64/riscv/' | sed 's/loongarch64/loongarch/')
VERSION := 0.1.0

PKGS := libbpf libelf libdw zlib liblzma libcurl libprotobuf-c yaml-0.1 libmicrohttpd json-c
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS))

CFLAGS ?= -O2 -g
# Sanitizer flags for every C object, link and workload; set only by `make sanitize`.
SAN_CFLAGS ?=
CFLAGS += $(SAN_CFLAGS)
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -Iinclude -Iuser -I$(OUTPUT) \
	  -DSPANPROF_VERSION='"$(VERSION)"' -MMD -MP $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lstdc++ -lpthread

# Clang's BPF target needs the system include paths of the host compiler (bootstrap's trick).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux -Iinclude \
	      $(CLANG_BPF_SYS_INCLUDES)

ifeq ($(V),1)
	Q =
	msg =
else
	Q = @
	msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Link order matters to bpftool 7.1's linker: the file that defines a map must come before the
# files that declare it extern (otherwise "map relo failed to find map").
BPF_UNITS := span_hook proc_events python_frames ruby_frames thread_ctx unwind_tables sample off_cpu
BPF_OBJS := $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$(BPF_UNITS))
PROTO_SRCS := $(wildcard proto/*.proto)
PROTO_C := $(patsubst proto/%.proto,$(OUTPUT)/proto/%.pb-c.c,$(PROTO_SRCS))
PROTO_OBJS := $(PROTO_C:.c=.o)
# user/ holds main, the agent's run loop and the BPF loader; user/<stage>/ the stages' modules.
AGENT_SRCS := $(filter-out user/main.c,$(wildcard user/*.c user/*/*.c))
AGENT_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(AGENT_SRCS))
AGENT_LIB := $(OUTPUT)/libagent.a

HOOK_SRCS := hooks/c/span_hook.c hooks/c/process_ctx.c
HOOK_OBJS := $(patsubst hooks/c/%.c,$(OUTPUT)/hooks/%.pic.o,$(HOOK_SRCS))
HOOK_SO := $(OUTPUT)/libspanprof.so
HOOK_A := $(OUTPUT)/libspanprof.a

# tests/unit/ mirrors user/: tests/unit/<stage>/test_<module>.c -> build/tests/unit/<stage>/.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,\
		$(wildcard tests/unit/test_*.c tests/unit/*/test_*.c))
INTEG_TESTS := $(patsubst tests/integration/%.c,$(OUTPUT)/tests/integration/%,\
		 $(wildcard tests/integration/test_*.c))
BENCHES := $(patsubst tests/bench/%.c,$(OUTPUT)/tests/bench/%,$(wildcard tests/bench/bench_*.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/workloads/%,$(wildcard tests/workloads/*.c))
TEST_HELPER_OBJS := $(patsubst tests/helpers/%.c,$(OUTPUT)/tests/helpers/%.o,$(wildcard tests/helpers/*.c))
TEST_HELPER_LIB := $(OUTPUT)/libtesthelpers.a

.PHONY: all test unit-tests integration-tests bench clean install vmlinux format check-format
.DELETE_ON_ERROR:
.SECONDARY:

all: $(OUTPUT)/spanprof $(HOOK_SO) $(HOOK_A)

# --- BPF: each file compiled, linked into one object, one skeleton -------------------------
$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c include/spanprof_abi.h $(wildcard bpf/*.bpf.h) vmlinux/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/spanprof.bpf.o: $(BPF_OBJS)
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/spanprof.skel.h: $(OUTPUT)/spanprof.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name spanprof_bpf > $@

# --- protobuf-c ----------------------------------------------------------------------------
$(OUTPUT)/proto/%.pb-c.c $(OUTPUT)/proto/%.pb-c.h: proto/%.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(OUTPUT)/proto
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(OUTPUT)/proto $<

$(OUTPUT)/proto/%.pb-c.o: $(OUTPUT)/proto/%.pb-c.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# --- agent ---------------------------------------------------------------------------------
# Only the loader sees the skeleton; every module may see the generated protobuf headers
# ("proto/<name>.pb-c.h", under build/).
$(OUTPUT)/user/loader.o: $(OUTPUT)/spanprof.skel.h
$(AGENT_OBJS) $(OUTPUT)/user/main.o: | $(PROTO_C)

$(OUTPUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

# The viewer's page (user/view/web/) is embedded in the binary: a C file generated from it.
VIEW_WEB := $(sort $(wildcard user/view/web/*.html user/view/web/*.js user/view/web/*.css))
VIEW_WEB_OBJ := $(OUTPUT)/view/web_assets.o
$(OUTPUT)/view/web_assets.c: $(VIEW_WEB) scripts/embed_web.sh
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/embed_web.sh $@ $(VIEW_WEB)

$(VIEW_WEB_OBJ): $(OUTPUT)/view/web_assets.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(AGENT_LIB): $(AGENT_OBJS) $(PROTO_OBJS) $(VIEW_WEB_OBJ)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/spanprof: $(OUTPUT)/user/main.o $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# --- the hook library apps link ----------------------------------------------------------
$(OUTPUT)/hooks/%.pic.o: hooks/c/%.c include/spanprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(HOOK_SO): $(HOOK_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libspanprof.so -Wl,--build-id $^ -o $@

$(HOOK_A): $(HOOK_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# --- tests ---------------------------------------------------------------------------------
$(OUTPUT)/tests/%.o: tests/%.c | $(PROTO_C)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/helpers -c $< -o $@

$(TEST_HELPER_LIB): $(TEST_HELPER_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(OUTPUT)/tests/unit/%: $(OUTPUT)/tests/unit/%.o $(TEST_HELPER_LIB) $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(OUTPUT)/tests/integration/%: $(OUTPUT)/tests/integration/%.o $(TEST_HELPER_LIB) $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(OUTPUT)/tests/bench/%: $(OUTPUT)/tests/bench/%.o $(TEST_HELPER_LIB) $(AGENT_LIB) $(HOOK_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# Workloads are profiled: frame pointers so the kernel can walk their user stacks.
WORKLOAD_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
		   -fno-optimize-sibling-calls -Iinclude -pthread $(SAN_CFLAGS)
$(OUTPUT)/tests/workloads/%: tests/workloads/%.c $(HOOK_SO) include/spanprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -L$(OUTPUT) -lspanprof -Wl,-rpath,'$$ORIGIN/../..' -o $@

# The same workload with the hook linked statically (a copy inside the executable), and with no
# hook linked at all (it dlopen()s a copy, as Python's ctypes would).
$(OUTPUT)/tests/workloads/span_workload_static: tests/workloads/span_workload.c $(HOOK_A)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< $(HOOK_A) -ldl -o $@

$(OUTPUT)/tests/workloads/span_workload_dl: tests/workloads/span_workload.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -DWORKLOAD_DLOPEN_ONLY $< -ldl -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/span_workload_static $(OUTPUT)/tests/workloads/span_workload_dl

# Waits through libc, -O2 with frame pointers (the pattern rule) and without: only a CFI walk
# finds the function that called libc's wrappers in the second.
$(OUTPUT)/tests/workloads/off_cpu_waits: WORKLOAD_CFLAGS += -O2
$(OUTPUT)/tests/workloads/off_cpu_waits_nofp: tests/workloads/off_cpu_waits.c $(HOOK_SO) include/spanprof.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -O2 -fomit-frame-pointer $< -L$(OUTPUT) -lspanprof \
		-Wl,-rpath,'$$ORIGIN/../..' -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/off_cpu_waits_nofp
# OpenTelemetry thread context writers (tests/fixtures/tctx_writer.c): a shared library with TLS
# descriptors that tctx_workload dlopen()s, and tctx_workload_static with the writer linked in
# (static TLS), its otel_thread_ctx_v1 exported in .dynsym.
$(OUTPUT)/tests/workloads/libtctx_writer.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fPIC -shared -mtls-dialect=gnu2 $< -o $@

$(OUTPUT)/tests/workloads/tctx_workload: tests/workloads/tctx_workload.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -ldl -o $@

$(OUTPUT)/tests/workloads/tctx_workload_static: tests/workloads/tctx_workload.c \
		tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -DTCTX_WRITER_LINKED -rdynamic $< tests/fixtures/tctx_writer.c \
		-ldl -o $@

# The writer with general-dynamic access (__tls_get_addr, module id and offset GOT slots).
$(OUTPUT)/tests/workloads/libtctx_writer_gd.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fPIC -shared -mtls-dialect=gnu $< -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/libtctx_writer.so $(OUTPUT)/tests/workloads/tctx_workload_static \
	     $(OUTPUT)/tests/workloads/libtctx_writer_gd.so

# The same against musl (its dtv has 8-byte entries), when musl-gcc is installed (musl-tools);
# test_thread_ctx skips that case without it. musl-gcc sees only musl's headers: the kernel's
# (linux/bpf.h) come after them. No sanitizers: their runtimes are glibc's.
MUSL_GCC := $(shell command -v musl-gcc 2>/dev/null)
MUSL_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	       -fno-optimize-sibling-calls -pthread -Iinclude -idirafter /usr/include \
	       -idirafter /usr/include/$(shell $(CC) -dumpmachine)
ifneq ($(MUSL_GCC),)
$(OUTPUT)/tests/workloads/musl/libtctx_writer.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,MUSLCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(MUSL_CFLAGS) -fPIC -shared -mtls-dialect=gnu2 $< -o $@

$(OUTPUT)/tests/workloads/musl/tctx_workload: tests/workloads/tctx_workload.c tests/fixtures/tctx_writer.h
	$(call msg,MUSLCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(MUSL_CFLAGS) $< -ldl -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/musl/libtctx_writer.so $(OUTPUT)/tests/workloads/musl/tctx_workload
endif

# The exec storm is not PIE: its children's code sits at the addresses nm shows, so the test can
# recognise their samples even where they could not be symbolized.
$(OUTPUT)/tests/workloads/exec_storm: tests/workloads/exec_storm.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fno-pie -no-pie $< -o $@

# The hook-swap attack and its victim, and the fair-share workloads, dlopen() their libraries
# and link no hook themselves.
$(OUTPUT)/tests/workloads/hook_swapper $(OUTPUT)/tests/workloads/hook_victim \
		$(OUTPUT)/tests/workloads/fair_workload: \
		$(OUTPUT)/tests/workloads/%: tests/workloads/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -ldl -o $@

# hooks/go is a Go module (hooks/go/go.mod). Its tests and the Go workloads build in module mode
# offline: tests/go_module.sh stages it under build/gomod with a vendor directory of links into
# Debian's packaged modules (/usr/share/gocode), so no third-party code is copied or fetched.
# The deployment tests below still build in GOPATH mode.
GO ?= go
GO_ENV := GO111MODULE=off GOFLAGS= GOPATH=$(abspath $(OUTPUT)/gopath):/usr/share/gocode \
	  GOCACHE=$(abspath $(OUTPUT)/gocache)
GO_MOD := $(OUTPUT)/gomod
GO_MOD_ENV := GO111MODULE=on GOFLAGS=-mod=vendor GOPROXY=off GOWORK=off \
	      GOCACHE=$(abspath $(OUTPUT)/gocache)
GO_HOOK_SRCS := $(wildcard hooks/go/go.mod hooks/go/*.go hooks/go/*.s hooks/go/otelspanprof/*.go)
# Re-staged when a hook source comes or goes too: each file is linked by name.
$(GO_MOD)/vendor/modules.txt: hooks/go/go.mod tests/go_module.sh $(GO_HOOK_SRCS) \
			      $(wildcard tests/workloads/go_*)
	$(call msg,GOMOD,$(GO_MOD))
	$(Q)tests/go_module.sh $(GO_MOD)

GO_WORKLOADS := go_spans go_otel go_pprof_labels go_reuse
$(OUTPUT)/tests/workloads/go_%: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
				$(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) $(GO) build -o $(abspath $@) ./internal/testworkloads/go_$*

# The same workload as containers ship it: no symbol table, no DWARF.
$(OUTPUT)/tests/workloads/go_spans_stripped: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
					    $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) $(GO) build -ldflags="-s -w" -o $(abspath $@) \
		./internal/testworkloads/go_spans

# And stripped as a position-independent executable (internally linked: .gopclntab moves into
# .data.rel.ro).
$(OUTPUT)/tests/workloads/go_spans_pie: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
				       $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) $(GO) build -buildmode=pie -ldflags="-s -w" \
		-o $(abspath $@) ./internal/testworkloads/go_spans

# With cgo (tests/workloads/go_spans/cgo.go: a C call and C thread-locals), so the external
# linker places the executable's TLS block and runtime.tlsg moves away from FS base - 8; and
# the same stripped, where the agent finds g's slot from runtime.morestack's code.
$(OUTPUT)/tests/workloads/go_spans_cgo: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
				       $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) CGO_ENABLED=1 $(GO) build -tags spanprof_cgo \
		-o $(abspath $@) ./internal/testworkloads/go_spans

$(OUTPUT)/tests/workloads/go_spans_cgo_stripped: $(GO_HOOK_SRCS) \
						$(wildcard tests/workloads/go_*/*.go) \
						$(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) CGO_ENABLED=1 $(GO) build -tags spanprof_cgo \
		-ldflags="-s -w" -o $(abspath $@) ./internal/testworkloads/go_spans

# As a PIE (.gopclntab is inside .data.rel.ro there, with no section of its own: the agent
# goes by the symbols); stripped too, which the agent must refuse.
$(OUTPUT)/tests/workloads/go_spans_cgo_pie: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
					   $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) CGO_ENABLED=1 $(GO) build -tags spanprof_cgo \
		-buildmode=pie -o $(abspath $@) ./internal/testworkloads/go_spans

$(OUTPUT)/tests/workloads/go_spans_cgo_pie_stripped: $(GO_HOOK_SRCS) \
						    $(wildcard tests/workloads/go_*/*.go) \
						    $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) CGO_ENABLED=1 $(GO) build -tags spanprof_cgo \
		-buildmode=pie -ldflags="-s -w" -o $(abspath $@) ./internal/testworkloads/go_spans

WORKLOADS += $(patsubst %,$(OUTPUT)/tests/workloads/%,$(GO_WORKLOADS) go_spans_stripped \
	     go_spans_pie go_spans_cgo go_spans_cgo_stripped go_spans_cgo_pie \
	     go_spans_cgo_pie_stripped)

# Newer Go toolchains, unpacked from Debian's golang-1.2X packages by
# scripts/fetch-go-toolchains.sh (never installed): each one that is present builds the label
# and reuse workloads once into build/tests/workloads/go<version>/ and runs the hook module's
# tests; the integration tests say which toolchains they skipped.
GO_CACHE ?= /var/cache/spanprof-go
GO_VERSIONS ?= 1.24 1.25 1.26
go_bin = $(GO_CACHE)/$(1)/usr/lib/go-$(1)/bin/go
GO_TOOLCHAINS := $(foreach v,$(GO_VERSIONS),$(if $(wildcard $(call go_bin,$(v))),$(v)))
GO_TC_WORKLOADS := go_otel go_pprof_labels go_reuse
GO_TC_ENV := $(GO_MOD_ENV) GOTOOLCHAIN=local GOTELEMETRY=off
define go_toolchain_rules
$(OUTPUT)/tests/workloads/go$(1)/%: $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
				    $(GO_MOD)/vendor/modules.txt
	$$(call msg,GO$(1),$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)cd $(GO_MOD) && $(GO_TC_ENV) $(call go_bin,$(1)) build -o $$(abspath $$@) \
		./internal/testworkloads/$$*
WORKLOADS += $(patsubst %,$(OUTPUT)/tests/workloads/go$(1)/%,$(GO_TC_WORKLOADS))
endef
$(foreach v,$(GO_TOOLCHAINS),$(eval $(call go_toolchain_rules,$(v))))

$(OUTPUT)/tests/bench/go_hook: $(GO_HOOK_SRCS) $(wildcard tests/bench/go_hook/*.go) \
			       $(GO_MOD)/vendor/modules.txt
	$(call msg,GO,$@)
	$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) $(GO) build -o $(abspath $@) ./internal/testworkloads/go_hook

GO_TEST := cd $(GO_MOD) && env $(GO_MOD_ENV) $(abspath tests/go_test.sh) . ./otelspanprof
# The same on each newer toolchain, or a line saying it was skipped and why.
go_tc_test = $(strip $(if $(filter $(1),$(GO_TOOLCHAINS)),cd $(GO_MOD) && env $(GO_TC_ENV) \
	GO=$(call go_bin,$(1)) $(abspath tests/go_test.sh) . ./otelspanprof, \
	tests/go_test.sh --skip 'Go $(1): not in $(GO_CACHE) (run scripts/fetch-go-toolchains.sh)'))
GO_TC_TESTS := $(foreach v,$(GO_VERSIONS),"$(call go_tc_test,$(v))")

# --- deployment (helm, docker, systemd) ----------------------------------------------------
# The Helm chart is rendered and checked without Helm (tests/helm: text/template + sprig, as
# Helm does); tests/deploy checks the Dockerfile's runtime libraries and the systemd unit.
# Both are Go test packages built in GOPATH mode like hooks/go.
HELM_GO_IMPORT := github.com/spanprof/spanprof/tests/helm
DEPLOY_GO_IMPORT := github.com/spanprof/spanprof/tests/deploy
$(OUTPUT)/gopath/src/$(HELM_GO_IMPORT) $(OUTPUT)/gopath/src/$(DEPLOY_GO_IMPORT): \
		$(OUTPUT)/gopath/src/github.com/spanprof/spanprof/tests/%:
	$(Q)mkdir -p $(dir $@)
	$(Q)ln -sfn $(abspath tests/$*) $@

DEPLOY_GO_LINKS := $(OUTPUT)/gopath/src/$(HELM_GO_IMPORT) $(OUTPUT)/gopath/src/$(DEPLOY_GO_IMPORT)
DEPLOY_GO_ENV := env $(GO_ENV) SPANPROF_ROOT=$(abspath .)
HELM_TEST := $(DEPLOY_GO_ENV) tests/go_test.sh $(HELM_GO_IMPORT)
DEPLOY_TEST := $(DEPLOY_GO_ENV) tests/go_test.sh $(HELM_GO_IMPORT) $(DEPLOY_GO_IMPORT)

systemdsystemunitdir ?= $(prefix)/lib/systemd/system

.PHONY: helm-test deploy-test
helm-test: $(DEPLOY_GO_LINKS)
	$(Q)tests/run_tests.sh "$(HELM_TEST)"

deploy-test: $(OUTPUT)/spanprof $(DEPLOY_GO_LINKS)
	$(Q)tests/run_tests.sh "$(DEPLOY_TEST)"
# --- end of deployment ---------------------------------------------------------------------

# --- language hooks (python, ruby) ---------------------------------------------------------
# hooks/python (unittest) and hooks/ruby (minitest), plus the test of the C helper header
# hooks/c/spanprof_otel.h (which compiles examples/otel_ids.c). Their real-agent tests run
# build/spanprof against build/libspanprof.so, hence `all`. `make test` runs them after the C
# tests; tests/hooks/run_hook_tests.sh ends with one "N passed, N failed, N skipped" line.
PYTHON ?= python3
RUBY ?= ruby
HOOK_C_TESTS := $(patsubst tests/hooks/%.c,$(OUTPUT)/tests/hooks/%,$(wildcard tests/hooks/test_*.c))
HOOK_ENV := SPANPROF_LIBRARY=$(abspath $(HOOK_SO)) SPANPROF_AGENT=$(abspath $(OUTPUT)/spanprof) \
	    PYTHON=$(PYTHON) RUBY=$(RUBY) PYTHONPYCACHEPREFIX=$(abspath $(OUTPUT)/pycache)

$(OUTPUT)/tests/hooks/%.o: CFLAGS += -Ihooks/c
$(OUTPUT)/tests/hooks/%.o: | $(PROTO_C)

# Header-only code under test: it links cmocka and the temp-dir helper, nothing of the agent.
$(OUTPUT)/tests/hooks/%: $(OUTPUT)/tests/hooks/%.o $(OUTPUT)/tests/helpers/tmpdir.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lcmocka -o $@

# The process-context writer (in the hook library) against the agent's reader.
$(OUTPUT)/tests/hooks/test_process_ctx_publish: $(OUTPUT)/tests/hooks/test_process_ctx_publish.o \
						$(HOOK_A) $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

define run-hook-tests
$(Q)$(HOOK_ENV) tests/hooks/run_hook_tests.sh $(HOOK_C_TESTS)
endef

.PHONY: hook-tests bench-hooks
hook-tests: all $(HOOK_C_TESTS)
	$(run-hook-tests)

# Cost of a span start+end through each language's processor; part of `make bench`.
bench-hooks: all
	$(Q)$(HOOK_ENV) $(PYTHON) tests/bench/bench_python_hook.py
	$(Q)$(HOOK_ENV) $(RUBY) tests/bench/bench_ruby_hook.rb

# --- end of language hooks -----------------------------------------------------------------

# --- test and bench: one rule each -----------------------------------------------------------
# `test` runs the hook suites last, through tests/run_tests.sh, so that the final line sums
# every suite.
test: all $(UNIT_TESTS) $(INTEG_TESTS) $(WORKLOADS) $(DEPLOY_GO_LINKS) $(HOOK_C_TESTS) \
	$(GO_MOD)/vendor/modules.txt
	$(Q)tests/run_tests.sh $(UNIT_TESTS) $(INTEG_TESTS) "$(GO_TEST)" $(GO_TC_TESTS) \
		"$(DEPLOY_TEST)" \
		"$(HOOK_ENV) tests/hooks/run_hook_tests.sh $(HOOK_C_TESTS)"

unit-tests: $(UNIT_TESTS)
	$(Q)tests/run_tests.sh $(UNIT_TESTS)

integration-tests: all $(INTEG_TESTS) $(WORKLOADS)
	$(Q)tests/run_tests.sh $(INTEG_TESTS)

# The agent, the hook, the C workloads and the unit and integration tests built with ASan (leaks
# included) and UBSan into their own output directory, then both suites run; a sanitizer report
# aborts the process that made it, so it fails its test.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SANITIZE_OUTPUT := build-san
.PHONY: sanitize
sanitize:
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) --no-print-directory OUTPUT=$(SANITIZE_OUTPUT) \
		SAN_CFLAGS="$(SANITIZE_FLAGS)" GO_VERSIONS= unit-tests integration-tests

bench: all $(BENCHES) $(WORKLOADS) $(OUTPUT)/tests/bench/go_hook bench-hooks
	$(Q)for b in $(BENCHES); do $$b || exit 1; done

install: all
	install -m 0755 -D $(OUTPUT)/spanprof $(DESTDIR)$(prefix)/bin/spanprof
	install -m 0644 -D include/spanprof.h $(DESTDIR)$(prefix)/include/spanprof.h
	install -m 0755 -D $(HOOK_SO) $(DESTDIR)$(prefix)/lib/libspanprof.so
	install -m 0644 -D $(HOOK_A) $(DESTDIR)$(prefix)/lib/libspanprof.a
	install -m 0755 -d $(DESTDIR)$(systemdsystemunitdir)
	sed 's|/usr/local/bin/spanprof|$(prefix)/bin/spanprof|' deploy/systemd/spanprof.service \
		> $(DESTDIR)$(systemdsystemunitdir)/spanprof.service
	chmod 0644 $(DESTDIR)$(systemdsystemunitdir)/spanprof.service
	test -e $(DESTDIR)/etc/default/spanprof || \
		install -m 0600 -D deploy/systemd/spanprof.env $(DESTDIR)/etc/default/spanprof

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

FORMAT_SRCS = $(wildcard user/*.[ch] user/*/*.[ch] bpf/*.[ch] include/*.h hooks/c/*.c tests/*/*.[ch] \
		      tests/unit/*/*.[ch])

format:
	clang-format -i $(FORMAT_SRCS)

check-format:
	clang-format --dry-run -Werror $(FORMAT_SRCS)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(SANITIZE_OUTPUT)

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d $(OUTPUT)/*/*/*/*.d)
