"""Real Snakemake runs of the counters -> prediction half on small configs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from perfcast.io import parquet_metadata

REPO = Path(__file__).resolve().parents[1]
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from conftest import run_snakemake

    work = tmp_path_factory.mktemp("tiny")
    run_snakemake(work, TINY, ["all"])
    return work


def test_tiny_workflow_outputs(tiny_run):
    res = tiny_run / "results"
    ev = pd.read_parquet(res / "model" / "evaluation.parquet")
    assert sorted(ev["benchmark"]) == sorted(TINY["counters"]["benchmarks"])
    assert ev["cycles_error_pct"].abs().max() < 30
    meta = parquet_metadata(res / "counters" / "g2" / "mcf.parquet")
    assert meta["simulated"] is True and meta["join"] == "instructions"
    pred = json.loads((res / "predict" / "nab.json").read_text())
    assert pred["predicted_new_total_cycles"] < pred["old_total_cycles"]  # the new gen is faster
    card = json.loads((res / "model" / "knn.json").read_text())
    assert card["versions"]["scikit-learn"] and len(card["features"]) == 8
    assert "Simulated" in (res / "model" / "evaluation.md").read_text()
    # every rule logged and benchmarked
    assert list((res / "logs").rglob("*.log")) and list((res / "benchmarks").rglob("*.tsv"))


def test_second_run_has_nothing_to_do(tiny_run):
    from conftest import run_snakemake

    proc = run_snakemake(tiny_run, TINY, ["all"], extra=["-n"])
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_unknown_config_key_fails_before_any_job(tmp_path):
    from conftest import run_snakemake

    bad = yaml.safe_load(yaml.safe_dump(TINY))
    bad["counters"]["grup_size"] = 3
    proc = run_snakemake(tmp_path, bad, ["all"], check=False)
    assert proc.returncode != 0
    assert "grup_size" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_import_backend_and_corrupt_file(tmp_path, tiny_run):
    """Already-collected perf CSVs are imported; a malformed line fails naming file and line."""
    from conftest import run_snakemake

    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["backend"] = "import"
    cfg["counters"]["import"] = {"pattern": "perfdata/{gen}/{bench}/g{group}.csv"}
    cfg["counters"]["benchmarks"] = ["mcf", "lbm"]
    cfg["predict"]["benchmarks"] = []
    for gen in ("g2", "g3"):
        for bench in ("mcf", "lbm"):
            for k in range(2):
                dst = tmp_path / "perfdata" / gen / bench / f"g{k}.csv"
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(tiny_run / "results" / "raw" / gen / bench / f"group{k}.csv", dst)
    bad = tmp_path / "perfdata" / "g3" / "lbm" / "g1.csv"
    lines = bad.read_text().splitlines()
    lines[7] = "     0.2,twelve,,cycles"
    bad.write_text("\n".join(lines) + "\n")
    proc = run_snakemake(tmp_path, cfg, ["results/counters/g2/mcf.parquet",
                                         "results/counters/g3/lbm.parquet"],
                         extra=["--keep-going"], check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "perfdata/g3/lbm/g1.csv" in out and "line 8" in out
    # the independent job finished, the failed one left no output
    imported = pd.read_parquet(tmp_path / "results" / "counters" / "g2" / "mcf.parquet")
    original = pd.read_parquet(tiny_run / "results" / "counters" / "g2" / "mcf.parquet")
    pd.testing.assert_frame_equal(imported, original)
    assert not (tmp_path / "results" / "counters" / "g3" / "lbm.parquet").exists()
    assert not (tmp_path / "results" / "raw" / "g3" / "lbm" / "group1.csv").exists()
