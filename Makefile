# Jade VM scheduler — developer targets. `make test` is what CI runs.
GO      ?= go
PKGS    := ./...
RACEPKG := ./sched/... ./bus/... ./vmloop/... ./timerwheel/... ./internal/evpoll/... ./uring/... ./native/... ./internal/debugsrv/...

.PHONY: icache-check report-check peers all build test unit unit-purego unit-native workers hammer sanitize race cross cross-tests fuzz-smoke bench perf vet staticcheck clean soak soak-short windows arm64 platforms platforms-ci

all: build test

# bin/jade is built with profile-guided optimisation from pgo/jade.pgo
# (scripts/pgo.sh writes it; docs/PERFORMANCE.md, "Profile-guided builds").
build:
	$(GO) build -pgo=pgo/jade.pgo -o bin/jade ./cmd/jade

# The README's test command: unit tests, race detector on the concurrent
# packages, cross-platform vet/compile, a short fuzz smoke, the short soak.
test: vet staticcheck unit unit-purego unit-native workers race cross fuzz-smoke soak-short

vet:
	$(GO) vet $(PKGS)
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt needed" && exit 1)

# unit runs every package at 1 worker (JADE_WORKERS: the count of every
# runtime a test makes without one of its own); workers adds 2, 4 and 8.
unit:
	JADE_WORKERS=1 $(GO) test -count=1 $(PKGS)
	cd contrib/prometheus && $(GO) vet ./... && $(GO) test -count=1 ./...

# The VM packages once more without cgo (pure-Go fallback of native/; the
# examples run whole programs, I/O and the drain through the Go loop, at
# their -short sizes: unit runs them whole) and with the checked loop
# (jadecheck: every register and handle access bounds- and type-checked).
unit-purego:
	CGO_ENABLED=0 $(GO) test -count=1 ./vmloop/... ./native/...
	CGO_ENABLED=0 $(GO) test -count=1 -short ./examples/...
	$(GO) test -count=1 -tags purego ./native/... .
	$(GO) test -count=1 -tags jadecheck ./vmloop/...

# The cgo loop's far-branch path (functions longer than the packed branch
# encoding allows, forced here to 3 instructions), and the loop built by
# clang as well where clang is installed (gcc is cgo's default; `make
# sanitize` installs clang when it can).
unit-native:
	CGO_CFLAGS="-O2 -DJN_MAXLEN=3" $(GO) test -count=1 ./native/
	@if command -v clang >/dev/null 2>&1; then \
	  echo "CC=clang go test ./native/ ./vmloop/"; \
	  CC=clang $(GO) test -count=1 ./native/ ./vmloop/; \
	else echo "unit-native: clang is not installed: the cgo loop was built with gcc only"; fi

# The tests of the packages above the scheduler once per worker count
# beyond unit's one (2; and 8, more workers than CPUs, for the bus, whose
# messages, selects and I/O hand tasks between workers; the tests that
# name 4 run it themselves):
# JADE_WORKERS sets the workers of every runtime a test makes without a
# count of its own (the examples' tests run 1, 2, 4 and 8 workers
# themselves, sched's tests choose theirs, and cmd/jade-soak's legs name
# their worker counts, so it runs once, in unit, as do the memory shapes,
# whose jade processes pick their own).
# Tests that choose their own worker counts, or whose jade child's drain
# shape does not depend on them, gain nothing from JADE_WORKERS: unit runs
# them once. So do the surface tests, which only build and read code.
WORKERS_SKIP := TestMemoryShapesStayUnder2GiB|TestMemoryShapesStayWithinTheirBudget|TestStalledWorkersTimersFireElsewhere|TestChanExactlyOnce|TestSelectExactlyOnce|TestSIGTERMServesTheAcceptQueue|TestSIGTERMBusyKeepAlive|TestSIGTERMIdleAndBusyKeepAlive|TestLoadCraftedBinaries|TestChatRoom|TestHostModule|TestNoExportedPathToSchedulerControl
workers:
	@echo "workers: JADE_WORKERS=2"
	JADE_WORKERS=2 $(GO) test -count=1 -skip '$(WORKERS_SKIP)' . ./bus/... ./cmd/jade/... ./cmd/resp-go/... ./internal/debugsrv/...
	@echo "workers: JADE_WORKERS=8"
	JADE_WORKERS=8 $(GO) test -count=1 -skip '$(WORKERS_SKIP)' ./bus/...

