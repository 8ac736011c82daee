"""The alignment, training-set, model and prediction rules, one function each
(``workflow/rules/model.smk``); the command line (``perfcast align``, ``perfcast predict``) calls
the same functions, so its files carry the same metadata.

scikit-learn is imported by the functions that use it: an alignment job (one per benchmark,
thousands in a large campaign) does not need it, and importing it took a third of its CPU time.

A model file holds no code (:func:`save_model`, :func:`load_model`): it is a Parquet table of the
rows the model was fitted on, with the chosen hyper-parameters, features and calibration as
metadata, and the model is refitted from them when it is loaded. A pickled model (joblib) would
run whatever code a crafted file carries when it is loaded, before any check could refuse it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from perfcast.checks import input_file, require_values
from perfcast.errors import InputError
from perfcast.io import (
    parquet_metadata,
    read_parquet,
    require_columns,
    require_numeric,
    write_csv,
    write_json,
    write_parquet,
    write_text,
)
from perfcast.model import plots
from perfcast.model.align import align_runs, check_same_work
from perfcast.model.settings import AlignSettings, KnnSettings, PredictSettings
from perfcast.model.trainset import (
    GROUP,
    benchmark_rows,
    build_trainset,
    feature_columns,
    keep_intervals,
)

log = logging.getLogger(__name__)

#: the columns every post-processed counter table has (besides its ``*_pki`` features)
COUNTER_COLUMNS = ["interval", "time", "duration_s", "instructions", "cycles", "ipc",
                   "instructions_cumulative_sum"]


def read_counters(path: str | Path) -> pd.DataFrame:
    """A post-processed counter table (``results/counters/{gen}/{bench}.parquet``).

    Raises
    ------
    InputError
        naming the file: missing, not Parquet, or without a column of :data:`COUNTER_COLUMNS`
        or with one that does not hold numbers.
    """
    df = read_parquet(path)
    require_columns(df, COUNTER_COLUMNS, path)
    require_numeric(df, COUNTER_COLUMNS, path)
    return df


def stable_intervals(phase_file: str | Path) -> np.ndarray:
    """Intervals labelled ``stable`` by the warmup stage's phase analysis of a counter trace.

    Raises
    ------
    InputError
        naming the file: unreadable, or without ``interval`` and ``phase``.
    """
    ph = read_parquet(phase_file)
    require_columns(ph, ["interval", "phase"], phase_file)
    return ph.loc[ph["phase"] == "stable", "interval"].to_numpy()


def align_files(old: str, new: str, out: str, figure: str | None, settings: AlignSettings, *,
                benchmark: str, generations: tuple[str, str]) -> tuple[pd.DataFrame, float]:
    """Rule ``model_align`` (and ``perfcast align``): map the old run's intervals to the new
    run's (:func:`perfcast.model.align.align_runs`).

    Parameters
    ----------
    old, new : the two runs' counter tables.
    out : the pairs to write (Parquet; metadata: benchmark, method, radius, DTW cost, the input
        paths, whether the data are simulated).
    figure : the alignment figure to write (None: no figure).
    settings : the ``align`` section.
    benchmark : the benchmark's name (metadata, figure title).
    generations : ``(old, new)`` names for the figure.

    Returns
    -------
    (pairs, cost) as :func:`~perfcast.model.align.align_runs`.
    """
    o, n = read_counters(old), read_counters(new)
    for table, path in ((o, old), (n, new)):
        check_alignable(table, path)
    check_same_work(o, n, settings.instruction_tolerance, old_path=old, new_path=new)
    pairs, cost = align_runs(o, n, settings)
    require_values([cost], old, f"DTW cost of {old} and {new}", low=0, low_inclusive=True)
    log.info("%s: %d x %d intervals -> %d pairs, DTW cost %.6g (%s)", benchmark, len(o), len(n),
             len(pairs), cost, settings.method)
    meta = {"benchmark": benchmark, "method": settings.method,
            "sakoe_chiba_radius": settings.sakoe_chiba_radius, "dtw_cost": cost,
            "old": old, "new": new, "simulated": parquet_metadata(old).get("simulated", False)}
    write_parquet(pairs, out, metadata=meta)
    if figure:
        plots.alignment(o, n, pairs, generations, benchmark, Path(figure),
                        note=plots.simulated_note(meta["simulated"]))
    return pairs, cost


def check_alignable(table: pd.DataFrame, path: str | Path) -> None:
    """A run's table can be aligned: its instructions, cycles and IPC are finite and positive in
    every interval, its cumulative instructions finite and strictly growing.

    Raises
    ------
    InputError
        naming the file, the interval and the value.
    """
    labels = table["interval"].tolist()
    if table.empty:
        raise InputError(path, "no intervals", expected="a run of at least one interval")
    for col in ("instructions", "cycles"):  # this run's own counts, named as its own
        require_values(table[col], path, col, low=0, labels=labels)
    require_values(table["ipc"], path, "IPC", low=0, labels=labels)
    cum = table["instructions_cumulative_sum"].to_numpy(dtype=float)
    require_values(cum, path, "cumulative instructions", low=0, labels=labels)
    step = np.diff(cum)
    if (step <= 0).any():
        k = int(np.flatnonzero(step <= 0)[0]) + 1
        raise InputError(path, f"cumulative instructions {cum[k]!r} in interval {labels[k]} do "
                         f"not exceed the previous interval's {cum[k - 1]!r}",
                         expected="strictly growing cumulative instructions")


def trainset_files(aligned: Sequence[str], old_counters: Sequence[str], out: str, figure: str, *,
                   benchmarks: Sequence[str], phases: Sequence[str] | None = None) -> None:
    """Rule ``model_trainset``: the training set of every benchmark (features: the old run's PKI
    columns; target: the IPC ratio of each aligned pair).

    Parameters
    ----------
    aligned, old_counters : per benchmark (same order as ``benchmarks``), its pairs and its old
        run's table.
    out, figure : the training set (Parquet) and its IPC-ratio figure.
    benchmarks : the training benchmarks.
    phases : per benchmark, the warmup stage's phase labels of its old run: keep only the
        intervals labelled stable (``model.stable_only``). None: every interval.
    """
    parts = []
    for i, bench in enumerate(benchmarks):
        keep = stable_intervals(phases[i]) if phases else None
        old = read_counters(old_counters[i])
        # a counter without any reading would drop every row of the benchmark: fail instead
        require_readings(old, feature_columns(old), old_counters[i])
        pairs = read_parquet(aligned[i])
        rows = benchmark_rows(bench, old, pairs, keep)
        if rows.empty:
            raise InputError(aligned[i], f"benchmark {bench!r} gives no training row: none of "
                             f"its {len(pairs)} aligned pairs has finite counters and IPC ratio"
                             + (" in its stable phase" if keep is not None else ""),
                             expected="aligned pairs with readings")
        log.info("%s: %d of %d aligned pairs are training rows", bench, len(rows), len(pairs))
        parts.append(rows)
    train = build_trainset(parts)
    log.info("training set: %d rows, %d benchmarks, stable_only=%s", len(train), len(parts),
             bool(phases))
    write_parquet(train, out, metadata={"benchmarks": list(benchmarks),
                                        "stable_only": bool(phases),
                                        "features": feature_columns(train)})
    plots.ratio_distribution(train, Path(figure), note=plots.simulated_note(
        any(parquet_metadata(p).get("simulated", False) for p in old_counters)))


def train_files(trainset: str, old: Sequence[str], new: Sequence[str], model_out: str,
                card_out: str, settings: KnnSettings, *, benchmarks: Sequence[str],
                clock_new_ghz: float | None) -> None:
    """Rule ``model_train``: fit every candidate family on the training benchmarks, choose one
    by leave-one-benchmark-out error (:func:`perfcast.model.families.select`), whose errors are
    also the calibration of its prediction intervals; write it (:func:`save_model`: the rows the
    chosen family was fitted on, the family, its hyper-parameters, features, calibration and the
    library versions) and its model card (JSON, :func:`perfcast.model.families.model_card`).

    Parameters
    ----------
    trainset : the training set.
    old, new : per benchmark (same order as ``benchmarks``), its old and new run tables: the
        measured totals the choice and the calibration compare with.
    model_out, card_out : the model and its card.
    settings : the ``model`` section.
    benchmarks : the training benchmarks.
    clock_new_ghz : the new generation's clock (runtime intervals; None: cycles only).
    """
    from perfcast.model.families import model_card, select
    from perfcast.model.knn import thin

    train = read_parquet(trainset)
    features = feature_columns(train)
    co = {b: read_counters(p) for b, p in zip(benchmarks, old, strict=True)}
    cn = {b: read_counters(p) for b, p in zip(benchmarks, new, strict=True)}
    sel = select(train, co, cn, features, settings, clock_new_ghz)
    cal = sel.calibration
    bad = [b for b, e in cal.cycles.items() if not np.isfinite(e)]
    if bad:
        raise InputError(old[list(benchmarks).index(bad[0])],
                         f"benchmark {bad[0]}: its total cycles predicted without it are not "
                         "finite and positive, so it cannot calibrate the prediction intervals",
                         expected="counter tables with finite positive IPC and instructions")
    card = model_card(sel, features, train, settings)
    card["stable_only"] = parquet_metadata(trainset).get("stable_only", False)
    card["granularity"] = granularity(old)
    q, used = cal.quantile("cycles")
    card["calibration"] = cal.as_dict() | {"coverage_used": used,
                                           "cycles_log_quantile": q}
    if used < settings.coverage:
        log.warning("%d training benchmarks allow prediction intervals of at most %.3f "
                    "coverage, not %.3f", len(co), used, settings.coverage)
    log.info("candidates (mean |log error| of total cycles, leave one benchmark out): %s",
             ", ".join(f"{f} {sel.score(f):.4f}" for f in sel.fitted))
    log.info("chosen: %s %s, interval factor x/÷ %.3f at %.3f coverage", sel.chosen,
             card["best_params"], np.exp(q), used)
    save_model(sel, thin(train, settings.max_rows_per_benchmark), features, settings,
               calibration=cal.as_dict(), versions=card["versions"], path=model_out)
    write_json(card, card_out)


def evaluate_files(trainset: str, old: Sequence[str], new: Sequence[str], out: str, csv: str,
                   md: str, figure: str, settings: KnnSettings, *, benchmarks: Sequence[str],
                   clock_new_ghz: float | None, simulated: bool,
                   phases: Sequence[str] | None = None,
                   stable_not_run: str | None = None) -> None:
    """Rule ``model_evaluate``: leave-one-benchmark-out on all intervals
    (:func:`perfcast.model.evaluation.evaluate_lobo`), and on stable ones when phases are given.

    Parameters
    ----------
    trainset : the training set.
    old, new : per benchmark (same order as ``benchmarks``), its old and new run's table.
    out, csv, md, figure : the evaluation as Parquet, CSV, Markdown and a figure.
    settings : the model's settings.
    benchmarks : the training benchmarks.
    clock_new_ghz : the new generation's clock (runtime errors; None: cycles only).
    simulated : the data are simulated (said at the top of the Markdown).
    phases : per benchmark, the warmup stage's phase labels of its old run: the evaluation is
        repeated on the stable intervals (``training_rows = stable``).
    stable_not_run : without ``phases``, why the stable-interval evaluation was not run; said in
        the Markdown and the log.
    """
    from perfcast.model.evaluation import evaluate_lobo

    train = read_parquet(trainset)
    features = feature_columns(train)
    absent = sorted(set(benchmarks) - set(train[GROUP]))
    if absent:  # every benchmark is evaluated, or the job says which is not and why
        raise InputError(trainset, f"no training row of benchmark(s) {absent}: they cannot be "
                         "evaluated", expected=f"rows of every benchmark {sorted(benchmarks)}")
    co = {b: read_counters(p) for b, p in zip(benchmarks, old, strict=True)}
    cn = {b: read_counters(p) for b, p in zip(benchmarks, new, strict=True)}
    for b in benchmarks:  # a different instruction count is an error no IPC model can remove
        ratio = float(co[b]["instructions"].sum() / cn[b]["instructions"].sum())
        log.info("%s: old/new instructions %.6f (%+.3f %%)", b, ratio, 100 * (ratio - 1))
    grain = granularity(old)
    log.info("granularity: %s", grain)
    results = [evaluate_lobo(train, co, cn, features, settings, clock_new_ghz, label="all")]
    if phases:
        keep = {b: stable_intervals(p) for b, p in zip(benchmarks, phases, strict=True)}
        stable = keep_intervals(train, keep)
        results.append(evaluate_lobo(stable, co, cn, features, settings, clock_new_ghz,
                                     label="stable"))
    elif stable_not_run:
        log.warning("stable-interval evaluation not run: %s", stable_not_run)
    ev = pd.concat(results, ignore_index=True)
    for col in ("predicted_cycles", "predicted_runtime_s"):  # what each benchmark's error is of
        if col in ev:
            require_values(ev[col], trainset, f"leave-one-out {col}", low=0,
                           labels=ev["benchmark"].tolist(), label="benchmark")
    write_parquet(ev, out, metadata={"simulated": simulated, "granularity": grain})
    write_csv(ev, csv)
    write_text(evaluation_markdown(ev, simulated, None if phases else stable_not_run,
                                   granularity=grain), md)
    plots.predicted_vs_measured(ev, Path(figure), note=plots.simulated_note(simulated))


def granularity(tables: Sequence[str | Path]) -> str:
    """What one row of the counter tables is, from their metadata: ``whole-run (one row per
    benchmark run)`` for the whole-run importer's tables, ``intervals of N ms`` otherwise."""
    kinds = set()
    for path in tables:
        meta = parquet_metadata(path)
        if meta.get("granularity") == "whole-run":
            kinds.add("whole-run (one row per benchmark run)")
        elif meta.get("interval_ms"):
            kinds.add(f"intervals of {meta['interval_ms']} ms")
        else:
            kinds.add("intervals")
    return "; ".join(sorted(kinds))


