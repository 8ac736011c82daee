# Settings, input functions and targets of the sweep stage (rules: ../sweep.smk).
import math
import os
import re
import sys
import uuid

from perfcast.sweep.arpe import arpe_files
from perfcast.sweep.campaign import parse_sweep
from perfcast.sweep.runner import SESSION_ENV

# every campaign checked (placeholders, ranges, columns) before any job is scheduled
SWEEP = parse_sweep(config["sweep"], config.get("programs")) if stage_enabled("sweep") else \
    parse_sweep({})
# names this invocation: a fail_fast stop marker only stops runs of the invocation that wrote it
os.environ.setdefault(SESSION_ENV, uuid.uuid4().hex)
SWEEP_DIR = f"{RESULTS}/sweep"
SWEEP_PYTHON = sys.executable


def _sweep_alternatives(names):
    return "|".join(re.escape(n) for n in sorted(names)) or "(?!)"


SWEEP_RUN_NAMES = _sweep_alternatives(SWEEP.campaigns)
SWEEP_IMPORT_NAMES = _sweep_alternatives(SWEEP.imports)
SWEEP_ALL_NAMES = _sweep_alternatives([*SWEEP.campaigns, *SWEEP.imports])


def _sweep_analysis(name):
    spec = SWEEP.campaigns.get(name) or SWEEP.imports[name]
    return spec.analysis.to_params()


def _sweep_parameters(name):
    if name in SWEEP.campaigns:
        return list(SWEEP.campaigns[name].parameters)
    return list(SWEEP.imports[name].parameters)


def _sweep_runs(wildcards):
    c = SWEEP.campaigns[wildcards.campaign]
    return [
        f"{SWEEP_DIR}/{c.name}/runs/{pid}/iter{i}.json"
        for pid in c.point_ids()
        for i in range(1, c.iterations + 1)
    ]


def _sweep_first(name):
    c = SWEEP.campaigns[name]
    return c.run_params(c.point_ids()[0], 1, SWEEP_PYTHON)


def _sweep_threads(wildcards):
    c = SWEEP.campaigns[wildcards.campaign]
    return c.job_threads(c.point(wildcards.point))


def _sweep_outputs(name):
    d = f"{SWEEP_DIR}/{name}"
    return [f"{d}/runs.parquet", f"{d}/models.json", f"{d}/figures/fits.png",
            f"{d}/figures/residuals.png"]


def _sweep_paper_campaigns():
    chosen = (config["sweep"].get("paper") or {}).get("campaigns") or []
    names = chosen or sorted([*SWEEP.campaigns, *SWEEP.imports])
    unknown = [n for n in names if n not in SWEEP.campaigns and n not in SWEEP.imports]
    if unknown:
        raise ValueError(f"sweep.paper.campaigns: {unknown} are neither campaigns nor imports")
    return names


def sweep_targets():
    if not stage_enabled("sweep"):
        return []
    return [p for name in sorted([*SWEEP.campaigns, *SWEEP.imports]) for p in _sweep_outputs(name)]


def sweep_paper_targets():
    if not stage_enabled("sweep") or not (SWEEP.campaigns or SWEEP.imports):
        return []
    return [f"{RESULTS}/paper/sweep_models.csv", f"{RESULTS}/paper/sweep_models.md",
            f"{RESULTS}/paper/sweep_fit.png"]
