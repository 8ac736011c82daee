# Two entry points do all set-up on a fresh machine:
#   make run   -> the whole workflow on the embedded default config (snakemake --cores 2)
#   make test  -> the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: run test test-fast venv venv-dev system-deps lint report paper bench clean

# perf (linux-perf) and tc/ip (iproute2) are Debian packages; installed only when missing (root).
# tc and ip live in /usr/sbin or /sbin, which a non-root user's PATH often lacks: looked up there
# too. The SLURM packages for the cluster test are installed by tests/slurm/install.sh.
SBIN_PATH := $(PATH):/usr/sbin:/sbin
system-deps:
	@PATH="$(SBIN_PATH)"; command -v perf >/dev/null && command -v tc >/dev/null && \
	  command -v ip >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	      linux-perf iproute2 ; } || \
	  echo "warning: install linux-perf and iproute2 (perf, tc, ip) for the real-hardware parts"

# uv reads the system's certificate store (as pip does), not only its own bundled roots: a site
# whose proxy has its own certificate authority works as it does for pip
export UV_SYSTEM_CERTS ?= 1

# the venv: uv (from PyPI) installs the packages, in parallel and from its cache when it has them
# (pip alone takes minutes for the same set); its progress is shown
# `make run` needs the package and its dependencies only (about 245 MB downloaded, 1.1 GB
# installed); the tests, the linters and the benchmarks add the dev extras (about 12 MB more)
# The installed modules are compiled to bytecode as pip does (uv does not by default): every
# Snakemake job starts a Python that imports Snakemake, pandas and perfcast, and where nothing
# may write bytecode (PYTHONDONTWRITEBYTECODE, a read-only venv) each start would compile them
# anew, 10 s of CPU instead of 3 on this 2-core machine. perfcast's own sources (editable, in
# src/) are compiled by `make bytecode` before each run and test (a fraction of a second when
# nothing changed).
UV_INSTALL := $(BIN)/uv pip install --compile-bytecode

$(BIN)/perfcast: pyproject.toml
	@echo "perfcast: creating $(VENV) (the package and its dependencies, about 245 MB from PyPI)"
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip uv
	$(UV_INSTALL) --python $(BIN)/python -e .
	touch $@

$(VENV)/.dev: $(BIN)/perfcast
	$(UV_INSTALL) --python $(BIN)/python -e '.[dev]'
	touch $@

.PHONY: bytecode
bytecode: $(BIN)/perfcast
	@$(BIN)/python -m compileall -q src/perfcast

venv: $(BIN)/perfcast bytecode
venv-dev: $(VENV)/.dev bytecode

# ARGS: more options for snakemake, e.g. make run ARGS="--configfile my.yaml"
run: venv system-deps
	$(BIN)/snakemake --cores $(CORES) $(ARGS)

report: venv
	$(BIN)/snakemake --cores $(CORES) --report results/report.html

# the whole run plus the paper's artifacts (the replay downloads the paper's measurements): what
# `make report` then shows exists
paper: venv
	$(BIN)/snakemake --cores $(CORES) all paper

# tests run on $(TEST_WORKERS) pytest-xdist workers (most of a workflow test's time is spent
# waiting on processes, the scheduler or a throttle); each test file stays on one worker, so that
# its module- and session-scoped runs of the workflow happen once
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadfile

# The tests run one BLAS/OpenMP thread per process: $(TEST_WORKERS) pytest workers and their
# Snakemake jobs share the cores, and a numerical library's idle threads spin, starving the
# others (the default config's model test: 40 s with one thread beside two busy loops, 83 s with
# the library's own threads). Results do not depend on it.
TEST_TARGETS := test test-fast test-property test-lowest test-loaded
$(TEST_TARGETS): export OMP_NUM_THREADS = 1
$(TEST_TARGETS): export OPENBLAS_NUM_THREADS = 1
$(TEST_TARGETS): export MKL_NUM_THREADS = 1
# pytest keeps its assertion-rewritten test modules as bytecode in __pycache__ (git-ignored) and
# reads them back on the next run: 2-3 s of CPU per worker saved on every run after the first.
# PYTHONDONTWRITEBYTECODE (set in some environments) would turn that cache off; an empty value
# is unset for Python.
$(TEST_TARGETS): export PYTHONDONTWRITEBYTECODE =

