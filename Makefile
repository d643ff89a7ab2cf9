# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# spanprof: one non-recursive Makefile (the Go, deployment and hook parts included from mk/);
# everything is built under build/.

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
# user/main.c parses flags; user/<stage>/ holds the stages' modules, user/agent/ the run loop, its
# parts and the BPF loader.
AGENT_SRCS := $(wildcard user/*/*.c)
AGENT_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(AGENT_SRCS))
# The viewer's page (user/view/web/), embedded in the binary from a generated C file.
VIEW_WEB_OBJ := $(OUTPUT)/view/web_assets.o

# The pipeline's stages, lowest first: a stage uses those before it and never one after it,
# taken from the includes and calls the code has (discover reads k8s's pod metadata; unwind and
# symbolize read discover's mappings; interp puts frames into symbolize's stacks and reads the
# CFI of unwind; profile labels from discover; output encodes profile's data; agent runs them
# all). Each stage is one archive, build/stages/lib<stage>.a (proto: the generated protobuf
# code, below them all; view's holds the embedded page too). A unit test under tests/unit/<stage>/
# links its own stage's archive and those below it only, so a module that reaches up does not
# link; `make check-layout` refuses an include that points up. The agent links every stage.
STAGES := util config k8s discover unwind symbolize interp profile output view agent
stage_lib = $(OUTPUT)/stages/lib$(1).a
STAGE_DIRS := $(patsubst user/%/,%,$(sort $(dir $(AGENT_SRCS))))
$(if $(filter-out $(STAGES),$(STAGE_DIRS)),\
	$(error user/$(firstword $(filter-out $(STAGES),$(STAGE_DIRS)))/ is in no stage: add it to STAGES))
STAGE_OBJS_proto := $(PROTO_OBJS)
$(foreach s,$(STAGES),$(eval STAGE_OBJS_$(s) := $(filter $(OUTPUT)/user/$(s)/%,$(AGENT_OBJS))))
STAGE_OBJS_view += $(VIEW_WEB_OBJ)
# STAGE_LINK_<stage>: the archives of that stage and of every stage below it, in link order.
stage_chain :=
$(foreach s,proto $(STAGES),$(eval stage_chain := $(call stage_lib,$(s)) $(stage_chain))\
	$(eval STAGE_LINK_$(s) := $(stage_chain)))
AGENT_LIB := $(STAGE_LINK_agent)

HOOK_SRCS := hooks/c/span_hook.c hooks/c/process_ctx.c hooks/c/thread_record.c hooks/c/hook_owner.c
HOOK_OBJS := $(patsubst hooks/c/%.c,$(OUTPUT)/hooks/%.pic.o,$(HOOK_SRCS))
HOOK_SO := $(OUTPUT)/libspanprof.so
HOOK_A := $(OUTPUT)/libspanprof.a

# tests/unit/ mirrors user/: tests/unit/<stage>/test_<module>.c -> build/tests/unit/<stage>/.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/unit/%,\
		$(wildcard tests/unit/*/test_*.c))
INTEG_TESTS := $(patsubst tests/integration/%.c,$(OUTPUT)/tests/integration/%,\
		 $(wildcard tests/integration/test_*.c))
# The longest ones where pyenv's Pythons are installed (one run per version) go first, so that
# with TEST_JOBS=2 none of them is left running alone at the end.
INTEG_FIRST := $(filter $(INTEG_TESTS),$(patsubst %,$(OUTPUT)/tests/integration/test_%,\
		 python_frames task_spans off_cpu_interp))