def evaluation_markdown(ev: pd.DataFrame, simulated: bool, stable_not_run: str | None = None,
                        *, granularity: str | None = None) -> str:
    """The per-benchmark table and the medians of each ``training_rows`` block, as Markdown:
    the chosen family beside every candidate's error and the constant-ratio baseline, and,
    when the runs retired different instruction counts, the model's error per instruction
    beside the mismatch. First lines say the data are simulated, what a row of the counter
    tables is (``granularity``) and why the stable-interval evaluation was not run
    (``stable_not_run``), when so."""
    from perfcast.model.evaluation import empirical_coverage
    from perfcast.model.families import FAMILIES

    lines = []
    if simulated:
        lines.append("**Simulated data** (two synthetic CPU generations; see "
                     "docs/methods/counters.md).\n")
    if granularity:
        lines.append(f"**Granularity**: {granularity}.\n")
    if stable_not_run:
        lines.append(f"**Stable-interval evaluation not run**: {stable_not_run}.\n")
    for label, g in ev.groupby("training_rows", sort=True):
        lines.append(f"### Leave-one-benchmark-out, training on {label} intervals\n")
        candidates = [f for f in FAMILIES if f"{f}_cycles_error_pct" in g
                      and g[f"{f}_cycles_error_pct"].notna().any()]
        mismatch = ("instruction_mismatch_pct" in g
                    and (g["instruction_mismatch_pct"].abs() > 1e-9).any())
        cols = ["benchmark", "family", "cycles_error_pct"]
        if "runtime_error_pct" in g:
            cols.append("runtime_error_pct")
        cols += [f"{f}_cycles_error_pct" for f in candidates]
        cols.append("baseline_cycles_error_pct")
        if mismatch:
            cols += ["cycles_per_instruction_error_pct", "instruction_mismatch_pct"]
        cols += ["row_r2", "cycles_interval", "cycles_covered"]
        g = g.assign(cycles_interval=[f"{lo / 1e9:.3f} to {hi / 1e9:.3f} e9" for lo, hi in
                                      zip(g["cycles_lower"], g["cycles_upper"], strict=True)])
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for _, r in g.iterrows():
            cells = [f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c]) for c in cols]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        med = g["cycles_error_pct"].abs().median()
        lines.append(f"Median |error| of total cycles: **{med:.2f}%** (the chosen family; "
                     f"constant-ratio baseline: "
                     f"{g['baseline_cycles_error_pct'].abs().median():.2f}%).\n")
        if "family" in g:
            counts = g["family"].value_counts()
            chosen = ", ".join(f"{f} for {counts[f]}" for f in FAMILIES if f in counts)
            each = ", ".join(f"{f} {g[f'{f}_cycles_error_pct'].abs().median():.2f}%"
                             for f in candidates)
            lines.append(f"Family chosen on the other benchmarks only (nested leave-one-"
                         f"benchmark-out): {chosen} of {len(g)} held-out benchmarks. Median "
                         f"|error| of each candidate: {each}.\n")
        if mismatch:
            lines.append(
                "The old and new runs retired different instruction counts: median |error| "
                f"per instruction (the model's own) "
                f"**{g['cycles_per_instruction_error_pct'].abs().median():.2f}%**, median "
                f"|instruction mismatch| {g['instruction_mismatch_pct'].abs().median():.2f}% "
                f"(largest {g['instruction_mismatch_pct'].abs().max():.2f}%); total error = "
                "(1 + per-instruction error)(1 + mismatch) - 1.\n")
        covered, n = empirical_coverage(g, "cycles")
        if n:
            nominal = g["interval_coverage"].min()
            lines.append(f"Prediction intervals (split-conformal, each calibrated without the "
                         f"held-out benchmark): **{covered} of {n}** held-out benchmarks' "
                         f"measured cycles inside ({100 * covered / n:.0f} %; nominal "
                         f"{100 * nominal:.0f} %).\n")
    return "\n".join(lines)


