# cgu-operator. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

# Images built by docker-build and docker-build-precache and deployed by deploy.
IMG ?= quay.io/cgu-operator/cgu-operator:latest
PRECACHE_IMG ?= quay.io/cgu-operator/cgu-operator-precache:latest
# Version written into the OLM bundle, its channels, and the samples shown as its examples.
VERSION ?= 0.1.0
BUNDLE_CHANNELS ?= stable
BUNDLE_DEFAULT_CHANNEL ?= stable
BUNDLE_EXAMPLES ?= samples/clustergroupupgrade-minimal.yaml samples/clustergroupupgrade-precache.yaml samples/imagebasedgroupupgrade.yaml samples/managedclustersupgrade.yaml samples/releasetrain.yaml

KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker

# Everything the Makefile installs goes under bin/, at pinned versions.
LOCALBIN := $(CURDIR)/bin
CONTROLLER_TOOLS_VERSION := v0.20.1
KUSTOMIZE_VERSION := v5.8.1
GOLANGCI_LINT_VERSION := v2.15.0
CONTROLLER_GEN := $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
KUSTOMIZE := $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT := $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

# envtest's kube-apiserver and etcd, built from Go modules (hack/envtest) into bin/k8s.
ENVTEST_ASSETS := $(LOCALBIN)/k8s
KUBE_APISERVER := $(ENVTEST_ASSETS)/kube-apiserver
ETCD := $(ENVTEST_ASSETS)/etcd
export KUBEBUILDER_ASSETS := $(ENVTEST_ASSETS)

GO_TEST_FLAGS ?= -timeout 30m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Demo

# The demo's knobs (see docs/tutorial.md): fleet size, batch size, how long a simulated
# upgrade takes, a cluster that never finishes (to show a batch timeout), the rollout's
# timeout in minutes (0 keeps the sample's), KEEP=1 to leave the hub running, MODE=Window or
# MODE=Progressive for a rollout mode other than TALM's batches, and FULL=1 to list every
# cluster of a long batch (abbreviated to its count and runs of names otherwise). KIND=train
# runs a release train across a global hub and two regional hubs (docs/trains.md): CLUSTERS
# is then per regional hub (20 by default) and STALL how many of hub-west's clusters stall.
CLUSTERS ?= $(if $(filter train,$(KIND)),20,12)
MAX_CONCURRENCY ?= 4
UPGRADE_DURATION ?= 8s
STALL ?=
TIMEOUT ?= 0
KEEP ?= 0
DASHBOARD_PORT ?= 3270
KIND ?= cgu
FAIL ?=
MODE ?=
FULL ?= 0

.PHONY: demo
demo: envtest-assets ## Roll an upgrade out on an embedded hub with simulated clusters (CLUSTERS, MAX_CONCURRENCY, UPGRADE_DURATION, STALL, TIMEOUT, KEEP=1, DASHBOARD_PORT, MODE=Window|Progressive, FULL=1; KIND=ibgu with FAIL for an image-based group upgrade; KIND=mcu for a release-named upgrade of a mixed fleet; KIND=train for a release train across regional hubs, STALL=N stalling N of hub-west's clusters).
	go build -o $(LOCALBIN)/cgu-demo ./cmd/cgu-demo
	$(LOCALBIN)/cgu-demo --kind=$(KIND) --clusters=$(CLUSTERS) --max-concurrency=$(MAX_CONCURRENCY) \
		--upgrade-duration=$(UPGRADE_DURATION) --stall=$(STALL) --fail=$(FAIL) --timeout=$(TIMEOUT) --dashboard-port=$(DASHBOARD_PORT) --mode=$(MODE) \
		$(if $(filter 1 true yes,$(KEEP)),--keep) $(if $(filter 1 true yes,$(FULL)),--all-clusters)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (config/crd/bases) and the manager's ClusterRole (config/rbac).
	$(CONTROLLER_GEN) crd rbac:roleName=manager-role paths="./api/..." paths="./controllers/..." paths="./pkg/..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: verify
verify: generate manifests bundle ## Fail if generate, manifests or bundle leave a diff.
	@if [ -n "$$(git status --porcelain -- api config bundle)" ]; then \
		echo "generated files changed; run 'make generate manifests bundle' and commit:"; \
		git status --porcelain -- api config bundle; git --no-pager diff -- api config bundle; exit 1; \
	fi

.PHONY: fmt
fmt: ## Format the Go code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

# LINT_FLAGS are added to golangci-lint run: .ci/run passes --timeout=0, since its lint runs at
# the lowest CPU priority alongside the suites and takes as long as they leave it the CPU.
LINT_FLAGS ?=

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (LINT_FLAGS adds flags to its run).
	$(GOLANGCI_LINT) config verify
	$(GOLANGCI_LINT) run $(LINT_FLAGS) ./...

.PHONY: test
test: envtest-assets chromium prometheus ## Run every test: unit tests, each fuzz target's corpus and the Ginkgo suites on envtest.
	go test $(GO_TEST_FLAGS) ./...

