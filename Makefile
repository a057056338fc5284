# Sluice — the two commands that matter: `make run` and `make test`.
SHELL := /bin/bash
GO ?= go
# Tests share a 2-core machine with a Kafka broker: keep parallelism modest.
TEST_FLAGS ?= -p 2 -count=1 -timeout 15m
KAFKA ?= 127.0.0.1:9092
# The PostgreSQL of the Debezium tests (make postgres-up), on a port below
# Linux's ephemeral range, which a client's outgoing port could hold.
POSTGRES ?= 127.0.0.1:15432
# The secured listeners kafka-up.sh opens beside $(KAFKA), and the directory
# it writes their CA, client certificate, SCRAM user and flag files to.
KAFKA_SASL_SSL ?= 127.0.0.1:9094
KAFKA_RUN_DIR ?= $(CURDIR)/.cache/kafka-run
KAFKA_SECURITY_DIR ?= $(KAFKA_RUN_DIR)/security
# kafka-up's other listeners: the KRaft controller, and mTLS. With KAFKA,
# KAFKA_SASL_SSL and KAFKA_RUN_DIR they let a second broker run beside the
# first, e.g. make kafka-up KAFKA=127.0.0.1:19092 KAFKA_CONTROLLER=127.0.0.1:19093
# KAFKA_SASL_SSL=127.0.0.1:19094 KAFKA_MTLS=127.0.0.1:19095 KAFKA_RUN_DIR=/tmp/k2.
KAFKA_CONTROLLER ?= 127.0.0.1:9093
KAFKA_MTLS ?= 127.0.0.1:9095
# What kafka-up.sh and kafka-down.sh are told: every address and the run dir.
KAFKA_SCRIPT_ENV = KAFKA_BOOTSTRAP=$(KAFKA) KAFKA_CONTROLLER=$(KAFKA_CONTROLLER) \
	KAFKA_SASL_SSL=$(KAFKA_SASL_SSL) KAFKA_MTLS=$(KAFKA_MTLS) KAFKA_RUN_DIR=$(KAFKA_RUN_DIR)
# What test-kafka-secured runs over SASL_SSL: the connector lifecycle, offsets
# PATCH and DELETE on a source and a sink, a file round trip, an exactly-once
# source (the binaries, with crashes), and the security tests themselves.
SECURED_TESTS ?= ^(TestKafkaSecurity.*|TestLifecycle.*|TestOffsetsSourceAlterAndReset|TestOffsetsSinkGetAlterAndDelete|TestFileSourceToFileSinkRoundTrip|TestExactlyOnceAgentCrashZombieAndCoordinatorRestart)$$

# The commit GET / and --version show is the one Go stamps into a binary
# built in a git checkout: go build stamps by default, go run only with
# -buildvcs=true. Go finds no checkout in a linked worktree (its .git is a
# file; golang/go#58218) and cannot stamp without git: the commit is then
# "unknown".
BUILDVCS ?= $(if $(and $(wildcard .git/HEAD),$(shell command -v git)),-buildvcs=true)

.PHONY: run build javahost plugins postgres-up postgres-down test-plugins test-postgres test test-compile test-unit test-integration kafka-up kafka-down test-kafka test-kafka-secured faults faults-short bench bench-go bench-console test-console vet fmt
.PHONY: check check-fmt check-tidy check-vet check-staticcheck check-errcheck check-sluicelint

## run: start a whole Sluice (embedded NATS + Kafka, a coordinator, 2 agents) on 127.0.0.1:8083
run:
	$(GO) run $(BUILDVCS) ./cmd/sluice dev --data-dir .sluice/dev

## build: build bin/sluice
build:
	$(GO) build $(BUILDVCS) -o bin/sluice ./cmd/sluice

## javahost: build the Java connector host (docs/plugins.md) into connect/javahost/target; needs
## Java 17 and Maven, which nothing else in the build does
javahost:
	cd connect/javahost && mvn -q -B -DskipTests package

## plugins: lay out the Kafka Connect plugins of deploy/plugins (Maven Central) in .cache/plugins,
## a plugin path for an agent's --plugin-path
plugins:
	./deploy/plugins/fetch.sh

## postgres-up / postgres-down: a PostgreSQL with wal_level=logical on $(POSTGRES) for the Debezium
## tests (Debian's postgresql, installed with apt-get when missing)
postgres-up:
	POSTGRES_PORT=$(lastword $(subst :, ,$(POSTGRES))) ./deploy/postgres/postgres-up.sh

postgres-down:
	./deploy/postgres/postgres-down.sh