def require_readings(table: pd.DataFrame, features: Sequence[str], path: str | Path) -> None:
    """Every counter column holds at least one reading.

    A counter that perf reported as ``<not supported>`` or ``<not counted>`` in every interval
    is all NaN after post-processing: the model's input is then undefined, so the run fails
    rather than leave the benchmark out or predict from nothing.

    Raises
    ------
    InputError
        naming the file and the counter.
    """
    for f in features:
        if not np.isfinite(table[f].to_numpy(dtype=float)).any():
            raise InputError(path, f"counter {f.removesuffix('_pki')!r} ({f}) has no reading in "
                             f"any of its {len(table)} intervals (perf's <not supported> or "
                             "<not counted>)", expected="a counter the PMU counts on this run")


def check_prediction(pred: pd.DataFrame, path: str | Path, settings: PredictSettings) -> None:
    """A prediction's invariants: new-generation cycles and runtime finite and positive, IPC
    within ``settings.ipc_range``.

    Raises
    ------
    InputError
        naming the counter file, the interval and the value.
    """
    low, high = settings.ipc_range
    labels = pred["interval"].tolist()
    require_values(pred["ipc_new_pred"], path, "predicted new-generation IPC", low=low,
                   high=high, low_inclusive=True, labels=labels)
    require_values(pred["cycles_new_pred"], path, "predicted new-generation cycles", low=0,
                   labels=labels)
    if "runtime_new_pred_s" in pred:
        require_values(pred["runtime_new_pred_s"], path, "predicted runtime (s)", low=0,
                       labels=labels)


