# blegateway: the commands a developer and CI run.
#
#   make run    the gateway on its built-in simulator, at http://127.0.0.1:8080
#   make test   install what is missing, build, run every test
#   make build  debug build
#   make release  the server as the container ships it (.build/release/blegateway)
#   make e2e    the end-to-end suite against the real bluetoothd (a VM; root)
#   make bench  the benchmarks (release builds; bench-results/<time>/report.md)

SWIFT ?= swift
# Debian packages that building and running the gateway need: the C
# libraries' headers (libdbus, libmicrohttpd, libsqlite3, libmosquitto,
# libyaml for the simulator's scenario files,
# GnuTLS for `blegateway health` over https, and libcurl's: FoundationNetworking,
# which the client commands use, links it in a --static-swift-stdlib build),
# and dbus-daemon for `--simulate`'s private bus.
BUILD_PACKAGES := pkg-config libdbus-1-dev libmicrohttpd-dev libgnutls28-dev libsqlite3-dev libmosquitto-dev libyaml-dev libcurl4-openssl-dev dbus-daemon
# What the tests need as well. They drive real programs: busctl and gdbus
# (independent D-Bus clients), bluetoothctl from bluez (the real BlueZ client,
# against the simulator), curl, wrk and openssl (HTTP and TLS clients), jq
# (the e2e checks read the API's JSON with it), mosquitto and
# mosquitto-clients (a real broker, mosquitto_sub and mosquitto_pub), chromium
# and chromium-driver, webkit2gtk-driver and xvfb (the web console's test
# drives headless Chromium and WebKitGTK's MiniBrowser under Xvfb), sqlite3
# (tests read the state store as a second program would), prometheus
# (promtool lints /metrics; a private prometheus on a loopback port scrapes
# the gateway for the Grafana dashboard's test), testssl.sh (audits the
# gateway's HTTPS), default-jre-headless (runs OpenAPI Generator's jar from
# the openapi-generator-cli wheel), podman-compose (docker-run-check runs
# docker/compose.yaml with it), python3-venv for the Python tools below,
# and for the Web Bluetooth script's tests webkit2gtk-driver, xvfb and xauth
# (WebKitGTK, a browser engine without Web Bluetooth of its own, driven under
# a virtual display; xvfb-run needs xauth) and eslint.
TEST_PACKAGES := $(BUILD_PACKAGES) dbus-bin systemd bluez libglib2.0-bin curl wrk openssl jq mosquitto mosquitto-clients \
	chromium chromium-driver sqlite3 prometheus testssl.sh default-jre-headless podman-compose python3-venv \
	webkit2gtk-driver xvfb xauth eslint

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The Python tools the tests use (Tests/requirements.txt, pinned) live in a
# virtual environment of the checkout's own, first on the PATH of every
# recipe, so the tests find its python3, schemathesis and hadolint.
VENV := $(CURDIR)/.venv
export PATH := $(VENV)/bin:$(PATH)

# apt-install PACKAGES...: installs those that are missing; nothing when all are there.
define apt-install
	@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef


.PHONY: deps test-deps test-packages build release run test lint-python web-check test-python docker-check docker-run-check scale-sim e2e e2e-container e2e-fleet e2e-sim bench bench-soak bench-build bench-lint bench-check

## What building and running the gateway needs.
deps:
	$(call apt-install,$(BUILD_PACKAGES))

## What the tests need as well: Debian packages, then the virtual environment.
test-deps: test-packages $(VENV)/.installed

test-packages:
	$(call apt-install,$(TEST_PACKAGES))

# Made again only when the requirements change.
$(VENV)/.installed: Tests/requirements.txt | test-packages
	@echo "creating $(VENV) with Tests/requirements.txt"
	@rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r Tests/requirements.txt
	@touch $@

build: deps
	$(SWIFT) build

