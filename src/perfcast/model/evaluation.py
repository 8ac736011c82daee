"""Leave-one-benchmark-out evaluation of the IPC-ratio model, its family chosen without the
held-out benchmark, with the prediction intervals of each held-out benchmark calibrated without
it (docs/methods/model.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.model.conformal import bounds
from perfcast.model.families import FAMILIES, ConstantRatio, constant_ratio, select
from perfcast.model.knn import predict_run
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
    """Leave-one-benchmark-out: choose the family, tune and fit on the others, predict the
    held-out benchmark.

    The family is chosen by :func:`perfcast.model.families.select` on the other benchmarks only
    (a nested cross-validation), so the held-out benchmark's error is that of the whole
    procedure a user runs, choice included.

    Parameters
    ----------
    train : pandas.DataFrame
        the training set (every benchmark's rows, at least three benchmarks).
    counters_old, counters_new : dict of str to pandas.DataFrame
        each benchmark's old and new run tables.
    features : list of str
        the feature columns.
    settings : KnnSettings
        the ``model`` section (families and their grids).
    clock_new_ghz : float or None
        the new generation's clock; adds the runtime columns (None: cycles only).
    label : str
        the ``training_rows`` column of every row (``all``, ``stable``).

    Returns
    -------
    pandas.DataFrame
        one row per benchmark: the chosen ``family`` (without the benchmark); the family of the
        model trained on every benchmark (``shipped_family``, the same in every row: what
        ``model_train`` writes and ``predict`` uses); the KNN's k and weights and the ridge's
        alpha as tuned without the benchmark (NaN when not a candidate); measured vs predicted
        new-generation total cycles and the error in percent, of the chosen family and of every
        candidate (``{family}_cycles_error_pct``); the constant-ratio baseline
        (``baseline_cycles_error_pct``, the median ratio of the other benchmarks, whether a
        candidate or not); the instruction mismatch (:func:`instruction_terms`); the same for
        runtime (measured wall time of the new run vs predicted cycles / clock); the per-row
        R^2 and MAE of the IPC ratio on the aligned pairs. The prediction interval
        (``*_lower``, ``*_upper``, ``*_covered``, ``interval_coverage``) is calibrated on the
        other benchmarks only, each predicted by the chosen family refitted without itself and
        without the held-out one.

    Examples
    --------
    Three benchmarks whose new generation is 1.2, 1.25 and 1.3 times as fast per cycle: each is
    predicted by the median ratio of the other two (the constant family).

    >>> import pandas as pd
    >>> from perfcast.model.settings import KnnSettings
    >>> from perfcast.model.trainset import build_trainset
    >>> from perfcast.settings import from_section
    >>> def run(ipc):  # three intervals of 1e9 instructions
    ...     return pd.DataFrame({"interval": [0, 1, 2], "time": [0.1, 0.2, 0.3],
    ...         "duration_s": 0.1, "instructions": 1e9, "cycles": 1e9 / ipc, "ipc": ipc,
    ...         "instructions_cumulative_sum": [1e9, 2e9, 3e9], "x_pki": 2.0})
    >>> ratios = {"a": 1.2, "b": 1.25, "c": 1.3}
    >>> old = {b: run(1.0) for b in ratios}
    >>> new = {b: run(r) for b, r in ratios.items()}
    >>> train = build_trainset([pd.DataFrame({"benchmark": b, "old_interval": [0, 1, 2],
    ...     "new_interval": [0, 1, 2], "ipc_ratio": r, "x_pki": 2.0}) for b, r in ratios.items()])
    >>> settings = from_section(KnnSettings, {"families": ["constant"]}, "model")
    >>> ev = evaluate_lobo(train, old, new, ["x_pki"], settings, None, "all")
    >>> ev[["benchmark", "family"]].values.tolist()
    [['a', 'constant'], ['b', 'constant'], ['c', 'constant']]
    >>> ev["cycles_error_pct"].round(2).tolist()  # b: 1.25 predicted as (1.2 + 1.3) / 2
    [-5.88, 0.0, 6.12]
    """
    from sklearn.metrics import r2_score  # a second to import: here, not with the module

    # the family of the model trained on every benchmark (the one model_train ships)
    shipped = select(train, counters_old, counters_new, features, settings,
                     clock_new_ghz).chosen
    rows = []
    for bench in sorted(train[GROUP].unique()):
        rest = train[train[GROUP] != bench]
        held = train[train[GROUP] == bench]
        sel = select(rest, counters_old, counters_new, features, settings, clock_new_ghz)
        old, new = counters_old[bench], counters_new[bench]
        measured_cycles = float(new["cycles"].sum())

        def error_pct(model, old=old, measured=measured_cycles):
            predicted = float(predict_run(model, old, features, None)["cycles_new_pred"].sum())
            return 100.0 * (predicted - measured) / measured

        pred = predict_run(sel.model, old, features, clock_new_ghz)
        predicted_cycles = float(pred["cycles_new_pred"].sum())
        ratio_pred_rows = sel.model.predict(held[features].to_numpy())
        q, used = sel.calibration.quantile("cycles")
        lo, hi = bounds(predicted_cycles, q)
        knn = sel.fitted["knn"].params if "knn" in sel.fitted else {}
        ridge = sel.fitted["ridge"].params if "ridge" in sel.fitted else {}
        row = {
            "training_rows": label,
            "benchmark": bench,
            "family": sel.chosen,
            "shipped_family": shipped,
            "n_neighbors": float(knn.get("n_neighbors", np.nan)),
            "weights": knn.get("weights", ""),
            "ridge_alpha": float(ridge.get("alpha", np.nan)),
            "measured_cycles": measured_cycles,
            "predicted_cycles": predicted_cycles,
            "cycles_error_pct": 100.0 * (predicted_cycles - measured_cycles) / measured_cycles,
            "baseline_cycles_error_pct": error_pct(ConstantRatio(constant_ratio(rest))),
        }
        for family in FAMILIES:
            row[f"{family}_cycles_error_pct"] = (error_pct(sel.fitted[family].model)
                                                 if family in sel.fitted else np.nan)
            row[f"{family}_lobo_score"] = sel.score(family) if family in sel.fitted else np.nan
        row |= instruction_terms(old, new, predicted_cycles)
        row |= {
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
            q_rt, _ = sel.calibration.quantile("runtime")
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
    out = pd.DataFrame(rows)
    out["n_neighbors"] = out["n_neighbors"].astype("Int64")  # NaN where the KNN is no candidate
    return out


def instruction_terms(old: pd.DataFrame, new: pd.DataFrame,
                      predicted_cycles: float) -> dict[str, float]:
    """Split a cycles error into the model's error per instruction and the instruction mismatch.

    The prediction converts the *old* run's instructions at the predicted IPC, so when the new
    run retires ``I_new`` instructions instead of ``I_old`` (another libc, another code path,
    run-to-run variation) its total is off by ``I_old / I_new`` however good the IPC is:

        predicted / C_new = [(predicted / I_old) / (C_new / I_new)] * (I_old / I_new)
                          = (1 + per-instruction error) * (1 + mismatch).

    Parameters
    ----------
    old, new : pandas.DataFrame
        the benchmark's old and new run tables (``instructions``; ``cycles`` of the new one).
    predicted_cycles : float
        the predicted total cycles of the new run.

    Returns
    -------
    dict
        ``instruction_ratio`` (``I_old / I_new``), ``instruction_mismatch_pct``
        (``100 (I_old / I_new - 1)``, the error of a perfect IPC prediction) and
        ``cycles_per_instruction_error_pct`` (the model's own error: predicted cycles per old
        instruction vs measured cycles per new instruction).

    Examples
    --------
    >>> old = pd.DataFrame({"instructions": [105.0]})
    >>> new = pd.DataFrame({"instructions": [100.0], "cycles": [200.0]})
    >>> t = instruction_terms(old, new, predicted_cycles=210.0 * 1.004)
    >>> round(t["instruction_mismatch_pct"], 3), round(t["cycles_per_instruction_error_pct"], 3)
    (5.0, 0.4)
    """
    i_old = float(old["instructions"].sum())
    i_new = float(new["instructions"].sum())
    c_new = float(new["cycles"].sum())
    return {
        "instruction_ratio": i_old / i_new,
        "instruction_mismatch_pct": 100.0 * (i_old / i_new - 1.0),
        "cycles_per_instruction_error_pct": 100.0 * ((predicted_cycles / i_old)
                                                     / (c_new / i_new) - 1.0),
    }


def empirical_coverage(ev: pd.DataFrame, kind: str = "cycles") -> tuple[int, int]:
    """``(covered, held-out benchmarks)`` of one ``training_rows`` block's ``kind`` intervals."""
    col = f"{kind}_covered"
    if col not in ev:
        return 0, 0
    return int(ev[col].sum()), int(len(ev))