#: the ``format`` a model file's metadata names (:func:`save_model`)
MODEL_FORMAT = "perfcast-ipc-ratio-model"
#: its version: a file of another version is refused, naming the one expected
MODEL_FORMAT_VERSION = 1


def save_model(sel: Any, data: pd.DataFrame, features: list[str], settings: KnnSettings, *,
               calibration: dict, versions: dict, path: str | Path) -> None:
    """Write the chosen model as data, never as code: the rows it was fitted on (``features``
    and the target) as a Parquet table, with its family, hyper-parameters, ``log1p`` choice,
    features, calibration and library versions as metadata. :func:`load_model` refits the same
    model from them (a k-nearest-neighbour regressor stores its training rows anyway; refitting
    a scaler, a neighbour index or a ridge regression on a few thousand rows takes milliseconds;
    the constant ratio is its one parameter).

    Parameters
    ----------
    sel : perfcast.model.families.Selection
        the families fitted on the training set and the chosen one.
    data : pandas.DataFrame
        the rows the chosen family was fitted on (the thinned training set).
    features : list of str
        the feature columns, in the model's order.
    settings : KnnSettings
        the ``model`` section (``log1p``).
    calibration, versions : dict
        the prediction-interval calibration and the library versions.
    path : str or Path
        the model file.

    Raises
    ------
    RuntimeError
        the refitted model does not predict what the fitted one does on its own rows (the model
        is no longer rebuilt by its family and hyper-parameters alone): nothing is written.
    """
    from perfcast.model.trainset import TARGET

    fitted = sel.fitted[sel.chosen]
    if sel.chosen == "constant":
        params = {"ratio": float(fitted.params["ratio"])}
    else:  # the searched pipelines' own parameter names (set_params on load)
        params = {k: v.item() if isinstance(v, np.generic) else v
                  for k, v in fitted.search.best_params_.items()}
    rows = data[[*features, TARGET]].astype(float).reset_index(drop=True)
    meta = {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION,
            "family": sel.chosen, "features": list(features), "target": TARGET,
            "params": params, "log1p": bool(settings.log1p), "calibration": calibration,
            "versions": versions}
    refit = _refit(rows, meta, path)
    x = rows[features].to_numpy()
    if not np.allclose(refit.predict(x), sel.model.predict(x), rtol=1e-12, atol=0):
        raise RuntimeError("the model refitted from its saved rows and parameters does not "
                           "predict as the fitted one: save_model needs the new model's state")
    write_parquet(rows, path, metadata=meta)


