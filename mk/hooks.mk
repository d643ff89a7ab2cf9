# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The language hooks' suites, included by the Makefile.

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

# The hook library's thread context record, read as a third party would and by the agent's reader.
$(OUTPUT)/tests/hooks/test_thread_record: $(OUTPUT)/tests/hooks/test_thread_record.o $(AGENT_LIB) \
					  | $(HOOK_SO)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(filter %.o %.a,$^) $(LDLIBS) -ldl -lcmocka -o $@

# The hook's record and ring code linked on its own, called as span_hook.c calls it.
$(OUTPUT)/tests/hooks/test_thread_record_trap: $(OUTPUT)/tests/hooks/test_thread_record_trap.o \
					       $(OUTPUT)/hooks/thread_record.pic.o \
					       $(OUTPUT)/hooks/process_ctx.pic.o \
					       $(OUTPUT)/hooks/hook_owner.pic.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lcmocka -o $@

# Two copies of the hook in one process: libspanprof.so and a plugin with its own copy.
$(OUTPUT)/tests/hooks/test_hook_owner: | $(HOOK_SO) \
					$(OUTPUT)/tests/workloads/two_copies/libplugin_symbolic.so \
					$(OUTPUT)/tests/workloads/two_copies/libplugin_old.so \
					$(OUTPUT)/tests/workloads/two_copies/libplugin_old_sysv.so

# ... the first one linked into this executable from libspanprof.a, exporting nothing.
$(OUTPUT)/tests/hooks/test_hook_owner_static: $(OUTPUT)/tests/hooks/test_hook_owner_static.o \
					      $(HOOK_A) | \
					      $(OUTPUT)/tests/workloads/two_copies/libplugin_symbolic.so
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(filter %.o %.a,$^) -ldl -lcmocka -o $@

define run-hook-tests
$(Q)$(HOOK_ENV) tests/hooks/run_hook_tests.sh $(HOOK_C_TESTS)
endef

.PHONY: hook-tests bench-hooks
hook-tests: all $(HOOK_C_TESTS)
	$(run-hook-tests)

# Cost of a span start+end through each language's processor, and of a task or fiber switch
# with per-task spans; part of `make bench`.
bench-hooks: all
	$(Q)$(HOOK_ENV) $(PYTHON) tests/bench/bench_python_hook.py
	$(Q)$(HOOK_ENV) $(PYTHON) tests/bench/bench_python_tasks.py
	$(Q)$(HOOK_ENV) $(RUBY) tests/bench/bench_ruby_hook.rb
	$(Q)$(HOOK_ENV) $(RUBY) tests/bench/bench_ruby_fibers.rb