## test-plugins: Java plugins through the connector host (a JDK 17 and Maven): the host's own tests,
## then tests/plugins on the embedded broker, with a PostgreSQL for Debezium (started and stopped
## here); `make test` skips them and needs no JDK
test-plugins: javahost plugins
	cd connect/javahost && mvn -q -B test
	@set -euo pipefail; $(MAKE) --no-print-directory postgres-up; trap '$(CURDIR)/deploy/postgres/postgres-down.sh' EXIT; \
		cd tests && SLUICE_TEST_PLUGINS=$(CURDIR)/.cache/plugins SLUICE_CONNECT_HOST_DIR=$(CURDIR)/connect/javahost/target \
		SLUICE_TEST_POSTGRES=$(POSTGRES) $(GO) test $(TEST_FLAGS) ./plugins/

## test-postgres: the native PostgreSQL connector (connect/postgres, docs/cdc-postgres.md) against the
## PostgreSQL of postgres-up (started and stopped here); `make test` skips these tests
test-postgres:
	@set -euo pipefail; $(MAKE) --no-print-directory postgres-up; trap '$(CURDIR)/deploy/postgres/postgres-down.sh' EXIT; \
		SLUICE_TEST_POSTGRES=$(POSTGRES) $(GO) test $(TEST_FLAGS) -p 1 ./connect/postgres/...

## test: every test — unit, integration and end-to-end — on the embedded broker; every package
## compiled once (test-compile), then the root module's tests and the tests module's run side by
## side (docs/testing.md: where the time goes)
test: test-compile
	@$(MAKE) --no-print-directory -j2 -Oline test-unit test-integration

# test-compile compiles every package of the three modules (not their
# tests) in one go command, as go test compiles them (the same build cache
# entries), without linking or running anything. Side by side on an empty
# cache, the two go test commands below would each compile the whole graph
# they share; after this, each compiles only its own tests. A package that
# does not compile is left to go test to report (-e).
test-compile:
	$(GO) list -e -export -f '' ./... ./api/... ./tests/... >/dev/null

# The first line runs the root module's tests and the api module's (the
# REST types and the Go client: a module of its own, which ./... does not
# reach). The second runs the tests of sluice's test seams, which only a
# -tags sluicetest build has (the end-to-end tests build the binary so;
# cmd/sluice/internal/cmd/server/seam_on*.go): they are named TestTagged…;
# every other test under cmd/sluice is the same code in either build and
# runs once, in the first line. The second line tests only the packages that
# have a TestTagged… test (TAGGED_PACKAGES): each other package would be
# linked again for no test.
TAGGED_PACKAGES = $(patsubst %/,./%,$(sort $(dir $(shell grep -rl --include='*_test.go' '^func TestTagged' cmd/sluice))))
test-unit:
	$(GO) test $(TEST_FLAGS) ./... ./api/...
	$(if $(TAGGED_PACKAGES),$(GO) test $(TEST_FLAGS) -tags sluicetest -run '^TestTagged' $(TAGGED_PACKAGES))

# The tests module's suites wait far more than they compute (leases,
# restarts, rate-limited sources): their tests run TESTS_PARALLEL at a time
# (t.Parallel), each cluster on NATS, a broker and names of its own.
# Three of its packages run long, side by side (TESTS_P at a time): e2e and
# integration, which wait, and deploy, whose Dockerfile test compiles the
# image's static binary while they wait (this -p, after TEST_FLAGS', wins).
TESTS_PARALLEL ?= 4
TESTS_P ?= 3
test-integration:
	cd tests && $(GO) test $(TEST_FLAGS) -p $(TESTS_P) -parallel $(TESTS_PARALLEL) ./...

## test-console: the web console's browser tests (tests/console, docs/console.md) in Debian's
## headless Chromium (apt-get install chromium), on the embedded broker, ≈ 1 min; a failed step
## leaves its screenshot and DOM in $(CONSOLE_ARTIFACTS). `make test` needs no browser and skips them
CONSOLE_ARTIFACTS ?= $(CURDIR)/.cache/console-artifacts
test-console:
	@rm -rf $(CONSOLE_ARTIFACTS)
	cd tests && SLUICE_TEST_CONSOLE=1 SLUICE_CONSOLE_ARTIFACTS=$(CONSOLE_ARTIFACTS) $(GO) test $(TEST_FLAGS) -p 1 ./console/

## kafka-up / kafka-down: a single-node Apache Kafka 4.4 (KRaft) on $(KAFKA), fetched with Maven;
## its addresses and run dir are the variables KAFKA, KAFKA_CONTROLLER, KAFKA_SASL_SSL, KAFKA_MTLS, KAFKA_RUN_DIR
kafka-up:
	$(KAFKA_SCRIPT_ENV) ./deploy/kafka/kafka-up.sh

kafka-down:
	$(KAFKA_SCRIPT_ENV) ./deploy/kafka/kafka-down.sh

