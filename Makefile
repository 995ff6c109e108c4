# slivingdoc — build, test, lint, bench, fuzz.
# Everything the tests need is installed by the project's own tooling on first
# use (SeaweedFS is built from its Go module into the user cache dir).

GO        ?= go
BIN       ?= bin/slivingdoc
# A release sets VERSION; without it the binary reports 0.0.0-dev+<revision>
# from Go's VCS stamp (cmd/slivingdoc/version.go).
VERSION   ?=
LDFLAGS   := -s -w$(if $(VERSION), -X main.version=$(VERSION))
# staticcheck release 2026.2.2 is module version v0.8.2
STATICCHECK_VERSION := v0.8.2
FUZZTIME  ?= 10s
TESTFLAGS ?=

# Tests and benchmarks talk only to 127.0.0.1: keep the AWS SDK's default
# credential chain away from the instance metadata endpoint.
export AWS_EC2_METADATA_DISABLED := true

.PHONY: all build test weed lint race bench fuzz clean crash-exhaustive

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/slivingdoc

# SeaweedFS for the tests: built from its Go module into the user cache dir
# (a cold build takes minutes; progress and the build log's path on the
# terminal), or SLIVINGDOC_WEED=/path/to/weed. Before the tests, so that no
# test package's timeout pays for it.
weed:
	$(GO) run ./internal/seaweed/cmd/weedbuild

# The whole suite: unit, black-box (built binary), SeaweedFS and MCP interop.
# The timeout detects a hang, it does not judge speed: cmd/slivingdoc (the
# exhaustive crash test and the black-box tests) takes about 10 minutes on
# 2 idle cores and went past 20 under a load average of 20-25 (a cold run
# beside other builds), so each package gets 45.
test: weed
	$(GO) test -count=1 -timeout 45m $(TESTFLAGS) ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to rewrite:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# The packages with concurrency (goroutines, shared caches, cross-process
# locks), each tested once more under the race detector: the pack store, the
# remote protocol and its backends, the file-system helpers, the engine and
# its adapters. .ci/run runs it after make test.
RACE_PKGS ?= ./cas/ ./remote/... ./internal/memstore/ ./internal/osfile/ ./internal/parallel/ ./server/...

race:
	$(GO) test -race -count=1 -timeout 40m $(TESTFLAGS) $(RACE_PKGS)

# The exhaustive crash test (cmd/slivingdoc, TestCrashExhaustive): writer A
# killed at every crash point of every short sequence of operations, once or
# twice in a row (docs/local-state.md, "Crash testing"). make test runs it
# too; this target runs it alone, with its count of cases.
# CRASH_SCOPE=full widens it to every pair of points of every sequence (hours).
CRASH_SCOPE ?=

crash-exhaustive:
	@log=$$(mktemp); SLIVINGDOC_CRASH_SCOPE=$(CRASH_SCOPE) $(GO) test -count=1 -timeout 60m -v -run '^TestCrashExhaustive$$' $(TESTFLAGS) ./cmd/slivingdoc/ >$$log 2>&1; status=$$?; \
	grep -v -e '^=== ' -e '^ *--- PASS' $$log; rm -f $$log; exit $$status

# Every Go benchmark of the module: bench/ holds the cross-package ones;
# cas, remote, server, server/secrets and cmd/slivingdoc keep those that need
# their package's internals. BENCH_PKGS=./bench/... runs only bench/.
BENCH_PKGS ?= ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(BENCH_PKGS)

# Every fuzz target in fuzz/, each for FUZZTIME.
# Fuzz targets live in ./fuzz/, except those that need a package's
# internals (FUZZ_PKGS lists their packages). A run that fails with only
# "context deadline exceeded" and no failing input (Go's fuzzer can report
# that when FUZZTIME ends while a worker is being stopped, seen on a
# loaded 2-core machine) is run once more; any other failure stands.
FUZZ_PKGS ?= ./fuzz/ ./remote/s3store/ ./server/ ./server/history/ ./server/mcpserver/