## The server as users run it and the container ships it: a release build
## with the Swift runtime and FoundationEssentials linked in
## (--static-swift-stdlib), so that the process maps one binary instead of
## it and eleven Swift libraries (libswiftCore, FoundationEssentials,
## concurrency, dispatch, ...): 2.2 MiB less idle RSS and about 5 ms less
## from exec to main on a 2-core machine (BENCHMARKS.md, issue 29). SwiftPM
## already links release builds with --gc-sections. The benchmarks measure
## this binary; bluez-sim is built the same way so that the two share one
## compilation. The link prints one warning that is not ours: glibc's
## about `mktemp` in the toolchain's static FoundationEssentials.
##
## Linked so that less of the binary is read at start and stays resident
## (BENCHMARKS.md, "20261129: start-up and idle memory"): no dynamic symbol
## table of our own symbols (--no-export-dynamic: nothing looks them up,
## and every library's symbol lookups searched it first), and, where glibc
## reads packed relative relocations (DT_RELR, glibc 2.36 and later, which
## the binary then needs: Debian 12, Ubuntu 24.04), lld packing the 53,000
## relocations of the position-independent binary into 11 KB instead of
## 1.3 MB that the loader reads at every start.
RELEASE_LINK := -Xlinker --no-export-dynamic
GLIBC_VERSION := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | cut -d' ' -f2)
ifeq ($(shell printf '2.36\n%s\n' '$(GLIBC_VERSION)' | sort -V -C 2>/dev/null && echo yes),yes)
RELEASE_LINK += -Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs
endif
##
## Compiled with cross-module optimisation: the generic code of our lower
## modules (AsyncPrimitives' lanes and wait queues, DBus, HTTPServer) is
## specialised where GatewayCore and GatewayAPI call it, instead of
## looking up generic metadata at run time on every call. Measured with
## `make bench` alternated against the same code without it (BENCHMARKS.md,
## "20261129: the same machine, then and now"): 6 % less CPU per REST read,
## 10 % more reads/s with 16 clients, the zero-loss notification rate one
## step higher; 0.6 MB more binary (stripped), about 0.5 MiB more idle RSS.
RELEASE_SWIFT := -Xswiftc -cross-module-optimization
##
## libstdc++ linked in, not loaded: the Swift runtime uses a little of it
## (74 KB in the binary), while the shared library is 2.2 MB of the image,
## 0.9 MiB of idle RSS and 0.7 to 1.1 ms of a start, its symbols bound by
## the loader (BENCHMARKS.md, "20261207, later: start-up to the
## millisecond"). The runtime's link line asks for -lstdc++; a directory
## holding only the static archive, searched first, answers it. Where the
## compiler knows no libstdc++.a, the shared library is linked as before.
LIBSTDCXX_ARCHIVE := $(shell $(dir $(realpath $(shell command -v $(SWIFT) 2>/dev/null)))clang -print-file-name=libstdc++.a 2>/dev/null)
ifneq ($(filter /%,$(LIBSTDCXX_ARCHIVE)),)
STATIC_CXX_DIRECTORY := $(CURDIR)/.build/static-libstdc++
RELEASE_LINK += -Xlinker -L$(STATIC_CXX_DIRECTORY)
RELEASE_DEPS := $(STATIC_CXX_DIRECTORY)/libstdc++.a
$(STATIC_CXX_DIRECTORY)/libstdc++.a:
	mkdir -p $(@D) && ln -sf $(LIBSTDCXX_ARCHIVE) $@
endif
RELEASE := -c release --static-swift-stdlib $(RELEASE_SWIFT) $(RELEASE_LINK)
## Another product with the same flags, so that both share one compilation
## (the linker choice is a compiler flag, and other flags rebuild all):
## `make release RELEASE_PRODUCT=bluez-sim`.
RELEASE_PRODUCT ?= blegateway
release: deps $(RELEASE_DEPS)
	$(SWIFT) build $(RELEASE) --product $(RELEASE_PRODUCT)

## The gateway on its simulator; `make run ARGS="--listen 0.0.0.0:8080"` passes options.
run: deps
	$(SWIFT) run blegateway serve --simulate $(ARGS)