# How long `make fuzz` runs each fuzz target; hack/fuzz.sh runs every target of the module in turn.
# `make test` runs each target's seed corpus and saved crashers (testdata/fuzz) as tests, without
# fuzzing: `go test -fuzz` builds every package a target imports again, instrumented, about half a
# minute a target on two cores, which kept CI over its time budget for seconds of fuzzing.
FUZZTIME ?= 1m

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (default 1m).
	hack/fuzz.sh $(FUZZTIME)

.PHONY: bench
bench: ## Run the benchmarks (no tests); BENCH=regexp selects some.
	go test -run '^$$' -bench '$(or $(BENCH),.)' -benchmem ./pkg/... ./tests/sim/configpolicy/

# A fleet rollout benchmark (docs/benchmarks.md, "Fleet rollouts"): FLEET is
# <clusters>x<policies>/<maxConcurrency>, FLEET_UPGRADE how long each cluster's upgrade takes
# (empty: at once), FLEET_TIMEOUT bounds each phase, BENCH_OUT=file appends the report there,
# BENCH_PHASES picks phases among floor-override, operator-override, floor and operator,
# BENCH_RUNS=3 runs them three times in turn and judges the ratio to the floor on the median.
FLEET ?= 1000x2/250
FLEET_UPGRADE ?=
FLEET_TIMEOUT ?= 30m

.PHONY: bench-fleet
bench-fleet: envtest-assets ## Roll a simulated fleet out with the floor driver, then the operator, in Override mode, then in Copy mode (FLEET=1000x2/250, FLEET_UPGRADE=30s, FLEET_TIMEOUT=30m, FLEET_PROPAGATOR=1000/10/20, BENCH_PHASES=floor,operator, BENCH_MODE=Window or Progressive, BENCH_RUNS=3).
	BENCH_FLEET='$(FLEET)' BENCH_UPGRADE='$(FLEET_UPGRADE)' BENCH_TIMEOUT='$(FLEET_TIMEOUT)' BENCH_PROPAGATOR='$(FLEET_PROPAGATOR)' \
		go test -count=1 -v -timeout 3h -run '^TestFleetRollout$$' ./tests/bench/

# A release train's overhead (docs/benchmarks.md, "Release train overhead"): TRAIN is
# <hubs>x<clusters per hub>/<maxConcurrency>, one ring per regional hub.
TRAIN ?= 3x1000/250

.PHONY: bench-train
bench-train: envtest-assets ## Take one release through a train of one ring per regional hub and time the train's overhead against the rings' own rollouts (TRAIN=3x1000/250, FLEET_TIMEOUT, BENCH_OUT=file).
	BENCH_TRAIN='$(TRAIN)' FLEET_TIMEOUT='$(FLEET_TIMEOUT)' go test -count=1 -v -timeout 3h -run '^TestTrainOverhead$$' ./tests/bench/

# The dashboard's browser test drives Debian's chromium (pkg/dashboard). When it cannot be
# installed, make goes on and that test fails saying so.
.PHONY: chromium
chromium: ## Install Debian's chromium for the dashboard's browser test, unless a chromium is on the PATH.
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "Installing Debian's chromium for the dashboard's browser test"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null \
		|| echo "chromium could not be installed: the dashboard's browser test (pkg/dashboard) will fail"; }

# The analysis gates' tests run Debian's prometheus and prometheus-alertmanager (tests/prom).
# When they cannot be installed, make goes on and those tests fail saying so.
.PHONY: prometheus
prometheus: ## Install Debian's prometheus and prometheus-alertmanager for the analysis gates' tests, unless both are on the PATH.
	@{ command -v prometheus >/dev/null 2>&1 && { command -v prometheus-alertmanager >/dev/null 2>&1 || command -v alertmanager >/dev/null 2>&1; }; } || { \
		sudo=; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "Installing Debian's prometheus and prometheus-alertmanager for the analysis gates' tests"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null \
		|| echo "prometheus could not be installed: the analysis gates' tests (tests/prom, tests/sim) will fail"; }

.PHONY: dashboard-screenshots
dashboard-screenshots: envtest-assets chromium prometheus ## Run the dashboard's browser test and keep its screenshots in docs/images (docs/dashboard.md shows them).
	go test -count=1 -run '^TestDashboard$$' ./pkg/dashboard/ -args -screenshots $(CURDIR)/docs/images

.PHONY: web-vendor
web-vendor: ## Vendor the dashboard page's libraries (Preact, htm, uPlot) from the npm registry, as pkg/dashboard/web/vendor's package.json and lock file pin them.
	hack/vendor-web.sh

# The scale curve (docs/benchmarks.md, "Scale curve"): the fleet benchmark at each size of
# CURVE_SIZES, CURVE_POLICIES policies, 500 at a time, against the Override floor, then the fit.
# A size whose hub does not settle in FLEET_TIMEOUT is recorded as failed and left out of the fit.
CURVE_SIZES ?= 500 1000 2000 3500
CURVE_POLICIES ?= 10
CURVE_OUT ?= $(LOCALBIN)/curve.jsonl