# the docstrings' Examples are tests too (src/perfcast, --doctest-modules)
DOCTESTS := --doctest-modules src/perfcast

test: venv-dev system-deps
	$(BIN)/python -m pytest -q $(XDIST) --durations=15 tests $(DOCTESTS)

# the unit tests (tests/unit: no Snakemake run, no cluster), the property-based tier
# (tests/property: generated inputs, a bounded number of examples) and the docstrings' examples,
# without the tests marked live (real measured runs they wait on: cgroup-restricted runs, live
# sessions, signals to running jobs, a run as another user) and the tests marked study (a
# calibration or power study over hundreds of generated series, seconds of CPU each); `make test`
# runs them. What is left computes rather than waits, so one worker per CPU (each worker also
# pays the collection, 4-5 s of CPU here: on 2 CPUs 3 workers are no faster than 2)
FAST_WORKERS ?= $(shell nproc)
test-fast: venv-dev
	$(BIN)/python -m pytest -q -n $(FAST_WORKERS) --dist loadfile tests/unit tests/property \
	  $(DOCTESTS) -m "not slow and not slurm and not live and not study"

# the property-based tier alone; HYPOTHESIS_PROFILE=thorough for many more examples
.PHONY: test-property
test-property: venv-dev
	$(BIN)/python -m pytest -q tests/property

lint: venv-dev
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check workflow
	$(BIN)/snakemake --lint

bench: venv-dev
	$(BIN)/python -m benchmarks

clean:
	rm -rf results/* .snakemake

# The floors in pyproject.toml are tested ones: what depends on the dependencies' versions (the
# unit tests, and a Snakemake DAG of the whole workflow) on the LOWEST versions pyproject.toml
# allows for the direct dependencies (uv's lowest-direct resolution), on the oldest Python perfcast
# supports. The property tier is left out: it feeds generated inputs to our own readers, which a
# library's version does not change. The venv of the floors is cached outside the clone, keyed on
# pyproject.toml's hash: a fresh clone with the same pyproject.toml reuses it (CI pays once); the
# package itself is installed from this clone, editable and without dependencies, at each run (a
# second). uv comes from PyPI into $(VENV).
.PHONY: test-lowest test-loaded
LOWEST_PY ?= python3.11
LOWEST_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/perfcast
LOWEST := $(LOWEST_CACHE)/venv-lowest-$(shell sha256sum pyproject.toml | cut -c1-16)

$(LOWEST)/.complete: | venv
	rm -rf $(LOWEST_CACHE)/venv-lowest-*
	$(BIN)/uv venv -q --python $(LOWEST_PY) $(LOWEST)
	$(BIN)/uv pip install -q --compile-bytecode --python $(LOWEST)/bin/python \
	  --resolution lowest-direct -r pyproject.toml --extra dev
	touch $@

test-lowest: $(LOWEST)/.complete system-deps
	$(BIN)/uv pip install -q --python $(LOWEST)/bin/python --no-deps -e .
	$(LOWEST)/bin/python -m pytest -q -p no:cacheprovider \
	  tests/unit tests/workflow/test_scale.py -m "not slurm and (not slow or floors)"

# the whole suite as a user without root (tests/nonroot.sh): `make test` in a copy of the clone
# that user owns, with a venv it can read (built from uv's cache on a Python it can run, cached
# outside the clone keyed on pyproject.toml's hash). perf restricts such a user to user mode
# (perf_event_paranoid >= 2) and the tests that need root skip with their reason. As root the
# user is NONROOT_USER, created when missing; a user without root runs its own `make test`.
.PHONY: test-nonroot
NONROOT_USER ?= perfcast-test
NONROOT_CACHE ?= /var/tmp/perfcast-nonroot
test-nonroot: venv
	NONROOT_USER=$(NONROOT_USER) NONROOT_CACHE=$(NONROOT_CACHE) UV=$(abspath $(BIN))/uv \
	  TEST_WORKERS=$(TEST_WORKERS) tests/nonroot.sh test

# the whole suite with the CPU saturated (busy loops, twice the CPUs): it must pass as on an
# idle host; no test may depend on the machine's speed or load
test-loaded: venv-dev system-deps
	$(BIN)/python tests/load.py -- $(BIN)/python -m pytest -q $(XDIST) --durations=15 tests $(DOCTESTS)