test: test-deps
	$(MAKE) lint-python
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	$(MAKE) web-check
	$(MAKE) test-python
	$(MAKE) docker-check

## The Python outside clients/python (the tests' helpers, scripts/, the web
## client's tests, docker/, the benchmark peer): ruff's linter and formatter
## with ruff.toml (over the whole checkout: clients/python is checked with its
## own pyproject.toml), then mypy with mypy.ini. Seconds; `make test` runs it
## first.
lint-python: test-deps
	ruff check .
	ruff format --check .
	mypy

## clients/web/ (the Web Bluetooth script): its pages in headless Chromium
## and in WebKitGTK under Xvfb against the gateway's debug build, the files
## as the gateway serves them, and the linters (clients/web/tests).
web-check: test-deps
	$(SWIFT) build --product blegateway
	BLEGATEWAY="$$($(SWIFT) build --show-bin-path)/blegateway" xvfb-run -a python3 -m pytest -q -p no:cacheprovider -p no:asyncio clients/web/tests

## The Python package (clients/python: the asyncio client and the Bleak
## backend): ruff, mypy --strict, then its tests, which run Bleak scripts on
## Bleak's own BlueZ backend and through the debug gateway against bluez-sim
## on a private bus (about a minute).
PYTHON_CLIENT := clients/python

test-python: test-deps $(VENV)/.blegateway
	$(SWIFT) build --product blegateway
	$(SWIFT) build --product bluez-sim
	cd $(PYTHON_CLIENT) && ruff check . && ruff format --check . && mypy && \
		BLEGATEWAY_BIN_DIR="$$($(SWIFT) build --show-bin-path)" python3 -m pytest -q -rfE -p no:cacheprovider

# The package installed into the virtual environment, editable (its
# sources are used in place), with the pinned build backend.
$(VENV)/.blegateway: $(PYTHON_CLIENT)/pyproject.toml $(VENV)/.installed
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e $(PYTHON_CLIENT)
	@touch $@

## docker/: hadolint, compose schema, the runtime libraries of the release
## binary, the D-Bus policy (docker/check.sh); then the image built and run
## for real (docker-run-check). docker/README.md says what each proves.
docker-check: test-deps
	bash docker/check.sh
	$(MAKE) docker-run-check

## The image built and run (docker/container-check.sh): --simulate inside,
## then a host-like system bus from outside through the shipped D-Bus
## policy, and without it. Needs root and a container engine (podman from
## CONTAINER_TOOLS, ../shared/container by default, which also makes the base
## images once per machine); where containers cannot run (a chroot, as in
## CI's clean root) it says so and passes: .ci/run runs it on the host.
docker-run-check: test-packages
	SWIFT="$(SWIFT)" bash docker/container-check.sh

## The simulator's scale tests (1,000 advertisers, 20,000 notifications/s),
## in a release build; they print their figures.
scale-sim: test-deps
	$(SWIFT) build -c release --build-tests -Xswiftc -enable-testing
	BLUEZ_SIM_SCALE=1 $(SWIFT) test -c release -Xswiftc -enable-testing --skip-build --filter BlueZSimulatorTests.ScaleTests

## End to end (Tests/e2e): blegateway in the bluez-vm rig (../shared/bluez-vm:
## kernel HCI, bluetoothd 5.66, BlueZ's example peripheral), driven over HTTP
## from this machine; one PASS/FAIL line per step. Needs root (the rig boots
## a VM); BLUEZ_VM_DIR=/tmp/somewhere keeps its logs apart.
e2e: test-deps $(VENV)/.blegateway
	SWIFT="$(SWIFT)" bash Tests/e2e/run.sh

## The same checks against the image (docker/Dockerfile) on this machine,
## on the VM's bluetoothd through its forwarded system bus (root).
e2e-container: test-packages
	SWIFT="$(SWIFT)" bash Tests/e2e/run.sh --container