## test-kafka: the integration and end-to-end suites against the real broker (make kafka-up first),
## then test-kafka-secured
# On the real broker the tests run one at a time within a package, as they
# did before make test ran them side by side: a 1 s agent lease beside three
# other clusters on one broker and 2 cores expires under load.
KAFKA_TESTS_PARALLEL ?= 1
# One at a time, the integration suite took 13–25 min on a long-lived broker
# holding many earlier runs' topics (6 min on a fresh one: docs/testing.md).
KAFKA_TEST_FLAGS = $(subst -timeout 15m,-timeout 40m,$(TEST_FLAGS))
test-kafka:
	cd tests && SLUICE_TEST_KAFKA=$(KAFKA) $(GO) test $(KAFKA_TEST_FLAGS) -parallel $(KAFKA_TESTS_PARALLEL) ./...
	$(MAKE) test-kafka-secured

## test-kafka-secured: a subset over the broker's SASL_SSL listener (SCRAM-SHA-512), and the
## security tests: wrong password, untrusted CA, the mTLS listener
test-kafka-secured:
	@test -f $(KAFKA_SECURITY_DIR)/sasl_ssl.env || { echo "test-kafka-secured: no secured listeners ($(KAFKA_SECURITY_DIR)/sasl_ssl.env is missing): run make kafka-up"; exit 1; }
	cd tests && SLUICE_TEST_KAFKA=$(KAFKA_SASL_SSL) \
		SLUICE_TEST_KAFKA_SECURITY=$(KAFKA_SECURITY_DIR)/sasl_ssl.env \
		SLUICE_TEST_KAFKA_MTLS=$(KAFKA_SECURITY_DIR)/mtls.env \
		$(GO) test $(TEST_FLAGS) -parallel $(KAFKA_TESTS_PARALLEL) -run '$(SECURED_TESTS)' ./integration/ ./e2e/

## faults: the fault suite (docs/reliability.md): NATS, broker, coordinator and agent faults on real
## processes, one row each, ≈ 13 min; prints the table and writes it to $(FAULTS_REPORT).
## SLUICE_TEST_KAFKA=host:port runs it on Apache Kafka (the broker-kill rows start one of their own
## with kafka-up.sh); FAULTS_ROWS=regexp picks rows.
## faults-short: the rows CI runs (≤ 5 min), written to $(FAULTS_SHORT_REPORT)
FAULTS_REPORT ?= $(CURDIR)/.cache/faults.md
FAULTS_SHORT_REPORT ?= $(CURDIR)/.cache/faults-short.md
FAULTS_ROWS ?=
FAULTS_FLAGS = -p 1 -count=1 -v -run '^TestFaults$$'
faults:
	@mkdir -p $(dir $(FAULTS_REPORT))
	cd tests && SLUICE_FAULTS=full SLUICE_FAULTS_ROWS='$(FAULTS_ROWS)' SLUICE_FAULTS_REPORT=$(FAULTS_REPORT) \
		$(GO) test $(FAULTS_FLAGS) -timeout 60m ./faults/

faults-short:
	@mkdir -p $(dir $(FAULTS_SHORT_REPORT))
	cd tests && SLUICE_FAULTS=short SLUICE_FAULTS_ROWS='$(FAULTS_ROWS)' SLUICE_FAULTS_REPORT=$(FAULTS_SHORT_REPORT) \
		$(GO) test $(FAULTS_FLAGS) -timeout 10m ./faults/

