"""Real Snakemake runs of the counters -> prediction half on small configs."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
import yaml
from harness import load_config

from perfcast.io import parquet_metadata

TINY = load_config("tiny.yaml")


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, snakemake_run):
    work = tmp_path_factory.mktemp("tiny")
    snakemake_run(work, TINY, ["all"])
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
    # the model stage asked for its predict-only benchmark on the old generation only
    runs = pd.read_csv(res / "counters" / "summary.csv")
    assert set(runs.loc[runs["benchmark"] == "nab", "generation"]) == {"g2"}
    # every prediction has an interval around it, at the coverage its benchmarks allow
    n = len(TINY["counters"]["benchmarks"])
    assert pred["interval_coverage"] == pytest.approx(min(0.9, n / (n + 1)))
    assert (0 < pred["predicted_new_total_cycles_lower"] < pred["predicted_new_total_cycles"]
            < pred["predicted_new_total_cycles_upper"])
    assert (pred["predicted_new_runtime_s_lower"] < pred["predicted_new_runtime_s"]
            < pred["predicted_new_runtime_s_upper"])
    assert ev["cycles_covered"].dtype == bool and (ev["cycles_lower"] > 0).all()
    # the counters summary: every run, none multiplexed (the simulator never multiplexes)
    summary = pd.read_csv(res / "counters" / "summary.csv")
    assert len(summary) == 2 * n + 1 and (summary["multiplexed_intervals"] == 0).all()
    assert (summary["lowest_pct_running"] == 100).all()
    card = json.loads((res / "model" / "model.json").read_text())
    assert card["versions"]["scikit-learn"] and len(card["features"]) == 8
    md = (res / "model" / "evaluation.md").read_text()
    assert "Simulated" in md
    # no warmup section, so no phase labels: the evaluation says why it has no stable half
    assert "**Stable-interval evaluation not run**" in md and "warmup.enabled" in md
    assert set(ev["training_rows"]) == {"all"}
    # every rule logged and benchmarked
    assert list((res / "logs").rglob("*.log")) and list((res / "benchmarks").rglob("*.tsv"))


def test_second_run_has_nothing_to_do(tiny_run, snakemake_run):
    proc = snakemake_run(tiny_run, TINY, ["all"], extra=["-n"])
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_every_output_of_simulated_counters_says_so(tiny_run):
    """Simulated counters make simulated alignments, training set, model, card and evaluation:
    each says so where its readers look (Parquet metadata, a JSON key, a CSV column)."""
    res = tiny_run / "results"
    tables = [*sorted((res / "aligned").glob("*.parquet")), res / "train" / "trainset.parquet",
              res / "model" / "model.parquet", res / "model" / "evaluation.parquet"]
    for path in tables:
        assert parquet_metadata(path).get("simulated") is True, path
    assert json.loads((res / "model" / "model.json").read_text())["simulated"] is True
    ev = pd.read_csv(res / "model" / "evaluation.csv")
    assert set(ev["data_source"]) == {"simulated"}


def test_a_rerun_with_nothing_to_do_ends_with_the_summary(tiny_run, snakemake_run):
    """Snakemake calls no onsuccess handler when there is nothing to do: the workflow still
    ends with the summary of the results already there."""
    proc = snakemake_run(tiny_run, TINY, ["all"])
    assert "Nothing to be done (all requested" in proc.stdout + proc.stderr
    summary = (tiny_run / "results" / "summary.md").read_text()
    assert "Nothing to be done: the summary of the results already there" in proc.stdout
    assert proc.stdout.rstrip().endswith(summary.rstrip())


def test_unknown_config_key_fails_before_any_job(tmp_path, snakemake_run):
    bad = yaml.safe_load(yaml.safe_dump(TINY))
    bad["counters"]["grup_size"] = 3
    proc = snakemake_run(tmp_path, bad, ["all"], check=False)
    assert proc.returncode != 0
    assert "grup_size" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()


def test_import_pattern_with_an_unknown_placeholder_fails_before_any_job(tmp_path,
                                                                        snakemake_run):
    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["backend"] = "import"
    cfg["counters"]["import"] = {"pattern": "perfdata/{gen}/{benchmark}/g{group}.csv"}
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "counters.import.pattern 'perfdata/{gen}/{benchmark}/g{group}.csv'" in out
    assert "KeyError 'benchmark'" in out and "{bench}" in out


@pytest.mark.parametrize("pattern, missing", [
    ("perfdata/{bench}/g{group}.csv", "{gen}"),
    ("perfdata/{gen}/g{group}.csv", "{bench}"),
    ("perfdata/{gen}/{bench}.csv", "{group}"),
])
def test_import_pattern_without_a_run_placeholder_fails_before_any_job(tmp_path, snakemake_run,
                                                                       pattern, missing):
    """Each group run is a perf file of its own: a pattern without {gen}, {bench} or {group}
    imported one file for several runs (both generations the same counts)."""
    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["backend"] = "import"
    cfg["counters"]["import"] = {"pattern": pattern}
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"counters.import.pattern {pattern!r} has no {missing}" in out


def test_counters_off_with_the_model_on_fails_before_any_job_naming_both_keys(tmp_path,
                                                                             snakemake_run):
    """The model learns from the counters stage's tables: counters.enabled: false with the model
    stage on would plan no model, silently; the workflow refuses it at parse time instead."""
    cfg = {**TINY, "counters": {**TINY["counters"], "enabled": False}}
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "model.enabled: true" in out and "counters.enabled is false" in out
    assert not (tmp_path / "results").exists()
    cfg["model"] = {**TINY.get("model", {}), "enabled": False}  # both off: a plan without them
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"])
    assert "counters_collect" not in proc.stdout and "model_train" not in proc.stdout


def test_import_backend_and_corrupt_file(tmp_path, tiny_run, snakemake_run):
    """Already-collected perf CSVs are imported; a malformed line fails naming file and line."""
    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["backend"] = "import"
    cfg["counters"]["import"] = {"pattern": "perfdata/{gen}/{bench}/g{group}.csv"}
    cfg["counters"]["benchmarks"] = ["mcf", "lbm"]
    cfg["predict"]["benchmarks"] = []
    cfg["model"] = {**cfg.get("model", {}), "enabled": False}  # two benchmarks: counters only
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
    proc = snakemake_run(tmp_path, cfg, ["results/counters/g2/mcf.parquet",
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
    # the run's last words: the job that failed with its log, and what each stage has made
    assert "The run failed. Failed jobs (their logs say why):" in proc.stdout
    assert re.search(r"^  counters_\w+( \(.*\))?: \S*results/logs/\S*/g3/lbm\.log$",
                     proc.stdout, re.MULTILINE), proc.stdout[-3000:]
    assert re.search(r"^  counters: \d+ of \d+ outputs \(incomplete\)$", proc.stdout,
                     re.MULTILINE), proc.stdout[-3000:]
    assert "summary.smk" not in out  # the handlers are not where the error is said to be


def test_cli_align_and_predict_on_workflow_outputs(tiny_run, tmp_path):
    import subprocess
    import sys

    res = tiny_run / "results"
    cli = [sys.executable, "-m", "perfcast.cli"]
    out = subprocess.run([*cli, "align", str(res / "counters/g2/mcf.parquet"),
                          str(res / "counters/g3/mcf.parquet"), "-o", str(tmp_path / "a.parquet")],
                         capture_output=True, text=True, check=True)
    info = json.loads(out.stdout)
    rule_pairs = pd.read_parquet(res / "aligned" / "mcf.parquet")
    assert info["pairs"] == len(rule_pairs)
    rule_meta = parquet_metadata(res / "aligned/mcf.parquet")
    assert info["dtw_cost"] == pytest.approx(rule_meta["dtw_cost"])
    # the command line calls the rule's function: the same metadata, the same pairs
    cli_meta = parquet_metadata(tmp_path / "a.parquet")
    assert sorted(cli_meta) == sorted(rule_meta) and cli_meta["benchmark"] == "mcf"
    assert cli_meta["simulated"] is True and cli_meta["method"] == "exact"
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "a.parquet"), rule_pairs)
    dtw = subprocess.run([*cli, "align", str(res / "counters/g2/mcf.parquet"),
                          str(res / "counters/g3/mcf.parquet"), "--method", "dtw",
                          "-o", str(tmp_path / "d.parquet")], capture_output=True, text=True,
                         check=True)
    assert json.loads(dtw.stdout)["dtw_cost"] == pytest.approx(info["dtw_cost"], rel=1e-9)
    pred = subprocess.run([*cli, "predict", str(res / "counters/g2/nab.parquet"), "--model",
                           str(res / "model/model.parquet"), "--clock-ghz", "2.6",
                           "-o", str(tmp_path / "p.parquet")], capture_output=True, text=True,
                          check=True)
    assert json.loads(pred.stdout)["predicted_new_total_cycles"] == pytest.approx(
        json.loads((res / "predict" / "nab.json").read_text())["predicted_new_total_cycles"])
    bad = subprocess.run([*cli, "predict", str(tmp_path / "missing.parquet"), "--model",
                          str(res / "model/model.parquet"), "-o", str(tmp_path / "x.parquet")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "missing.parquet: file not found" in bad.stderr


def test_perf_backend_through_the_workflow(tmp_path, snakemake_run, perf_user_mode_only):
    """Real perf stat -I of a real command, two groups per run, through the collect rule.

    This VM has no hardware PMU, so software events play the instructions/cycles roles
    (base_events); the multi-group join and the parser run on genuine perf output.
    """
    import sys

    # a user perf restricts to user mode cannot count context switches (the collection refuses
    # them): major faults in their place
    second = "major-faults" if perf_user_mode_only else "context-switches"
    # fixed work (not a fixed time), so both group runs do the same
    busy = ("x=[bytearray(8192) for _ in range(20000)]; "
            "s=sum(i * i for i in range(6000000))")
    cfg = {
        "programs": {"spin": {"command": f"{sys.executable} -c \"{busy}\""}},
        "counters": {
            "backend": "perf",
            "generations": {"old": "here", "new": "there"},
            "base_events": {"instructions": "task-clock", "cycles": "cpu-clock"},
            "events": ["page-faults", second, "minor-faults"],
            "group_size": 2,
            "benchmarks": ["spin"],
            # task-clock stands in for instructions here: it is CPU time, which for the same work
            # varied by 50 % between two runs on this shared 2-core VM (page faults under memory
            # pressure, steal time); the tolerance is meant for retired-instruction counts
            "run_tolerance": 5.0,
        },
        "align": {"instruction_tolerance": 5.0},
        "model": {"enabled": False},
    }
    snakemake_run(tmp_path, cfg, ["all"])
    raw = (tmp_path / "results/raw/here/spin/group1.csv").read_text()
    assert raw.startswith("# started on") and ",minor-faults" in raw  # ":u" added without root
    # one collect job per run measured both groups, one after the other
    log = (tmp_path / "results/logs/counters/collect/here/spin.log").read_text()
    assert log.index("here/spin group 0 via perf") < log.index("here/spin group 1 via perf")
    t = pd.read_parquet(tmp_path / "results/counters/there/spin.parquet")
    assert {"page-faults_pki", f"{second}_pki", "minor-faults_pki"} <= set(t.columns)
    assert len(t) >= 4 and t["page-faults_pki"].sum() > 0
    assert parquet_metadata(tmp_path / "results/counters/there/spin.parquet")["backend"] == "perf"


def test_report_groups_figures_by_stage(tiny_run, snakemake_run):
    snakemake_run(tiny_run, TINY, [], extra=["--report", "report.html"])
    html = (tiny_run / "report.html").read_text()
    for category in ("1. Counters", "2. Model", "Alignment and training set", "Evaluation"):
        assert category in html
    assert "ipc_over_time.png" in html and "predicted_vs_measured.png" in html


@pytest.mark.parametrize("n", [1, 2])
def test_the_model_on_fewer_than_three_benchmarks_fails_before_any_job(tmp_path, snakemake_run,
                                                                      n):
    """Two benchmarks leave the evaluation nothing to calibrate the interval on once one is held
    out: the workflow refuses the config at parse time, naming the key and the count, instead of
    a model job failing after the counters were collected. Three are enough (the dry run)."""
    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["benchmarks"] = sorted(cfg["counters"]["benchmarks"])[:n]
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"counters.benchmarks holds {n} (" in out and "at least 3" in out
    assert not (tmp_path / "results").exists()
    cfg["counters"]["benchmarks"] = sorted(TINY["counters"]["benchmarks"])[:3]
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"])
    assert "model_evaluate" in proc.stdout
    cfg["counters"]["benchmarks"] = sorted(TINY["counters"]["benchmarks"])[:n]
    cfg["model"] = {**cfg.get("model", {}), "enabled": False}  # the counters stage alone: fine
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"])
    assert "counters_collect" in proc.stdout and "model_train" not in proc.stdout