INTEG_TESTS := $(INTEG_FIRST) $(filter-out $(INTEG_FIRST),$(INTEG_TESTS))
BENCHES := $(patsubst tests/bench/%.c,$(OUTPUT)/tests/bench/%,$(wildcard tests/bench/bench_*.c))
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUTPUT)/tests/workloads/%,$(wildcard tests/workloads/*.c))
TEST_HELPER_OBJS := $(patsubst tests/helpers/%.c,$(OUTPUT)/tests/helpers/%.o,$(wildcard tests/helpers/*.c))
TEST_HELPER_LIB := $(OUTPUT)/libtesthelpers.a

.PHONY: all test test-build unit-tests integration-tests unit-and-integration-tests \
	unit-and-integration-build bench clean install vmlinux format check-format \
	check-layout
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
$(OUTPUT)/user/agent/loader.o: $(OUTPUT)/spanprof.skel.h
$(AGENT_OBJS) $(OUTPUT)/user/main.o: | $(PROTO_C)

$(OUTPUT)/user/%.o: user/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

VIEW_WEB := $(sort $(wildcard user/view/web/*.html user/view/web/*.js user/view/web/*.css))
$(OUTPUT)/view/web_assets.c: $(VIEW_WEB) scripts/embed_web.sh
	$(call msg,EMBED,$@)
	$(Q)mkdir -p $(@D)
	$(Q)scripts/embed_web.sh $@ $(VIEW_WEB)

$(VIEW_WEB_OBJ): $(OUTPUT)/view/web_assets.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

define stage_archive
$(call stage_lib,$(1)): $(STAGE_OBJS_$(1))
	$$(call msg,AR,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)rm -f $$@
	$$(Q)$$(AR) rcs $$@ $$^
endef
$(foreach s,proto $(STAGES),$(eval $(call stage_archive,$(s))))

# libcurl, libmicrohttpd and libstdc++ are not linked into the agent: util/curl_lib loads
# libcurl when a push server or the Kubernetes API first needs it, util/mhd_lib libmicrohttpd
# when a server starts, util/cxx_demangle libstdc++ at the first C++ name (linked, libcurl with
# its TLS and auth libraries took about 6 MB of resident memory in every run, libmicrohttpd with
# GnuTLS about 3 MB, libstdc++ with libm about 1.2 MB). Tests link them as they like.
AGENT_LDLIBS := $(filter-out -lcurl -lmicrohttpd -lstdc++,$(LDLIBS))
$(OUTPUT)/spanprof: $(OUTPUT)/user/main.o $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(AGENT_LDLIBS) -o $@

# --- the hook library apps link ----------------------------------------------------------
# TLS descriptors (the model OpenTelemetry thread context recommends) for the record's pointer.
HOOK_TLS_CFLAGS := $(if $(filter x86,$(ARCH)),-mtls-dialect=gnu2)
$(OUTPUT)/hooks/%.pic.o: hooks/c/%.c include/spanprof.h include/spanprof_process_ctx.h \
			  hooks/c/thread_record.h hooks/c/hook_owner.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(HOOK_TLS_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(HOOK_SO): $(HOOK_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libspanprof.so -Wl,--build-id $^ \
		-Wl,--push-state,--as-needed -ldl -Wl,--pop-state -o $@

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

# A unit test links its stage and the stages below (STAGES), never the whole agent.
define stage_unit_tests
$(OUTPUT)/tests/unit/$(1)/%: $(OUTPUT)/tests/unit/$(1)/%.o $(TEST_HELPER_LIB) $(STAGE_LINK_$(1))
	$$(call msg,LINK,$$@)
	$$(Q)$$(CC) $$(CFLAGS) $$^ $$(LDLIBS) -lcmocka -o $$@
endef
$(foreach s,$(STAGES),$(eval $(call stage_unit_tests,$(s))))

$(OUTPUT)/tests/integration/%: $(OUTPUT)/tests/integration/%.o $(TEST_HELPER_LIB) $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -lcmocka -o $@

$(OUTPUT)/tests/bench/%: $(OUTPUT)/tests/bench/%.o $(TEST_HELPER_LIB) $(AGENT_LIB) $(HOOK_A)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# The agent with constructors that fail on request (tests/faults/agent_faults.c, -Wl,--wrap=),
# for the test that a set-up failure names its part.
FAULT_WRAPS := symcache_new ruby_symbols_new drain_new
comma := ,
$(OUTPUT)/tests/faults/spanprof_faulty: $(OUTPUT)/user/main.o $(OUTPUT)/tests/faults/agent_faults.o \
					 $(AGENT_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) $(patsubst %,-Wl$(comma)--wrap=%,$(FAULT_WRAPS)) -o $@

# Workloads are profiled: frame pointers so the kernel can walk their user stacks.
WORKLOAD_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
		   -fno-optimize-sibling-calls -Iinclude -pthread $(SAN_CFLAGS)
# Header-only code the workloads share (their start gate, clocks and CPU burn).
WORKLOAD_HEADERS := $(wildcard tests/workloads/*.h)
$(OUTPUT)/tests/workloads/%: tests/workloads/%.c $(HOOK_SO) include/spanprof.h $(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -L$(OUTPUT) -lspanprof -Wl,-rpath,'$$ORIGIN/../..' -o $@

# The same workload with the hook linked statically (a copy inside the executable), and with no
# hook linked at all (it dlopen()s a copy, as Python's ctypes would).
$(OUTPUT)/tests/workloads/span_workload_static: tests/workloads/span_workload.c $(HOOK_A) \
		$(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< $(HOOK_A) -ldl -o $@

$(OUTPUT)/tests/workloads/span_workload_dl: tests/workloads/span_workload.c $(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -DWORKLOAD_DLOPEN_ONLY $< -ldl -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/span_workload_static $(OUTPUT)/tests/workloads/span_workload_dl
WORKLOADS += $(OUTPUT)/tests/faults/spanprof_faulty

# A second copy of the hook beside the executable's libspanprof.so, as a plugin or an extension
# that links libspanprof.a carries it (test_two_copies): linked as is, its references to the
# exported otel_thread_ctx_v1 bind to the first copy's (the dynamic linker's interposition);
# with -Bsymbolic, to its own.
TWO_COPIES_DIR := $(OUTPUT)/tests/workloads/two_copies
$(TWO_COPIES_DIR)/libplugin.so: $(HOOK_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libplugin.so -Wl,--whole-archive $^ \
		-Wl,--no-whole-archive -o $@

$(TWO_COPIES_DIR)/libplugin_symbolic.so: $(HOOK_A)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libplugin_symbolic.so -Wl,-Bsymbolic \
		-Wl,--whole-archive $^ -Wl,--no-whole-archive -o $@

# Copies as built before copies looked for their owner (the libraries already out there), with
# the GNU hash table and with only the older SysV one (DT_HASH): test_hook_owner.
$(OUTPUT)/hooks/%.before_owner.pic.o: hooks/c/%.c include/spanprof.h include/spanprof_process_ctx.h \
		hooks/c/thread_record.h hooks/c/hook_owner.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(HOOK_TLS_CFLAGS) -DSPANPROF_HOOK_TEST_BEFORE_OWNER -fPIC \
		-fvisibility=hidden -c $< -o $@

HOOK_BEFORE_OWNER_OBJS := $(patsubst hooks/c/%.c,$(OUTPUT)/hooks/%.before_owner.pic.o,$(HOOK_SRCS))
$(TWO_COPIES_DIR)/libplugin_old.so: $(HOOK_BEFORE_OWNER_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libplugin_old.so -Wl,-Bsymbolic $^ -o $@

$(TWO_COPIES_DIR)/libplugin_old_sysv.so: $(HOOK_BEFORE_OWNER_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libplugin_old_sysv.so -Wl,-Bsymbolic \
		-Wl,--hash-style=sysv $^ -o $@

WORKLOADS += $(TWO_COPIES_DIR)/libplugin.so $(TWO_COPIES_DIR)/libplugin_symbolic.so \
	     $(TWO_COPIES_DIR)/libplugin_old.so $(TWO_COPIES_DIR)/libplugin_old_sysv.so

# The hook library as built for hook ABI version 2 (a uprobe entry at every call), which programs
# linked with an older libspanprof still run: tests check the agent serves it, benchmarks compare.
# Built as such libraries were, before copies looked for an owner: dlopen'ed beside a benchmark's
# own hook it must not forward its calls to that one.
HOOK_V2_SO := $(OUTPUT)/tests/workloads/libspanprof_v2.so
$(OUTPUT)/hooks/span_hook_v2.pic.o: hooks/c/span_hook.c include/spanprof.h hooks/c/thread_record.h hooks/c/hook_owner.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DSPANPROF_HOOK_ABI_V2 -DSPANPROF_HOOK_TEST_BEFORE_OWNER -fPIC \
		-fvisibility=hidden -c $< -o $@

$(HOOK_V2_SO): $(OUTPUT)/hooks/span_hook_v2.pic.o $(OUTPUT)/hooks/hook_owner.before_owner.pic.o \
		$(filter-out %/span_hook.pic.o %/hook_owner.pic.o,$(HOOK_OBJS))
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SAN_CFLAGS) -shared -Wl,-soname,libspanprof.so $^ -o $@

WORKLOADS += $(HOOK_V2_SO)

# Test builds of the hook library, each in tests/workloads/<name>_hook/libspanprof.so from the
# hook's sources built with one test flag: $(1) the name, $(2) the flag.
define hook_test_build
$(OUTPUT)/hooks/%.$(1).pic.o: hooks/c/%.c include/spanprof.h include/spanprof_process_ctx.h \
		hooks/c/thread_record.h
	$$(call msg,CC,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CFLAGS) -D$(2) -fPIC -fvisibility=hidden -c $$< -o $$@

$(OUTPUT)/tests/workloads/$(1)_hook/libspanprof.so: \
		$(patsubst hooks/c/%.c,$(OUTPUT)/hooks/%.$(1).pic.o,$(HOOK_SRCS))
	$$(call msg,LINK,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CC) $$(SAN_CFLAGS) -shared -Wl,-soname,libspanprof.so $$^ -o $$@

WORKLOADS += $(OUTPUT)/tests/workloads/$(1)_hook/libspanprof.so
endef

# The thread switched out at the two places a preemption hurts most, at every uprobe entry:
# between queueing a change and entering, and inside the clock pair's first reading
# (test_span_cpu).
$(eval $(call hook_test_build,preempted,SPANPROF_HOOK_TEST_PREEMPTED))
# No uprobe entries every 256 changes nor for age: a thread's ring overflows between two
# switch-outs (test_span_cpu's ring overflow test).
$(eval $(call hook_test_build,no_ring_trap,SPANPROF_HOOK_TEST_NO_RING_TRAP))

# Waits through libc, -O2 with frame pointers (the pattern rule) and without: only a CFI walk
# finds the function that called libc's wrappers in the second.
$(OUTPUT)/tests/workloads/off_cpu_waits: WORKLOAD_CFLAGS += -O2
$(OUTPUT)/tests/workloads/off_cpu_waits_nofp: tests/workloads/off_cpu_waits.c $(HOOK_SO) include/spanprof.h \
		$(WORKLOAD_HEADERS)
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

$(OUTPUT)/tests/workloads/tctx_workload: tests/workloads/tctx_workload.c tests/fixtures/tctx_writer.h \
		$(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) $< -ldl -o $@

$(OUTPUT)/tests/workloads/tctx_workload_static: tests/workloads/tctx_workload.c \
		tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h $(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -DTCTX_WRITER_LINKED -rdynamic $< tests/fixtures/tctx_writer.c \
		-ldl -o $@

# The writer with general-dynamic access (__tls_get_addr, module id and offset GOT slots).
$(OUTPUT)/tests/workloads/libtctx_writer_gd.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fPIC -shared -mtls-dialect=gnu $< -o $@

# The writer in a library built for initial-exec access, linked (not dlopen()ed) by
# tctx_workload_ie: its offset from the thread pointer is in an R_X86_64_TPOFF64 GOT slot.
$(OUTPUT)/tests/workloads/libtctx_writer_ie.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fPIC -shared -ftls-model=initial-exec \
		-Wl,-soname,libtctx_writer_ie.so $< -o $@

$(OUTPUT)/tests/workloads/tctx_workload_ie: tests/workloads/tctx_workload.c tests/fixtures/tctx_writer.h \
		$(OUTPUT)/tests/workloads/libtctx_writer_ie.so $(WORKLOAD_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -DTCTX_WRITER_LINKED $< $(@D)/libtctx_writer_ie.so \
		-Wl,-rpath,'$$ORIGIN' -ldl -o $@

WORKLOADS += $(OUTPUT)/tests/workloads/libtctx_writer.so $(OUTPUT)/tests/workloads/tctx_workload_static \
	     $(OUTPUT)/tests/workloads/libtctx_writer_gd.so $(OUTPUT)/tests/workloads/tctx_workload_ie

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

$(OUTPUT)/tests/workloads/musl/tctx_workload: tests/workloads/tctx_workload.c tests/fixtures/tctx_writer.h \
		$(WORKLOAD_HEADERS)
	$(call msg,MUSLCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(MUSL_CFLAGS) $< -ldl -o $@

# General-dynamic access through musl's __tls_get_addr, and the writer linked into a musl
# executable (its TLS in the static block at a fixed offset from the thread pointer).
$(OUTPUT)/tests/workloads/musl/libtctx_writer_gd.so: tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h
	$(call msg,MUSLCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(MUSL_CFLAGS) -fPIC -shared -mtls-dialect=gnu $< -o $@

$(OUTPUT)/tests/workloads/musl/tctx_workload_static: tests/workloads/tctx_workload.c \
		tests/fixtures/tctx_writer.c tests/fixtures/tctx_writer.h $(WORKLOAD_HEADERS)
	$(call msg,MUSLCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MUSL_GCC) $(MUSL_CFLAGS) -DTCTX_WRITER_LINKED -rdynamic $< tests/fixtures/tctx_writer.c \
		-o $@

WORKLOADS += $(OUTPUT)/tests/workloads/musl/libtctx_writer.so $(OUTPUT)/tests/workloads/musl/tctx_workload \
	     $(OUTPUT)/tests/workloads/musl/libtctx_writer_gd.so \
	     $(OUTPUT)/tests/workloads/musl/tctx_workload_static
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

# Go, deployment and language-hook builds and tests, each in its own file.
include mk/go.mk mk/deploy.mk mk/hooks.mk

# --- test and bench: one rule each -----------------------------------------------------------
# `test` runs the hook suites last, through tests/run_tests.sh, so that the final line sums
# every suite. TEST_JOBS=N runs up to N test binaries at once (each one's output shown whole when
# it ends; CI uses 2); the default runs them one at a time, their output as it comes.
TEST_JOBS ?= 1
# Tests that bound the agent's wall-clock latency (a window every second, a stop within 2 s of
# SIGTERM, a hook attached within 1 s) run with no other test beside them, whatever TEST_JOBS.
TEST_ALONE ?= /test_(hostile_combined|hostile_files|hostile_inputs|hostile_interp|span_profile|fair_share)$$
# test-build builds what `make test` runs, and runs nothing (CI builds it ahead, in the background).
test-build: all $(UNIT_TESTS) $(INTEG_TESTS) $(WORKLOADS) $(DEPLOY_GO_LINKS) $(HOOK_C_TESTS) \
	$(GO_MOD)/vendor/modules.txt
test: test-build check-layout
	$(Q)tests/run_tests.sh -j$(TEST_JOBS) -a '$(TEST_ALONE)' $(UNIT_TESTS) $(INTEG_TESTS) \
		"$(GO_TEST)" $(GO_TC_TESTS) "$(DEPLOY_TEST)" \
		"$(HOOK_ENV) tests/hooks/run_hook_tests.sh $(HOOK_C_TESTS)"

unit-tests: $(UNIT_TESTS)
	$(Q)tests/run_tests.sh -j$(TEST_JOBS) -a '$(TEST_ALONE)' $(UNIT_TESTS)

integration-tests: all $(INTEG_TESTS) $(WORKLOADS)
	$(Q)tests/run_tests.sh -j$(TEST_JOBS) -a '$(TEST_ALONE)' $(INTEG_TESTS)

# Both, in one run: one summary line, and TEST_ALONE holds across both suites.
unit-and-integration-build: all $(UNIT_TESTS) $(INTEG_TESTS) $(WORKLOADS)
unit-and-integration-tests: unit-and-integration-build
	$(Q)tests/run_tests.sh -j$(TEST_JOBS) -a '$(TEST_ALONE)' $(UNIT_TESTS) $(INTEG_TESTS)

# The agent, the hook, the C workloads and the unit and integration tests built with ASan (leaks
# included) and UBSan into their own output directory, then both suites run; a sanitizer report
# aborts the process that made it, so it fails its test.
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SANITIZE_OUTPUT := build-san
# (Each recipe names $(MAKE) itself: make passes its -j on only to a recipe that does.)
SANITIZE_ARGS = --no-print-directory OUTPUT=$(SANITIZE_OUTPUT) SAN_CFLAGS="$(SANITIZE_FLAGS)" \
		GO_VERSIONS=
.PHONY: sanitize sanitize-build
sanitize:
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) $(SANITIZE_ARGS) unit-and-integration-tests

# Builds what `make sanitize` runs, and runs nothing (CI builds it ahead, in the background).
sanitize-build:
	$(Q)$(MAKE) $(SANITIZE_ARGS) unit-and-integration-build

bench: all $(BENCHES) $(WORKLOADS) $(OUTPUT)/tests/bench/go_hook bench-hooks
	$(Q)for b in $(BENCHES); do $$b || exit 1; done

systemdsystemunitdir ?= $(prefix)/lib/systemd/system

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

# No include or call points up the pipeline (STAGES); `make test` and CI run it.
check-layout: $(foreach s,$(STAGES),$(call stage_lib,$(s)))
	$(Q)scripts/check-layout.sh $(OUTPUT) $(STAGES)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) $(SANITIZE_OUTPUT)

-include $(wildcard $(OUTPUT)/*/*.d $(OUTPUT)/*/*/*.d $(OUTPUT)/*/*/*/*.d)