## bench: issue 9's scenarios for Sluice (BENCH_PEER=connect: also Kafka Connect 4.4, with ratios;
## BENCH_SCALE=full: large sizes); prints a table, writes bench/results.json and bench/results.md.
## Reuses a broker on 127.0.0.1:9092, else starts one (make kafka-up) and stops it at the end.
## BENCH_SCENARIOS=7 is Debezium PostgreSQL (not in the default list): make javahost plugins
## postgres-up first; it uses $(POSTGRES) unless SLUICE_TEST_POSTGRES is set. BENCH_SCENARIOS=9,10:
## the native PostgreSQL connector against Debezium, and with a 2 GiB transaction (PostgreSQL alone suffices).
bench:
	@set -euo pipefail; started=; \
	if ! (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null; then ./deploy/kafka/kafka-up.sh; started=1; fi; \
	trap 'if [[ -n $$started ]]; then ./deploy/kafka/kafka-down.sh; fi' EXIT; \
	if [[ $${BENCH_PEER:-} == connect ]]; then CONNECT_JARS_ONLY=1 ./deploy/connect/connect-up.sh; fi; \
	(cd tests && BENCH_KAFKA=127.0.0.1:9092 SLUICE_TEST_POSTGRES=$${SLUICE_TEST_POSTGRES:-$(POSTGRES)} $(GO) run ./benchrun)
	$(MAKE) --no-print-directory bench-console

## bench-console: the console's fleet home over 5,000 connectors (500 running) in headless Chromium:
## navigation start to the first page of rows, median of 5; embedded broker, no Kafka needed;
## prints the figures and writes $(CONSOLE_BENCH_OUT) (docs/performance.md)
CONSOLE_BENCH_OUT ?= $(CURDIR)/bench/results-console.md
bench-console:
	cd tests && SLUICE_TEST_CONSOLE=1 SLUICE_CONSOLE_BENCH=$(CONSOLE_BENCH_OUT) \
		SLUICE_CONSOLE_ARTIFACTS=$(CONSOLE_ARTIFACTS) $(GO) test -count=1 -timeout 20m -v -run '^TestFleetHomeBenchmark$$' ./console/

## bench-go: the Go benchmarks of tests/bench (embedded broker; SLUICE_TEST_KAFKA=host:port for Apache Kafka),
## and the fleet listing's at 5,000 connectors (coordinator/internal/fleetlist: ns/op and allocations)
bench-go:
	cd tests && $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 30m ./bench/
	$(GO) test -run '^$$' -bench BenchmarkFleetList -benchmem ./coordinator/internal/fleetlist/

vet:
	$(GO) vet ./... && $(GO) vet -tags sluicetest ./cmd/sluice/... && cd tests && $(GO) vet ./...

## check: the hygiene gate CI runs first (docs: README, Testing): gofmt; go mod tidy changes nothing;
## each module built and vetted alone (GOWORK=off), cmd/sluice also with -tags sluicetest;
## staticcheck and errcheck (pinned in tools/go.mod); sluicelint (exported names documented, no new
## time.Sleep in a test). Runs every part, then fails if one did; one part: make check-fmt,
## check-tidy, check-vet, check-staticcheck, check-errcheck or check-sluicelint
CHECKS = check-fmt check-tidy check-vet check-staticcheck check-errcheck check-sluicelint
check:
	@failed=; for c in $(CHECKS); do \
		start=$$SECONDS; $(MAKE) --no-print-directory $$c || failed="$$failed $$c"; echo "== $$c: $$((SECONDS - start)) s"; \
	done; \
	if [[ -n $$failed ]]; then echo "make check failed:$$failed"; exit 1; fi

# The modules the gate builds and vets one by one, each with GOWORK=off: what
# a user of one module alone builds. The linters read them all at once, in the
# workspace (as make test builds them): one analysis of what they share.
# tools pins the linters (go tool runs them).
CHECK_MODULES = . api tests
CHECK_PACKAGES = ./... ./api/... ./tests/...
# Runs a tool of tools/go.mod: go tool -n builds it (or finds it in the
# build cache) and prints its path.
CHECK_TOOL = $$(cd tools && GOWORK=off $(GO) tool -n $(1))

check-fmt:
	@out=$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go')); \
	if [[ -n $$out ]]; then echo "check-fmt: not gofmt-ed (make fmt):"; echo "$$out"; exit 1; fi

check-tidy:
	@for m in $(CHECK_MODULES) tools; do \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff) || { echo "check-tidy: go mod tidy changes $$m/go.mod or go.sum (cd $$m && GOWORK=off go mod tidy)"; exit 1; }; \
	done

check-vet:
	@set -e; for m in $(CHECK_MODULES); do \
		echo "check-vet: $$m"; (cd $$m && GOWORK=off $(GO) build ./... && GOWORK=off $(GO) vet ./...); \
	done; \
	echo "check-vet: . -tags sluicetest"; GOWORK=off $(GO) build -tags sluicetest ./cmd/sluice/... && GOWORK=off $(GO) vet -tags sluicetest ./cmd/sluice/...

check-staticcheck:
	@set -e; sc=$(call CHECK_TOOL,staticcheck); $$sc $(CHECK_PACKAGES); $$sc -tags sluicetest ./cmd/sluice/...

check-errcheck:
	@set -e; ec=$(call CHECK_TOOL,errcheck); x=tools/errcheck_excludes.txt; \
	$$ec -exclude $$x $(CHECK_PACKAGES); $$ec -exclude $$x -tags sluicetest ./cmd/sluice/...

# sluicelint's flags (-kit: the test kit's directory, whose tests may sleep)
# have their defaults in internal/lint/sluicelint.
check-sluicelint:
	GOWORK=off $(GO) run ./internal/lint/sluicelint

fmt:
	gofmt -w $$(git ls-files '*.go')

## conformance: the REST scenario list against Kafka Connect 4.4 and `sluice dev` on one broker; writes docs/conformance.md, fails on any MISMATCH
.PHONY: conformance
conformance:
	./tests/conformance/run.sh
