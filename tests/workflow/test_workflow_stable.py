"""The training set restricted to stable intervals (warm-up stage phase labels), end to end."""

from __future__ import annotations

import pandas as pd


def test_stable_only_trainset_and_both_evaluations(tmp_path, snakemake_run, load_config):
    cfg = load_config("small.yaml")
    cfg["warmup"] = {"enabled": True}
    cfg.setdefault("model", {})["stable_only"] = True
    snakemake_run(tmp_path, cfg, ["results/model/evaluation.parquet",
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


def test_stable_only_without_the_warmup_stage_fails_before_any_job(tmp_path, snakemake_run,
                                                                    load_config):
    """One switch (the warmup stage): model.stable_only without it is refused at parse time,
    naming both keys; nothing runs."""
    cfg = load_config("small.yaml")
    cfg.setdefault("model", {})["stable_only"] = True
    for warmup in (None, {"enabled": False}):
        if warmup is not None:
            cfg["warmup"] = warmup
        proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0
        assert "model.stable_only" in out and "warmup.enabled" in out
        assert not (tmp_path / "results").exists()
