# Two entry points do all set-up on a fresh machine:
#   make run   -> the whole workflow on the embedded default config (snakemake --cores 2)
#   make test  -> the test suite
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: run test venv lint report paper bench clean

$(BIN)/perfcast: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

venv: $(BIN)/perfcast

run: venv
	$(BIN)/snakemake --cores $(CORES)

report: venv
	$(BIN)/snakemake --cores $(CORES) --report results/report.html

paper: venv
	$(BIN)/snakemake --cores $(CORES) paper

test: venv
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .
	$(BIN)/snakemake --lint

bench: venv
	$(BIN)/python -m benchmarks

clean:
	rm -rf results/* .snakemake
