"""The warmup stage through Snakemake: a workload run in rounds here, and counter traces.
(The stage's config schema: ``tests/unit/test_warmup_schema.py``.)

The workload prints readings with a known step warm-up (``programs/stepped_readings.py``: the
first quarter of each round's readings at twice the plateau), so what the analysis finds in them
does not depend on the machine's load; the rounds themselves are real processes, timed here."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from perfcast.io import read_parquet

TINY = {
    "round_lower_bound_s": 0.2,
    "edm": {"mode": "robust", "min_effect": 0.05},
    "session": {"max_rounds": 6, "min_rounds": 4, "max_time_s": 4, "first_estimate_s": 2,
                "first_estimate_rounds": 4},
    "workloads": {"kv": {"command": "{python} "
                                    f"{Path(__file__).parent / 'programs' / 'stepped_readings.py'}"
                                    " {work} {seed}",
                         "work_min": 400, "work_max": 4000}},
}
#: every reason a session may stop for (perfcast.warmup.session): which one depends on how long
#: the rounds took, i.e. on the machine's load
STOP_REASONS = {"target", "max_rounds", "max_time", "work_max"}


RULES = ["all", "warmup_run", "warmup_figure", "warmup_paper", "warmup_counter_phases",
         "run_summary"]
# (--allowed-rules takes several values: an option after it ends the list before the targets)
ONLY_THIS_STAGE = ["--allowed-rules", *RULES, "--cores", "2"]


def test_warmup_stage_end_to_end(tmp_path, snakemake_run, counters_trace):
    # the counters stage is off; a counters-like trace is where its rule would write it
    trace = tmp_path / "results" / "counters" / "gen-x" / "bench1.parquet"
    trace.parent.mkdir(parents=True)
    counters_trace().to_parquet(trace)
    targets = ["all", "results/paper/warmup_phases.png", "results/paper/warmup_throughput.csv",
               "results/warmup/counters/gen-x/bench1.json"]
    # (only this stage's rules: the counters stage's own rule for that file is left out)
    snakemake_run(tmp_path, {"warmup": TINY}, targets=targets, extra=ONLY_THIS_STAGE)
    res = tmp_path / "results"
    rounds = read_parquet(res / "warmup/kv/rounds.parquet")
    readings = read_parquet(res / "warmup/kv/readings.parquet")
    summary = json.loads((res / "warmup/kv/summary.json").read_text())
    assert 2 <= len(rounds) <= 6 and summary["rounds"] == len(rounds)
    assert summary["stop_reason"] in STOP_REASONS
    assert len(readings) == rounds["work"].sum() == summary["readings"]
    assert set(readings["phase"]) <= {"warmup", "stable", "cooldown", "unstable"}
    assert (rounds["duration_s"] > 0).all() and rounds["setup_s"].notna().all()
    # every round's first quarter is its warm-up: found, to within a few readings, in each
    with_stable = rounds[rounds["has_stable"]]
    assert len(with_stable) == len(rounds)
    quarter = rounds["work"] // 4
    assert ((rounds["warmup_readings"] - quarter).abs() <= 0.02 * rounds["work"]).all(), rounds
    assert summary["throughput"]["value"] > 0
    assert (res / "warmup/kv/phases.png").stat().st_size > 10_000
    table = pd.read_csv(res / "paper/warmup_throughput.csv")
    assert table["workload"].tolist() == ["kv"]
    assert table["throughput"].iloc[0] == pytest.approx(summary["throughput"]["value"])
    phases = read_parquet(res / "warmup/counters/gen-x/bench1.parquet")
    assert list(phases.columns) == ["interval", "phase"] and len(phases) == 600
    s = json.loads((res / "warmup/counters/gen-x/bench1.json").read_text())
    assert s["benchmark"] == "bench1" and s["stable_ipc"]["mean"] == pytest.approx(2, rel=0.02)
    assert (res / "logs/warmup/kv.log").exists() and (res / "benchmarks/warmup/kv.tsv").exists()

    # the journal keeps the rounds: re-running the job re-analyses them, measures nothing new
    journal = (res / "warmup/kv/journal.jsonl").read_text()
    snakemake_run(tmp_path, {"warmup": TINY}, targets=["results/warmup/kv/summary.json"],
                  extra=["--forcerun", "warmup_run", *ONLY_THIS_STAGE])
    assert (res / "warmup/kv/journal.jsonl").read_text() == journal
    again = read_parquet(res / "warmup/kv/rounds.parquet")
    assert again["duration_s"].tolist() == rounds["duration_s"].tolist()


@pytest.mark.parametrize("workload,programs,message", [
    ({"command": "echo no placeholder", "work_max": 10}, {}, "does not match"),
    ({"program": "p", "work_max": 10}, {"p": {"command": "echo"}}, "no {work} placeholder"),
    ({"program": "q", "work_max": 10}, {}, "not in the top-level programs"),
    ({"command": "echo {work} {sise}", "work_max": 10}, {}, "unknown placeholder(s) {sise}"),
])
def test_workflow_refuses_a_bad_workload_before_any_job(tmp_path, snakemake_run, workload,
                                                        programs, message):
    config = {"programs": programs, "warmup": {**TINY, "workloads": {"kv": workload}}}
    p = snakemake_run(tmp_path, config, targets=["all"], check=False, extra=["-n"])
    assert p.returncode != 0 and message in (p.stdout + p.stderr)


def test_counter_traces_are_targets_when_the_counters_stage_runs(tmp_path, snakemake_run):
    config = {
        "counters": {"generations": {"old": "g1", "new": "g2"}, "events": ["l1d_cache"],
                     "benchmarks": ["mcf", "gcc", "lbm"]},
        "predict": {"benchmarks": ["xz"]},
        "warmup": {"workloads": {}},
    }
    p = snakemake_run(tmp_path, config, targets=["all"], extra=["-n", "--quiet", "rules"])
    jobs = dict(line.split()[:2] for line in p.stdout.splitlines()
                if line.strip() and line.split()[-1].isdigit() and len(line.split()) == 2)
    # both generations of each benchmark, the predict-only one on the old generation
    assert jobs["warmup_counter_phases"] == "7" and jobs["warmup_paper_counters"] == "1"
    assert "warmup_run" not in jobs  # no workloads configured


def test_a_disabled_counters_stage_is_a_visible_note(tmp_path, snakemake_run):
    # the phases of counter traces need the counters stage: switched off, planning says so,
    # naming the keys, and plans none of them
    config = {
        "counters": {"enabled": False, "generations": {"old": "g1", "new": "g2"},
                     "events": ["l1d_cache"], "benchmarks": ["mcf"]},
        "warmup": {"workloads": {}},
        "model": {"enabled": False},  # the model needs the counters: on, the config is refused
    }
    p = snakemake_run(tmp_path, config, targets=["all"], extra=["-n", "--quiet", "rules"])
    out = p.stdout + p.stderr
    assert "note" in out and "counters.enabled" in out and "warmup.counters" in out
    assert "warmup_counter_phases" not in p.stdout
    # both stages on: no note
    config["counters"]["enabled"] = True
    p = snakemake_run(tmp_path, config, targets=["all"], extra=["-n", "--quiet", "rules"])
    assert "counters.enabled" not in p.stdout + p.stderr
