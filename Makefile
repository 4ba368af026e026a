# Developer and CI entry points. `make test` is all CI runs (.ci/run).
GO        ?= go
# Every package of every module in go.work.
PKGS      := acpkit.dev/...
FUZZTIME  ?= 30s
BENCHTIME ?= 1s

# Packages whose tests also run as windows/amd64 binaries under Wine
# (PKG=RUN selects tests: the rest of package adapter needs Unix).
WINE_TEST_PKGS := ./adapter/internal/launch ./acpsdk ./adapter=OnWindows

.PHONY: all generate golden check-generated schema test test-go test-windows vet-windows vet-darwin deps bench compile-cost fuzz demo install vet lint check release-check grade-runtimes

all: test

## generate: regenerate acpsdk/gen and every other pinned surface (schema/pin.json).
# The generator itself, not go generate: a surface newly added to the pin
# has no package (and so no //go:generate line) yet.
generate: golden
	$(GO) run ./tools/gen

## golden: regenerate the generator's per-feature golden outputs
## (tools/gen/testdata/golden; TestGolden fails on a stale one).
golden:
	@for s in tools/gen/testdata/golden/*.json; do \
	  $(GO) run ./tools/gen -schema $$s -pkg golden -out $${s%.json} || exit 1; \
	done

## check-generated: regenerate every surface and fail, printing a diff, on any difference.
check-generated:
	$(GO) run ./tools/gen -check

## schema: re-fetch every pinned schema with npm and verify each sha256.
schema:
	./scripts/fetch-schema.sh

## deps: install what the tests need (Go modules, npm packages for peer tests).
deps:
	$(GO) mod download
	./scripts/install-test-deps.sh

## test: every test of every module, with the race detector; the
## windows/amd64 build and the Windows tests under Wine; the release check.
# Two stages, each two jobs side by side on CI's two cores: the installs,
# mostly waiting on the network (apt, npm), beside the generated-code check
# and lint, which compile every module for three platforms; then the Go
# tests, which leave a core idle while real runtimes start and models
# stream, beside the Wine tests and the release check. The second stage's
# output is not synchronised, so the Go tests' results show as they come.
# Stage one vets and staticchecks the linux packages with -race (RACE), as
# test-go builds them, so their compile serves both and every package is
# compiled for linux once, not twice.
test:
	$(MAKE) --no-print-directory -j2 --output-sync=target deps static-checks RACE=-race
	$(MAKE) --no-print-directory -j2 test-go wine-release

# static-checks and wine-release are test's stages' second jobs.
.PHONY: static-checks wine-release wine-tests
static-checks: check-generated
	$(MAKE) --no-print-directory lint
wine-release: wine-tests
	$(MAKE) --no-print-directory release-check

# RACE=-race vets the packages as the race detector builds them (make
# test: its tests then reuse the compile); the files vetted are the same,
# no file of the project depending on the race build tag.
RACE ?=
vet:
	$(GO) vet $(RACE) $(PKGS)

## lint: go vet on every platform (linux, windows, darwin), then gofmt,
## staticcheck (staticcheck.conf, the version tools/lint/go.mod pins) and
## `go mod tidy` in every module.
lint: vet vet-windows vet-darwin
	GO=$(GO) RACE=$(RACE) ./scripts/lint.sh

## check: the edit loop: generated code, vet, and every test with -short and
## without -race. -short leaves out the tests of npm packages
## (internal/npmtest); no npm, apt or Wine runs. `make test` is the gate.
check: check-generated vet
	$(GO) test -short -count=1 $(PKGS)

# -vet=off: make test's lint has run the whole of go vet on every package,
# tests included, of which go test's own vet is a subset.
test-go:
	$(GO) test -race -vet=off -count=1 -timeout 15m $(PKGS)

## release-check: install every command and the SDK from a local file:// proxy
## serving this work tree as the release go.mod names (docs/RELEASING.md).
release-check:
	./scripts/release-check.sh

## vet-windows: every module vetted for windows/amd64 (go vet type-checks
## every package, commands included, as the compiler would).
vet-windows:
	GOOS=windows GOARCH=amd64 $(GO) vet $(PKGS)

## vet-darwin: every module vetted for darwin/arm64 (macOS has its own
## containment code, adapter/internal/contain).
# Nothing built for darwin runs, so it is compiled without inlining
# (DARWIN_GOFLAGS, staticcheck's loads too): go vet and staticcheck see the
# same code, and the compile that gives them export data costs a sixth less.
DARWIN_GOFLAGS := -gcflags=all=-l
export DARWIN_GOFLAGS
vet-darwin:
	GOOS=darwin GOARCH=arm64 GOFLAGS="$(DARWIN_GOFLAGS)" $(GO) vet $(PKGS)

## test-windows: the Windows tests run for real under Wine (no -race:
## the race detector needs cgo for windows).
test-windows: vet-windows wine-tests
# wine-tests: test-windows without its vet and build (make test runs those in lint).
wine-tests:
	GO=$(GO) ./scripts/wine-test.sh $(WINE_TEST_PKGS)

## bench: the side-by-side benchmarks, printed as ratios.
# Medians over 5 runs; the 1 GiB flood alone takes seconds per run, hence
# the timeout. benchratio exits 1 when a target is missed.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) -count 5 -timeout 30m acpkit.dev/tools/bench/... | tee bench.out
	$(GO) run ./tools/bench/cmd/benchratio < bench.out

## compile-cost: the compiler's CPU time on acpkit.dev/acpsdk/gen, the work
## tree against the commit before the generated code shrank (issue #14:
## at most half), medians of RUNS alternating runs, plain and -race.
## Not part of make test: it compiles the package 4*RUNS times.
RUNS ?= 5
compile-cost:
	GO=$(GO) ./scripts/compile-cost.sh $(RUNS)

## fuzz: run every Fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## hostile: issue #22's hostile-runtime suite at length: HOSTILE_SEEDS
## seeds of the property test (in memory, and a tenth as child processes),
## 64 parallel sessions and a soak of 20,000 turns, under -race. make test
## runs a small version; make fuzz runs FuzzHostileRuntime with the rest.
HOSTILE_SEEDS ?= 2000
.PHONY: hostile
## grade-runtimes: acpcheck grades the seven real runtimes, as make test
## does, printing each report, and checks every row of conformance/README.md's
## runtime table; UPDATE=1 rewrites the rows.
grade-runtimes: deps
	$(GO) test -count=1 -timeout 60m -v -run '^TestStandard_RealRuntimes$$' ./conformance/check \
	  $(if $(UPDATE),-args -update-runtime-table)

hostile:
	$(GO) test -race -count=1 -timeout 60m -run '^(TestDI9_EV13_HostileRuntimeSeeds|TestTD1_TU7_ParallelSessionsStopsRaceTurnsAndCancels|TestTU4_SoakOneSessionStaysFlat)$$' ./adapter \
	  -args -hostile-seeds $(HOSTILE_SEEDS) -hostile-child-seeds $$(($(HOSTILE_SEEDS)/10)) -hostile-sessions 64 -hostile-soak-turns 20000

# The commands, built static: without cgo the toolchain links no C library
# (the net package's resolver would otherwise need it), so a binary runs on
# any system of its platform.
CMDS := ./adapter/cmd/acprun ./conformance/cmd/acpcheck ./conformance/cmd/refagent

## demo: build the commands into bin/ and drive the reference agent (which
## acprun carries) through the adapter.
demo:
	CGO_ENABLED=0 $(GO) build -o bin/ $(CMDS)
	./bin/acprun --demo

## install: acprun, acpcheck and refagent into GOBIN (else GOPATH/bin),
## built static, from this clone (README, Install).
install:
	CGO_ENABLED=0 $(GO) install $(CMDS)

## stress-start: issue #15's start stress, at full size (make test runs a
## small version of both tests): 3,000 real starts and stops of the
## reference agent beside 3 goroutine and 3 process CPU hogs, then 20,000
## in-memory ones in a synctest bubble; under -race, some minutes on 2 cores.
.PHONY: stress-start
stress-start:
	$(GO) test -race -count=1 -timeout 60m -v -run '^TestSS1_(StartsUnderCPUHogs|InMemoryStartsWaitOnNoTimer)$$' ./adapter \
	  -args -stress-starts 3000 -stress-hogs 3 -stress-mem-starts 20000
