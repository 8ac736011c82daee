# Two entry points do all set-up on a fresh machine:
#   make run   -> the whole workflow on the embedded default config (snakemake --cores 2)
#   make test  -> the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: run test venv system-deps lint report paper bench clean

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
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

bench: venv
	$(BIN)/python -m benchmarks

clean:
	rm -rf results/* .snakemake
