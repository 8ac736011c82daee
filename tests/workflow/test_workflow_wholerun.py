"""Whole-run counter tables through the workflow: train, evaluation and prediction on one row
per benchmark and machine, from a CSV table and from real perf stat -x / -j files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd

from perfcast.io import parquet_metadata

DATA = Path(__file__).parents[1] / "data" / "wholerun"


def _table(path: Path, ratio_of, n_bench: int = 10, seed: int = 3) -> list[str]:
    """A CSV table of ``n_bench`` benchmarks on machines old and new whose new/old IPC ratio is
    ``ratio_of(x1_pki, x2_pki, rng)``; the new machine runs at 3 GHz (its time is cycles / 3e9)."""
    rng = np.random.default_rng(seed)
    rows, names = [], []
    for b in range(n_bench):
        name = f"b{b:02d}"
        names.append(name)
        instr = rng.uniform(1e11, 1e12)
        x1, x2 = rng.uniform(0.5, 40.0, 2)
        ipc = rng.uniform(0.5, 2.5)
        ratio = ratio_of(x1, x2, rng)
        for machine, i in (("old", ipc), ("new", ipc * ratio)):
            cycles = instr / i
            rows.append({"benchmark": name, "machine": machine, "instructions": instr,
                         "cycles": cycles, "x1": x1 * instr / 1000, "x2": x2 * instr / 1000,
                         "time_s": cycles / (2e9 if machine == "old" else 3e9)})
    pd.DataFrame(rows).to_csv(path, index=False)
    return names


def _config(names: list[str], pattern: str, **counters) -> dict:
    return {
        "seed": 1,
        "counters": {"backend": "wholerun", "generations": {"old": "old", "new": "new"},
                     "clock_ghz": {"new": 3.0}, "events": ["x1", "x2"],
                     "benchmarks": names[:-1], "wholerun": {"pattern": pattern}} | counters,
        "model": {"n_neighbors": [1, 3], "cv_folds": 3},
        "predict": {"benchmarks": names[-1:]},
    }


def test_constant_ratio_is_chosen_on_a_whole_run_table(tmp_path, snakemake_run):
    """New/old IPC ratio 1.4 times noise no counter explains: the constant ratio is chosen for
    every held-out benchmark and for the stored model; the evaluation says whole-run."""
    names = _table(tmp_path / "runs.csv",
                   lambda x1, x2, rng: 1.4 * np.exp(0.04 * rng.standard_normal()), n_bench=8)
    snakemake_run(tmp_path, _config(names, "runs.csv"), ["all"])
    res = tmp_path / "results"
    ev = pd.read_parquet(res / "model" / "evaluation.parquet")
    assert (ev["family"] == "constant").all() and len(ev) == len(names) - 1
    np.testing.assert_allclose(ev["cycles_error_pct"], ev["baseline_cycles_error_pct"])
    md = (res / "model" / "evaluation.md").read_text()
    assert "**Granularity**: whole-run (one row per benchmark run)." in md
    n = len(names) - 1
    assert f"constant for {n} of {n} held-out benchmarks" in md
    card = json.loads((res / "model" / "model.json").read_text())
    assert card["family"] == "constant" and card["granularity"].startswith("whole-run")
    # one row per benchmark: the KNN is no candidate (model.whole_run_families), and the log
    # says so
    assert set(card["candidates"]) == {"constant", "ridge"}
    assert "whole-run tables: candidate families constant, ridge" in \
        (res / "logs" / "model" / "train.log").read_text()
    pred = json.loads((res / "predict" / f"{names[-1]}.json").read_text())
    assert pred["family"] == "constant" and pred["intervals"] == 1
    # the constant model's prediction is the old cycles over the training benchmarks' median
    runs = pd.read_csv(tmp_path / "runs.csv").set_index(["benchmark", "machine"])
    ratios = [runs.loc[(b, "new"), "instructions"] / runs.loc[(b, "new"), "cycles"]
              / (runs.loc[(b, "old"), "instructions"] / runs.loc[(b, "old"), "cycles"])
              for b in names[:-1]]
    assert np.isclose(pred["predicted_new_total_cycles"],
                      runs.loc[(names[-1], "old"), "cycles"] / np.median(ratios), rtol=1e-9)
    assert parquet_metadata(res / "counters" / "new" / "b00.parquet")["granularity"] == \
        "whole-run"


def test_a_regression_is_chosen_when_one_counter_drives_the_ratio(tmp_path, snakemake_run):
    """Ratio 0.6 (1 + x1)^0.5, x2 noise: the ridge is chosen on every held-out benchmark and
    the median error is far below the constant ratio's."""
    names = _table(tmp_path / "runs.csv", lambda x1, x2, rng: 0.6 * (1 + x1) ** 0.5, n_bench=8)
    snakemake_run(tmp_path, _config(names, "runs.csv"), ["all"])
    ev = pd.read_parquet(tmp_path / "results" / "model" / "evaluation.parquet")
    assert (ev["family"] == "ridge").all()
    base = ev["baseline_cycles_error_pct"].abs().median()
    assert base > 5 and ev["cycles_error_pct"].abs().median() < base / 5
    assert ev["runtime_error_pct"].abs().median() < base / 5  # the new time is cycles / 3 GHz


