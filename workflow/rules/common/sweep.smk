# Checked campaigns, input functions, params and targets of the sweep stage (rules: ../sweep.smk).
import math
import os
import uuid

from perfcast.settings import as_params
from perfcast.sweep.arpe import arpe_files
from perfcast.sweep.campaign_parser import parse_sweep
from perfcast.sweep.runner import SESSION_ENV

# every campaign checked (placeholders, ranges, columns) before any job is scheduled
SWEEP = parse_sweep(
    section("sweep") if is_activated("sweep") else None,
    config["programs"],
    seed=config["seed"],
)
# names this invocation: a fail_fast stop marker only stops runs of the invocation that wrote it
os.environ.setdefault(SESSION_ENV, uuid.uuid4().hex)
SWEEP_DIR = f"{RESULTS}/sweep"
SWEEP_RUN_NAMES = alternatives(SWEEP.campaigns)
SWEEP_IMPORT_NAMES = alternatives(SWEEP.imports)
SWEEP_ALL_NAMES = alternatives([*SWEEP.campaigns, *SWEEP.imports])


def get_sweep_sensors_settings(wildcards):
    """What the sensor check of a campaign needs: the sensors and environment of its first run."""
    return as_params(SWEEP.campaigns[wildcards.campaign].sensor_check_settings())


def get_sweep_run_settings(wildcards):
    """Everything one run needs (its rendered command, env, sensors...), nothing else; where a
    fail_fast failure stops the campaign and keeps the failed run's record."""
    c, pid, i = wildcards.campaign, wildcards.point, int(wildcards.iteration)
    return as_params(
        SWEEP.campaigns[c].run_settings(
            pid,
            i,
            stop_marker=f"{SWEEP_DIR}/{c}/STOPPED.json",
            failed_record=f"{SWEEP_DIR}/{c}/failed/{pid}/iter{i}.json",
        )
    )


def get_sweep_run_threads(wildcards):
    campaign = SWEEP.campaigns[wildcards.campaign]
    return campaign.job_threads(campaign.point(wildcards.point))


def get_sweep_run_mem_mb(wildcards):
    return SWEEP.campaigns[wildcards.campaign].mem_mb


def get_sweep_run_runtime(wildcards):
    """Minutes a run may take: its timeout plus the sensors around it."""
    return math.ceil(SWEEP.campaigns[wildcards.campaign].timeout_s / 60) + 2


def get_sweep_run_records(wildcards):
    """Every run record of a campaign: configuration x iteration."""
    campaign = SWEEP.campaigns[wildcards.campaign]
    return [
        f"{SWEEP_DIR}/{campaign.name}/runs/{pid}/iter{i}.json"
        for pid in campaign.point_ids()
        for i in range(1, campaign.iterations + 1)
    ]


def get_sweep_run_table_settings(wildcards):
    """A campaign's name and parameter names, in order."""
    return as_params(SWEEP.run_table_settings(wildcards.campaign))


def get_sweep_import_files(wildcards):
    """An import's files: every file of an ARPE results tree, or the Extra-P input file."""
    spec = SWEEP.imports[wildcards.campaign]
    return [spec.path] if spec.format == "extrap" else arpe_files(spec.path)


def get_sweep_import_settings(wildcards):
    """What an import reads (format, path, region, metric) and its parameter names."""
    return as_params(SWEEP.import_settings(wildcards.campaign))


def get_sweep_models_settings(wildcards):
    """What a campaign's models depend on: its parameters, analysis and the fit settings."""
    return as_params(SWEEP.models_settings(wildcards.campaign))


def sweep_paper_table_settings():
    """The campaigns the paper's sweep table and figure show."""
    return as_params(SWEEP.paper_table_settings())


def get_sweep_paper_inputs(wildcards):
    """The models, predictions and run table of every campaign the paper shows."""
    names = SWEEP.paper_campaigns
    return {
        "models": [f"{SWEEP_DIR}/{n}/models.parquet" for n in names],
        "predictions": [f"{SWEEP_DIR}/{n}/predictions.parquet" for n in names],
        "runs": [f"{SWEEP_DIR}/{n}/runs.parquet" for n in names],
    }


def sweep_campaign_outputs(name):
    """The final outputs of one campaign or import."""
    d = f"{SWEEP_DIR}/{name}"
    return [
        f"{d}/runs.parquet",
        f"{d}/models.json",
        f"{d}/figures/fits.png",
        f"{d}/figures/residuals.png",
    ]


def sweep_targets():
    if not is_activated("sweep"):
        return []
    return [
        p
        for name in sorted([*SWEEP.campaigns, *SWEEP.imports])
        for p in sweep_campaign_outputs(name)
    ]


def sweep_paper_targets():
    if not is_activated("sweep") or not (SWEEP.campaigns or SWEEP.imports):
        return []
    return [
        f"{RESULTS}/paper/sweep_models.csv",
        f"{RESULTS}/paper/sweep_models.md",
        f"{RESULTS}/paper/sweep_fit.png",
    ]
