# docintake — see README.md. The two commands: `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := build

BIN       := bin
TOOLS_BIN ?= $(HOME)/.cache/docintake-bin
VERSITYGW_VERSION := v1.8.0
# The module proxy refuses the tag 2025.1.1 (403); v0.6.1 is the same release
# under its module version.
STATICCHECK_VERSION := v0.6.1
MODULES   := pkg pkg/client services/ingest services/processor services/dispatcher services/mailintake services/standalone services/intakectl services/pogen services/systemtest
SERVICES  := ingest processor dispatcher mailintake standalone intakectl
# go test flags for `make test`; CI and developers run the same.
TESTFLAGS ?= -race -count=1 -timeout 20m
# Each fuzz target runs this long in `make test` (bounded exploration on top of
# the seeds every go test run executes); `make fuzz` explores longer.
CI_FUZZTIME ?= 3s

export INTAKE_VERSITYGW ?= $(TOOLS_BIN)/versitygw

.PHONY: build run test tools proto lint fmt bench bench-ingest bench-extract bench-generic bench-processor bench-mailintake dev-mailbox dev-mail clean chaos fuzz

build: ## build bin/ingest bin/processor bin/dispatcher bin/mailintake bin/standalone bin/intakectl
	@mkdir -p $(BIN)
	@for s in $(SERVICES); do \
		(cd services/$$s && go build -trimpath -o ../../$(BIN)/$$s ./cmd/$$s) || exit 1; \
	done
	@$(MAKE) --no-print-directory resident

# bin/pdftext-resident: the resident text engine's helper (C++ against
# libpoppler-cpp, pkg/pdftext/resident). g++, libpoppler-cpp-dev and
# pkg-config are installed when missing and we are root on Debian; elsewhere
# the helper is skipped with a message (auto then uses pdftotext), except
# under CI=true, where that is an error.
RESIDENT_SRC := pkg/pdftext/resident/pdftext-resident.cpp
.PHONY: resident
resident: $(BIN)/pdftext-resident
$(BIN)/pdftext-resident: $(RESIDENT_SRC)
	@mkdir -p $(BIN)
	@if ! command -v g++ >/dev/null || ! pkg-config --exists poppler-cpp 2>/dev/null; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "make: installing g++ libpoppler-cpp-dev pkg-config (resident text engine)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ libpoppler-cpp-dev pkg-config >/dev/null; \
		fi; \
	fi
	@if command -v g++ >/dev/null && pkg-config --exists poppler-cpp 2>/dev/null; then \
		g++ -O2 -std=c++17 -Wall -Wextra -Wl,--export-dynamic-symbol=cmsOpenProfileFromMem -o $@ $< $$(pkg-config --cflags --libs poppler-cpp); \
	elif [ "$$CI" = true ]; then \
		echo "make: cannot build $@: install g++ libpoppler-cpp-dev pkg-config"; exit 1; \
	else \
		echo "make: skipping $@ (install g++ libpoppler-cpp-dev pkg-config); the auto engine uses pdftotext"; \
	fi

