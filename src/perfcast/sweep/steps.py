"""The sweep stage's workflow steps: one function per Snakemake script, files in, files out.

Imports are local to each step: a campaign is many short jobs, and a run job should not pay
for statsmodels and matplotlib it never uses.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

POWERCAP_ROOT = "/sys/class/powercap"

log = logging.getLogger(__name__)


def check(sensor_params: Mapping[str, Any], env: Mapping[str, str], out: str | Path,
          perf_binary: str = "perf", powercap_root: str = POWERCAP_ROOT) -> None:
    """Refuse the campaign before its first run when a sensor is unavailable on this host."""
    from perfcast.io import write_json
    from perfcast.sweep import sensors

    report = sensors.check_sensors(sensor_params, env=env, perf_binary=perf_binary,
                                   powercap_root=powercap_root)
    log.info("sensors available: %s", report)
    write_json(report, out)


def run(params: Mapping[str, Any], out: str | Path, *, stop_marker: str | Path,
        failed_record: str | Path, perf_binary: str = "perf",
        powercap_root: str = POWERCAP_ROOT) -> None:
    from perfcast.sweep import runner

    record = runner.run_and_record(params, out, stop_marker=stop_marker,
                                   failed_record=failed_record, perf_binary=perf_binary,
                                   powercap_root=powercap_root)
    log.info("run %s/iter%s: %s", record["point"], record["iteration"], record["status"])


def aggregate(records: Sequence[str | Path], parameters: Sequence[str], campaign: str,
              out: str | Path) -> None:
    """Every run record of a campaign -> its run table (Parquet, sorted)."""
    from perfcast.io import write_parquet
    from perfcast.sweep import table

    df = table.runs_frame(table.read_records(records), parameters)
    meta = {"campaign": campaign, "parameters": list(parameters), "source": "perfcast run",
            **table.summary(df, parameters)}
    log.info("%s: %s", campaign, meta)
    write_parquet(df, out, metadata=meta)


def import_arpe(path: str | Path, parameters: Sequence[str], campaign: str,
                out: str | Path) -> None:
    """An ARPE results tree -> a run table like :func:`aggregate` writes."""
    from perfcast.io import write_parquet
    from perfcast.sweep import arpe, table

    df = arpe.import_arpe(path, parameters, campaign)
    meta = {"campaign": campaign, "parameters": list(parameters),
            "source": f"ARPE results at {path}", **table.summary(df, parameters)}
    write_parquet(df, out, metadata=meta)


def model(runs: str | Path, *, campaign: str, parameters: Sequence[str],
          analysis: Mapping[str, Any], fit: Mapping[str, Any], out_json: str | Path,
          out_models: str | Path, out_coefficients: str | Path, out_fitted: str | Path,
          out_predictions: str | Path, fig_fits: str | Path, fig_residuals: str | Path) -> None:
    """Fit every model of a campaign; write the JSON summary, four tables, two figures."""
    from perfcast.io import parquet_metadata, read_parquet, write_json, write_parquet
    from perfcast.sweep import analysis as an
    from perfcast.sweep import figures, table

    df = read_parquet(runs)
    res = an.analyse(df, campaign=campaign, parameters=parameters, analysis=analysis, fit=fit)
    summary = res["summary"]
    summary["source"] = parquet_metadata(runs).get("source")
    write_json(summary, out_json)
    meta = {"campaign": campaign}
    for key, path in (("models", out_models), ("coefficients", out_coefficients),
                      ("fitted", out_fitted), ("predictions", out_predictions)):
        write_parquet(res[key], path, metadata=meta)
    ok = table.ok_rows(df).reset_index(drop=True)
    data = an.add_derived(ok, analysis.get("derived") or {})
    figures.plot_fits(res["results"], data, fig_fits, alpha=float(fit["alpha"]),
                      title=f"{campaign}: measured and fitted")
    figures.plot_residuals(res["results"], fig_residuals, title=f"{campaign}: residuals")


def paper_outputs(campaigns: Sequence[str], models: Sequence[str | Path],
                  predictions: Sequence[str | Path], runs: Sequence[str | Path],
                  out_csv: str | Path, out_md: str | Path, out_png: str | Path) -> None:
    """The paper's model tables (CSV, Markdown) and its figure, over every campaign."""
    from perfcast.io import parquet_metadata, read_parquet, write_csv, write_text
    from perfcast.sweep import paper

    frames = {c: (read_parquet(m), read_parquet(p), read_parquet(r),
                  list(parquet_metadata(r).get("parameters", [])))
              for c, m, p, r in zip(campaigns, models, predictions, runs, strict=True)}
    tab = paper.model_table({c: f[0] for c, f in frames.items()})
    write_csv(tab, out_csv)
    write_text(paper.markdown(tab), out_md)
    paper.plot_predictions(frames, out_png)