# The exactly-once hammer with 1M tasks for 1, 2, 4 and 8 workers.
hammer:
	JADE_HAMMER=1000000 $(GO) test -count=1 -run 'TestExactlyOnce' -timeout 30m -v ./sched/
	JADE_CHAN_HAMMER=1000000 $(GO) test -count=1 -run 'TestChanExactlyOnce' -timeout 30m -v ./bus/

# The C loop under AddressSanitizer and UndefinedBehaviorSanitizer, with
# clang (installed with apt-get when missing and possible) and gcc.
sanitize:
	sh native/sanitize/run.sh

# The VM loop's packages run -short under -race: their tests are mostly
# one goroutine's programs, where the detector has nothing to find and
# only multiplies the time; unit runs them whole. RACE_VM_SKIP are the
# longest of those one-goroutine tests (a verifier's time budget, map
# models and floods, copies in steps, and the native loop's differential
# runs of every test program and of random programs, which unit and
# unit-native run whole).
RACE_VM_SKIP := TestDiffJasmFiles|TestRandomDiff|TestVerifyProgramBudget|TestMapModel|TestMapFloodingIsLinear|TestSpawnCopyMapBoundedSteps|TestResultExportInSteps|TestSpawnCopyEqualsExportImport|TestJoinImportInSteps|TestBinaryDecodeMemoryBound|TestVerifyAdversarialFlowIsBounded
# RACE_SKIP: the scheduler's copies in steps, one large value moved by
# one task at a time (unit runs them; the hand-offs they share with every
# spawn, join and message are raced by the rest).
RACE_SKIP := TestChanCopyInSteps|TestSpawnCopyInSteps|TestJoinCopyInSteps
race:
	$(GO) test -count=1 -race -skip '$(RACE_SKIP)' $(filter-out ./vmloop/... ./native/...,$(RACEPKG))
	$(GO) test -count=1 -race -short -skip '$(RACE_VM_SKIP)' ./vmloop/... ./native/...

# vet (which type-checks every package with its tests) for the platforms
# CI cannot run, and a build of every package and command for each OS.
# Without cgo no file of this module depends on the architecture, so one
# build per OS compiles what the arm64 builds would; vet type-checks
# freebsd/arm64 too (darwin's and windows' x/sys types are the same on
# both 64-bit architectures; `make cross-tests` covers all six). Linking each package's test binary as
# well took ten minutes on a cold cache and finds nothing more without
# cgo; `make cross-tests` still does it.
CROSS := darwin/amd64 freebsd/amd64 freebsd/arm64 windows/amd64
CROSS_ALL := darwin/amd64 darwin/arm64 freebsd/amd64 freebsd/arm64 windows/amd64 windows/arm64
cross:
	@for p in $(CROSS); do echo "cross: $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) vet $(PKGS) || exit 1; \
	  case $$p in */amd64) GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) build $(PKGS) || exit 1;; esac; \
	done

cross-tests:
	@for p in $(CROSS_ALL); do echo "cross-tests: $$p"; \
	  for pkg in $$($(GO) list $(PKGS)); do \
	    GOOS=$${p%/*} GOARCH=$${p#*/} CGO_ENABLED=0 $(GO) test -c -o /dev/null $$pkg || exit 1; \
	  done; \
	done

# The platforms CI cannot run natively, executed on this Linux machine
# (each installs what it needs with apt-get when it can, and otherwise
# says so and passes having run nothing; see docs/PLATFORMS.md):
# windows runs every package's windows/amd64 test binaries under Wine and
# jade.exe on the examples; arm64 runs every package's linux/arm64 test
# binaries under qemu-user, the cgo loop included (-race where qemu
# allows it). platforms-ci is their subset for CI: the IOCP backend's
# tests and the examples under Wine; sched, vmloop, relstore, tinylock and asymfence
# (-short) under qemu.
windows:
	bash scripts/windows/run.sh

arm64:
	bash scripts/arm64/run.sh

platforms: windows arm64

