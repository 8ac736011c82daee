"""The sweep stage's rules: one function per Snakemake rule (``workflow/rules/sweep.smk``),
files in, files out; each rule's ``settings`` param is the plain dict built by
``workflow/rules/common/sweep.smk`` from the checked campaign.

Imports are local to each function: a campaign is many short jobs, and a run job should not pay
for statsmodels and matplotlib it never uses.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

POWERCAP_ROOT = "/sys/class/powercap"

log = logging.getLogger(__name__)


def check(settings: Mapping[str, Any], out: str | Path, perf_binary: str = "perf",
          powercap_root: str = POWERCAP_ROOT) -> None:
    """Rule ``sweep_check``: refuse the campaign before its first run when a sensor is
    unavailable on this host.

    Parameters
    ----------
    settings : ``{"sensors": ..., "env": ...}`` of the campaign's first run
        (:meth:`perfcast.sweep.campaign.Campaign.run_params`).
    out : the report of what the host offers (JSON).

    Raises
    ------
    HostCapabilityError
        listing every unavailable sensor (:func:`perfcast.sweep.sensors.check_sensors`).
    """
    from perfcast.io import write_json
    from perfcast.sweep import sensors

    report = sensors.check_sensors(settings["sensors"], env=settings["env"],
                                   perf_binary=perf_binary, powercap_root=powercap_root)
    log.info("sensors available: %s", report)
    write_json(report, out)


def run(settings: Mapping[str, Any], out: str | Path, *, stop_marker: str | Path,
        failed_record: str | Path, perf_binary: str = "perf",
        powercap_root: str = POWERCAP_ROOT) -> None:
    """Rule ``sweep_run``: one measured run (:func:`perfcast.sweep.runner.run_and_record`).

    Parameters
    ----------
    settings : the run's :meth:`perfcast.sweep.campaign.Campaign.run_params`.
    out : its record (JSON).
    stop_marker, failed_record : where a ``fail_fast`` failure is recorded.

    Raises
    ------
    RunFailed, CampaignStopped
        in a ``fail_fast`` campaign (see :mod:`perfcast.sweep.runner`).
    """
    from perfcast.sweep import runner

    record = runner.run_and_record(settings, out, stop_marker=stop_marker,
                                   failed_record=failed_record, perf_binary=perf_binary,
                                   powercap_root=powercap_root)
    log.info("run %s/iter%s: %s", record["point"], record["iteration"], record["status"])


def aggregate(records: Sequence[str | Path], parameters: Sequence[str], campaign: str,
              out: str | Path) -> None:
    """Rule ``sweep_aggregate``: every run record of a campaign -> its run table (Parquet,
    sorted by parameter values then iteration; see :func:`perfcast.sweep.table.runs_frame`)."""
    from perfcast.io import write_parquet
    from perfcast.sweep import table

    df = table.runs_frame(table.read_records(records), parameters)
    meta = {"campaign": campaign, "parameters": list(parameters), "source": "perfcast run",
            **table.summary(df, parameters)}
    log.info("%s: %s", campaign, meta)
    write_parquet(df, out, metadata=meta)


def import_arpe(settings: Mapping[str, Any], campaign: str, out: str | Path) -> None:
    """Rule ``sweep_import``: an ARPE results tree -> a run table like :func:`aggregate`
    writes (ARPE: https://github.com/martinamaggio/arpe).

    Parameters
    ----------
    settings : ``{"path": ..., "parameters": [...]}``, the import's results directory and
        its parameter names in ARPE's order.
    campaign : the import's name.
    out : the run table (Parquet).

    Raises
    ------
    InputError
        a results tree that is not ARPE's (:func:`perfcast.sweep.arpe.import_arpe`).
    """
    from perfcast.io import write_parquet
    from perfcast.sweep import arpe, table

    path, parameters = settings["path"], list(settings["parameters"])
    df = arpe.import_arpe(path, parameters, campaign)
    meta = {"campaign": campaign, "parameters": parameters,
            "source": f"ARPE results at {path}", **table.summary(df, parameters)}
    write_parquet(df, out, metadata=meta)


def model(runs: str | Path, settings: Mapping[str, Any], *, campaign: str,
          out_json: str | Path, out_models: str | Path, out_coefficients: str | Path,
          out_fitted: str | Path, out_predictions: str | Path, fig_fits: str | Path,
          fig_residuals: str | Path) -> None:
    """Rule ``sweep_models``: fit every model of a campaign; write the JSON summary, four
    tables and two figures (:func:`perfcast.sweep.analysis.analyse`).

    Parameters
    ----------
    runs : the campaign's run table.
    settings : ``{"parameters": [...], "analysis": Analysis.to_params(), "fit": {...}}``
        (:class:`perfcast.sweep.campaign.Analysis`, :class:`perfcast.sweep.settings.FitSettings`).
    campaign : the campaign's name.
    """
    from perfcast.io import parquet_metadata, read_parquet, write_json, write_parquet
    from perfcast.settings import build
    from perfcast.sweep import analysis as an
    from perfcast.sweep import figures, table
    from perfcast.sweep.campaign import Analysis
    from perfcast.sweep.runner import json_safe
    from perfcast.sweep.settings import FitSettings

    parameters = list(settings["parameters"])
    analysis = build(Analysis, settings["analysis"])
    fit = build(FitSettings, settings["fit"])
    df = read_parquet(runs)
    res = an.analyse(df, campaign=campaign, parameters=parameters, analysis=analysis, fit=fit)
    summary = res["summary"]
    summary["source"] = parquet_metadata(runs).get("source")
    write_json(json_safe(summary), out_json)  # strict JSON: a statistic without value is null
    meta = {"campaign": campaign}
    for key, path in (("models", out_models), ("coefficients", out_coefficients),
                      ("fitted", out_fitted), ("predictions", out_predictions)):
        write_parquet(res[key], path, metadata=meta)
    ok = table.ok_rows(df).reset_index(drop=True)
    data = an.add_derived(ok, analysis.derived)
    figures.plot_fits(res["results"], data, fig_fits, alpha=fit.alpha,
                      title=f"{campaign}: measured and fitted")
    figures.plot_residuals(res["results"], fig_residuals, title=f"{campaign}: residuals")


def paper(campaigns: Sequence[str], models: Sequence[str | Path],
          predictions: Sequence[str | Path], runs: Sequence[str | Path],
          out_csv: str | Path, out_md: str | Path, out_png: str | Path) -> None:
    """Rule ``sweep_paper``: our model table (CSV, Markdown; as ARPE's Table 2) and figure,
    over ``campaigns`` (:mod:`perfcast.sweep.artifacts`)."""
    from perfcast.io import parquet_metadata, read_parquet, write_csv, write_text
    from perfcast.sweep import artifacts

    frames = {c: (read_parquet(m), read_parquet(p), read_parquet(r),
                  list(parquet_metadata(r).get("parameters", [])))
              for c, m, p, r in zip(campaigns, models, predictions, runs, strict=True)}
    tab = artifacts.model_table({c: f[0] for c, f in frames.items()})
    write_csv(tab, out_csv)
    write_text(artifacts.markdown(tab), out_md)
    artifacts.plot_predictions(frames, out_png)
