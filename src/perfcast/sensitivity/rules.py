"""The sensitivity stage's rules, one function each: a rule's script receives the job's
settings (:func:`perfcast.rulekit.rule_settings`) and hands them, whole, to its function here,
with the job's files as keyword arguments.

Resource-sensitivity profiling after L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang,
"Speeding up profiling program's runtime characteristics for workload consolidation", PLoS ONE
12(4): e0175861, 2017 (docs/methods/sensitivity.md):

- :func:`profile_program` (rule ``sensitivity_profile``): one program's campaign;
- :func:`summarize` (``sensitivity_summary``) and :func:`plot_program` (``sensitivity_figure``);
- :func:`fetch_measurements` (``sensitivity_arcp_fetch``) and :func:`convert_measurements`
  (``sensitivity_arcp_table``): the paper's published measurements as one table;
- :func:`replay_evaluation` (``sensitivity_replay_eval``) and :func:`replay_figures`
  (``sensitivity_replay_figures``): the method replayed on them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.errors import HostCapabilityError, InputError
from perfcast.io import read_parquet, write_csv, write_json, write_parquet, write_text
from perfcast.sensitivity import arcp, evaluation, shipped
from perfcast.sensitivity.backends import CgroupBackend
from perfcast.sensitivity.markdown import comparison_markdown
from perfcast.sensitivity.profile import Measurement, ProfileResult, profile
from perfcast.sensitivity.replay import ReplayBackend
from perfcast.sensitivity.settings import (
    EvaluationSettings,
    FigureSettings,
    ProfileSettings,
    SourceSettings,
)

log = logging.getLogger(__name__)


def make_backend(settings: ProfileSettings, data: str | Path | None
                 ) -> CgroupBackend | ReplayBackend:
    """The backend of ``settings.backend`` for ``settings.program``.

    Parameters
    ----------
    settings : ProfileSettings
        The profile's settings.
    data : str or Path or None
        Backend ``replay`` only: the measurement table the runs are answered from
        (``sensitivity.replay.source``); its rows for ``settings.program.replay_program`` form
        the grid, cut at the ceiling of ``settings.replay``.

    Returns
    -------
    CgroupBackend or ReplayBackend

    Raises
    ------
    InputError
        backend ``replay`` without ``data``, a program the table does not hold, or a resource
        model the cgroup backend cannot apply (see :class:`CgroupBackend`).
    """
    if settings.backend == "cgroup":
        return CgroupBackend(settings)
    if not data or settings.replay is None:
        raise InputError(None, "backend replay needs a measured grid (the paper's table, "
                         "see sensitivity.replay.source)")
    name, grids = settings.program.replay_program, settings.replay
    grid = evaluation.load_grids(data, [name], grids.layouts)[name]
    peaks = evaluation.resolve_peaks(grids.ceiling, grids.peaks).get(name)
    return ReplayBackend(grid, peaks)


def _seed(seed: int, name: str) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, *name.encode()])


def profile_program(settings: ProfileSettings, *, data: str | Path | None, grid: str | Path,
                    runs: str | Path, summary: str | Path) -> dict:
    """Profile one program; write its interpolated grid, every run, and a JSON summary.

    The campaign of Wang et al. (2017): the unrestricted run and its peak usage (the resource
    ceiling), ``settings.sampling`` (binary recursive search at ``settings.epsilon``, Latin
    hypercube, or brute force), the Cartesian product of the chosen levels measured, sequential
    1-D PCHIP for the rest. ``settings.compare``: ``lhs`` (same counts) and/or ``brute`` (every
    level up to the ceiling) on the same backend, sharing the unrestricted run and every measured
    point; with ``brute`` the other campaigns are scored against it (the dense truth of this
    machine), with backend ``replay`` against the measured grid.

    Parameters
    ----------
    settings : ProfileSettings
        The profile's settings (the rule's: the section, the job's program and the seed).
    data : str or Path or None
        Backend ``replay``: the measurement table (None with backend ``cgroup``).
    grid : str or Path
        The interpolated grid written (Parquet).
    runs : str or Path
        Every distinct run written (Parquet), in execution order.
    summary : str or Path
        The summary written (JSON).

    Returns
    -------
    dict
        the summary written. ``status`` is ``profiled``, or ``not_run`` (with ``reason`` and
        ``requires``, and empty tables) where this host cannot restrict a run and
        ``settings.cgroup.if_unavailable`` is ``report``, or ``shipped`` where it cannot and
        ``if_unavailable`` is ``shipped``: the campaign replayed on the grid shipped with
        perfcast (:mod:`perfcast.sensitivity.shipped`), ``skipped`` saying why the live
        profiling was not done and ``shipped`` where and when the grid was measured.

    Raises
    ------
    HostCapabilityError
        this host cannot restrict a run and ``if_unavailable`` is ``fail`` (nothing written).
    ProfileError
        the unrestricted run failed.

    Examples
    --------
    Backend ``replay`` answers every run from a measured table, so this runs anywhere:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.sensitivity.settings import profile_settings
    >>> from perfcast.settings import validate
    >>> section = validate({"backend": "replay", "replay": {"ceiling": "none"},
    ...                     "programs": {"p": {"command": "true"}}}, "sensitivity")
    >>> settings = profile_settings(section, "p", {}, seed=1)
    >>> rows = ["program,cpu_cores,mem_gb,net_code,io_mbps,metric,value"] + [
    ...     f"p,{c},{m},,,runtime_s,{10 / c + 4 / m}" for c in (1, 2, 4) for m in (1, 2)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     table = Path(tmp, "table.csv")
    ...     _ = table.write_text("\\n".join(rows) + "\\n")
    ...     out = profile_program(settings, data=table, grid=Path(tmp, "p.parquet"),
    ...                           runs=Path(tmp, "p.runs.parquet"), summary=Path(tmp, "p.json"))
    >>> out["status"], out["steps"]["product_points"], out["score"]["mae"] < 0.1
    ('profiled', 6, True)
    """
    name, backend = settings.program.name, settings.backend
    be: CgroupBackend | ReplayBackend = make_backend(settings, data)
    skipped = None  # the live profiling this host refused, when the shipped grid stands in
    if isinstance(be, CgroupBackend):
        try:
            be.probe()
        except HostCapabilityError as exc:
            if settings.cgroup.if_unavailable == "fail":
                raise
            replay = (shipped.shipped_backend(name)
                      if settings.cgroup.if_unavailable == "shipped" else None)
            if replay is None:
                return _not_profiled(be, str(exc), grid, runs, summary)
            skipped = _refusal(be, str(exc))
            log.warning("%s: live profiling skipped: %s; profiled on the grid shipped with "
                        "perfcast instead", name, skipped["reason"])
            be, backend = replay, "shipped"
    epsilon, sampling, compare = settings.epsilon, settings.sampling, settings.compare
    seed, spare_cores = settings.seed, settings.spare_cores
    base = be.unrestricted()
    cache: dict[tuple[int, ...], Measurement] = {}
    main = profile(be, epsilon=epsilon, sampling=sampling, seed=_seed(seed, name),
                   spare_cores=spare_cores, program=name, baseline=base, cache=cache,
                   budget=settings.budget, verify_ceiling=settings.verify_ceiling,
                   bisect_failed=settings.bisect_failures)
    others: dict[str, ProfileResult] = {}  # on the main campaign's (checked) ceilings
    if "lhs" in compare and sampling != "lhs":
        others["lhs"] = profile(be, epsilon=epsilon, sampling="lhs",
                                counts=[len(c) for c in main.chosen], seed=_seed(seed, name),
                                spare_cores=spare_cores, program=name, baseline=base,
                                cache=cache, ranges=main.ranges)
    if "brute" in compare and sampling != "brute":
        others["brute"] = profile(be, epsilon=epsilon, sampling="brute", program=name,
                                  spare_cores=spare_cores, baseline=base, cache=cache,
                                  ranges=main.ranges)
    frame = main.grid_frame()
    result = {**main.summary(), "status": "profiled" if skipped is None else "shipped"}
    if skipped is not None:
        result["skipped"] = skipped
        result["shipped"] = shipped.provenance()
    if isinstance(be, CgroupBackend):
        result["metric"] = asdict(be.program.metric)
        result["command"] = be.command
    else:
        result["metric"] = {"name": be.grid.metric, "higher_is_better": be.higher_is_better}
    result["compare"] = {}
    truth = None
    if "brute" in others:
        truth = np.where(others["brute"].region_mask(), others["brute"].grid, np.nan)
        frame["brute_truth"] = others["brute"].grid_frame()["sensitivity"].where(
            frame["in_ceiling"])
    elif isinstance(be, ReplayBackend):
        truth = be.grid.truth()
        frame["brute_truth"] = truth[tuple(np.array(list(main.model.indices())).T)]
    if truth is not None:
        result["score"] = main.score(truth)
    for k, r in others.items():
        entry: dict[str, Any] = {"steps": r.steps,
                                 "chosen": {d.name: [d.levels[i] for i in c]
                                            for d, c in zip(r.model.dims, r.chosen, strict=True)}}
        if truth is not None and k != "brute":
            entry["score"] = r.score(truth)
        result["compare"][k] = entry
    result["backend"] = backend
    meta = {"program": name, "backend": backend}
    write_parquet(frame, grid, metadata=meta)
    write_parquet(_all_runs(main, others, cache), runs, metadata=meta)
    write_json(result, summary)
    return result


def _refusal(be: CgroupBackend, reason: str) -> dict[str, str]:
    """Why this host cannot restrict a run (``reason``, the probe's group name made the same from
    run to run) and what it would take (``requires``)."""
    prefix = be.settings.cgroup.prefix
    # the probe's group name carries a pid: keep the summary the same from run to run
    reason = re.sub(rf"{re.escape(prefix)}-\d+-\d+", f"{prefix}-RUN", reason)
    controllers = sorted({c for d in be.model.dims
                          for c in be.limits({d.name: d.levels[0]
                                              for d in be.model.dims})[0].controllers("v1")})
    return {"reason": reason, "requires": "root (or a delegated cgroup v2 subtree) and the "
                                          "cgroup controllers " + ", ".join(controllers)}


def _not_profiled(be: CgroupBackend, reason: str, out_grid: str | Path, out_runs: str | Path,
                  out_summary: str | Path) -> dict:
    """Outputs of a program this host cannot restrict: empty tables and a summary saying why.

    The rest of the workflow goes on; the summary table, the figure and the report show the
    program as not profiled, with the reason (typically: not root, or a controller missing).
    """
    name = be.program.name
    dims = [d.name for d in be.model.dims]
    refusal = _refusal(be, reason)
    reason = refusal["reason"]
    log.warning("%s: not profiled: %s", name, reason)
    summary = {
        "program": name, "backend": "cgroup", "status": "not_run", **refusal,
        "command": be.command, "metric": asdict(be.program.metric),
        "dimensions": {d.name: {"kind": d.kind, "unit": d.unit, "levels": list(d.levels)}
                       for d in be.model.dims},
    }
    meta = {"program": name, "backend": "cgroup", "status": "not_run", "reason": reason}
    grid = pd.DataFrame({c: pd.Series(dtype=float) for c in [*dims, "sensitivity"]}
                        | {c: pd.Series(dtype=bool) for c in ("measured", "in_ceiling", "failed")})
    runs = pd.DataFrame({"order": pd.Series(dtype="int64"), "phase": pd.Series(dtype=str)}
                        | {c: pd.Series(dtype=float) for c in [*dims, "performance",
                                                                "sensitivity"]}
                        | {"ok": pd.Series(dtype=bool), "reason": pd.Series(dtype=str)})
    write_parquet(grid, out_grid, metadata=meta)
    write_parquet(runs, out_runs, metadata=meta)
    write_json(summary, out_summary)
    return summary


def _all_runs(main: ProfileResult, others: Mapping[str, ProfileResult],
              cache: Mapping[tuple[int, ...], Measurement]) -> pd.DataFrame:
    """Every distinct run in execution order, labelled with the campaign that caused it."""
    owner: dict[tuple[int, ...], str] = {}
    for label, r in [(main.sampling, main), *others.items()]:
        for m in r.measurements:
            owner.setdefault(m.idx, label)
    frame = main.runs_frame()
    rows = [frame.iloc[0].to_dict()]  # the unrestricted run
    for m in sorted(cache.values(), key=lambda m: m.order):
        row = main._run_row(m.phase, m.order, m.idx, m.outcome, m.sensitivity)
        row["campaign"] = owner.get(m.idx, main.sampling)
        rows.append(row)
    rows[0]["campaign"] = "all"
    return pd.DataFrame(rows)


def summarize(*, summaries: Sequence[str | Path], table: str | Path,
              csv: str | Path | None) -> pd.DataFrame:
    """One row per profiled program, from the summaries :func:`profile_program` wrote.

    Parameters
    ----------
    summaries : sequence of str or Path
        The programs' JSON summaries.
    table : str or Path
        The table written (Parquet).
    csv : str or Path or None
        The same table written as CSV (None: not written).

    Returns
    -------
    pandas.DataFrame
        per program: steps, ceilings, chosen levels, failed runs, the error against the truth
        (brute force or the replayed grid) if any, and the compared campaigns' steps and
        errors; for a program this host could not restrict, ``status`` ``not_run`` and the
        reason.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "p.json").write_text(json.dumps({
    ...         "program": "p", "backend": "cgroup", "status": "not_run",
    ...         "reason": "cannot write cpu.cfs_quota_us (not root)"}))
    ...     df = summarize(summaries=[Path(d, "p.json")], table=Path(d, "t.parquet"), csv=None)
    >>> df[["program", "status"]].values.tolist()
    [['p', 'not_run']]
    """
    rows = []
    for p in sorted(summaries, key=str):
        s = json.loads(Path(p).read_text())
        if s.get("status") == "not_run":
            rows.append({"program": s["program"], "backend": s["backend"],
                         "status": "not_run", "reason": s["reason"],
                         "dimensions": ",".join(s.get("dimensions", {}))})
            continue
        dims = s["dimensions"]
        row = {
            "program": s["program"], "backend": s["backend"], "status": s["status"],
            "reason": (s.get("skipped") or {}).get("reason", ""), "sampling": s["sampling"],
            "epsilon": s["epsilon"],
            "dimensions": ",".join(s.get("profiled_dimensions", dims)),
            "effective": ",".join(n for n, d in dims.items() if d["effective"]),
            "ceilings": json.dumps({n: d["ceiling"] for n, d in dims.items()}),
            "chosen": json.dumps({n: d["chosen"] for n, d in dims.items()}),
            **s["steps"], "failed_runs": s["failed_runs"],
            "failure_reasons": "; ".join(s["failure_reasons"]),
            "mae": s.get("score", {}).get("mae", np.nan),
            "mae_full_grid": s.get("score", {}).get("mae_full_grid", np.nan),
            "baseline_runs": (s.get("baseline") or {}).get("runs", np.nan),
            "baseline_s_low": (s.get("baseline") or {}).get("s_low", np.nan),
            "baseline_s_high": (s.get("baseline") or {}).get("s_high", np.nan),
            "noise_floor": (s.get("baseline") or {}).get("noise_floor", np.nan),
            "warnings": "; ".join(s.get("warnings", [])),
        }
        for k, c in s.get("compare", {}).items():
            row[f"{k}_product_points"] = c["steps"]["product_points"]
            if k != "brute":  # brute force is the truth the others are scored against
                row[f"{k}_mae"] = c.get("score", {}).get("mae", np.nan)
        rows.append(row)
    df = pd.DataFrame(rows)
    write_parquet(df, table)
    if csv is not None:
        write_csv(df, csv)
    return df


def plot_program(*, grid: str | Path, summary: str | Path, out: str | Path) -> None:
    """The figure of one profile (:func:`perfcast.sensitivity.figures.plot_profile`).

    Parameters
    ----------
    grid : str or Path
        The profile's grid (Parquet, :func:`profile_program`'s ``grid``).
    summary : str or Path
        Its summary (JSON).
    out : str or Path
        The figure written (PNG).

    Examples
    --------
    A profile on backend ``replay`` (:func:`profile_program`), then its figure:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.sensitivity.settings import profile_settings
    >>> from perfcast.settings import validate
    >>> section = validate({"backend": "replay", "replay": {"ceiling": "none"},
    ...                     "programs": {"p": {"command": "true"}}}, "sensitivity")
    >>> rows = ["program,cpu_cores,mem_gb,net_code,io_mbps,metric,value"] + [
    ...     f"p,{c},{m},,,runtime_s,{10 / c + 4 / m}" for c in (1, 2, 4) for m in (1, 2)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "table.csv").write_text("\\n".join(rows) + "\\n")
    ...     _ = profile_program(profile_settings(section, "p", {}, seed=1),
    ...                         data=Path(tmp, "table.csv"), grid=Path(tmp, "p.parquet"),
    ...                         runs=Path(tmp, "p.runs.parquet"), summary=Path(tmp, "p.json"))
    ...     plot_program(grid=Path(tmp, "p.parquet"), summary=Path(tmp, "p.json"),
    ...                  out=Path(tmp, "p.png"))
    ...     Path(tmp, "p.png").read_bytes()[:4]
    b'\\x89PNG'
    """
    from perfcast.sensitivity import figures  # matplotlib: only the jobs that draw import it

    figures.plot_profile(read_parquet(grid), json.loads(Path(summary).read_text()), out)


def fetch_measurements(settings: SourceSettings, *, zip: str | Path | None,
                       out: str | Path) -> Path:
    """The paper's ``raw data.zip`` at ``out``, downloaded from ``settings.url`` or copied from
    ``zip``, and checked against ``settings.sha256`` (:func:`perfcast.sensitivity.arcp.fetch`).

    Parameters
    ----------
    settings : SourceSettings
        ``sensitivity.replay.source``.
    zip : str or Path or None
        A local copy used instead of downloading (``settings.zip``, as the rule's input).
    out : str or Path
        Where the zip is put.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    InputError
        a checksum mismatch, or an unreadable local copy.
    DownloadError
        a network failure, saying how to work offline.

    Examples
    --------
    A local copy is used when given, and only with the expected checksum:

    >>> import hashlib, tempfile
    >>> from pathlib import Path
    >>> from perfcast.errors import InputError
    >>> from perfcast.sensitivity.settings import SourceSettings
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     copy = Path(tmp, "copy.zip")
    ...     _ = copy.write_bytes(b"PK measurements")
    ...     good = SourceSettings("http://127.0.0.1:9/raw.zip",
    ...                           hashlib.sha256(b"PK measurements").hexdigest(), None, None)
    ...     out = fetch_measurements(good, zip=copy, out=Path(tmp, "raw data.zip"))
    ...     fetched = out.read_bytes()
    ...     bad = SourceSettings(good.url, "0" * 64, None, None)
    ...     try:
    ...         fetch_measurements(bad, zip=copy, out=Path(tmp, "other.zip"))
    ...     except InputError:
    ...         refused = not Path(tmp, "other.zip").exists()
    >>> fetched, refused
    (b'PK measurements', True)
    """
    return arcp.fetch(settings.url, settings.sha256, out, local_zip=zip)


def convert_measurements(*, zip: str | Path, table: str | Path) -> pd.DataFrame:
    """The workbooks of the paper's ``raw data.zip`` as one tidy table
    (:func:`perfcast.sensitivity.arcp.convert`).

    Parameters
    ----------
    zip : str or Path
        The zip (:func:`fetch_measurements`).
    table : str or Path
        The table written (CSV: program, cpu_cores, mem_gb, net_code, io_mbps, metric, value).

    Returns
    -------
    pandas.DataFrame
        The table.

    Raises
    ------
    InputError
        not a readable zip, a workbook missing or a sheet not laid out as the paper's (naming
        the workbook, sheet and cell); nothing is written.

    Examples
    --------
    The paper's eight workbooks are required; anything else is refused, naming the file:

    >>> import tempfile, zipfile
    >>> from pathlib import Path
    >>> from perfcast.errors import InputError
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     with zipfile.ZipFile(Path(tmp, "raw data.zip"), "w") as zf:
    ...         zf.writestr("raw data/notes.txt", "no workbooks here")
    ...     try:
    ...         convert_measurements(zip=Path(tmp, "raw data.zip"), table=Path(tmp, "t.csv"))
    ...     except InputError as exc:
    ...         print("no workbook 'Data Serving.xlsx'" in str(exc),
    ...               Path(tmp, "t.csv").exists())
    True False
    """
    return arcp.convert(zip, table)


def replay_evaluation(settings: EvaluationSettings, *, data: str | Path, results: str | Path,
                      table: str | Path, summary: str | Path, cells: str | Path,
                      markdown: str | Path | None) -> None:
    """The paper's measurements replayed for every program and epsilon, beside its figures.

    For each program of ``data`` (``settings.programs``, or all) and each of
    ``settings.epsilons``, binary search, ``settings.lhs_repeats`` Latin hypercube campaigns
    and the adaptive sampler at the same counts, brute force and the adaptive sampler at
    Table 4's count run on the :class:`~perfcast.sensitivity.replay.ReplayBackend` under the
    configured ceiling and without one
    (:func:`perfcast.sensitivity.evaluation.evaluate_paper`), and are compared with Table 4,
    Table 5 and Figs. 10-12 of Wang et al. (2017) (:mod:`perfcast.sensitivity.published`).

    Parameters
    ----------
    settings : EvaluationSettings
        ``sensitivity.replay``'s evaluation keys and the workflow's seed.
    data : str or Path
        The measurement table (``arcp_measurements.csv``).
    results : str or Path
        One row per program x epsilon x sampling, written (Parquet).
    table : str or Path
        The comparison table, program x epsilon, written (CSV).
    summary : str or Path
        Per epsilon, beside Figs. 10-12, written (CSV).
    cells : str or Path
        Every cell's truth and prediction, written (Parquet).
    markdown : str or Path or None
        The comparison as Markdown (None: not written).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.settings import build, validate
    >>> replay = validate({"replay": {"epsilons": [0.3], "lhs_repeats": 2}},
    ...                   "sensitivity")["replay"]
    >>> settings = build(EvaluationSettings, {**replay, "seed": 1})
    >>> rows = ["program,cpu_cores,mem_gb,net_code,io_mbps,metric,value"] + [
    ...     f"p,{c},{m},,,runtime_s,{10 / c + 4 / m}" for c in (1, 2, 4) for m in (1, 2)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(tmp, "t.csv").write_text("\\n".join(rows) + "\\n")
    ...     replay_evaluation(settings, data=Path(tmp, "t.csv"),
    ...                       results=Path(tmp, "r.parquet"), table=Path(tmp, "table.csv"),
    ...                       summary=Path(tmp, "s.csv"), cells=Path(tmp, "c.parquet"),
    ...                       markdown=None)
    ...     comparison = pd.read_csv(Path(tmp, "table.csv"))
    >>> comparison[["program", "epsilon", "product_points", "verdict"]].to_dict("records")
    [{'program': 'p', 'epsilon': 0.3, 'product_points': 6, 'verdict': 'no paper figure'}]
    """
    res, every_cell = evaluation.evaluate_paper(data, settings)
    meta = {"data": str(data), "ceiling": settings.ceiling,
            "lhs_repeats": settings.lhs_repeats, "seed": settings.seed}
    write_parquet(res, results, metadata=meta)
    write_parquet(every_cell, cells, metadata=meta)
    comparison, per_epsilon = evaluation.comparison_table(res), evaluation.epsilon_summary(res)
    write_csv(comparison, table)
    write_csv(per_epsilon, summary)
    if markdown is not None:
        write_text(comparison_markdown(comparison, per_epsilon), markdown)


def replay_figures(settings: FigureSettings, *, results: str | Path, table: str | Path,
                   summary: str | Path, cells: str | Path, error: str | Path,
                   lhs: str | Path, steps: str | Path, surfaces: str | Path,
                   runs: str | Path | None) -> None:
    """The replay evaluation's figures: error vs epsilon (beside Fig. 11), binary search vs
    Latin hypercube and adaptive (Fig. 10), steps per program (Table 4) at
    ``settings.figure_epsilon``, the measured vs interpolated surfaces of ``settings.surfaces``
    and their whole-grid error against runs for every sampling beside the paper's point.

    Parameters
    ----------
    settings : FigureSettings
        ``sensitivity.replay``'s figure keys.
    results, table, summary, cells : str or Path
        The outputs of :func:`replay_evaluation`.
    error, lhs, steps, surfaces : str or Path
        The figures written (PNG): error vs epsilon, binary vs Latin hypercube, steps per
        program, surfaces.
    runs : str or Path or None
        The error-against-runs figure written (PNG; None: not drawn).

    Examples
    --------
    The figures of a small replay (:func:`replay_evaluation`):

    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.sensitivity.settings import FigureSettings
    >>> from perfcast.settings import build, validate
    >>> replay = validate({"replay": {"epsilons": [0.3], "lhs_repeats": 2}},
    ...                   "sensitivity")["replay"]
    >>> rows = ["program,cpu_cores,mem_gb,net_code,io_mbps,metric,value"] + [
    ...     f"p,{c},{m},,,runtime_s,{10 / c + 4 / m}" for c in (1, 2, 4) for m in (1, 2)]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     d = Path(tmp)
    ...     _ = Path(d, "t.csv").write_text("\\n".join(rows) + "\\n")
    ...     replay_evaluation(build(EvaluationSettings, {**replay, "seed": 1}),
    ...                       data=d / "t.csv", results=d / "r.parquet", table=d / "table.csv",
    ...                       summary=d / "s.csv", cells=d / "c.parquet", markdown=None)
    ...     pngs = [d / f"{n}.png" for n in ("error", "lhs", "steps", "surfaces", "runs")]
    ...     replay_figures(FigureSettings(figure_epsilon=0.3, surfaces=("p",)),
    ...                    results=d / "r.parquet", table=d / "table.csv", summary=d / "s.csv",
    ...                    cells=d / "c.parquet", error=pngs[0], lhs=pngs[1], steps=pngs[2],
    ...                    surfaces=pngs[3], runs=pngs[4])
    ...     [p.read_bytes()[:4] == b"\\x89PNG" for p in pngs]
    [True, True, True, True, True]
    """
    from perfcast.sensitivity import figures

    res = read_parquet(results)
    figures.plot_error_vs_epsilon(pd.read_csv(summary), error)
    figures.plot_binary_vs_lhs(res, settings.figure_epsilon, lhs)
    figures.plot_steps(pd.read_csv(table), settings.figure_epsilon, steps)
    figures.plot_replay_surfaces(read_parquet(cells), settings.surfaces,
                                 settings.figure_epsilon, surfaces)
    if runs is not None:
        headline = str(res.loc[res["headline"], "ceiling"].iloc[0])
        figures.plot_error_vs_runs(evaluation.error_vs_runs(res), settings.surfaces, headline,
                                   runs)
