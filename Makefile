# gpubridge — run `make help` for the list of targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

export CGO_CFLAGS := -Wno-deprecated-declarations
export GOFLAGS := -mod=mod
# A private build temp dir: cgo builds on a shared /tmp collide otherwise.
export TMPDIR := $(CURDIR)/.testbed/tmp
export PATH := /usr/local/go/bin:$(PATH)

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
BIN     := bin/gpubridge
GO_PKGS := ./...

.PHONY: help build test test-unit test-integration test-race lint check-deps bench demo testbed-up testbed-down testbed-cluster2 testbed-cluster2-down testbed-galera testbed-galera-down deps tidy clean man deb rpm packages package-binary

help: ## Show this help
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_-]+:.*## /{printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(TMPDIR):
	@mkdir -p $@

deps: ## Install what building and testing need (Debian packages, Go modules)
	@test/install-deps.sh

build: $(TMPDIR) ## Build bin/gpubridge
	go build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/gpubridge

test: deps lint ## Everything: deps, lint, unit tests, then integration tests on a freshly restarted testbed
	$(MAKE) --no-print-directory test-unit
	test/testbed/use.sh --fresh $(MAKE) --no-print-directory test-integration

test-unit: $(TMPDIR) ## Unit tests only (no testbed)
	go test -count=1 $(GO_PKGS)

test-integration: $(TMPDIR) build ## Integration tests on the testbed as it is (brought up if down; waits while another run uses it)
	test/testbed/use.sh bash -o pipefail -c 'go test -count=1 -tags integration -p 1 -timeout 40m -v $(GO_PKGS) 2>&1 | test/gotest-summary.sh --no-skip'

# The integration tests that run the daemon in process (serve with its
# scheduled jobs, the tenant API, the health loop, the burst controller).
RACE_IT := TestServe|TestTenantWritersRace|TestBookingDaemon|TestAPI|TestHealthDaemon|TestHealthTwoNode|TestHealthCLI|TestIngestCLI|TestBurstAcceptance

test-race: deps $(TMPDIR) ## The race detector: unit tests, then the daemon's in-process integration tests on a freshly restarted testbed
	go test -race -count=1 $(GO_PKGS)
	test/testbed/use.sh --fresh bash -o pipefail -c '{ go test -race -count=1 -tags integration -p 1 -timeout 40m -v -run "$(RACE_IT)" ./cmd/gpubridge/ && \
	  go test -race -count=1 -tags integration -p 1 -timeout 20m -v ./cmd/gpubridge/daemon/ ./cmd/gpubridge/api/ ./cmd/gpubridge/app/; } 2>&1 | test/gotest-summary.sh --no-skip'

lint: $(TMPDIR) check-deps ## gofmt, go mod tidy, go vet, staticcheck, dependency direction
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^vendor/')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go mod tidy -diff
	go vet $(GO_PKGS)
	go vet -tags integration $(GO_PKGS)
	go tool staticcheck $(GO_PKGS)
	go tool staticcheck -tags integration $(GO_PKGS)

check-deps: $(TMPDIR) ## Pure domain packages must not import I/O packages
	go test -count=1 -run TestDependencyDirection ./internal/archtest/

bench: $(TMPDIR) build ## Benchmarks against the testbed, each with its ratio to the peer tool
	@test/testbed/use.sh bash -c 'for b in test/bench/*.sh; do echo "== $$b"; bash $$b || exit 1; done'

demo: $(TMPDIR) deps build ## The main job end to end on the local testbed (restarted from its cached root first)
	test/testbed/use.sh --fresh test/demo.sh

testbed-up: ## Bring up the local Slurm testbed (idempotent)
	test/testbed/up.sh

testbed-down: ## Stop what testbed-up started
	test/testbed/down.sh

testbed-cluster2: testbed-up ## The testbed's second cluster, testbed2, in the same slurmdbd (slurmrestd on 6821)
	test/testbed/cluster2.sh up

testbed-cluster2-down: ## Stop the second cluster and delete it from slurmdbd
	test/testbed/cluster2.sh down

testbed-galera: testbed-up ## A three-node MariaDB Galera cluster beside the testbed (ports 4306-4308; GPUBRIDGE_GALERA_DSNS)
	test/testbed/galera.sh up

testbed-galera-down: ## Stop the Galera cluster of testbed-galera
	test/testbed/galera.sh down

man: build ## Man pages from the command tree (bin/man/*.1)
	rm -rf bin/man
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) $(BIN) man bin/man

# The packages (packaging/nfpm.yaml, docs/install.md): their binary is linked against a glibc
# 2.31 sysroot (packaging/sysroot.sh, cached in /var/cache/gpubridge) so that it runs on glibc
# 2.28 (RHEL 8); PKG_MAINTAINER is the packages' Maintainer/Packager field.
PKG_BIN        := bin/package/gpubridge
PKG_MAINTAINER ?= gpubridge maintainers <gpubridge@users.noreply.github.com>
export PKG_MAINTAINER

package-binary: $(TMPDIR) ## The packages' binary (bin/package/gpubridge, glibc 2.28 and newer)
	packaging/build-binary.sh $(PKG_BIN) $(VERSION)

deb: package-binary man ## Debian package (bin/gpubridge_VERSION_ARCH.deb; docs/install.md)
	packaging/build.sh deb $(PKG_BIN) bin/man bin $(VERSION)

rpm: package-binary man ## RPM package (bin/gpubridge-VERSION-1.ARCH.rpm; docs/install.md)
	packaging/build.sh rpm $(PKG_BIN) bin/man bin $(VERSION)

packages: package-binary man ## Both packages, .deb and .rpm, from one description
	packaging/build.sh deb $(PKG_BIN) bin/man bin $(VERSION)
	packaging/build.sh rpm $(PKG_BIN) bin/man bin $(VERSION)

tidy: ## go mod tidy
	go mod tidy

clean: ## Remove build outputs
	rm -rf bin
