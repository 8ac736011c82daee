"""The sweep stage's jobs: one function per Snakemake rule (``workflow/rules/sweep.smk``), each
named after what it makes, taking the job's settings whole (:mod:`perfcast.sweep.job_settings`)
and file paths.

=====================  ======================  ==========================================
rule                   function                makes
=====================  ======================  ==========================================
``sweep_sensors``      :func:`sensor_report`   ``sensors.json``, what the host offers
``sweep_run``          :func:`run_record`      ``runs/{point}/iter{i}.json``, one run
``sweep_run_table``    :func:`run_table`       ``runs.parquet`` from the run records
``sweep_import``       :func:`import_table`    ``runs.parquet`` from ARPE's results
``sweep_models``       :func:`campaign_models` models, tables and figures of a campaign
``sweep_paper_table``  :func:`paper_table`     ``results/paper/sweep_models.*``, figure
=====================  ======================  ==========================================

Imports are local to each function (but the sensors', which every run needs): a campaign is many
short jobs, and a run job should not pay for statsmodels and matplotlib it never uses.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.sweep.sensors import POWERCAP_ROOT

if TYPE_CHECKING:
    from perfcast.sweep.job_settings import (
        ImportTableSettings,
        ModelsSettings,
        PaperTableSettings,
        RunSettings,
        RunTableSettings,
        SensorCheckSettings,
    )

log = logging.getLogger(__name__)


def sensor_report(settings: SensorCheckSettings, *, out: str | Path, perf_binary: str = "perf",
                  powercap_root: str = POWERCAP_ROOT) -> dict[str, Any]:
    """Rule ``sweep_sensors``: try every sensor of a campaign once and write what the host
    offers; refuse the campaign before its first run when a sensor is unavailable.

    Parameters
    ----------
    settings : SensorCheckSettings
        The sensors and environment of the campaign's first run.
    out : str or Path
        The report of what the host offers (JSON).
    perf_binary : str, default="perf"
        The ``perf`` executable probed for ``perf_events``.
    powercap_root : str, default=POWERCAP_ROOT
        Where RAPL zones are looked for.

    Returns
    -------
    dict
        The report written to ``out`` (:func:`perfcast.sweep.sensors.check_sensors`).

    Raises
    ------
    HostCapabilityError
        Listing every unavailable sensor.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from perfcast.sweep.campaign import CustomSensor, Sensors
    >>> from perfcast.sweep.job_settings import SensorCheckSettings
    >>> s = SensorCheckSettings("demo", Sensors((), False,
    ...                         {"three": CustomSensor("echo 3", "after")}, None), {})
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = sensor_report(s, out=Path(d) / "sensors.json")
    ...     json.loads((Path(d) / "sensors.json").read_text())["custom"]
    {'three': 3.0}
    """
    from perfcast.io import write_json
    from perfcast.sweep import sensors

    report = sensors.check_sensors(settings.sensors, env=settings.env,
                                   perf_binary=perf_binary, powercap_root=powercap_root)
    log.info("sensors available: %s", report)
    write_json(report, out)
    return report


def run_record(settings: RunSettings, *, out: str | Path, perf_binary: str = "perf",
               powercap_root: str = POWERCAP_ROOT) -> dict[str, Any]:
    """Rule ``sweep_run``: one measured run and its record
    (:func:`perfcast.sweep.runner.run_and_record`).

    Parameters
    ----------
    settings : RunSettings
        The run's rendered commands, sensors and limits
        (:meth:`perfcast.sweep.campaign.Campaign.run_settings`).
    out : str or Path
        Its record (JSON).
    perf_binary : str, default="perf"
        The ``perf`` executable (with ``perf_events`` sensors).
    powercap_root : str, default=POWERCAP_ROOT
        Where RAPL zones are read (with the ``rapl`` sensor).

    Returns
    -------
    dict
        The record written to ``out``.

    Raises
    ------
    RunFailed, CampaignStopped
        In a ``fail_fast`` campaign (see :mod:`perfcast.sweep.runner`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.sweep.campaign import Sensors
    >>> from perfcast.sweep.job_settings import RunSettings
    >>> with tempfile.TemporaryDirectory() as d:
    ...     s = RunSettings("demo", "n~1", 1, {"n": 1}, "exit 0", "", "", {}, None, 10.0, False,
    ...                     Sensors((), False, {}, None), f"{d}/STOP.json", f"{d}/failed.json")
    ...     rec = run_record(s, out=Path(d) / "iter1.json")
    ...     rec["status"], rec["returncode"], (Path(d) / "iter1.json").is_file()
    ('ok', 0, True)
    """
    from perfcast.sweep import runner

    record = runner.run_and_record(settings, out, perf_binary=perf_binary,
                                   powercap_root=powercap_root)
    log.info("run %s/iter%s: %s", record["point"], record["iteration"], record["status"])
    return record


def run_table(settings: RunTableSettings, *, records: Sequence[str | Path],
              out: str | Path) -> dict[str, Any]:
    """Rule ``sweep_run_table``: every run record of a campaign -> its run table (Parquet,
    sorted by parameter values then iteration; see :func:`perfcast.sweep.table.runs_frame`).

    Parameters
    ----------
    settings : RunTableSettings
        The campaign's name and parameter names.
    records : sequence of str or Path
        Its run records (JSON, :func:`run_record`).
    out : str or Path
        The run table (Parquet; its metadata says where it comes from).

    Returns
    -------
    dict
        The table's metadata: campaign, parameters, source and the counts of
        :func:`perfcast.sweep.table.summary`.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from perfcast.sweep.job_settings import RunTableSettings
    >>> rec = {"campaign": "demo", "point": "n~1", "iteration": 1, "parameters": {"n": 1},
    ...        "status": "ok", "returncode": 0, "wall_s": 0.5}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "r.json").write_text(json.dumps(rec))
    ...     meta = run_table(RunTableSettings("demo", ("n",)), records=[Path(d, "r.json")],
    ...                      out=Path(d) / "runs.parquet")
    ...     meta["n_runs"], meta["source"]
    (1, 'perfcast run')
    """
    from perfcast.io import write_parquet
    from perfcast.sweep import table

    parameters = list(settings.parameters)
    df = table.runs_frame(table.read_records(records), parameters)
    meta = {"campaign": settings.campaign, "parameters": parameters, "source": "perfcast run",
            **table.summary(df, parameters)}
    log.info("%s: %s", settings.campaign, meta)
    write_parquet(df, out, metadata=meta)
    return meta


#: formats :func:`import_table` writes, by suffix
IMPORT_FORMATS = (".parquet", ".csv")


def import_format(out: str | Path, name: str) -> str:
    """The format :func:`import_table` writes to ``out``: its suffix, ``.parquet`` or ``.csv``.

    Parameters
    ----------
    out : str or Path
        The table's path.
    name : str
        How an error names ``out`` (the command line: its flag).

    Raises
    ------
    InputError
        Any other suffix.

    Examples
    --------
    >>> import_format("runs.csv", "out")
    '.csv'
    """
    from perfcast.errors import InputError

    suffix = Path(out).suffix
    if suffix not in IMPORT_FORMATS:
        raise InputError(None, f"{name}: the table's format is told by its suffix, and "
                         f"{suffix or 'no suffix'!r} is neither", expected=".parquet or .csv")
    return suffix


def import_table(settings: ImportTableSettings, *, out: str | Path) -> dict[str, Any]:
    """Rule ``sweep_import`` (and ``perfcast sweep-import``): measurements taken elsewhere -> a
    run table like :func:`run_table` writes: an ARPE results tree
    (:func:`perfcast.sweep.arpe.import_arpe`; https://github.com/martinamaggio/arpe) or one
    region and metric of an Extra-P input file
    (:func:`perfcast.sweep.extrap_import.import_extrap`).

    Parameters
    ----------
    settings : ImportTableSettings
        The import's name, format, path, parameter names (in the source's order), and for
        Extra-P its region and metric.
    out : str or Path
        The run table: ``.parquet`` (with its metadata) or ``.csv`` (the command line's
        other format; a CSV file holds no metadata).

    Returns
    -------
    dict
        The table's metadata: campaign, parameters, source and the counts of
        :func:`perfcast.sweep.table.summary`.

    Raises
    ------
    InputError
        A results tree that is not ARPE's, an Extra-P file that cannot be read or does not
        declare these parameters, or an ``out`` whose suffix names neither format.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.sweep.job_settings import ImportTableSettings
    >>> with tempfile.TemporaryDirectory() as d:
    ...     for n in (1, 2):
    ...         run = Path(d, "results", f"{n}", "1")
    ...         run.mkdir(parents=True)
    ...         _ = (run / "APRE_timed.txt").write_text(f"{n}.0 {n}.0 0.0 {n}\\n")
    ...     s = ImportTableSettings("demo", "arpe", f"{d}/results", ("n",), None, None)
    ...     meta = import_table(s, out=Path(d) / "runs.parquet")
    ...     meta["n_runs"], meta["n_configurations"], meta["wall_s_total"]
    (2, 2, 3.0)
    """
    from perfcast.io import write_csv, write_parquet
    from perfcast.sweep import arpe, table

    suffix = import_format(out, repr(str(out)))
    parameters = list(settings.parameters)
    if settings.format == "extrap":
        from perfcast.sweep.extrap_import import import_extrap

        df = import_extrap(settings.path, parameters, settings.campaign,
                           region=settings.region, metric=settings.metric)
        source = f"Extra-P input {settings.path} ({df['source'].iloc[0]})"
    else:
        df = arpe.import_arpe(settings.path, parameters, settings.campaign)
        source = f"ARPE results at {settings.path}"
    meta = {"campaign": settings.campaign, "parameters": parameters, "source": source,
            **table.summary(df, parameters)}
    if suffix == ".csv":
        write_csv(df, out)
    else:
        write_parquet(df, out, metadata=meta)
    return meta


def campaign_models(settings: ModelsSettings, *, runs: str | Path, out_json: str | Path,
                    out_models: str | Path, out_coefficients: str | Path,
                    out_fitted: str | Path, out_predictions: str | Path, fig_fits: str | Path,
                    fig_residuals: str | Path) -> None:
    """Rule ``sweep_models``: fit every model of a campaign; write the JSON summary, four
    tables and two figures (:func:`perfcast.sweep.analysis.analyse`).

    Parameters
    ----------
    settings : ModelsSettings
        The campaign's name, parameters, analysis and the fit settings.
    runs : str or Path
        The campaign's run table (:func:`run_table`, :func:`import_table`).
    out_json : str or Path
        The models' summary (strict JSON).
    out_models, out_coefficients, out_fitted, out_predictions : str or Path
        The tables of :func:`perfcast.sweep.analysis.analyse` (Parquet).
    fig_fits, fig_residuals : str or Path
        The figures (:func:`perfcast.sweep.figures.plot_fits`,
        :func:`perfcast.sweep.figures.plot_residuals`).

    Examples
    --------
    Runs of t = 3 + 0.5 n log2(n): the normal-form search finds the law exactly, where the best
    polynomial only approximates it:

    >>> import json, math, tempfile
    >>> from pathlib import Path
    >>> from perfcast.settings import validate
    >>> from perfcast.sweep.campaign_parser import parse_sweep
    >>> sweep = parse_sweep(validate({"campaigns": {"fft": {
    ...     "command": "fft --n {n}", "iterations": 1, "parameters": {"n": [2, 4, 8, 16, 32, 64]},
    ...     "models": [{"y": "wall_s", "x": ["n"]}]}}}, "sweep"), seed=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     d = Path(tmp)
    ...     for n in (2, 4, 8, 16, 32, 64):
    ...         _ = Path(d, f"n{n}.json").write_text(json.dumps({
    ...             "campaign": "fft", "point": f"n~{n}", "iteration": 1, "parameters": {"n": n},
    ...             "status": "ok", "returncode": 0, "wall_s": 3 + 0.5 * n * math.log2(n)}))
    ...     _ = run_table(sweep.run_table_settings("fft"), records=sorted(d.glob("n*.json")),
    ...                   out=d / "runs.parquet")
    ...     outs = {k: d / f"{k}.parquet" for k in ("models", "coefficients", "fitted",
    ...                                              "predictions")}
    ...     campaign_models(sweep.models_settings("fft"), runs=d / "runs.parquet",
    ...                     out_json=d / "fft.json", **{f"out_{k}": p for k, p in outs.items()},
    ...                     fig_fits=d / "fits.png", fig_residuals=d / "residuals.png")
    ...     effect = json.loads(Path(d, "fft.json").read_text())["effects"][0]
    >>> effect["best_family"], effect["formula"]
    ('performance model normal form', 'wall_s = 3 + 0.5 * n * log2(n)')
    """
    from perfcast.io import parquet_metadata, read_parquet, write_json, write_parquet
    from perfcast.sweep import analysis as an
    from perfcast.sweep import figures, table
    from perfcast.sweep.runner import json_safe

    campaign, analysis, fit = settings.campaign, settings.analysis, settings.fit
    df = read_parquet(runs)
    res = an.analyse(df, campaign=campaign, parameters=list(settings.parameters),
                     analysis=analysis, fit=fit)
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


def paper_table(settings: PaperTableSettings, *, models: Sequence[str | Path],
                predictions: Sequence[str | Path], runs: Sequence[str | Path],
                out_csv: str | Path, out_md: str | Path, out_png: str | Path) -> None:
    """Rule ``sweep_paper_table``: our model table (CSV, Markdown; as ARPE's Table 2) and
    figure over the paper's campaigns (:mod:`perfcast.sweep.artifacts`).

    Parameters
    ----------
    settings : PaperTableSettings
        The campaigns shown, in the order of ``models``, ``predictions`` and ``runs``.
    models, predictions, runs : sequence of str or Path
        Each campaign's models and predictions tables (:func:`campaign_models`) and run table.
    out_csv, out_md, out_png : str or Path
        The table (CSV, Markdown) and the figure.

    Examples
    --------
    Two campaigns' models (:func:`campaign_models`) in one table, the best of each marked:

    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.io import write_parquet
    >>> from perfcast.settings import validate
    >>> from perfcast.sweep.campaign_parser import parse_sweep
    >>> laws = {"cube": lambda s: 0.1 + 2e-9 * s**3, "root": lambda s: 1 + 0.5 * s**0.5}
    >>> sizes = [64, 128, 256, 512, 1024]
    >>> sweep = parse_sweep(validate({"campaigns": {c: {
    ...     "command": "run --size {size}", "iterations": 1, "parameters": {"size": sizes},
    ...     "models": [{"y": "wall_s", "x": ["size"]}]} for c in laws}}, "sweep"), seed=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = {}
    ...     for c, law in laws.items():
    ...         f = {k: Path(tmp, f"{c}_{k}.parquet") for k in ("runs", "models", "c", "p", "f")}
    ...         write_parquet(pd.DataFrame({"size": sizes, "iteration": 1, "status": "ok",
    ...                                     "wall_s": [law(s) for s in sizes]}), f["runs"],
    ...                       metadata={"parameters": ["size"]})
    ...         campaign_models(sweep.models_settings(c), runs=f["runs"],
    ...                         out_json=Path(tmp, f"{c}.json"), out_models=f["models"],
    ...                         out_coefficients=f["c"], out_fitted=f["f"],
    ...                         out_predictions=f["p"], fig_fits=Path(tmp, f"{c}.png"),
    ...                         fig_residuals=Path(tmp, f"{c}_res.png"))
    ...         files[c] = f
    ...     paper_table(sweep.paper_table_settings(),
    ...                 models=[files[c]["models"] for c in laws],
    ...                 predictions=[files[c]["p"] for c in laws],
    ...                 runs=[files[c]["runs"] for c in laws], out_csv=Path(tmp, "table.csv"),
    ...                 out_md=Path(tmp, "table.md"), out_png=Path(tmp, "table.png"))
    ...     table = pd.read_csv(Path(tmp, "table.csv"))
    >>> table.loc[table["best"], ["campaign", "model"]].to_dict("records")
    [{'campaign': 'cube', 'model': 'pmnf:size^3'}, {'campaign': 'root', 'model': 'pmnf:size^(1/2)'}]
    """
    from perfcast.io import parquet_metadata, read_parquet, write_csv, write_text
    from perfcast.sweep import artifacts

    frames = {c: (read_parquet(m), read_parquet(p), read_parquet(r),
                  list(parquet_metadata(r).get("parameters", [])))
              for c, m, p, r in zip(settings.campaigns, models, predictions, runs, strict=True)}
    tab = artifacts.model_table({c: f[0] for c, f in frames.items()})
    write_csv(tab, out_csv)
    write_text(artifacts.markdown(tab), out_md)
    artifacts.plot_predictions(frames, out_png)
