"""perfcast's sweep models against Extra-P, side by side, on the largest configurations held out.

Both tools fit the same training configurations and predict the held-out ones:

* **Extra-P's own text inputs**: every one- and two-parameter file of Extra-P's
  ``tests/data/text`` (https://github.com/extra-p/extrap), every region and metric in it. The
  held-out configurations are those where some parameter takes its largest value; the rest is
  the training set. Error: the prediction against the measured mean, in percent.
* **Synthetic cases with known truth**: log, p log p, fractional, negative exponent, additive
  and multiplicative two-parameter laws, and a law rising to a plateau (saturating), with 0,
  5 and 10 % multiplicative Gaussian noise (5 repetitions; ``--seeds`` draws of each, 6 by
  default, their errors averaged), fitted on the smaller levels and scored against the true
  law at larger ones.

Per case the score is the mean absolute relative error over its held-out points (and its
series). For the synthetic laws the "true form" column re-fits the true law's terms (and a
constant) on the same noisy training means: the error the noise alone leaves. The summary says
what bounds the median: on how many cases no method (either tool, the true form) reaches 1 %,
and the median of the best of them per case. Extra-P runs twice: its default modeler, and with
its basic modeler's option ``allow_negative_exponents`` (off by default). Extra-P runs in its
own interpreter (it is no dependency of perfcast): install it apart, e.g.
``python3 -m venv /tmp/extrap && /tmp/extrap/bin/pip install extrap==4.2.5``, and get a local
copy of the Extra-P repository for its test inputs. Then

    PERFCAST_EXTRAP_PYTHON=/tmp/extrap/bin/python PERFCAST_EXTRAP_DATA=/path/to/extrap \\
        nice .venv/bin/python benchmarks/bench_extrap.py

(or ``--extrap-python``/``--extrap-data``). Without the data the file cases are skipped, and
without Extra-P its column is empty; each says so. Writes benchmarks/out/extrap.json and prints
a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from _util import save  # noqa: E402

from perfcast.settings import from_section  # noqa: E402
from perfcast.sweep import selection  # noqa: E402
from perfcast.sweep.extrap_text import extrap_parameters, read_extrap_text  # noqa: E402
from perfcast.sweep.settings import SweepSettings  # noqa: E402

#: runs in Extra-P's interpreter: model every series of each training file, predict held-out
EXTRAP_DRIVER = r"""
import json, sys, warnings
import numpy as np
warnings.simplefilter("ignore")
import logging; logging.disable(logging.CRITICAL)
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
NEGATIVE = sys.argv[1] == "negative"
out = []
for job in json.load(sys.stdin):
    exp = TextFileReader().read_experiment(job["train"])
    gen = ModelGenerator(exp)
    if NEGATIVE:  # the option of Extra-P's basic modeler that adds negative exponents
        getattr(gen.modeler, "single_parameter_modeler", gen.modeler) \
            .allow_negative_exponents = True
    gen.model_all()
    res = {}
    for (callpath, metric), model in gen.models.items():
        f = model.hypothesis.function
        pts = np.array(job["points"], dtype=float).T
        v = f.evaluate(pts if pts.shape[0] > 1 else pts[0])
        res[f"{callpath.name}|{metric.name}"] = {
            "pred": np.atleast_1d(v).astype(float).tolist(),
            "formula": f.to_string(*exp.parameters)}
    out.append(res)
json.dump(out, sys.stdout)
"""


def write_text(path: Path, params: list[str], series: dict[tuple[str, str], pd.DataFrame],
               points: list[tuple[float, ...]]) -> None:
    """An Extra-P text input: the training ``points`` and each series' repetitions."""
    lines = [f"PARAMETER {p}" for p in params]
    lines += ["POINTS " + " ".join("( " + " ".join(f"{v:g}" for v in pt) + " )"
                                   for pt in points)]
    for (region, metric), df in series.items():
        lines += [f"REGION {region or 'main'}", f"METRIC {metric or 'time'}"]
        for pt in points:
            sel = np.ones(len(df), bool)
            for p, v in zip(params, pt, strict=True):
                sel &= df[p].to_numpy() == v
            lines.append("DATA " + " ".join(repr(float(v)) for v in df.loc[sel, "value"]))
    path.write_text("\n".join(lines) + "\n")


