# lockcheck: a compatibility and safety harness for distributed locks on Valkey.
#
#   make run     install what is missing, build the image it needs, run the main job
#   make test    install what is missing, build the server images, run every test
#   make safety  the whole safety suite; make bench: bench/results.md
#   make catch-rate  each mutant and its control over 20 seeded runs: out/catch-rate/catch-rate.md
#   make gate-catch-rate  each mutant in the default workload, judged by lock-correct: out/gate-catch-rate/catch-rate.md
#   make claims  the article's claims about Redlock, each over 20 seeds: out/claims/claims.md, README.md, docs/redlock.md
#   make mitigations  the failover race under each mitigation, 20 seeds each: out/mitigations/mitigations.md, README.md, docs/redlock.md
#   make migrations  every client while the lock key's slot moves, 20 seeds each: out/migrations/migrations.md, README.md, docs/migrations.md
#   make report-card  each lock library under each fault on Sentinel and cluster, 20 seeds each: out/report-card/report-card.md, README.md, docs/report-card.md
#   make false-alarms  the correct clients in the same workload: out/false-alarms/false-alarms.md
#   make shrink-figures  violated runs shrunk to reproducers: out/shrink/shrink.md
#   make matrix-rate  the default matrix over 20 seeds, a core busy: out/matrix-rate/matrix-rate.md, README.md, docs/matrix.md
#   make docs    the reference pages generated from the code: docs/reference
#
# Both need root (apt-get, debootstrap) and a running Docker engine.

GO       ?= go
BIN      := bin/lockcheck
OUT      ?= out
# Ryuk's image cannot be pulled offline: lockcheck removes what it starts.
export TESTCONTAINERS_RYUK_DISABLED ?= true

.PHONY: all setup images build run test unit safety bench catch-rate gate-catch-rate false-alarms claims mitigations migrations report-card shrink-figures matrix-rate docs clean

all: build

# setup installs the host tools lockcheck needs and that a fresh machine of
# this kind lacks: debootstrap builds the server images, gcc compiles the
# clock shim, Debian's python3-redis runs the example adapter.
setup:
	@./scripts/setup.sh

build:
	$(GO) build -o $(BIN) ./cmd/lockcheck

# images builds every server image that can be built offline from Debian's
# packages; images built before are reused.
images: setup build
	$(BIN) images --build

# run builds only the image its matrix runs on (the newest Valkey build
# that can be had): the matrix obtains it before its first run. make
# images builds the others; any command that needs one builds it.
run: setup build
	./scripts/run.sh $(BIN) $(OUT)

# unit runs the tests that need no Docker engine.
unit:
	$(GO) test -count=1 ./history/... ./topology/... ./checker/... ./reports/... ./cmd/...

# test runs every package: unit tests, the topology, compat and upgrade
# suites, and the quick slice of the safety suite (label "quick"), all
# against real servers. The example library's locktest runs too, and fails
# rather than skips without Docker (LOCKTEST_REQUIRE). Two lanes
# (scripts/test.sh): the packages one at a time (the topology suite and the
# Go tests time failovers) and, beside them, one after the other, the
# suites whose verdicts do not hang on the machine's speed: the quick
# slice, the upgrade suite, the compat suite and the example library.
test: images
	$(GO) vet ./...
	./scripts/test.sh $(GO) $(OUT)

# safety runs the whole safety suite: the quick slice, the real libraries,
# every fault on every topology where it fits.
safety: images
	$(GO) test -count=1 -timeout 90m ./suites/safety -ginkgo.v

bench: images
	$(GO) run ./bench -out bench $(BENCHFLAGS)

# catch-rate measures how often each mutant's randomized scenario catches
# it and how often its control raises a false alarm, over 20 seeds each
# (about 40 minutes on 2 cores, three mutants at once): a measurement for
# the README, not a test.
catch-rate: images
	$(BIN) catch-rate --out $(OUT)/catch-rate $(CATCHRATEFLAGS)

# gate-catch-rate measures the default gate: every mutant in the default
# workload with only --ttl 500ms --clients 6 --keys 1 --duration 30s given,
# caught when the run misses lock-correct, over 20 seeds (about 55 minutes
# on 2 cores, three at once). A measurement for the README, not a test.
gate-catch-rate: images
	$(BIN) catch-rate --gate --out $(OUT)/gate-catch-rate $(CATCHRATEFLAGS)