def _refit(rows: pd.DataFrame, meta: dict, path: str | Path) -> Any:
    """The model of family ``meta["family"]`` with ``meta``'s parameters, fitted on ``rows``
    (:mod:`perfcast.model.families`); a parameter the model does not take is an InputError
    naming it."""
    from perfcast.model.families import ConstantRatio, ridge_pipeline
    from perfcast.model.knn import make_pipeline

    family, params = meta["family"], meta["params"]
    try:
        if family == "constant":
            ratio = float(params["ratio"])
            if not (math.isfinite(ratio) and ratio > 0):
                raise ValueError(f"ratio {ratio!r} is not finite and positive")
            return ConstantRatio(ratio)
        pipe = make_pipeline(meta["log1p"]) if family == "knn" else ridge_pipeline()
        pipe.set_params(**params)
        return pipe.fit(rows[meta["features"]].to_numpy(dtype=float),
                        rows[meta["target"]].to_numpy(dtype=float))
    except (ValueError, TypeError, KeyError) as exc:
        why = " ".join(str(exc).split())  # one line (scikit-learn's messages span several)
        raise InputError(path, f"its parameters {params} do not fit a {family} model: "
                         f"{why[:300]}", expected="a model file written by perfcast's train "
                         "rule") from None


def load_model(path: str | Path) -> dict:
    """A model written by :func:`save_model` (rule ``model_train``), refitted from its rows:
    ``{"model", "features", "calibration", "versions"}``.

    The file is read as data only (Parquet and JSON metadata); nothing in it is executed, so a
    model file from anywhere can be given to ``perfcast predict --model``. A pickled model
    (``joblib``, written by older versions) is refused unread.

    Raises
    ------
    InputError
        naming the file: unreadable, not a perfcast model, of another format version, or with
        metadata or rows that do not make a model (a non-finite value, too few rows for its
        number of neighbours).
    """
    expected = "a model file written by perfcast's train rule (Parquet)"
    try:
        meta = parquet_metadata(input_file(path))
    except (InputError, FileNotFoundError):
        raise
    except Exception as exc:  # pyarrow's many kinds of a corrupt or non-Parquet file
        raise InputError(path, f"not a perfcast model file ({type(exc).__name__})",
                         expected=expected + "; a pickled model is never loaded: retrain "
                         "with this version") from None
    if meta.get("format") != MODEL_FORMAT:
        raise InputError(path, "not a perfcast model file", expected=expected)
    from perfcast.model.families import FAMILIES

    if meta.get("family") not in FAMILIES:
        raise InputError(path, f"model family {meta.get('family')!r}",
                         expected=f"one of {list(FAMILIES)}")
    if meta.get("format_version") != MODEL_FORMAT_VERSION:
        raise InputError(path, f"model format version {meta.get('format_version')!r}",
                         expected=f"version {MODEL_FORMAT_VERSION}: retrain with this version")
    features, target = meta.get("features"), meta.get("target")
    if (not isinstance(features, list) or not features
            or not all(isinstance(f, str) for f in features) or not isinstance(target, str)
            or not isinstance(meta.get("params"), dict) or not isinstance(meta.get("log1p"), bool)
            or not all(isinstance(v, str | int | float | bool | None)
                       for v in meta["params"].values())
            or not isinstance(meta.get("calibration"), dict)):
        raise InputError(path, "model metadata lacks or mistypes features, target, params, "
                         "log1p or calibration", expected=expected)
    rows = read_parquet(path)
    require_columns(rows, [*features, target], path)
    for col in (*features, target):
        try:
            values = rows[col].to_numpy(dtype=float)
        except (TypeError, ValueError):
            raise InputError(path, f"column {col!r} is not numeric", expected=expected) from None
        require_values(values, path, f"model row {col}", label="row")
    if rows.empty:
        raise InputError(path, "no training rows", expected=expected)
    k = meta["params"].get("knn__n_neighbors")
    if isinstance(k, int) and not 0 < k <= len(rows):
        raise InputError(path, f"{k} neighbours of {len(rows)} rows",
                         expected="at most as many neighbours as rows")
    return {"model": _refit(rows, meta, path), "family": meta["family"], "features": features,
            "calibration": meta["calibration"], "versions": meta.get("versions", {})}


