# PosterWatch: `make run` and `make test` do everything on a fresh Debian machine.
#
#   make run     install system packages, build, create the database from data/ when absent, serve it
#                on http://$(HOST):$(PORT)/ (HOST and PORT may be set: make run PORT=9000)
#   make test    install system packages, build, fuzz the HTTP API against its OpenAPI document with
#                schemathesis (scripts/api-fuzz.sh, a fixed seed, FUZZ_EXAMPLES per operation) and run
#                the test suite beside a throwaway PostgreSQL (scripts/with-postgres.sh)
#   make bench   measure on 1,000,000 generated reports and write BENCHMARKS.md (not part of the tests)
#   make fuzz-api  the same schemathesis run, longer, on the release build: FUZZ_API_EXAMPLES per
#                operation (default 500; a quarter of them for each role but the administrator's)
#   make e2e     serve the sample data, open the map page in headless Chromium, check that tiles
#                load and searching works, and save docs/map.png (not part of the tests)
#   make fuzz    build the libFuzzer targets in Fuzz/ (parsers, import readers, photo decoding) and
#                run each for FUZZ_SECONDS (default 600) from its seed corpus; fails on any crash
#                (scripts/fuzz.sh; not part of the tests: make fuzz FUZZ_SECONDS=30 for a short run)
#   make soak    ten minutes of a mixed load (90% reads, 10% writes) on a served database, with
#                its errors, memory and z14 cluster latency (scripts/soak.sh; not part of the tests)

# The map page's Leaflet comes from Debian's libjs-leaflet, served by our server.
APT_PACKAGES := libsqlite3-dev libpng-dev libjpeg62-turbo-dev libproj-dev zlib1g-dev libisal-dev pkg-config libjs-leaflet
# The end-to-end test reads the server's exports back with GDAL, and exiftool reads stored
# photos back; the benchmark loads the server with wrk and fetches exports with curl;
# make e2e drives Chromium.
# The PostgreSQL store's tests run on a throwaway cluster (scripts/with-postgres.sh).
# Autodial's tests place calls with baresip to sipp (sip-tester) on loopback, with the
# message spoken by espeak-ng and resampled by sox (what `serve` uses when it dials).
TEST_APT_PACKAGES := gdal-bin curl libimage-exiftool-perl postgresql-15 postgresql-15-postgis-3 nginx-light python3-jsonschema \
	sip-tester baresip-core espeak-ng sox
# From PyPI for make test: schemathesis fuzzes the API against /openapi.json; joserfc checks
# access tokens as an independent JWT implementation; standardwebhooks checks the signatures
# of webhook deliveries; prometheus-client parses GET /metrics; georeport is a GeoReport v2
# client that reads our Open311 answers back.
TEST_PIP := schemathesis==4.32.5 joserfc==1.6.5 standardwebhooks==1.1.0 prometheus-client==0.26.0 georeport==0.3.1
FUZZ_EXAMPLES ?= 50
FUZZ_API_EXAMPLES ?= 500
# make fuzz: seconds per libFuzzer target (the goal: no crash in 600), and which targets (all when empty).
FUZZ_SECONDS ?= 600
FUZZ_TARGETS ?=
BENCH_APT_PACKAGES := wrk curl imagemagick postgresql postgresql-15-postgis-3 sip-tester baresip-core espeak-ng sox
E2E_APT_PACKAGES := chromium curl fonts-dejavu-core
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

DB ?= var/posterwatch.sqlite
SAMPLE := data/sample-reports.geojsonl
BIN := .build/release/posterwatch
BENCH_COUNT ?= 1000000
HOST ?= 127.0.0.1
PORT ?= 8080

.PHONY: deps test-deps pip-deps install build run test bench e2e fuzz fuzz-api soak sample clean

# Installs only what is missing, so a prepared machine does not touch apt at all.
deps:
	@$(MAKE) --no-print-directory install PACKAGES="$(APT_PACKAGES)"

test-deps: deps
	@$(MAKE) --no-print-directory install PACKAGES="$(TEST_APT_PACKAGES)"

install:
	@missing=""; \
	for p in $(PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "Installing system packages:$$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

build: deps
	swift build -c release --product posterwatch

run: build
	@if [ ! -f $(DB) ]; then \
		echo "Creating $(DB) from $(SAMPLE)"; \
		$(BIN) import $(SAMPLE) --db $(DB); \
	fi
	$(BIN) stats --db $(DB)
	$(BIN) serve --db $(DB) --host $(HOST) --port $(PORT)

# The PyPI packages of TEST_PIP, each installed only when missing or of another version.
pip-deps:
	@for p in $(TEST_PIP); do \
		python3 -m pip show "$${p%%==*}" 2>/dev/null | grep -qx "Version: $${p##*==}" \
			|| python3 -m pip install -q --disable-pip-version-check "$$p"; \
	done

# The tests run with glibc's mmap threshold at 32 KiB: Foundation's Process.run() in Swift
# 6.3.1 reads 256 bytes from the end of each /proc/self/fd entry (swift-corelibs-foundation
# PR #5472, merged after 6.3.1), which crashed a test run when the last entry ended at the
# top of a thread's heap; opendir's 32 KiB buffer mmapped has a page of slack behind it.
# A run still crashed so on 2026-11-27 (one in five full runs that day): scripts/retry-on-crash.sh
# stops a crashed run (swift-test then waits forever) and runs it once more; a failing test
# is never retried.
test: test-deps pip-deps
	swift build --product posterwatch
	scripts/api-fuzz.sh .build/debug/posterwatch $(FUZZ_EXAMPLES)
	swift build --build-tests
	POSTERWATCH_REQUIRE_POSTGRES=1 GLIBC_TUNABLES=glibc.malloc.mmap_threshold=32768 scripts/with-postgres.sh scripts/retry-on-crash.sh swift test --skip-build

fuzz-api: build pip-deps
	@$(MAKE) --no-print-directory install PACKAGES="curl"
	scripts/api-fuzz.sh $(BIN) $(FUZZ_API_EXAMPLES)

bench: build
	@$(MAKE) --no-print-directory install PACKAGES="$(BENCH_APT_PACKAGES)"
	swift build -c release --product posterwatch-bench
	@# PostgreSQL with PostGIS answers the phone rankings beside ours (skipped if it cannot start).
	-@pg_ctlcluster 15 main start 2>/dev/null
	@# The PostgreSQL store beside SQLite: a throwaway cluster with durable settings.
	POSTERWATCH_PG_DURABLE=1 scripts/with-postgres.sh sh -c 'POSTERWATCH_BENCH_POSTGRES=$$POSTERWATCH_TEST_POSTGRES .build/release/posterwatch-bench --count $(BENCH_COUNT) --work .bench --out BENCHMARKS.md'

# A bounded mixed load for SOAK_MINUTES (10) after a minute's warm-up (scripts/soak.sh);
# prints its figures as a Markdown section for BENCHMARKS.md.
soak: build
	@$(MAKE) --no-print-directory install PACKAGES="wrk curl"
	scripts/soak.sh $(BIN)

e2e: build
	@$(MAKE) --no-print-directory install PACKAGES="$(E2E_APT_PACKAGES)"
	scripts/e2e.sh $(BIN) $(SAMPLE) docs/map.png

# libFuzzer ships with the Swift toolchain; the photo target links libjpeg-turbo and libpng (deps).
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh $(FUZZ_TARGETS)

# Regenerates the shipped sample (deterministic: same seed, same file).
sample: build
	$(BIN) generate --count 2000 --seed 20261121 --distribution kyiv --out $(SAMPLE)

clean:
	rm -rf .build .build-fuzz .bench var