# false-alarms runs the correct clients (native, fenced, lua, delex, the
# Python adapter in every mode, redsync, redislock, GLIDE; not valkeylock,
# whose renewal deadline is a finding of the report card) over 20
# seeds of the same workload on standalone: no run may miss lock-correct.
# A measurement for the README, not a test (about 60 minutes, three
# topologies at once).
false-alarms: images
	$(BIN) false-alarms --out $(OUT)/false-alarms $(FALSEALARMSFLAGS)

# claims runs each of the article's claims about Redlock (three independent
# primaries) in the scenario that tests it, by the built-in Redlock client
# and redsync, and each Redlock mutant under the default gate, over 20
# seeds, each run on a topology of its own, three at once. A measurement
# for the README, not a test: once every run is made it rewrites the
# marked tables of docs/redlock.md and its headline lines in README.md, so they are never
# copied by hand.
claims: images
	$(BIN) claims --out $(OUT)/claims --into README.md,docs/redlock.md $(CLAIMSFLAGS)

# mitigations runs the failover race (kill-primary) on Sentinel and on the
# cluster under each of the article's mitigations (none, WAIT 1, WAITAOF
# 1 1, min-replicas-to-write 1, WAIT giving the lock back when short, and
# the fenced client) over 20 seeds, each run on a topology of its own,
# three at once. A measurement for the README, not a test; it rewrites
# the marked table of docs/redlock.md and its README line as claims does.
mitigations: images
	$(BIN) claims --table mitigations --out $(OUT)/mitigations --into README.md,docs/redlock.md $(CLAIMSFLAGS)

# migrations runs each client (the built-in references and the Go lock
# libraries) under each fault that moves the lock key's slot (migrate-slot,
# migrate-slot-legacy, cancel-migration, migrate-and-failover, scale-out,
# scale-in) on a valkey-9.1 cluster, and migrate-slot on redis-8.6, over
# 20 seeds, each run on a cluster of its own, two at once (about 4 hours
# on 2 cores: shard it with CLAIMSFLAGS="--shard I/4 --into=", keep each
# shard's folder in docs/measured/migrations, and lockcheck merge --into
# README.md,docs/migrations.md the four). It rewrites the marked table of
# docs/migrations.md and its README line as claims does.
migrations: images
	$(BIN) claims --table migrations --parallel 2 --out $(OUT)/migrations --into README.md,docs/migrations.md $(CLAIMSFLAGS)

# report-card runs each lock library lockcheck drives (redsync, redislock,
# valkeylock, redis-py's Lock through the adapter) and the native and
# fenced clients under each fault family a user meets (none, kill-primary,
# restart-primary, clock-jump, pause-client, partition-primary,
# script-flush, unload-lua, latency) on
# Sentinel and on a cluster of valkey-9.1, over 20 seeds, two at once
# (many hours on 2 cores: shard it with CLAIMSFLAGS="--shard I/N --into="
# and lockcheck merge). It rewrites the marked table of
# docs/report-card.md and its README lines as claims does.
report-card: images
	$(BIN) claims --table report-card --parallel 2 --out $(OUT)/report-card --into README.md,docs/report-card.md $(CLAIMSFLAGS)

# shrink-figures shrinks violated runs of the default matrix (the native
# client) and of three mutants' scenarios with lockcheck shrink's default
# budget, two at a time (lockcheck shrink-figures): out/shrink/shrink.md.
# A measurement for the docs, not a test (up to about 45 minutes).
shrink-figures: images
	./scripts/shrink-figures.sh $(BIN) $(OUT)

# matrix-rate runs the default matrix (make run's) over seeds 1..20 with
# one core kept busy beside it, and writes how often each cell showed its
# expected outcome into README.md and docs/matrix.md. A measurement for
# the docs, not a test (about 75 minutes).
matrix-rate: setup build
	./scripts/matrix-rate.sh $(BIN) $(OUT)

# docs writes the reference pages generated from the code (every
# command's flags, the faults, the clients) into docs/reference; go test
# ./cmd/lockcheck fails while the committed pages differ from them.
docs:
	$(GO) run ./cmd/lockcheck docs

# clean removes every container and network an aborted run left behind,
# and the root filesystems of an image build that was killed.
clean:
	-docker rm -f $$(docker ps -aq --filter label=lockcheck.managed=true) 2>/dev/null
	-docker network rm $$(docker network ls -q --filter label=lockcheck.managed=true) 2>/dev/null
	rm -rf bin $${LOCKCHECK_BUILD_DIR:-/var/tmp/lockcheck}/base-* $${LOCKCHECK_BUILD_DIR:-/var/tmp/lockcheck}/rootfs-*
