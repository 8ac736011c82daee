# Two entry points do all set-up on a fresh machine:
#   make run   -> the whole workflow on the embedded default config (snakemake --cores 2)
#   make test  -> the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: run test test-fast venv system-deps lint report paper bench clean

# perf (linux-perf) and tc/ip (iproute2) are Debian packages; installed only when missing (root).
# The SLURM packages for the cluster test are installed by tests/slurm/install.sh.
system-deps:
	@command -v perf >/dev/null && command -v tc >/dev/null && command -v ip >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && apt-get update -q && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	      linux-perf iproute2 ; } || \
	  echo "warning: install linux-perf and iproute2 (perf, tc, ip) for the real-hardware parts"

$(BIN)/perfcast: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(BIN)/perfcast

run: venv system-deps
	$(BIN)/snakemake --cores $(CORES)

report: venv
	$(BIN)/snakemake --cores $(CORES) --report results/report.html

paper: venv
	$(BIN)/snakemake --cores $(CORES) paper

test: venv system-deps
	$(BIN)/python -m pytest -q --durations=15

# the unit tests only (tests/unit: no Snakemake run, no long measurement, no cluster) and the
# property-based tier (tests/property: generated inputs, a bounded number of examples)
test-fast: venv
	$(BIN)/python -m pytest -q tests/unit tests/property -m "not slow and not slurm"

# the property-based tier alone; HYPOTHESIS_PROFILE=thorough for many more examples
.PHONY: test-property
test-property: venv
	$(BIN)/python -m pytest -q tests/property

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

bench: venv
	$(BIN)/python -m benchmarks

clean:
	rm -rf results/* .snakemake

# The floors in pyproject.toml are tested ones: the unit tests (not slow, not slurm) on the LOWEST
# versions pyproject.toml allows for the direct dependencies (uv's lowest-direct resolution), in a
# fresh .venv-lowest/ on the oldest Python perfcast supports. uv comes from PyPI into $(VENV).
.PHONY: test-lowest
LOWEST := .venv-lowest
LOWEST_PY ?= python3.11

test-lowest: venv system-deps
	$(BIN)/pip install -q uv
	$(BIN)/uv venv -q --clear --python $(LOWEST_PY) $(LOWEST)
	$(BIN)/uv pip install -q --python $(LOWEST)/bin/python --resolution lowest-direct -e '.[dev]'
	$(LOWEST)/bin/python -m pytest -q tests/unit tests/property -m "not slow and not slurm"