platforms-ci:
	bash scripts/windows/run.sh -ci
	bash scripts/arm64/run.sh -ci

# Execution counts, not durations: a duration-based -fuzztime can fail with
# "context deadline exceeded" and no crasher when the deadline races a busy
# worker (Go toolchain race golang/go#75804, fixed in Go 1.27). The counts
# take a few seconds each on the reference machine. A new interesting
# input is minimized for at most 500 runs, not the default minute (a
# smoke run once stood still 35 s doing that).
FUZZMIN := -fuzzminimizetime 500x
fuzz-smoke:
	$(GO) test -run '^$$' -fuzz '^FuzzAssemble$$' -fuzztime 20000x $(FUZZMIN) ./vmloop/jasm
	$(GO) test -run '^$$' -fuzz '^FuzzVerify$$' -fuzztime 100000x $(FUZZMIN) ./vmloop
	$(GO) test -run '^$$' -fuzz '^FuzzInterp$$' -fuzztime 30000x $(FUZZMIN) ./vmloop
	$(GO) test -run '^$$' -fuzz '^FuzzCopyNested$$' -fuzztime 300x $(FUZZMIN) ./vmloop
	$(GO) test -run '^$$' -fuzz '^FuzzWheel$$' -fuzztime 20000x $(FUZZMIN) ./timerwheel
	$(GO) test -run '^$$' -fuzz '^FuzzNative$$' -fuzztime 3000x $(FUZZMIN) -parallel 2 ./native

bench:
	$(GO) test -pgo=pgo/jade.pgo -run '^$$' -bench . -benchmem -benchtime 2s ./bench/

# Instructions, L1 instruction-cache misses and locked instructions per
# operation of the task-shape benchmarks under callgrind (valgrind,
# installed with apt-get when missing and possible): the figures a noisy
# machine does not move, and the check that a binary's layout does not
# thrash one cache set (docs/PERFORMANCE.md, "Methodology"). About a
# minute. Not in `make test`.
icache-check:
	scripts/icache-check.sh

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) $(PKGS)

clean:
	rm -rf bin build/cache/windows build/cache/arm64

# The side-by-side harness (about 1–2 minutes; PERFFLAGS=--quick for <30 s).
perf:
	$(GO) run -pgo=pgo/jade.pgo ./cmd/jade perf $(PERFFLAGS) --json perf.json --html perf.html

# The HTML report (`jade perf --html`) of a fixture
# (perf/testdata/report_fixture.json) in headless Chromium, installed with
# apt-get when missing and possible: fails on a chart missing from the
# DOM, NaN or Infinity, or a text overflowing its chart or column, and
# leaves screenshots in out/report-check/*.png to look at. Says SKIPPED
# and passes when no Chromium can be had. Not in `make test`.
report-check:
	$(GO) test -count=1 -run 'Chart|Units|Summary|Histogram' ./perf/
	$(GO) run ./perf/internal/reportcheck -out out/report-check

# The scenarios that have Tokio and BEAM peer shapes, with the peers'
# columns (bench/peers; `jade perf --peers` installs erlang-base,
# librust-tokio-dev and cargo with apt-get when missing and possible, and
# caches the peers' builds under out/peers).
PEER_SCENARIOS := spawn_join,ping_pong,yield,spawn_many,chained_spawn,yield_many,wake_latency,fairness,sleep_lateness,parked_task_bytes
peers: build
	bin/jade perf --peers --scenarios $(PEER_SCENARIOS) $(PERFFLAGS) --json perf.json --html perf.html

# The soak (cmd/jade-soak): bin/jade serving examples/echo.jasm in a child
# process, driven with 10,000 concurrent connections, churn, slowloris,
# resets and half-closes on uring and epoll with 1 and 2 workers; fails on
# descriptors not closed, heap growth after GC or lost bytes. A few minutes;
# soak-short (2,000 connections, about a minute on 2 CPUs) is part of test.
# SOAKFLAGS adds flags (go run ./cmd/jade-soak -h).
soak: build
	$(GO) run ./cmd/jade-soak $(SOAKFLAGS)

soak-short: build
	$(GO) run ./cmd/jade-soak -short $(SOAKFLAGS)