def predict_files(model: str, counters: str, out: str, summary: str, *, benchmark: str,
                  clock_new_ghz: float | None, settings: PredictSettings) -> dict[str, Any]:
    """Rule ``model_predict`` (and ``perfcast predict``): the new generation's IPC, cycles and
    runtime of a benchmark measured on the old generation only
    (:func:`perfcast.model.knn.predict_run`).

    Parameters
    ----------
    model : the trained model (:func:`load_model`).
    counters : the benchmark's old-generation table.
    out : the per-interval prediction (Parquet; the summary as its metadata).
    summary : the summary (JSON): totals and means, predicted and measured.
    benchmark : the benchmark's name (in the summary).
    clock_new_ghz : the new generation's clock (adds the predicted runtime; None: cycles only).
    settings : the ``predict`` section (the plausible IPC range).

    Returns
    -------
    dict
        the summary written.

    Raises
    ------
    InputError
        an unreadable model or table, a table without the model's counters or with a counter
        that has no reading in any interval, or a prediction that is not finite and plausible
        (:func:`check_prediction`): nothing is written then.
    """
    from perfcast.model.conformal import Calibration, bounds
    from perfcast.model.knn import predict_run

    bundle = load_model(model)
    table = read_counters(counters)
    missing = [f for f in bundle["features"] if f not in table.columns]
    if missing:
        raise InputError(counters, f"lacks the model's counters {missing}",
                         expected="the events the model was trained on")
    if "calibration" not in bundle:
        raise InputError(model, "has no interval calibration (written by an older perfcast)",
                         expected="a model retrained by this version (rule model_train)")
    cal = Calibration(**bundle["calibration"])
    require_numeric(table, list(bundle["features"]), counters)
    for f in bundle["features"]:  # a missing reading (NaN) is imputed; any other is a number
        x = table[f].to_numpy(dtype=float)
        given = ~np.isnan(x)
        require_values(x[given], counters, f, low=0, low_inclusive=True,
                       labels=table["interval"].to_numpy()[given].tolist())
    require_readings(table, bundle["features"], counters)
    for col in ("duration_s", "cycles", "instructions"):
        require_values(table[col], counters, col, low=0, labels=table["interval"].tolist())
    pred = predict_run(bundle["model"], table, bundle["features"], clock_new_ghz)
    if len(pred) and pred["imputed"].all():  # nothing to borrow a ratio from
        raise InputError(counters, f"none of its {len(pred)} intervals has a reading of every "
                         f"counter {list(bundle['features'])}",
                         expected="at least one interval with all the model's counters")
    check_prediction(pred, counters, settings)
    total_cycles = float(pred["cycles_new_pred"].sum())
    q, used = cal.quantile("cycles")
    lo, hi = bounds(total_cycles, q)
    info = {
        "benchmark": benchmark,
        "family": bundle.get("family", "knn"),
        "intervals": int(len(pred)),
        "imputed_intervals": int(pred["imputed"].sum()),
        "old_total_cycles": float(table["cycles"].sum()),
        "old_runtime_s": float(table["duration_s"].sum()),
        "predicted_new_total_cycles": total_cycles,
        "predicted_new_total_cycles_lower": lo,
        "predicted_new_total_cycles_upper": hi,
        "interval_coverage": used,
        "interval_method": "split-conformal on leave-one-benchmark-out log errors of "
                           f"{len(cal.cycles)} training benchmarks",
        "predicted_mean_ipc_new": float(pred["instructions"].sum() / total_cycles),
        "measured_mean_ipc_old": float(table["instructions"].sum() / table["cycles"].sum()),
        "clock_new_ghz": clock_new_ghz,
        "simulated": parquet_metadata(counters).get("simulated", False),
    }
    if clock_new_ghz:
        runtime = total_cycles / (clock_new_ghz * 1e9)
        if all(np.isfinite(list(cal.runtime.values()))):
            q_rt, _ = cal.quantile("runtime")
        else:  # calibrated without a clock: the runtime error is the cycles error
            q_rt = q
        rt_lo, rt_hi = bounds(runtime, q_rt)
        info |= {"predicted_new_runtime_s": runtime, "predicted_new_runtime_s_lower": rt_lo,
                 "predicted_new_runtime_s_upper": rt_hi}
    info["ipc_range"] = list(settings.ipc_range)
    write_parquet(pred, out, metadata=info)
    write_json(info, summary)
    return info