.PHONY: bench-curve
bench-curve: envtest-assets ## Run the fleet benchmark at CURVE_SIZES clusters x CURVE_POLICIES policies and fit the scale curve (hack/benchcurve), projected to 3,500 and 10,000 clusters.
	rm -f $(CURVE_OUT)
	for n in $(CURVE_SIZES); do \
		$(MAKE) bench-fleet FLEET=$${n}x$(CURVE_POLICIES)/500 BENCH_PHASES=floor-override,operator-override BENCH_JSON=$(CURVE_OUT) || true; \
	done
	go run ./hack/benchcurve $(CURVE_OUT)

.PHONY: bench-fleettime
bench-fleettime: ## Upgrade 3,500 simulated clusters in Batches, Window and Progressive mode, and pre-cache 3,500 sites by strategy, in simulated time (tests/fleettime); fails on a missed target.
	FLEETTIME_SEEDS=5 go test -count=1 -v -run '^(TestModesAgainstBatches|TestPrecacheFitsThePipe)$$' ./tests/fleettime/

.PHONY: envtest-assets
envtest-assets: $(KUBE_APISERVER) $(ETCD) ## Build envtest's kube-apiserver and etcd from Go modules into bin/k8s.

$(KUBE_APISERVER): hack/envtest/kube-apiserver/go.mod hack/envtest/kube-apiserver/go.sum hack/envtest/kube-apiserver/main.go
	@mkdir -p $(ENVTEST_ASSETS)
	@echo "Building kube-apiserver from Go modules (a few minutes the first time)"
	cd hack/envtest/kube-apiserver && go build -ldflags='-s -w' -o $@ .

$(ETCD): hack/envtest/etcd/go.mod hack/envtest/etcd/go.sum hack/envtest/etcd/main.go
	@mkdir -p $(ENVTEST_ASSETS)
	@echo "Building etcd from Go modules"
	cd hack/envtest/etcd && go build -ldflags='-s -w' -o $@ .

##@ Build

.PHONY: build
build: ## Build the manager into bin/manager.
	go build -o $(LOCALBIN)/manager ./cmd/manager

.PHONY: plugin
plugin: ## Build the kubectl/oc plugin into bin/kubectl-cgu (put bin/ on PATH for `kubectl cgu`).
	go build -o $(LOCALBIN)/kubectl-cgu ./cmd/kubectl-cgu

.PHONY: run
run: ## Run the manager against the cluster in $KUBECONFIG (no leader election, plain-HTTP metrics).
	go run ./cmd/manager --leader-elect=false --metrics-secure=false --metrics-bind-address=:8080 --zap-devel

.PHONY: docker-build
docker-build: ## Build the manager image (IMG=...).
	$(CONTAINER_TOOL) build -t $(IMG) -f Dockerfile .

.PHONY: docker-build-precache
docker-build-precache: ## Build the precache image (PRECACHE_IMG=...).
	$(CONTAINER_TOOL) build -t $(PRECACHE_IMG) -f Dockerfile.precache .

##@ Deployment

.PHONY: install
install: manifests $(KUSTOMIZE) ## Install the CRDs into the cluster in $KUBECONFIG.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) ## Remove the CRDs from the cluster in $KUBECONFIG.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: deploy
deploy: manifests $(KUSTOMIZE) ## Deploy the operator (IMG=...) to the cluster in $KUBECONFIG.
	cd config/manager && $(KUSTOMIZE) edit set image controller=$(IMG)
	$(KUSTOMIZE) build config/default | $(KUBECTL) apply --server-side -f -
	$(KUSTOMIZE) build config/admission | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: $(KUSTOMIZE) ## Remove the operator from the cluster in $KUBECONFIG.
	$(KUSTOMIZE) build config/admission | $(KUBECTL) delete --ignore-not-found -f -
	$(KUSTOMIZE) build config/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: bundle
bundle: manifests $(KUSTOMIZE) ## Write the OLM bundle (bundle/, bundle.Dockerfile) for VERSION, IMG and PRECACHE_IMG.
	$(KUSTOMIZE) build config/default | go run ./hack/bundle --version=$(VERSION) --image=$(IMG) \
		--spoke-image=$(PRECACHE_IMG) --channels=$(BUNDLE_CHANNELS) --default-channel=$(BUNDLE_DEFAULT_CHANNEL) \
		--base=config/manifests/bases/cgu-operator.clusterserviceversion.yaml \
		--examples="$(BUNDLE_EXAMPLES)" --out=bundle --dockerfile=bundle.Dockerfile

##@ Tools

.PHONY: tools
tools: $(CONTROLLER_GEN) $(KUSTOMIZE) $(GOLANGCI_LINT) ## Build the pinned tools that generate, verify and lint run into bin/.

$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
	mv $(LOCALBIN)/controller-gen $@

$(KUSTOMIZE):
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(LOCALBIN)/kustomize $@

$(GOLANGCI_LINT):
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(LOCALBIN)/golangci-lint $@
