"""File-level steps of the alignment, training-set, model and prediction rules."""

from __future__ import annotations

import logging
from pathlib import Path

import joblib
import numpy as np
import pandas as pd

from perfcast.errors import InputError
from perfcast.io import (
    atomic_path,
    parquet_metadata,
    read_parquet,
    require_columns,
    write_csv,
    write_json,
    write_parquet,
    write_text,
)
from perfcast.model import plots
from perfcast.model.align import align_runs
from perfcast.model.knn import KnnSettings, evaluate_lobo, fit, model_card, predict_run
from perfcast.model.trainset import (
    benchmark_rows,
    build_trainset,
    feature_columns,
    keep_intervals,
)

log = logging.getLogger(__name__)

COUNTER_COLUMNS = ["interval", "time", "duration_s", "instructions", "cycles", "ipc",
                   "instructions_cumulative_sum"]


def read_counters(path: str | Path) -> pd.DataFrame:
    df = read_parquet(path)
    require_columns(df, COUNTER_COLUMNS, path)
    return df


def stable_intervals(phase_file: str | Path) -> np.ndarray:
    """Intervals labelled ``stable`` by the warm-up stage."""
    ph = read_parquet(phase_file)
    require_columns(ph, ["interval", "phase"], phase_file)
    return ph.loc[ph["phase"] == "stable", "interval"].to_numpy()


def align_files(old: str, new: str, out: str, figure: str | None, *, bench: str, method: str,
                radius: int | None, gens: tuple[str, str]) -> None:
    o, n = read_counters(old), read_counters(new)
    pairs, cost = align_runs(o, n, method, radius)
    log.info("%s: %d x %d intervals -> %d pairs, DTW cost %.6g (%s)", bench, len(o), len(n),
             len(pairs), cost, method)
    meta = {"benchmark": bench, "method": method, "sakoe_chiba_radius": radius, "dtw_cost": cost,
            "old": old, "new": new, "simulated": parquet_metadata(old).get("simulated", False)}
    write_parquet(pairs, out, metadata=meta)
    if figure:
        plots.alignment(o, n, pairs, gens, bench, Path(figure))


def trainset_files(aligned: list[str], old_counters: list[str], out: str, figure: str, *,
                   benchmarks: list[str], phases: list[str] | None = None) -> None:
    parts = []
    for i, bench in enumerate(benchmarks):
        keep = stable_intervals(phases[i]) if phases else None
        parts.append(benchmark_rows(bench, read_counters(old_counters[i]),
                                    read_parquet(aligned[i]), keep))
    train = build_trainset(parts)
    log.info("training set: %d rows, %d benchmarks, stable_only=%s", len(train), len(parts),
             bool(phases))
    write_parquet(train, out, metadata={"benchmarks": benchmarks, "stable_only": bool(phases),
                                        "features": feature_columns(train)})
    plots.ratio_distribution(train, Path(figure))


def _settings(params: dict) -> KnnSettings:
    return KnnSettings(**{k: params[k] for k in KnnSettings.__dataclass_fields__ if k in params})


def train_files(trainset: str, model_out: str, card_out: str, *, settings: dict) -> None:
    train = read_parquet(trainset)
    features = feature_columns(train)
    s = _settings(settings)
    search = fit(train, features, s)
    card = model_card(search, features, train, s)
    card["stable_only"] = parquet_metadata(trainset).get("stable_only", False)
    log.info("best %s, CV MAE %.4f", card["best_params"], card["cv_mae"])
    with atomic_path(model_out) as tmp:
        joblib.dump({"model": search.best_estimator_, "features": features,
                     "versions": card["versions"]}, tmp)
    write_json(card, card_out)