def split(df: pd.DataFrame, params: list[str]) -> tuple[list, list]:
    """Training and held-out configurations: held out where a parameter is at its largest."""
    pts = sorted({tuple(r) for r in df[params].to_numpy(dtype=float)})
    top = [max(p[k] for p in pts) for k in range(len(params))]
    held = [p for p in pts if any(p[k] == top[k] for k in range(len(params)))]
    return [p for p in pts if p not in held], held


def perfcast_predict(df: pd.DataFrame, params: list[str], points: list, fit) -> tuple:
    """perfcast's best model of ``value`` on the training rows, at ``points``."""
    groups = ["_".join(f"{v:g}" for v in r) for r in df[params].to_numpy(dtype=float)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = selection.fit_effect(df, "value", "value", params, fit=fit, groups=groups)
    if res.best is None:
        return np.full(len(points), np.nan), "no model", ""
    X = pd.DataFrame(points, columns=params)[res.best.x].to_numpy(dtype=float)
    pred = res.best.fit.predict(X, alpha=fit.alpha)["mean"].to_numpy()
    return pred, res.best.formula("value", digits=4), selection.FAMILY[res.best.kind]


def file_cases(root: Path) -> list[dict]:
    """Every one- and two-parameter text file under ``root`` with its train/held-out split."""
    cases = []
    for f in sorted(root.rglob("*.txt")):
        df = read_extrap_text(f)
        params = extrap_parameters(df)
        if len(params) > 2:
            continue
        train, held = split(df, params)
        if not train or not held:
            continue
        series = {k: g.reset_index(drop=True) for k, g in df.groupby(["region", "metric"])}
        truth = {k: [float(g[(g[params].to_numpy(dtype=float) == np.array(h)).all(axis=1)]
                              ["value"].mean()) for h in held] for k, g in series.items()}
        cases.append({"case": str(f.relative_to(root)).removesuffix(".txt"), "params": params,
                      "series": series, "train": train, "held": held, "truth": truth})
    return cases


#: the terms of each synthetic law (beside the constant): the true form, re-fitted on the same
#: noisy training data, is what no search can beat on average: the noise's own share of the
#: held-out error
TRUE_TERMS = {
    "p log p": [lambda p: p * np.log2(p)],
    "log": [lambda p: np.log2(p)],
    "fractional": [lambda s: s ** 1.5],
    "negative": [lambda p: 1 / p],
    "strong scaling": [lambda p: p ** -0.5 * np.log2(p)],
    "multiplicative": [lambda n, p: n ** 1.5 / p],
    "additive": [lambda n, p: np.log2(p), lambda n, p: n ** 2],
    "saturating": [lambda p: p ** -0.5],
}


def true_form_predict(df: pd.DataFrame, params: list[str], terms: list, points: list
                      ) -> np.ndarray:
    """Least squares of the configuration means on the true law's terms (and a constant),
    predicted at ``points``: the held-out error the noise alone leaves."""
    means = df.groupby(params, sort=True)["value"].mean().reset_index()
    cols = [means[c].to_numpy(dtype=float) for c in params]
    D = np.column_stack([np.ones(len(means)), *[t(*cols) for t in terms]])
    coef = np.linalg.lstsq(D, means["value"].to_numpy(dtype=float), rcond=None)[0]
    P = np.asarray(points, dtype=float)
    Dp = np.column_stack([np.ones(len(P)), *[t(*P.T) for t in terms]])
    return Dp @ coef


def synthetic_cases(seed: int) -> list[dict]:
    """Known laws at 0, 5 and 10 % noise (5 repetitions), held-out levels beyond the data."""
    rng = np.random.default_rng(seed)
    two = [2.0 ** k for k in range(1, 7)]
    laws = [
        ("p log p: 3 + 0.5 p log2 p", ["p"], lambda p: 3 + 0.5 * p * np.log2(p),
         [[v] for v in two], [[128.0], [256.0]]),
        ("log: 10 + 4 log2 p", ["p"], lambda p: 10 + 4 * np.log2(p),
         [[v] for v in two], [[128.0], [256.0]]),
        ("fractional: 2 + 0.3 s^1.5", ["s"], lambda s: 2 + 0.3 * s ** 1.5,
         [[v] for v in (8.0, 16, 32, 64, 128, 256)], [[512.0], [1024.0]]),
        ("negative: 1 + 500 / p", ["p"], lambda p: 1 + 500 / p,
         [[v] for v in (1.0, 2, 4, 8, 16, 32)], [[64.0], [128.0]]),
        ("strong scaling: 0.5 + 80 p^-0.5 log2 p", ["p"],
         lambda p: 0.5 + 80 * p ** -0.5 * np.log2(p), [[v] for v in two], [[128.0], [256.0]]),
        ("multiplicative: 2 + 0.05 n^1.5 / p", ["n", "p"], lambda n, p: 2 + 0.05 * n ** 1.5 / p,
         [[n, p] for n in (16.0, 32, 64, 128, 256) for p in (1.0, 2, 4, 8, 16)],
         [[512.0, 32.0], [512.0, 8.0], [128.0, 32.0]]),
        ("additive: 5 + 2 log2 p + 0.001 n^2", ["n", "p"],
         lambda n, p: 5 + 2 * np.log2(p) + 0.001 * n ** 2,
         [[n, p] for n in (16.0, 32, 64, 128, 256) for p in (2.0, 4, 8, 16, 32)],
         [[512.0, 64.0], [512.0, 8.0], [128.0, 64.0]]),
        # last, so that the draws of the laws above stay what they were
        ("saturating: 20 - 15 p^-0.5", ["p"], lambda p: 20 - 15 * p ** -0.5,
         [[v] for v in two], [[128.0], [256.0]]),
    ]
    cases = []
    for name, params, law, train, held in laws:
        terms = TRUE_TERMS[name.split(":")[0]]
        for noise in (0.0, 0.05, 0.10):
            rows = []
            for pt in train:
                y = law(*pt)
                reps = y * (1 + rng.normal(0, noise, 5)) if noise else np.full(5, y)
                rows += [{**dict(zip(params, pt, strict=True)), "region": "main",
                          "metric": "time", "value": float(v)} for v in reps]
            df = pd.DataFrame(rows)
            cases.append({"case": f"{name}, {noise:.0%} noise", "params": params,
                          "series": {("main", "time"): df},
                          "train": [tuple(p) for p in train], "held": [tuple(p) for p in held],
                          "truth": {("main", "time"): [float(law(*h)) for h in held]},
                          "true_terms": terms})
    return cases


def run_extrap(python: str | None, cases: list[dict], tmp: Path,
               negative: bool = False) -> list[dict | None]:
    """Extra-P's predictions per case and series (None per case without Extra-P); with
    ``negative`` its basic modeler's option ``allow_negative_exponents`` is on."""
    if not python:
        return [None] * len(cases)
    jobs = []
    for i, c in enumerate(cases):
        path = tmp / f"case{i}.txt"
        write_text(path, c["params"], c["series"], c["train"])
        jobs.append({"train": str(path), "points": [list(h) for h in c["held"]]})
    proc = subprocess.run([python, "-c", EXTRAP_DRIVER, "negative" if negative else "default"],
                          input=json.dumps(jobs),
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"Extra-P failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def error(pred: np.ndarray, truth: list[float]) -> np.ndarray:
    t = np.asarray(truth, dtype=float)
    with np.errstate(all="ignore"):
        return np.where(t != 0, 100 * (np.asarray(pred, dtype=float) - t) / np.abs(t), np.nan)


#: the errors averaged over a synthetic law's noisy draws
DRAW_MEANS = ("perfcast_abs_err", "extrap_abs_err", "extrap_negative_abs_err",
              "true_form_abs_err")


def merge_draws(rows: list[dict]) -> list[dict]:
    """One row per case: a synthetic law's draws (one per seed) as the mean of their errors,
    each draw's perfcast error and model kept (``perfcast_abs_err_per_draw``, and
    ``perfcast_model`` becomes a list); one draw of noisy data is an anecdote (which tool wins
    a case at 5 % noise changes from seed to seed)."""
    by_case: dict[str, list[dict]] = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    out = []
    for rs in by_case.values():
        merged = dict(rs[0])
        if len(rs) > 1:
            merged["draws"] = len(rs)
            merged["perfcast_abs_err_per_draw"] = [round(r["perfcast_abs_err"], 2) for r in rs]
            merged["perfcast_model"] = [r["perfcast_model"] for r in rs]  # one per draw
            for k in DRAW_MEANS:
                if k in merged:
                    merged[k] = float(np.mean([r[k] for r in rs]))
        out.append(merged)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--extrap-data", default=os.environ.get("PERFCAST_EXTRAP_DATA"),
                    help="a local copy of the Extra-P repository (or its tests/data/text)")
    ap.add_argument("--extrap-python", default=os.environ.get("PERFCAST_EXTRAP_PYTHON"),
                    help="a Python interpreter that imports extrap")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=6,
                    help="noisy synthetic draws per law, from --seed on; their errors averaged")
    ap.add_argument("--only", help="run the cases whose name contains this text")
    args = ap.parse_args()
    fit = from_section(SweepSettings, {}, "sweep").fit
    cases = []
    if args.extrap_data:
        root = Path(args.extrap_data)
        root = root / "tests" / "data" / "text" if (root / "tests").is_dir() else root
        if not root.is_dir():
            raise SystemExit(f"--extrap-data {root}: not a directory")
        cases += file_cases(root)
    else:
        print("Extra-P's test inputs skipped: no --extrap-data / PERFCAST_EXTRAP_DATA "
              "(a local copy of https://github.com/extra-p/extrap)")
    if not args.extrap_python:
        print("Extra-P not run: no --extrap-python / PERFCAST_EXTRAP_PYTHON (an interpreter "
              "with `pip install extrap`)")
    for seed in range(args.seed, args.seed + args.seeds):
        cases += synthetic_cases(seed)
    if args.only:
        cases = [c for c in cases if args.only in c["case"]]
    with tempfile.TemporaryDirectory() as tmp:
        theirs = run_extrap(args.extrap_python, cases, Path(tmp))
        theirs_neg = run_extrap(args.extrap_python, cases, Path(tmp), negative=True)
    rows = []
    for c, xp, xpn in zip(cases, theirs, theirs_neg, strict=True):
        ours_err, xp_err, xpn_err, formulas, families = [], [], [], [], []
        for key, df in c["series"].items():
            train = df[[tuple(r) in set(c["train"]) for r in
                        df[c["params"]].to_numpy(dtype=float)]].reset_index(drop=True)
            pred, formula, family = perfcast_predict(train, c["params"], c["held"], fit)
            ours_err.append(error(pred, c["truth"][key]))
            formulas.append(formula)
            families.append(family)
            name = f"{key[0] or 'main'}|{key[1] or 'time'}"
            for run, errs in ((xp, xp_err), (xpn, xpn_err)):
                if run is not None:
                    errs.append(error(run[name]["pred"], c["truth"][key]) if name in run
                                else np.full(len(c["held"]), np.nan))
        ours = np.concatenate(ours_err)
        if "true_terms" in c:
            key, df = next(iter(c["series"].items()))
            train = df[[tuple(r) in set(c["train"]) for r in
                        df[c["params"]].to_numpy(dtype=float)]].reset_index(drop=True)
            oracle = error(true_form_predict(train, c["params"], c["true_terms"], c["held"]),
                           c["truth"][key])
        levels = min(len({t[k] for t in c["train"]}) for k in range(len(c["params"])))
        row = {"case": c["case"], "series": len(c["series"]), "held_out": len(c["held"]),
               "training_levels": levels,
               "perfcast_abs_err": float(np.nanmean(np.abs(ours))),
               "perfcast_errors": [round(float(v), 2) for v in ours],
               "perfcast_model": formulas[0] if len(formulas) == 1 else "",
               "perfcast_family": families[0] if len(families) == 1 else ""}
        if "true_terms" in c:
            row["true_form_abs_err"] = float(np.nanmean(np.abs(oracle)))
        if xp is not None:
            theirs_e = np.concatenate(xp_err)
            row["extrap_abs_err"] = float(np.nanmean(np.abs(theirs_e)))
            row["extrap_errors"] = [round(float(v), 2) for v in theirs_e]
            row["extrap_model"] = next(iter(xp.values()))["formula"] if len(xp) == 1 else ""
            row["extrap_negative_abs_err"] = float(np.nanmean(np.abs(np.concatenate(xpn_err))))
        rows.append(row)
    rows = merge_draws(rows)
    table = pd.DataFrame(rows)
    print("| case | series | held out | levels | Extra-P | Extra-P, negative exponents | "
          "perfcast | true form |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        xp = f"{r['extrap_abs_err']:.2f}" if "extrap_abs_err" in r else "-"
        xpn = f"{r['extrap_negative_abs_err']:.2f}" if "extrap_abs_err" in r else "-"
        tf = f"{r['true_form_abs_err']:.2f}" if "true_form_abs_err" in r else "-"
        print(f"| {r['case']} | {r['series']} | {r['held_out']} | {r['training_levels']} | "
              f"{xp} | {xpn} | {r['perfcast_abs_err']:.2f} | {tf} |")
    # two training levels of a parameter determine no law (every law fits two points): shown,
    # but apart from the goal
    scored = table[table["training_levels"] >= 3]
    summary = {"n_cases": len(rows), "n_scored": len(scored),
               "two_level_cases": table.loc[table["training_levels"] < 3, "case"].tolist(),
               "median_perfcast": float(scored["perfcast_abs_err"].median())}
    if "extrap_abs_err" in table:
        summary["median_extrap"] = float(scored["extrap_abs_err"].median())
        worse = scored[scored["perfcast_abs_err"] > scored["extrap_abs_err"] + 0.5]
        summary["cases_worse_than_extrap_by_0.5"] = worse["case"].tolist()
        summary["cases_perfcast_better_by_0.5"] = scored.loc[
            scored["perfcast_abs_err"] < scored["extrap_abs_err"] - 0.5, "case"].tolist()
        best_xp = scored[["extrap_abs_err", "extrap_negative_abs_err"]].min(axis=1)
        summary["median_extrap_negative"] = float(scored["extrap_negative_abs_err"].median())
        summary["median_extrap_best_of_both"] = float(best_xp.median())
        summary["cases_worse_than_best_extrap_by_0.5"] = scored.loc[
            scored["perfcast_abs_err"] > best_xp + 0.5, "case"].tolist()
        # what bounds the median: per case the best any method reached (the true form where
        # it is known, else the best of the three tools)
        best_any = pd.concat([best_xp, scored["perfcast_abs_err"],
                              scored.get("true_form_abs_err")], axis=1).min(axis=1)
        summary["median_best_of_all"] = float(best_any.median())
        summary["cases_best_of_all_above_1"] = int((best_any > 1).sum())
    if "true_form_abs_err" in scored:
        syn = scored[scored["true_form_abs_err"].notna()]
        summary["synthetic_noisy_true_form_vs_perfcast"] = {
            r["case"]: [round(r["true_form_abs_err"], 2), round(r["perfcast_abs_err"], 2)]
            for _, r in syn.iterrows() if not r["case"].endswith(" 0% noise")}
    print(json.dumps(summary, indent=2))
    save("extrap", {"summary": summary, "cases": rows})


if __name__ == "__main__":
    main()
