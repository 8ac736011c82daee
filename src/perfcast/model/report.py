"""The leave-one-benchmark-out evaluation rendered as Markdown (``results/model/evaluation.md``,
also shown as HTML in the report)."""

from __future__ import annotations

import math

import pandas as pd


def evaluation_markdown(ev: pd.DataFrame, simulated: bool, stable_not_run: str | None = None,
                        *, granularity: str | None = None) -> str:
    """The per-benchmark table and the medians of each ``training_rows`` block, as Markdown:
    the chosen family beside every candidate's error and the constant-ratio baseline, how the
    family is chosen, which family the model trained on every benchmark uses, and,
    when the runs retired different instruction counts, the model's error per instruction
    beside the mismatch. First lines say the data are simulated, what a row of the counter
    tables is (``granularity``) and why the stable-interval evaluation was not run
    (``stable_not_run``), when so.

    Parameters
    ----------
    ev : pandas.DataFrame
        the evaluation table (:func:`perfcast.model.evaluation.evaluate_lobo`, one block per
        ``training_rows`` label).
    simulated : bool
        the data are simulated (said first).
    stable_not_run : str or None, default=None
        why the stable-interval evaluation was not run (None: it was, or is not asked).
    granularity : str or None, default=None
        what one row of the counter tables is (:func:`perfcast.model.tables.granularity`).
    """
    from perfcast.model.evaluation import empirical_coverage
    from perfcast.model.families import CONSISTENT_SHARE, FAMILIES

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
            cells = [_cell(r[c]) for c in cols]
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
            lines.append(f"How the family is chosen: on the other benchmarks only, each "
                         f"candidate predicts every one of them left out in turn; the simplest "
                         f"family whose mean |log error| of total cycles is within one standard "
                         f"error of the smallest is taken (the one-standard-error rule), and a "
                         f"more complex family only where it also predicts at least "
                         f"{_share(CONSISTENT_SHARE)} of those benchmarks better than each "
                         f"simpler one; otherwise the simpler. Chosen: {chosen} of {len(g)} "
                         f"held-out benchmarks. The errors above are those of this whole "
                         f"procedure, the choice included. Median |error| of each candidate "
                         f"alone: {each}.\n")
            if "shipped_family" in g:
                shipped = g["shipped_family"].iloc[0]
                held = int((g["family"] == shipped).sum())
                lines.append(f"The model trained on all {len(g)} benchmarks (the one predict "
                             f"uses) is **{shipped}**, the family chosen for {held} of the "
                             f"{len(g)} held-out benchmarks.\n")
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


def _share(share: float) -> str:
    """A share in words where it has a plain name (three in five), else in per cent."""
    words = {3 / 5: "three in five", 2 / 3: "two thirds", 1 / 2: "half", 3 / 4: "three quarters"}
    return next((w for v, w in words.items() if math.isclose(share, v)), f"{100 * share:.0f} %")


def _cell(value: object) -> str:
    """A table cell: two decimals, ``n/a`` for a number that is not finite (``row_r2`` of a
    held-out benchmark of one row: R^2 is undefined there), else the text."""
    if isinstance(value, float):
        return f"{value:.2f}" if math.isfinite(value) else "n/a"
    return str(value)