def evaluate_files(trainset: str, old: list[str], new: list[str], out: str, csv: str, md: str,
                   figure: str, *, benchmarks: list[str], settings: dict,
                   clock_new_ghz: float | None, phases: list[str] | None = None,
                   simulated: bool = False) -> None:
    """Leave-one-benchmark-out on all intervals, and on stable ones when phases are given."""
    train = read_parquet(trainset)
    features = feature_columns(train)
    s = _settings(settings)
    co = {b: read_counters(p) for b, p in zip(benchmarks, old, strict=True)}
    cn = {b: read_counters(p) for b, p in zip(benchmarks, new, strict=True)}
    results = [evaluate_lobo(train, co, cn, features, s, clock_new_ghz, label="all")]
    if phases:
        keep = {b: stable_intervals(p) for b, p in zip(benchmarks, phases, strict=True)}
        stable = keep_intervals(train, keep)
        results.append(evaluate_lobo(stable, co, cn, features, s, clock_new_ghz, label="stable"))
    ev = pd.concat(results, ignore_index=True)
    write_parquet(ev, out, metadata={"simulated": simulated})
    write_csv(ev, csv)
    write_text(evaluation_markdown(ev, simulated), md)
    plots.predicted_vs_measured(ev, Path(figure))


def evaluation_markdown(ev: pd.DataFrame, simulated: bool) -> str:
    """The per-benchmark table and the medians, as Markdown."""
    lines = []
    if simulated:
        lines.append("**Simulated data** (two synthetic CPU generations; see "
                     "docs/methods/counters.md).\n")
    for label, g in ev.groupby("training_rows", sort=True):
        lines.append(f"### Leave-one-benchmark-out, training on {label} intervals\n")
        cols = ["benchmark", "n_neighbors", "weights", "cycles_error_pct",
                "baseline_cycles_error_pct", "row_r2"]
        if "runtime_error_pct" in g:
            cols.insert(4, "runtime_error_pct")
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for _, r in g.iterrows():
            cells = [f"{r[c]:.2f}" if isinstance(r[c], float) else str(r[c]) for c in cols]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines.append(f"Median |error| of total cycles: **{g['cycles_error_pct'].abs().median():.2f}"
                     f"%** (constant-ratio baseline: "
                     f"{g['baseline_cycles_error_pct'].abs().median():.2f}%).\n")
    return "\n".join(lines)


def load_model(path: str | Path) -> dict:
    try:
        bundle = joblib.load(path)
    except Exception as exc:  # joblib raises many kinds on a corrupt file
        raise InputError(path, f"not a perfcast model file: {exc}") from exc
    if not isinstance(bundle, dict) or "model" not in bundle or "features" not in bundle:
        raise InputError(path, "not a perfcast model file", expected="knn.joblib from train")
    return bundle


def predict_files(model: str, counters: str, out: str, summary: str, *, bench: str,
                  clock_new_ghz: float | None) -> None:
    bundle = load_model(model)
    table = read_counters(counters)
    missing = [f for f in bundle["features"] if f not in table.columns]
    if missing:
        raise InputError(counters, f"lacks the model's counters {missing}",
                         expected="the events the model was trained on")
    pred = predict_run(bundle["model"], table, bundle["features"], clock_new_ghz)
    total_cycles = float(pred["cycles_new_pred"].sum())
    info = {
        "benchmark": bench,
        "intervals": int(len(pred)),
        "imputed_intervals": int(pred["imputed"].sum()),
        "old_total_cycles": float(table["cycles"].sum()),
        "old_runtime_s": float(table["duration_s"].sum()),
        "predicted_new_total_cycles": total_cycles,
        "predicted_mean_ipc_new": float(pred["instructions"].sum() / total_cycles),
        "measured_mean_ipc_old": float(table["instructions"].sum() / table["cycles"].sum()),
        "clock_new_ghz": clock_new_ghz,
        "simulated": parquet_metadata(counters).get("simulated", False),
    }
    if clock_new_ghz:
        info["predicted_new_runtime_s"] = total_cycles / (clock_new_ghz * 1e9)
    write_parquet(pred, out, metadata=info)
    write_json(info, summary)
