# Tidemark — build, test, benchmark, demo.
GO        ?= go
BIN       ?= bin
DIALECT   ?= sqlite
PLUGINS   := $(notdir $(wildcard plugins/*/cmd/tidemark-dialect-*))
# The timeout only ends a hang: the conformance package takes 8-15 min on 2
# quiet cores, but CI cut it at 25 min once (a loaded machine), and CI allows 90.
GOFLAGS_T ?= -count=1 -timeout 45m

.PHONY: all build plugins jdbcbridge test test-stress race unit conformance bench demo vet fmt-check setup setup-if-needed clean

# Debian packages each demo dialect needs (sqlite needs none).
DEMO_PKGS_postgres := postgresql
DEMO_PKGS_mariadb  := mariadb-server
DEMO_PKGS_mysql    := mariadb-server
DEMO_PKGS_h2       := default-jdk-headless libh2-java
DEMO_PKGS_hsqldb   := default-jdk-headless libhsqldb-java

all: build

## build: the CLI and every dialect plugin binary into $(BIN)/
build: plugins
	$(GO) build -o $(BIN)/tidemark ./cmd/tidemark

plugins:
	@mkdir -p $(BIN)
	@for p in $(PLUGINS); do \
		name=$${p#tidemark-dialect-}; \
		echo "go build $(BIN)/$$p"; \
		$(GO) build -o $(BIN)/$$p ./plugins/$$name/cmd/$$p || exit 1; \
	done

## jdbcbridge: compile the JDBC bridge server (javac only)
jdbcbridge:
	jdbcbridge/build.sh $(BIN)/jdbcbridge-classes

## test: vet, format check, unit tests and the conformance suite on every engine this machine runs
test: setup-if-needed vet fmt-check
	@mkdir -p $(BIN)
	@rm -f $(BIN)/conformance-matrix.txt
	@{ TIDEMARK_MATRIX_FILE=$(CURDIR)/$(BIN)/conformance-matrix.txt $(GO) test $(GOFLAGS_T) ./... 2>&1; echo $$? > $(BIN)/test.status; } | tee $(BIN)/test.log; \
	status=$$(cat $(BIN)/test.status); \
	echo; cat $(BIN)/conformance-matrix.txt 2>/dev/null || echo "(no conformance matrix written)"; \
	scripts/failure-digest.sh $(BIN)/test.log; exit $$status

## test-stress: make test beside CPU burners (STRESS_BURNERS, default 3 per core), to run before a submission
test-stress:
	scripts/test-stress.sh test

## race: the race detector on the core packages and on the SQLite and PostgreSQL (pgx) conformance targets
race:
	$(GO) test -race $(GOFLAGS_T) ./core/... ./internal/...
	$(GO) test -race $(GOFLAGS_T) -run 'TestConformance/^(sqlite|postgres_\(pgx\))$$' ./conformance

unit:
	$(GO) test $(GOFLAGS_T) $$($(GO) list ./... | grep -v /conformance)

## conformance: the shared suite only, verbose, with the matrix
conformance:
	$(GO) test $(GOFLAGS_T) -v -run TestConformance ./conformance

## bench: throughput and latency ratios against a plain-INSERT baseline, and consumers against Follow and watermill-sql (bench/peers), measured side by side
bench:
	$(GO) run ./bench $(BENCHFLAGS)
	$(GO) test -run '^$$' -bench RoundTrip -benchtime 20000x ./jdbcbridge

## demo: the embedded SQLite demo (DIALECT=h2 etc. for others)
demo:
	@$(if $(DEMO_PKGS_$(DIALECT)),scripts/setup-debian.sh --if-needed $(DEMO_PKGS_$(DIALECT)))
	$(GO) run ./cmd/tidemark demo --dialect $(DIALECT) $(DEMOFLAGS)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## setup: install what the tests need on Debian 12 (as root)
setup:
	scripts/setup-debian.sh

## setup-if-needed: install what is missing when root; otherwise say, in one line, what to run
setup-if-needed:
	@scripts/setup-debian.sh --if-needed

clean:
	rm -rf $(BIN)
