# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Deployment checks, included by the Makefile: the Helm chart, the Dockerfile and the systemd unit.

# The Helm chart is rendered and checked without Helm (tests/helm: text/template + sprig, as
# Helm does); tests/deploy checks the Dockerfile's runtime libraries and the systemd unit.
# Both are Go test packages built in GOPATH mode (GO_ENV, mk/go.mk).
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

.PHONY: helm-test deploy-test
helm-test: $(DEPLOY_GO_LINKS)
	$(Q)tests/run_tests.sh "$(HELM_TEST)"

deploy-test: $(OUTPUT)/spanprof $(DEPLOY_GO_LINKS)
	$(Q)tests/run_tests.sh "$(DEPLOY_TEST)"
