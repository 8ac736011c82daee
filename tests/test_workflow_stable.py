"""The training set restricted to stable intervals (warm-up stage phase labels), end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]


def test_stable_only_trainset_and_both_evaluations(tmp_path):
    from conftest import run_snakemake

    cfg = yaml.safe_load((REPO / "tests" / "configs" / "small.yaml").read_text())
    cfg["warmup"] = {"enabled": True}
    cfg.setdefault("model", {})["stable_only"] = True
    run_snakemake(tmp_path, cfg, ["results/model/evaluation.parquet",
                                  "results/train/trainset.parquet"])
    res = tmp_path / "results"
    train = pd.read_parquet(res / "train" / "trainset.parquet")
    for bench, rows in train.groupby("benchmark"):
        phases = pd.read_parquet(res / "warmup" / "counters" / "g2" / f"{bench}.parquet")
        stable = set(phases.loc[phases["phase"] == "stable", "interval"])
        # every old interval is on the warping path, so the kept ones are exactly the stable
        assert stable and set(rows["old_interval"]) == stable
    ev = pd.read_parquet(res / "model" / "evaluation.parquet")
    assert set(ev["training_rows"]) == {"all", "stable"}
    assert (ev.groupby("training_rows").size() == len(cfg["counters"]["benchmarks"])).all()