# make run: the whole system in one process on this machine. PostgreSQL comes
# from INTAKE_DATABASE_URL, or a private cluster under INTAKE_DATA_DIR started
# from the local server binaries (installed here when missing, if we can).
run: build
	@if [ -z "$$INTAKE_DATABASE_URL" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "make run: installing PostgreSQL (Debian package postgresql)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
		else \
			echo "make run: install PostgreSQL server binaries (e.g. apt-get install postgresql) or set INTAKE_DATABASE_URL"; exit 1; \
		fi; \
	fi
	@echo "make run: API on http://$${INTAKE_HTTP_ADDR:-127.0.0.1:8080} (token dev-token); the dev client's webhooks go to"
	@echo "  http://127.0.0.1:9099/hook — receive them in a second terminal with: bin/intakectl listen"
	INTAKE_CLIENTS_FILE=$${INTAKE_CLIENTS_FILE:-deploy/dev/clients.yaml} \
	INTAKE_WEBHOOK_ALLOW_PRIVATE=$${INTAKE_WEBHOOK_ALLOW_PRIVATE:-true} \
	$(BIN)/standalone

# make dev-mailbox: a throwaway Dovecot on 127.0.0.1:1143 as the dev client's
# orders mailbox (services/systemtest/cmd/devmailbox, until Ctrl-C); it prints
# the INTAKE_MAILBOXES_FILE for `make run`. make dev-mail PDF=order.pdf mails it
# a PO from buyer@contoso.example (party CONTOSO).
dev-mailbox:
	cd services/systemtest && go run ./cmd/devmailbox serve
dev-mail:
	@test -n "$(PDF)" || (echo "usage: make dev-mail PDF=order.pdf"; exit 1)
	cd services/systemtest && go run ./cmd/devmailbox send $(abspath $(PDF))

# make test: every module's tests against real PostgreSQL, JetStream and S3
# (versitygw, installed into $(TOOLS_BIN) on first use). The short chaos run
# (services/systemtest/internal/chaos) drives the binaries of `make build`.
# deploy/dev/testenv.sh first installs missing Debian packages (as root) and
# provides PostgreSQL: INTAKE_TEST_DATABASE_URL, else 127.0.0.1:5432, else a
# private throwaway cluster stopped when the tests end.
test:
	@. deploy/dev/testenv.sh || exit 1; \
	$(MAKE) --no-print-directory tools build || exit 1; \
	failed=""; resident=""; [ -x $(BIN)/pdftext-resident ] && resident=$(CURDIR)/$(BIN)/pdftext-resident; \
	for m in $(MODULES); do \
		echo "== go test $$m"; \
		(cd $$m && INTAKE_CHAOS_BIN=$(CURDIR)/$(BIN) INTAKE_PDF_RESIDENT_BIN=$$resident go test $(TESTFLAGS) ./...) || failed="$$failed $$m"; \
	done; \
	echo "== fuzz: every target for $(CI_FUZZTIME)"; \
	$(MAKE) --no-print-directory fuzz FUZZTIME=$(CI_FUZZTIME) || failed="$$failed fuzz"; \
	if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi

tools: $(INTAKE_VERSITYGW)

$(INTAKE_VERSITYGW):
	GOBIN=$(dir $(INTAKE_VERSITYGW)) go install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

# make chaos: the full fault run of RELIABILITY.md (2000 documents, 16
# clients, kill -9 of random services, nats-server and PostgreSQL crashes).
# CHAOSFLAGS passes options, e.g. CHAOSFLAGS='-n 500 -work /tmp/chaos'.
CHAOSFLAGS ?=
chaos: build tools
	cd services/systemtest && go run ./cmd/chaos -bin $(CURDIR)/$(BIN) $(CHAOSFLAGS)

# make chaos-cluster: the same full run on three clustered nats-servers with
# an R3 stream (INTAKE_STREAM_REPLICAS=3), each NATS crash killing one node,
# the stream's leader first (RELIABILITY.md, "On a NATS cluster").
.PHONY: chaos-cluster
chaos-cluster: build tools
	cd services/systemtest && go run ./cmd/chaos -bin $(CURDIR)/$(BIN) -nats-cluster -nats-restarts 3 $(CHAOSFLAGS)

# make fuzz: every fuzz target for FUZZTIME each (CI runs the seeds through
# make test; this explores).
FUZZTIME ?= 20s
fuzz:
	@set -e; for t in \
		"pkg ./opentrans FuzzWrite" "pkg ./opentrans FuzzParseOrder" "pkg ./pdftext FuzzExtract" "pkg ./pdftext FuzzLayout" \
		"pkg ./template FuzzExtract" "pkg ./template FuzzParseNumber" "pkg ./template FuzzParseDate" "pkg ./template FuzzLoad" \
		"pkg ./embedded FuzzRecognise" \
		"services/ingest . FuzzUploadMultipart" "services/ingest . FuzzUploadJSON" "services/ingest . FuzzDecodeBase64"; do \
		set -- $$t; echo "== fuzz $$1 $$2 $$3"; deploy/dev/fuzz.sh $$1 $$2 $$3 $(FUZZTIME); \
	done

proto:
	./proto/gen.sh

lint:
	@for m in $(MODULES); do (cd $$m && go vet ./... && go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...) || exit 1; done
	@test -z "$$(gofmt -l $(MODULES))" || (gofmt -l $(MODULES); exit 1)

fmt:
	gofmt -w $(MODULES)

# make bench: the whole pipeline in one run (issue 8): ingest vs raw
# PutObject, end to end with 1 and 2 processors, extraction vs pdftotext,
# peak RSS; prints the table and writes it into BENCHMARKS.md. BENCHFLAGS
# passes options, e.g. BENCHFLAGS='-profile /tmp/prof -work /tmp/bench'.
BENCHFLAGS ?=
bench: build tools
	cd services/systemtest && go run ./cmd/bench -bin $(CURDIR)/$(BIN) -command 'make bench' $(BENCHFLAGS)

bench-ingest: build tools
	cd services/systemtest && go test -run '^$$' -bench BenchmarkIngest -benchtime 20s -timeout 10m ./...

# make bench-mailintake: mails/s through the mailbox intake of the standalone
# system (Dovecot on loopback, S3 on versitygw, PostgreSQL) beside HTTP uploads
# of the same PDFs one at a time in the same run; INTAKE_BENCH_MAILS mails
# (default 200).
bench-mailintake: tools
	cd services/systemtest && go test -run '^$$' -bench BenchmarkMailIntake -benchtime 1x -timeout 20m .

# make bench-generic: the template-less reader (issue 24): CPU per page on
# the corpus POs beside the Contoso template's in the same run, and its score
# on 1,000 generated POs (orders right, wrong, negatives delivered, per
# layout feature). Needs ../shared and pdftotext.
bench-generic:
	cd pkg && go test -run '^$$' -bench 'BenchmarkRead' -benchtime 50x ./generic/
	cd services/pogen && go run ./cmd/pogen -score -seed 10001 -n 1000

bench-extract:
	cd pkg && go test -run '^$$' -bench 'BenchmarkExtract' -benchtime 3s -timeout 20m ./pdftext/ ./template/

# make bench-processor: N documents (INTAKE_BENCH_DOCS, default 300) through 1
# and 2 processor processes; documents/s, p50/p99 upload→processed_*, peak RSS.
bench-processor: tools
	cd services/processor && go test -run '^$$' -bench BenchmarkProcessor -benchtime 1x -timeout 20m .

clean:
	rm -rf $(BIN)
