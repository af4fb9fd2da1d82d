# The two commands of the README: `make demo` and `make test`. Both set up what they need.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
SHARED ?= ../shared
TRACE ?= $(SHARED)/traces/cloudphysics_vscsi.csv
export CARGO_TERM_COLOR := never

.PHONY: setup build build-ci demo test lint test-rust test-python bench clean

$(VENV)/.deps: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.5,<2" "pytest>=7" "pytest-xdist>=3" "hypothesis>=6" "pandas>=2" "libcachesim>=0.3" \
	  "duckdb>=1.0" "dask[distributed]>=2024.1" "matplotlib>=3.7" "tqdm>=4.66" "nbclient>=0.9" "ipykernel>=6" \
	  "nbformat>=5" "ruff==0.17.6"
	touch $@

setup: $(VENV)/.deps

# maturin installs the Python package and its `bufsim` script; the native entry point
# (crates/bufsim-cli: `bufsim run` without starting Python, the rest handed to Python) then
# takes the script's place.
build: setup
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet
	cargo build --release --quiet -p bufsim-cli --bin bufsim
	install -m 755 target/release/bufsim $(VENV)/bin/bufsim

demo: build
	$(VENV)/bin/bufsim run $(TRACE) \
	  --policy lru --policy fifo --policy clock --policy lfu --policy opt \
	  --cache 4MiB --cache 16MiB --cache 64MiB --cache 256MiB --cache 1GiB

# The tests build with the `ci` profile (Cargo.toml): release code without LTO, several times
# faster to build from cold. bufsim-core's unit tests build with `unit` (unoptimised), its
# integration tests with `ci`, so that its library is optimised once, not twice.
test-rust:
	cargo test --profile ci --workspace --exclude bufsim-py --exclude bufsim-core
	cargo test --profile ci -p bufsim-core --test '*'
	cargo test --profile unit -p bufsim-core --lib

# The Python module and the command line reuse the crates test-rust compiled: bufsim-core's
# Cargo.toml keeps their features equal to the test build's.
build-ci: setup
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --profile ci --quiet
	cargo build --profile ci --quiet -p bufsim-cli --bin bufsim
	install -m 755 target/ci/bufsim $(VENV)/bin/bufsim

# Two workers (the machine's two cores); tests/conftest.py keeps each module, and all the tests
# that drive the kernel, on one worker.
test-python: build-ci
	$(PY) -m pytest -q -n 2 tests

# Formatting and lints first: they take seconds and fail fast.
lint: setup
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests scripts benches
	$(VENV)/bin/ruff format --check python tests scripts benches

test: lint test-rust test-python

bench: build
	$(PY) benches/compare_libcachesim.py
	$(PY) benches/compare_speed.py

clean:
	rm -rf $(VENV) target

# The instruction-count test (tests/test_instruction_counts.py) runs callgrind: install valgrind
# when missing (Debian/Ubuntu).
.PHONY: valgrind
test-python: valgrind
valgrind:
	@command -v valgrind >/dev/null || (apt-get update -qq && apt-get install -y -qq valgrind)

# bufsim collect (docs/collect.md): its tests run strace, so install it when missing (Debian/Ubuntu);
# `make workloads` regenerates the bundled real traces in traces/.
.PHONY: strace workloads
test-python: strace
strace:
	@command -v strace >/dev/null || (apt-get update -qq && apt-get install -y -qq strace)

workloads: build strace
	@command -v sqlite3 >/dev/null || (apt-get update -qq && apt-get install -y -qq sqlite3)
	$(PY) -m pip install --quiet "tpchgen-cli>=4"
	$(PY) scripts/collect_workloads.py
	$(MAKE) kernel-workloads

# The suite recorded with the kernel tracer (root, tracefs): traces/kernel/, `bufsim workloads`.
.PHONY: kernel-workloads
kernel-workloads: build
	@for c in cscope glimpse gcc psql sqlite3 mariadbd zstd; do command -v $$c >/dev/null || missing=1; done; \
	  test -f /usr/src/linux-source-6.1.tar.xz || missing=1; \
	  test -z "$$missing" || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    cscope glimpse linux-source gcc make flex bison bc libelf-dev libssl-dev postgresql mariadb-server sqlite3 zstd)
	$(PY) -m pip install --quiet "tpchgen-cli>=4"
	$(PY) scripts/record_workloads.py

# The report's browser test renders it in Debian's headless Chromium; the sweep
# scaling benchmark (run it on an idle machine).
.PHONY: chromium bench-sweep
test-python: chromium
chromium:
	@command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

bench-sweep: build
	$(PY) benches/sweep_scaling.py
