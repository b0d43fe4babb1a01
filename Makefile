# The README's two commands: `make demo` and `make test`. Both set everything up first: a
# virtualenv in .venv with maturin, pytest, pytest-xdist, ruff and the package's dependencies
# from PyPI, and the extension built in release mode into it. Nothing else is downloaded.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEPS := $(VENV)/.deps-installed
export VIRTUAL_ENV := $(abspath $(VENV))

# The capture tool (docs/capture.md): Valgrind and glibc's debug symbols from Debian, then the
# tool built into build/capture. Installs only when running as root; otherwise says what to run.
CAPTURE_TOOL := build/capture/lib/bulkcap-amd64-linux
CAPTURE_PACKAGES := valgrind libc6-dbg

# The extension is built (and installed into the venv) only when something it is built from
# changed since the last build: the stamp is newer than both crates' sources and Cargo files,
# the lock file, build.rs and pyproject.toml. Folders are listed as well, so an added or deleted
# file counts as a change. Python sources need no rebuild: maturin installs them editable.
EXTENSION := $(VENV)/.extension-built
EXTENSION_INPUTS := Cargo.toml Cargo.lock pyproject.toml \
	$(shell find crates/bulksim-core/Cargo.toml crates/bulksim-core/src \
		crates/bulksim-py/Cargo.toml crates/bulksim-py/build.rs crates/bulksim-py/src)

# pytest on every core (pytest-xdist). Tests that share a module-scoped fixture run on one
# worker (tests/conftest.py), so each expensive input is still built once.
PYTEST_WORKERS ?= auto
PYTEST := $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup

.PHONY: all setup build demo test test-prepared capture-tool capture-deps test-rust test-python \
	lint lint-rust lint-python bench docs fuzz clean

all: build

$(DEPS): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "bulksim needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.5,<2" "pytest>=8" "pytest-xdist>=3.5" "ruff>=0.5" "click>=8.1" \
		"dask[distributed]>=2024.1" "pandas>=2.1" "pyarrow>=14" "matplotlib>=3.8" "tqdm>=4.66"
	touch $@

setup: $(DEPS)

# The stamp is dated before the build starts, so a source saved during the build is newer and
# makes the next `make` build again.
$(EXTENSION): $(DEPS) $(EXTENSION_INPUTS)
	touch $@.new
	$(BIN)/maturin develop --release --quiet
	mv $@.new $@

build: $(EXTENSION)

demo: build capture-tool
	$(BIN)/bulksim demo

# Two chains side by side (-j2), each target's output printed whole when it ends: the Rust one
# (fmt, clippy, cargo test) needs no venv, so it compiles and runs while pip downloads and while
# the release build spends minutes in its one serial LTO step; the Python one sets up, builds the
# extension and the capture tool and runs ruff. pytest runs last, alone, on every core, with its
# output live. A failure anywhere stops `make test` with a non-zero status.
test:
	@$(MAKE) --no-print-directory -j2 --output-sync=target test-prepared
	$(PYTEST)

test-prepared: lint test-rust build capture-tool

test-rust: lint-rust
	cargo test -p bulksim-core --quiet

test-python: build capture-tool
	$(PYTEST)

lint: lint-rust lint-python

lint-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings

lint-python: setup
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

capture-deps:
	@missing=""; for p in $(CAPTURE_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing$$missing for bulksim capture"; \
			DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "bulksim capture needs$$missing: run \`sudo apt-get install -y$$missing\` and then make again" >&2; \
			exit 1; \
		fi; \
	fi

capture-tool: capture-deps
	@$(MAKE) --no-print-directory -s -C capture/valgrind OUT=$(abspath build/capture)

bench: build
	$(BIN)/python -m bulksim.bench

docs: build
	$(BIN)/bulksim docs

# Seeded fuzzing of every input kind through the CLI (docs/fuzzing.md): FUZZ_CASES per kind,
# failing inputs with a repro.sh in target/fuzz-failures/, non-zero exit on any failure.
FUZZ_CASES ?= 300
FUZZ_SEED ?= 1
FUZZ_JOBS ?= 2
FUZZ_KINDS ?= all
fuzz: build
	$(BIN)/python -m tests.fuzz --cases $(FUZZ_CASES) --seed $(FUZZ_SEED) --jobs $(FUZZ_JOBS) \
		$(if $(filter-out all,$(FUZZ_KINDS)),--kinds $(FUZZ_KINDS)) --failures-dir target/fuzz-failures

clean:
	rm -rf target $(VENV) build

# Captures every program of the workload suite into workloads/captures/ (workloads/README.md):
# minutes per program, hundreds of MB; not part of `make test`. CAPTURE=none runs them natively.
.PHONY: workloads
workloads: build
	BULKSIM=$(abspath $(BIN))/bulksim bash workloads/run-all.sh
