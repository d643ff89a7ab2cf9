# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Go, included by the Makefile: the hook module's staging and tests, the Go workloads the
# integration tests profile (one template for all their variants), newer toolchains.

# hooks/go is a Go module (hooks/go/go.mod). Its tests and the Go workloads build in module mode
# offline: tests/go_module.sh stages it under build/gomod with a vendor directory of links into
# Debian's packaged modules (/usr/share/gocode), so no third-party code is copied or fetched.
# The deployment tests (mk/deploy.mk) still build in GOPATH mode.
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

# What every Go workload is built from.
GO_WORKLOAD_DEPS := $(GO_HOOK_SRCS) $(wildcard tests/workloads/go_*/*.go) \
		    $(GO_MOD)/vendor/modules.txt

# go_workload NAME,PACKAGE,ENV,FLAGS: build/tests/workloads/NAME is tests/workloads/PACKAGE
# built with ENV in go build's environment and FLAGS on its command line; `make test` builds it.
define go_workload
$(OUTPUT)/tests/workloads/$(1): $(GO_WORKLOAD_DEPS)
	$$(call msg,GO,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)cd $(GO_MOD) && $(GO_MOD_ENV) $(3) $(GO) build $(4) -o $$(abspath $$@) \
		./internal/testworkloads/$(2)
WORKLOADS += $(OUTPUT)/tests/workloads/$(1)
endef

GO_STRIPPED := -ldflags="-s -w"
GO_CGO := -tags spanprof_cgo
GO_WORKLOADS := go_spans go_otel go_pprof_labels go_reuse go_span_fill
$(foreach w,$(GO_WORKLOADS),$(eval $(call go_workload,$(w),$(w))))
# go_spans as containers ship it: no symbol table, no DWARF; and so as a position-independent
# executable (internally linked: .gopclntab moves into .data.rel.ro).
$(eval $(call go_workload,go_spans_stripped,go_spans,,$(GO_STRIPPED)))
$(eval $(call go_workload,go_spans_pie,go_spans,,-buildmode=pie $(GO_STRIPPED)))
# With cgo (tests/workloads/go_spans/cgo.go: a C call and C thread-locals), so the external
# linker places the executable's TLS block and runtime.tlsg moves away from FS base - 8; and
# the same stripped, where the agent finds g's slot from runtime.morestack's code. As a PIE,
# .gopclntab is inside .data.rel.ro with no section of its own: the agent goes by the symbols;
# stripped too, which the agent must refuse.
$(eval $(call go_workload,go_spans_cgo,go_spans,CGO_ENABLED=1,$(GO_CGO)))
$(eval $(call go_workload,go_spans_cgo_stripped,go_spans,CGO_ENABLED=1,$(GO_CGO) $(GO_STRIPPED)))
$(eval $(call go_workload,go_spans_cgo_pie,go_spans,CGO_ENABLED=1,$(GO_CGO) -buildmode=pie))
$(eval $(call go_workload,go_spans_cgo_pie_stripped,go_spans,CGO_ENABLED=1,\
	$(GO_CGO) -buildmode=pie $(GO_STRIPPED)))

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
$(OUTPUT)/tests/workloads/go$(1)/%: $(GO_WORKLOAD_DEPS)
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
