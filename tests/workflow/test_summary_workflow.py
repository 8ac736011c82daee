"""The run summary on a real run of every stage (tests/configs/stages.yaml, made in two
invocations in one folder: the model chain and the sweep, then everything): printed on the
console at the end, every number the one in the stage's own output, every missed target and
every program not profiled a warning; the report's home page shows it, the evaluation table and
the prediction figure are in the report."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess

import harness
import pandas as pd
import pytest

from perfcast.io import parquet_metadata
from perfcast.summary import fmt

#: the counters -> model chain's products and the sweep's models, which the first of the run's
#: two invocations asks for (alone on this 2-core machine: 22 s of the two invocations' 49 s)
FIRST_TARGETS = ["results/model/evaluation.parquet", "results/predict/nab.json",
                 "results/sweep/matmul/models.json"]


def _invoke(workdir, targets, *extra):
    proc = harness.run_snakemake(workdir, harness.load_config("stages.yaml"), targets,
                                 extra=["--replace-workflow-config", *extra])
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """The run is made in two invocations in one folder, as a user who asks for the model's
    evaluation and prediction and the sweep's models first and for everything later: first
    the counters -> model chain and the sweep, ..."""
    workdir = tmp_path_factory.mktemp("summary")
    return workdir, _invoke(workdir, FIRST_TARGETS)


@pytest.fixture(scope="module")
def run(first_run):
    """... then ``all``, which makes the other stages and the summary of the whole run."""
    workdir, _ = first_run
    return workdir, _invoke(workdir, ["all"])


#: rules of the counters -> model chain and the sweep, and of the other stages and the summary
FIRST_RULES = ("counters_collect", "counters_postprocess", "model_align", "model_trainset",
               "model_evaluate", "model_predict", "sweep_run", "sweep_models")
OTHER_RULES = ("run_summary", "warmup_run", "sensitivity_profile", "warmup_paper")


def test_the_first_invocation_makes_what_it_asks_for_alone(first_run):
    first = harness.job_stats(first_run[1])
    assert all(first.get(rule, 0) > 0 for rule in FIRST_RULES), first
    assert not any(rule in first for rule in OTHER_RULES), first
    workdir = first_run[0]
    for target in FIRST_TARGETS:
        assert (workdir / target).exists(), target
    assert not (workdir / "results" / "summary.json").exists()


def test_the_second_invocation_makes_only_what_the_first_did_not(run):
    """The model chain's and the sweep's jobs run once, in the first invocation, and the
    summary (of every stage, theirs included: the tests below) in the second; after them a dry
    run finds nothing to do (no stage's job is out of date once made)."""
    second = harness.job_stats(run[1])
    assert not any(rule in second for rule in FIRST_RULES), second
    assert all(second.get(rule, 0) > 0 for rule in OTHER_RULES), second
    assert "Nothing to be done" in _invoke(run[0], ["all"], "-n")


def _section(summary: dict, stage: str) -> dict:
    return next(s for s in summary["sections"] if s["stage"] == stage)


def test_console_ends_with_the_summary(run):
    workdir, console = run
    md = (workdir / "results" / "summary.md").read_text()
    assert "# perfcast run summary" in md
    tail = console[console.rindex("# perfcast run summary"):]
    summary = json.loads((workdir / "results" / "summary.json").read_text())
    for warning in summary["warnings"]:
        assert f"WARNING: {warning}" in tail


def test_phases_of_simulated_counter_traces_say_so(run):
    """The warmup stage's phase labels of simulated counter traces say, as the traces do, that
    they are simulated (Parquet metadata, and the JSON beside each)."""
    phases = sorted((run[0] / "results" / "warmup" / "counters").rglob("*.parquet"))
    assert phases
    for path in phases:
        assert parquet_metadata(path).get("simulated") is True, path
        assert json.loads(path.with_suffix(".json").read_text())["simulated"] is True, path


def test_model_numbers_are_the_stages(run):
    workdir, _ = run
    res = workdir / "results"
    summary = json.loads((res / "summary.json").read_text())
    md = (res / "summary.md").read_text()
    model = _section(summary, "model")
    ev = pd.read_csv(res / "model" / "evaluation.csv")
    g = ev[ev["training_rows"] == "all"]
    err = g["cycles_error_pct"].abs().median()
    base = g["baseline_cycles_error_pct"].abs().median()
    assert model["numbers"]["median_error_pct_all"] == pytest.approx(err, rel=1e-12)
    assert f"**{fmt(err)} %** (constant-ratio baseline {fmt(base)} %)" in md
    assert "SIMULATED" in model["title"]
    pred = json.loads((res / "predict" / "nab.json").read_text())
    got = model["numbers"]["predictions"]["nab"]
    assert (got["value"], got["lower"], got["upper"]) == (
        pred["predicted_new_runtime_s"], pred["predicted_new_runtime_s_lower"],
        pred["predicted_new_runtime_s_upper"])
    assert (f"**{fmt(got['value'])} s** [{fmt(got['lower'])}, {fmt(got['upper'])}]") in md


def test_warmup_targets_and_throughput(run):
    workdir, _ = run
    res = workdir / "results"
    summary = json.loads((res / "summary.json").read_text())
    session = json.loads((res / "warmup" / "kvstore" / "summary.json").read_text())
    md = (res / "summary.md").read_text()
    warm = _section(summary, "warmup")
    assert warm["numbers"]["kvstore"]["throughput"] == session["throughput"]
    tp = session["throughput"]
    if tp is None:  # a session this short may find no stable phase: said, not left out
        assert any("kvstore: no stable throughput" in w for w in summary["warnings"])
    else:
        rel_met = tp["relative_width"] <= session["target_relative_width"]
        ci_target = next(t for t in warm["targets"] if "CI width" in t["what"])
        assert ci_target["met"] == rel_met
        assert f"**{fmt(tp['value'])} units/s** [{fmt(tp['lower'])}" in md
    # every criterion the session missed is a warning, in both summaries
    for crit, met in session["target_met"].items():
        listed = [w for w in summary["warnings"] if f"stop criterion {crit} missed" in w]
        assert bool(listed) == (not met)
        assert any(f"stop criterion {crit} not met" in w for w in session["warnings"]) == (
            not met)


def test_sensitivity_and_sweep(run):
    workdir, _ = run
    res = workdir / "results"
    summary = json.loads((res / "summary.json").read_text())
    sens = _section(summary, "sensitivity")
    for program in ("cpuhash", "memstream"):
        own = json.loads((res / "sensitivity" / f"{program}.json").read_text())
        assert sens["numbers"][program]["status"] == own["status"]
        skipped = [w for w in summary["warnings"] if f"{program} not profiled" in w]
        assert bool(skipped) == (own["status"] == "not_run")
    models = json.loads((res / "sweep" / "matmul" / "models.json").read_text())
    sweep = _section(summary, "sweep")
    for effect in models["effects"]:
        assert sweep["numbers"]["matmul"]["best"][effect["effect"]]["model"] == effect["best"]
    assert sweep["numbers"]["matmul"]["n_ok"] == models["n_ok"]


def _chromium() -> str | None:
    """Debian's chromium: found, or installed with apt-get where this user may (root)."""
    for name in ("chromium", "chromium-browser"):
        if path := shutil.which(name):
            return path
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                       capture_output=True, timeout=600)
        return shutil.which("chromium")
    return None