fuzz:
	@set -e; out=$$(mktemp); trap 'rm -f "$$out"' EXIT; \
	for p in $(FUZZ_PKGS); do \
		for t in $$($(GO) test -list '^Fuzz' $$p | grep '^Fuzz'); do \
			for try in 1 2; do \
				echo "fuzz $$p $$t ($(FUZZTIME))"; \
				if $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$p >"$$out" 2>&1; then \
					cat "$$out"; break; \
				fi; \
				cat "$$out"; \
				if [ $$try = 1 ] && grep -q 'context deadline exceeded' "$$out" && ! grep -q 'Failing input written' "$$out"; then \
					echo "fuzz $$p $$t: the fuzzer's deadline report, no failing input: once more"; \
				else \
					exit 1; \
				fi; \
			done; \
		done; \
	done

clean:
	rm -rf bin

# ---- Release: static binaries, SHA256SUMS, npm tarballs (all under DIST) ----
# make release VERSION=x.y.z   then   make npm-pack VERSION=x.y.z

DIST      ?= dist
# os/arch[/goarm]; npm/slivingdoc/lib/platforms.js lists the same matrix.
PLATFORMS ?= linux/amd64 linux/arm64 linux/arm/7 darwin/amd64 darwin/arm64 windows/amd64
# Tracked files whose release version `make release` rewrites.
VERSION_FILES ?= server.json docs/mcp-hosts.md
# semver.org 2.0.0, without the leading "v" the file names add.
SEMVER_RE := ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(\.(0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$$
SEMVER_ANY := [0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?

.PHONY: release npm-pack

release:
	@printf '%s\n' '$(VERSION)' | grep -Eq '$(SEMVER_RE)' || \
		{ echo "make release: VERSION='$(VERSION)' is not a semantic version; use e.g. make release VERSION=1.2.3" >&2; exit 2; }
	@mkdir -p $(DIST) && rm -f $(DIST)/slivingdoc-v$(VERSION)-* $(DIST)/SHA256SUMS
	@set -e; for p in $(PLATFORMS); do \
		os=$${p%%/*}; rest=$${p#*/}; arch=$${rest%%/*}; arm=; ext=; \
		case $$rest in */*) arm=$${rest#*/};; esac; \
		[ "$$os" = windows ] && ext=.exe; \
		out=$(DIST)/slivingdoc-v$(VERSION)-$$os-$$arch$${arm:+v$$arm}$$ext; \
		echo "build $$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOARM=$$arm \
			$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/slivingdoc; \
	done
	@# Sorted by name, "<sha256>  <name>", LF: what `sha256sum -c` reads.
	@cd $(DIST) && if command -v sha256sum >/dev/null; then sha256sum slivingdoc-v$(VERSION)-*; \
		else shasum -a 256 slivingdoc-v$(VERSION)-*; fi | LC_ALL=C sort -k2 > SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS
	@set -e; for f in $(VERSION_FILES); do [ -f "$$f" ] || continue; \
		case "$$f" in \
		*.json) sed -E 's/^([[:space:]]*"version": ")[^"]*"/\1$(VERSION)"/' "$$f" > "$$f.tmp";; \
		*) sed -E -e 's/slivingdoc@$(SEMVER_ANY)/slivingdoc@$(VERSION)/g' \
			-e 's/slivingdoc-v$(SEMVER_ANY)-(linux|darwin|windows)-/slivingdoc-v$(VERSION)-\3-/g' \
			-e 's|/releases/download/v$(SEMVER_ANY)/|/releases/download/v$(VERSION)/|g' \
			-e 's/^([>[:space:]]*Version:[[:space:]]*v?)$(SEMVER_ANY)/\1$(VERSION)/' "$$f" > "$$f.tmp";; \
		esac; \
		if cmp -s "$$f" "$$f.tmp"; then rm "$$f.tmp"; else mv "$$f.tmp" "$$f"; echo "version $(VERSION) -> $$f"; fi; \
	done
	@# Each binary: right OS and architecture, no dynamic loader, version stamped.
	$(GO) test -count=1 -run '^TestReleaseBinaries$$' ./npm/ -args -release-dir='$(abspath $(DIST))' -release-version='$(VERSION)'

npm-pack:
	@printf '%s\n' '$(VERSION)' | grep -Eq '$(SEMVER_RE)' || \
		{ echo "make npm-pack: VERSION='$(VERSION)' is not a semantic version; use the VERSION of make release" >&2; exit 2; }
	node npm/pack.js --version '$(VERSION)' --dist '$(DIST)' --out '$(DIST)/npm' --platforms '$(PLATFORMS)'

# ---- System benchmark: bench/loadgen drives the built binary (file store and
# SeaweedFS on loopback) and writes bench/results/<date>.md, its SVG charts
# and the raw JSON. The quick profile fits in 15 minutes on 2 cores;
# make bench-system BENCH_PROFILE=full for the documented full profile.
BENCH_PROFILE ?= quick
BENCH_FLAGS   ?=

.PHONY: bench-system

bench-system: build
	$(GO) run ./bench/loadgen -profile $(BENCH_PROFILE) -bin $(BIN) -out bench/results $(BENCH_FLAGS)

# ---- Fault campaign (bench/chaos, docs in its package comment) ----
# The default is CI-sized (about two minutes on 2 cores). Replay a failure
# with the printed seed: make chaos CHAOS_FLAGS='-seed N ...' (the printed
# replay line has every flag). The committed campaign:
#   make chaos CHAOS_FLAGS='-rounds 280 -writers 4 -v -summary bench/results/chaos-<date>.md'
CHAOS_FLAGS ?= -rounds 60 -duration 30s -writers 3

.PHONY: chaos

chaos: build
	$(GO) run ./bench/chaos -bin $(BIN) $(CHAOS_FLAGS)

# ---- Fleet simulation (bench/fleetsim, docs in its package comment): many
# engines in one process on the mem store behind a latency model (20 ms round
# trips by default), 100 and 1,000 agents x 1 commit at a random instant of a
# minute; prints the tables (model time). Real time: the window plus the tail
# (v1 at 1,000 agents collapses: 3-8 minutes until the agents give up) plus the
# set-up and clean-up of 10^6 files (~4 GB in the temp directory: minutes on a
# loaded disk).
# The engines' cached pack files share half the process's open-file limit.
# 1,000 agents outrun 2 cores in real time: run them in slow motion, e.g.
# FLEET_FLAGS='-agents 1000 -scale 0.1 -cap 60s -dir /dev/shm'
# (about 11 minutes, 5 GB of tmpfs and 0.7 GB of memory; docs/benchmarks.md).
FLEET_FLAGS ?= -agents 100,1000

.PHONY: bench-fleet

bench-fleet:
	$(GO) run ./bench/fleetsim/cmd/fleetsim $(FLEET_FLAGS)

# ---- The publication model test at scale: PUBLICATION_SCHEDULES random
# schedules of writers committing at once on the mem store, with faults
# (lost replies, late writes, writers killed after their conditional
# write, failed uploads), run as parallel subtests (most of a schedule is
# backoff). Its L and P directories go to MODEL_TMPDIR (tmpfs when there
# is one: the engines' fsyncs dominate on a disk). The count is the test's
# last log line.
PUBLICATION_SCHEDULES ?= 5000
MODEL_PARALLEL        ?= 48
MODEL_TMPDIR          ?= $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo $${TMPDIR:-/tmp})

.PHONY: model-publication

model-publication:
	@out=$$(mktemp); \
	TMPDIR='$(MODEL_TMPDIR)' PUBLICATION_SCHEDULES=$(PUBLICATION_SCHEDULES) $(GO) test -count=1 -timeout 40m \
		-parallel $(MODEL_PARALLEL) -run '^TestPublicationModel$$' -v ./server/ >"$$out" 2>&1; rc=$$?; \
	grep -v -e '^=== ' -e '^ *--- PASS' "$$out"; rm -f "$$out"; exit $$rc
