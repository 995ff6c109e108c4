# slivingdoc — build, test, lint, bench, fuzz.
# Everything the tests need is installed by the project's own tooling on first
# use (SeaweedFS is built from its Go module into the user cache dir).

GO        ?= go
BIN       ?= bin/slivingdoc
VERSION   ?= dev
LDFLAGS   := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := 2026.2.2
FUZZTIME  ?= 10s
TESTFLAGS ?=

.PHONY: all build test lint bench fuzz clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/slivingdoc

# The whole suite: unit, black-box (built binary), SeaweedFS and MCP interop.
test:
	$(GO) test -count=1 -timeout 20m $(TESTFLAGS) ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt wants to rewrite:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./bench/...

# Every fuzz target in fuzz/, each for FUZZTIME.
fuzz:
	@set -e; for t in $$($(GO) test -list '^Fuzz' ./fuzz/ | grep '^Fuzz'); do \
		echo "fuzz $$t ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) ./fuzz/; \
	done

clean:
	rm -rf bin