@pytest.fixture(scope="module")
def report(run):
    workdir, _ = run
    harness.run_snakemake(workdir, None, [], extra=[
        "--configfile", str(workdir / "config.yaml"), "--replace-workflow-config",
        "--report", "results/report.html"])
    return workdir / "results" / "report.html"


def test_report_opened_in_chromium_shows_summary_evaluation_and_prediction(run, report):
    """The report as a user sees it: opened in headless Chromium, its scripts run, the page
    (the DOM after rendering, the report's embedded scripts left out) holds the summary, the
    evaluation table and the prediction figure on its home page."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no chromium (Debian's package) and it cannot be installed here (not root or "
                    "no apt-get): the report is not checked in a browser")
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=15000",
         "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    page = re.sub(r"<script\b.*?</script>", "", proc.stdout, flags=re.S)
    # the file itself holds them in its scripts only: what is found here was rendered
    raw = re.sub(r"<script\b.*?</script>", "", report.read_text(), flags=re.S)
    assert "perfcast run summary" not in raw
    assert "<h1>perfcast run summary</h1>" in page
    summary = json.loads((run[0] / "results" / "summary.json").read_text())
    for warning in summary["warnings"]:
        assert html.escape(warning, quote=False) in page
    assert re.search(r"<table>.*?cycles_error_pct.*?</table>", page, re.S)
    assert 'alt="nab: predicted new-generation IPC over time"' in page


def test_report_holds_the_summary_evaluation_and_prediction_pages(run, report):
    text = report.read_text()
    for name in ("summary.html", "evaluation.html", "nab.png"):
        assert name in text, f"{name} is not in the report"
    evaluation = (run[0] / "results" / "model" / "evaluation.html").read_text()
    assert "<table>" in evaluation and "cycles_error_pct" in evaluation
