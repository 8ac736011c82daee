"""Leave-one-benchmark-out evaluation of the KNN model, with the prediction intervals of each
held-out benchmark calibrated without it (docs/methods/model.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score

from perfcast.model.conformal import bounds, calibrate
from perfcast.model.knn import best_params, fit, predict_run
from perfcast.model.settings import KnnSettings
from perfcast.model.trainset import GROUP, TARGET


def evaluate_lobo(
    train: pd.DataFrame,
    counters_old: dict[str, pd.DataFrame],
    counters_new: dict[str, pd.DataFrame],
    features: list[str],
    settings: KnnSettings,
    clock_new_ghz: float | None,
    label: str,
) -> pd.DataFrame:
    """Leave-one-benchmark-out: tune and fit on the others, predict the held-out benchmark.

    Parameters
    ----------
    train : the training set (every benchmark's rows).
    counters_old, counters_new : each benchmark's old and new run tables.
    features : the feature columns.
    settings : as for :func:`fit`.
    clock_new_ghz : the new generation's clock; adds the runtime columns (None: cycles only).
    label : the ``training_rows`` column of every row (``all``, ``stable``).

    Returns
    -------
    pandas.DataFrame
        one row per benchmark: the chosen k and weights, measured vs predicted new-generation
        total cycles and the error in percent, the same for runtime (measured wall time of the
        new run vs predicted cycles / clock), the per-row R^2 and MAE of the IPC ratio on the
        aligned pairs, and a constant-ratio baseline (mean training ratio). The prediction
        interval (``*_lower``, ``*_upper``, ``*_covered``, ``interval_coverage``) is calibrated
        on the other benchmarks only, each refitted without itself and without the held-out one
        (:func:`perfcast.model.conformal.calibrate`).
    """
    rows = []
    for bench in sorted(train[GROUP].unique()):
        rest = train[train[GROUP] != bench]
        held = train[train[GROUP] == bench]
        search = fit(rest, features, settings)
        pred = predict_run(search.best_estimator_, counters_old[bench], features, clock_new_ghz)
        new = counters_new[bench]
        measured_cycles = float(new["cycles"].sum())
        predicted_cycles = float(pred["cycles_new_pred"].sum())
        base_ratio = float(rest[TARGET].mean())
        baseline_cycles = float((counters_old[bench]["instructions"]
                                 / (counters_old[bench]["ipc"] * base_ratio)).sum())
        ratio_pred_rows = search.best_estimator_.predict(held[features].to_numpy())
        cal = calibrate(rest, counters_old, counters_new, features, settings,
                        best_params(search), clock_new_ghz)
        q, used = cal.quantile("cycles")
        lo, hi = bounds(predicted_cycles, q)
        row = {
            "training_rows": label,
            "benchmark": bench,
            "n_neighbors": int(best_params(search)["n_neighbors"]),
            "weights": best_params(search)["weights"],
            "measured_cycles": measured_cycles,
            "predicted_cycles": predicted_cycles,
            "cycles_error_pct": 100.0 * (predicted_cycles - measured_cycles) / measured_cycles,
            "baseline_cycles_error_pct": 100.0 * (baseline_cycles - measured_cycles)
            / measured_cycles,
            "ipc_ratio_measured_mean": float(held[TARGET].mean()),
            "ipc_ratio_pred_mean": float(np.mean(ratio_pred_rows)),
            "row_r2": float(r2_score(held[TARGET], ratio_pred_rows)) if len(held) > 1 else np.nan,
            "row_mae": float(np.mean(np.abs(held[TARGET] - ratio_pred_rows))),
            "interval_coverage": used,
            "cycles_lower": lo,
            "cycles_upper": hi,
            "cycles_covered": bool(lo <= measured_cycles <= hi),
        }
        if clock_new_ghz:
            measured_rt = float(new["duration_s"].sum())
            predicted_rt = predicted_cycles / (clock_new_ghz * 1e9)
            q_rt, _ = cal.quantile("runtime")
            rt_lo, rt_hi = bounds(predicted_rt, q_rt)
            row |= {
                "measured_runtime_s": measured_rt,
                "predicted_runtime_s": predicted_rt,
                "runtime_error_pct": 100.0 * (predicted_rt - measured_rt) / measured_rt,
                "runtime_lower_s": rt_lo,
                "runtime_upper_s": rt_hi,
                "runtime_covered": bool(rt_lo <= measured_rt <= rt_hi),
            }
        rows.append(row)
    return pd.DataFrame(rows)


def empirical_coverage(ev: pd.DataFrame, kind: str = "cycles") -> tuple[int, int]:
    """``(covered, held-out benchmarks)`` of one ``training_rows`` block's ``kind`` intervals."""
    col = f"{kind}_covered"
    if col not in ev:
        return 0, 0
    return int(ev[col].sum()), int(len(ev))

