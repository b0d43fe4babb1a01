# The README's two commands: `make demo` and `make test`. Both set everything up first: a
# virtualenv in .venv with maturin, pytest, ruff and the package's dependencies from PyPI, and
# the extension built in release mode into it. Nothing else is downloaded.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEPS := $(VENV)/.deps-installed
export VIRTUAL_ENV := $(abspath $(VENV))

.PHONY: all setup build demo test test-rust test-python lint bench docs fuzz clean

all: build

$(DEPS): pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "bulksim needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.5,<2" "pytest>=8" "ruff>=0.5" "click>=8.1" \
		"dask[distributed]>=2024.1" "pandas>=2.1" "pyarrow>=14" "matplotlib>=3.8" "tqdm>=4.66"
	touch $@

setup: $(DEPS)

build: setup
	$(BIN)/maturin develop --release --quiet

demo: build
	$(BIN)/bulksim demo

test: build lint test-rust test-python

test-rust:
	cargo test -p bulksim-core --quiet

test-python: build
	$(BIN)/python -m pytest -q

lint: setup
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check python tests
	$(BIN)/ruff format --check python tests

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
