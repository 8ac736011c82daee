# Stage 6: parameter-sweep campaigns and their models (ARPE, seed 002; METHODS.md section 6).
#
# One job per configuration x iteration (the configuration is one wildcard named like a
# Snakemake Paramspace with filename_params="*": size~256_workers~2), so a campaign runs in
# parallel locally or on a cluster, and adding a value to a parameter adds only the new jobs (a
# run's params hold its own command and sensors, nothing another configuration changes).
#   sweep_check      sensors.json     every sensor tried once; refuses the campaign if one is missing
#   sweep_run        runs/{point}/iter{iteration}.json   one measured run (failed runs recorded)
#   sweep_aggregate  runs.parquet     the campaign's run table
#   sweep_import     runs.parquet     the same table from an ARPE results directory
#   sweep_models     models.*, coefficients, fitted, predictions, figures
#   sweep_paper      results/paper/sweep_models.{csv,md}, sweep_fit.png
import math
import os
import re
import sys
import uuid

from snakemake.utils import validate

from perfcast.sweep.arpe import arpe_files
from perfcast.sweep.campaign import parse_sweep
from perfcast.sweep.runner import SESSION_ENV

if stage_enabled("sweep"):
    validate(config["sweep"], "../schemas/sweep.schema.yaml")
    SWEEP = parse_sweep(config["sweep"], config.get("programs"))
else:
    SWEEP = parse_sweep({})
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


rule sweep_check:
    output:
        f"{SWEEP_DIR}/{{campaign}}/sensors.json",
    params:
        sensors=lambda wc: _sweep_first(wc.campaign)["sensors"],
        env=lambda wc: _sweep_first(wc.campaign)["env"],
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/check.log",
    benchmark:
        f"{BENCH}/sweep/{{campaign}}/check.tsv"
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_check.py"


rule sweep_run:
    input:
        # ancient: a re-check of the sensors must not rerun every measured run
        ancient(f"{SWEEP_DIR}/{{campaign}}/sensors.json"),
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs/{{point}}/iter{{iteration}}.json",
    params:
        run=lambda wc: SWEEP.campaigns[wc.campaign].run_params(
            wc.point, int(wc.iteration), SWEEP_PYTHON
        ),
        stop_marker=lambda wc: f"{SWEEP_DIR}/{wc.campaign}/STOPPED.json",
        failed_record=lambda wc: f"{SWEEP_DIR}/{wc.campaign}/failed/{wc.point}/iter{wc.iteration}.json",
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
        point=r"[^/]+",
        iteration=r"[0-9]+",
    log:
        f"{LOGS}/sweep/{{campaign}}/runs/{{point}}/iter{{iteration}}.log",
    benchmark:
        f"{BENCH}/sweep/{{campaign}}/runs/{{point}}/iter{{iteration}}.tsv"
    threads: _sweep_threads
    resources:
        mem_mb=lambda wc: SWEEP.campaigns[wc.campaign].mem_mb,
        runtime=lambda wc: math.ceil(SWEEP.campaigns[wc.campaign].timeout_s / 60) + 2,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_run.py"


rule sweep_aggregate:
    input:
        _sweep_runs,
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    params:
        parameters=lambda wc: _sweep_parameters(wc.campaign),
    wildcard_constraints:
        campaign=SWEEP_RUN_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/aggregate.log",
    benchmark:
        f"{BENCH}/sweep/{{campaign}}/aggregate.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_aggregate.py"


rule sweep_import:
    input:
        lambda wc: arpe_files(SWEEP.imports[wc.campaign].path),
    output:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    params:
        path=lambda wc: SWEEP.imports[wc.campaign].path,
        parameters=lambda wc: _sweep_parameters(wc.campaign),
    wildcard_constraints:
        campaign=SWEEP_IMPORT_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/import.log",
    benchmark:
        f"{BENCH}/sweep/{{campaign}}/import.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_import.py"


rule sweep_models:
    input:
        f"{SWEEP_DIR}/{{campaign}}/runs.parquet",
    output:
        json=f"{SWEEP_DIR}/{{campaign}}/models.json",
        models=f"{SWEEP_DIR}/{{campaign}}/models.parquet",
        coefficients=f"{SWEEP_DIR}/{{campaign}}/coefficients.parquet",
        fitted=f"{SWEEP_DIR}/{{campaign}}/fitted.parquet",
        predictions=f"{SWEEP_DIR}/{{campaign}}/predictions.parquet",
        fits=report(
            f"{SWEEP_DIR}/{{campaign}}/figures/fits.png",
            caption="../report/sweep/fits.rst",
            category="6. Parameter sweeps",
            subcategory="{campaign}",
        ),
        residuals=report(
            f"{SWEEP_DIR}/{{campaign}}/figures/residuals.png",
            caption="../report/sweep/residuals.rst",
            category="6. Parameter sweeps",
            subcategory="{campaign}",
        ),
    params:
        parameters=lambda wc: _sweep_parameters(wc.campaign),
        analysis=lambda wc: _sweep_analysis(wc.campaign),
        fit=SWEEP.fit,
    wildcard_constraints:
        campaign=SWEEP_ALL_NAMES,
    log:
        f"{LOGS}/sweep/{{campaign}}/models.log",
    benchmark:
        f"{BENCH}/sweep/{{campaign}}/models.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_models.py"


rule sweep_paper:
    input:
        models=lambda wc: [f"{SWEEP_DIR}/{n}/models.parquet" for n in _sweep_paper_campaigns()],
        predictions=lambda wc: [
            f"{SWEEP_DIR}/{n}/predictions.parquet" for n in _sweep_paper_campaigns()
        ],
        runs=lambda wc: [f"{SWEEP_DIR}/{n}/runs.parquet" for n in _sweep_paper_campaigns()],
    output:
        csv=f"{RESULTS}/paper/sweep_models.csv",
        md=f"{RESULTS}/paper/sweep_models.md",
        png=report(
            f"{RESULTS}/paper/sweep_fit.png",
            caption="../report/sweep/paper_fit.rst",
            category="6. Parameter sweeps",
            subcategory="paper",
        ),
    params:
        campaigns=lambda wc: _sweep_paper_campaigns(),
    log:
        f"{LOGS}/sweep/paper.log",
    benchmark:
        f"{BENCH}/sweep/paper.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        CONDA_ENV
    script:
        "../../scripts/sweep_paper.py"