def test_real_perf_whole_run_files(tmp_path, snakemake_run):
    """Real perf stat output without -I: the old runs as -x, files, the new ones as -j
    (software events: the host has no hardware PMU), through collect-free train, evaluation and
    prediction."""
    for gen, src, suffix in (("old", "here", "csv"), ("new", "again", "json")):
        for bench in ("alloc", "sort", "spin", "text"):
            dst = tmp_path / "perf" / gen / f"{bench}.txt"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(DATA / src / f"{bench}.{suffix}", dst)
    cfg = _config(["alloc", "sort", "spin", "text"], "perf/{gen}/{bench}.txt",
                  events=["page-faults", "context-switches"], clock_ghz={},
                  base_events={"instructions": "task-clock", "cycles": "cpu-clock"})
    # task-clock stands in for instructions: CPU time of the same work varies from run to run
    cfg["align"] = {"instruction_tolerance": 5.0}
    snakemake_run(tmp_path, cfg, ["all"])
    res = tmp_path / "results"
    ev = pd.read_parquet(res / "model" / "evaluation.parquet")
    assert sorted(ev["benchmark"]) == ["alloc", "sort", "spin"]
    assert set(ev["family"]) <= {"constant", "ridge", "knn"}
    assert ev["instruction_ratio"].gt(0).all()
    log = (res / "logs" / "model" / "evaluate.log").read_text()
    assert "alloc: old/new instructions" in log and "granularity: whole-run" in log
    meta = parquet_metadata(res / "counters" / "new" / "spin.parquet")
    assert meta["format"] == "json" and meta["time_source"] == "duration_time event"
    assert parquet_metadata(res / "counters" / "old" / "spin.parquet")["format"] == "perf"
    pred = json.loads((res / "predict" / "text.json").read_text())
    assert pred["intervals"] == 1 and pred["predicted_new_total_cycles"] > 0


def test_a_pattern_without_gen_for_perf_files_fails_naming_the_file(tmp_path, snakemake_run):
    """wholerun.pattern "wr/{bench}.txt" with a perf file per benchmark: both generations read
    the same file, so every IPC ratio was 1; the job now fails naming the file and {gen}."""
    for bench in ("alloc", "sort", "spin", "text"):
        dst = tmp_path / "wr" / f"{bench}.txt"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DATA / "here" / f"{bench}.csv", dst)
    cfg = _config(["alloc", "sort", "spin", "text"], "wr/{bench}.txt",
                  events=["page-faults", "context-switches"], clock_ghz={},
                  base_events={"instructions": "task-clock", "cycles": "cpu-clock"})
    proc = snakemake_run(tmp_path, cfg, ["all"], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "counters.wholerun.pattern has no {gen} and a perf stat file holds one run" in out
    assert re.search(r"wr/\w+\.txt: counters\.wholerun\.pattern has no \{gen\}", out)
    assert not (tmp_path / "results" / "model").exists()