## The fleet on the real bluetoothd: two gateways in the VM, each on its own
## adapter, one mosquitto, a kept device roaming between them
## (Tests/e2e/fleet.sh; root, about 3 to 5 min).
e2e-fleet: test-packages
	SWIFT="$(SWIFT)" bash Tests/e2e/fleet.sh

## The same checks against the built-in simulator (no VM, no root).
e2e-sim: test-deps
	SWIFT="$(SWIFT)" bash Tests/e2e/run.sh --simulate

## The benchmarks (Benchmarks/): release builds of the gateway, the
## simulator and the harness, and the peer's virtual environment (a small
## Bleak + aiohttp gateway every figure stands beside, Benchmarks/peer/);
## then the runner, which writes bench-results/<time>/report.md and
## report.json, and after a complete run the summary and full report in
## BENCHMARKS.md. Not part of `make test` or CI.
## BENCH_PHASES runs a subset (`make bench BENCH_PHASES=read,peer-notify`:
## startup, memory, economy, read, notify, fanout, churn, state, scan, burst, bleak, fleet, curves,
## image (the container image's size, built by docker/container-check.sh --build-only);
## raw-, gateway- or peer- before a phase runs it for that subject only);
## BENCH_DURATION (seconds per measurement, default 8), BENCH_CHURN_SECONDS
## (default 60) and BENCH_SETTLE_SECONDS (default 60) change the run; `make
## bench-soak` churns for 10 minutes. The curves phase (`make bench
## BENCH_PHASES=curves`, about 7 minutes on a 2-core machine) measures how
## cost grows (reads against clients, CPU against notification rate,
## delivered against subscribers, RSS and CPU against kept devices, scan
## events against advertisers), draws Benchmarks/curves/*.png with
## scripts/bench-curves.py and rewrites BENCHMARKS.md's curve tables;
## BENCH_CURVE_SECONDS (seconds a point, default 3) and BENCH_CURVES (a
## subset: reads,notify,fanout,kept,scan) change it.
bench: bench-build
	Benchmarks/.build/release/bench --root .

bench-soak: bench-build
	BENCH_CHURN_SECONDS=600 Benchmarks/.build/release/bench --root .

PEER_VENV := $(CURDIR)/Benchmarks/peer/.venv

# Benchmarks/ builds the main package's modules as a dependency, and SwiftPM
# keeps their file lists from its last plan of Benchmarks/: a source file
# added to the main package since then is left out ("cannot find … in
# scope"). Removing the plan makes it list them again.
BENCH_PLANS := Benchmarks/.build/release/description.json Benchmarks/.build/debug/description.json

# The bleak phase runs Bleak scripts through the client package
# (blegateway.bleak), installed into the checkout's environment.
bench-build: test-deps $(VENV)/.blegateway $(PEER_VENV)/.installed bench-lint $(RELEASE_DEPS)
	$(SWIFT) build $(RELEASE) --product blegateway
	$(SWIFT) build $(RELEASE) --product bluez-sim
	rm -f $(BENCH_PLANS)
	$(SWIFT) build -c release --package-path Benchmarks

# Made again only when the peer's requirements change.
$(PEER_VENV)/.installed: Benchmarks/peer/requirements.txt | test-packages
	@echo "creating $(PEER_VENV) with Benchmarks/peer/requirements.txt"
	@rm -rf $(PEER_VENV)
	python3 -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r Benchmarks/peer/requirements.txt
	@touch $@

## scripts/bench-curves.py type-checked against matplotlib's own
## annotations, in the peer's environment (the checkout's .venv has no
## matplotlib, so `make lint-python` takes its imports as untyped).
bench-lint: test-deps $(PEER_VENV)/.installed
	mypy --no-warn-unused-configs --python-executable $(PEER_VENV)/bin/python scripts/bench-curves.py

## Only compiles the harness (debug, against the current sources): a cheap
## check that it still builds, without running anything.
bench-check: deps
	rm -f $(BENCH_PLANS)
	$(SWIFT) build --package-path Benchmarks
