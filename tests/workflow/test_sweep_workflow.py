"""The sweep stage through real Snakemake runs: one job per configuration x iteration, failed
runs recorded, only new jobs after adding a value, refusals before the campaign, fail-fast."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

PNG = b"\x89PNG\r\n\x1a\n"
#: one of Extra-P's own test inputs (tests/data/extrap/README.md): 2 + 0.884 s log2(p)
EXTRAP_FILE = Path(__file__).resolve().parents[1] / "data" / "extrap" / "two_parameter_5.txt"


def matmul_campaign(sizes):
    return {
        "command": "{python} -m perfcast.workloads.matmul --size {size} --workers {workers} "
                   "--units 3",
        "parameters": {"size": sizes, "workers": [1, 2]},
        "iterations": 1,
        "timeout_s": 60,
        "threads": "{workers}",
        "sensors": {"perf_events": ["task-clock", "page-faults"], "heartbeat": True,
                    "custom": {"load1": {"command": "cut -d' ' -f1 /proc/loadavg",
                                         "mode": "before"}}},
        "derived": {"flop": "2 * 3 * size**3"},
        "models": [{"y": "wall_s"}, {"name": "cpu~flop", "y": "cpu_s", "x": ["flop"]}],
        "predict": [{"size": 48, "workers": 1}],
    }


def make_arpe(root: Path) -> None:
    """An ARPE results tree (values dir / iteration / APRE_timed.txt as after.bash writes)."""
    for t in (1, 2, 4):
        for i in (1, 2):
            d = root / str(t) / str(i)
            d.mkdir(parents=True)
            (d / "APRE_timed.txt").write_text(f"{1.0 / t + 0.01 * i:.2f} {1.0:.2f} 0.05 {t}\n")


def sweep_config(tmp_path, sizes):
    return {"sweep": {
        "campaigns": {
            "mm": matmul_campaign(sizes),
            "flaky": {"command": "test {x} -ne 2 || exit 7", "parameters": {"x": [1, 2, 3]},
                      "iterations": 1, "timeout_s": 10},
        },
        "imports": {"old": {"path": str(tmp_path / "arpe"), "parameters": ["threads"]},
                    "ep": {"format": "extrap", "path": str(EXTRAP_FILE),
                           "parameters": ["p", "s"]}},
        "fit": {"max_order": 2},
    }}


TARGETS = ["all", "results/paper/sweep_models.csv", "results/paper/sweep_models.md",
           "results/paper/sweep_fit.png"]


def job_count(proc, rule):
    m = re.search(rf"^{rule}\s+(\d+)\s*$", proc.stdout + proc.stderr, re.MULTILINE)
    return int(m.group(1)) if m else 0


def test_stage_runs_and_records_failures(tmp_path, snakemake_run):
    make_arpe(tmp_path / "arpe")
    snakemake_run(tmp_path, sweep_config(tmp_path, [32, 64]), targets=TARGETS)
    res = tmp_path / "results" / "sweep"
    runs = sorted((res / "mm" / "runs").rglob("*.json"))
    assert [p.relative_to(res / "mm" / "runs").as_posix() for p in runs] == [
        "size~32_workers~1/iter1.json", "size~32_workers~2/iter1.json",
        "size~64_workers~1/iter1.json", "size~64_workers~2/iter1.json"]
    rec = json.loads(runs[-1].read_text())
    assert rec["status"] == "ok" and rec["heartbeat"]["hb_count"] == 3
    assert rec["perf"]["perf_task_clock"] > 0 and rec["custom"]["load1"] >= 0
    assert json.loads((res / "mm" / "sensors.json").read_text())["perf_events"] == {
        "task-clock": "supported", "page-faults": "supported"}

    table = pd.read_parquet(res / "mm" / "runs.parquet")
    assert len(table) == 4 and (table["status"] == "ok").all()
    assert {"wall_s", "user_s", "sys_s", "max_rss_kb", "cpu_util", "perf_task_clock",
            "hb_rate", "load1"} <= set(table.columns)

    flaky = pd.read_parquet(res / "flaky" / "runs.parquet")
    assert flaky.set_index("x")["status"].to_dict() == {1: "ok", 2: "failed", 3: "ok"}
    assert flaky.set_index("x").loc[2, "returncode"] == 7
    flaky_models = json.loads((res / "flaky" / "models.json").read_text())
    assert flaky_models["n_ok"] == 2 and flaky_models["status"] == {"failed": 1, "ok": 2}
    # two configurations left: the order-1 line, which no held-out fold can cross-validate
    assert flaky_models["effects"]
    for e in flaky_models["effects"]:
        assert e["best"] == "poly[x]^1" and e["n_configurations"] == 2, e
        assert any("no cross-validated order selection" in n for n in e["notes"])
        (line,) = [m for m in e["models"] if m["model"] == e["best"]]
        assert line["cv_mse"] is None and line["n"] == 2

    models = json.loads((res / "mm" / "models.json").read_text())
    effects = {e["effect"]: e for e in models["effects"]}
    assert set(effects) == {"wall_s~size+workers", "cpu~flop"}
    # every candidate scored by CV SMAPE; the winner's family and formula are reported
    cpu = effects["cpu~flop"]
    assert cpu["selected_by"] == "cv_smape" and cpu["formula"].startswith("cpu_s = ")
    assert cpu["best_family"] in ("ARPE polynomial", "performance model normal form")
    assert [m["model"] for m in cpu["models"]].count(cpu["best"]) == 1
    for name in ("fits.png", "residuals.png"):
        assert (res / "mm" / "figures" / name).read_bytes()[:8] == PNG
    preds = pd.read_parquet(res / "mm" / "predictions.parquet")
    assert {"mean", "obs_ci_lower", "obs_ci_upper"} <= set(preds.columns)
    assert (preds["source"] == "predict").sum() == 2

    old = pd.read_parquet(res / "old" / "runs.parquet")
    assert len(old) == 6 and old["threads"].tolist() == [1, 1, 2, 2, 4, 4]
    assert (res / "old" / "models.json").exists()
    # the command line calls the rule's function: the same table, the same metadata
    from perfcast.cli import main
    from perfcast.io import parquet_metadata

    cli_out = tmp_path / "cli_old.parquet"
    assert main(["sweep-import", str(tmp_path / "arpe"), "--parameters", "threads",
                 "--campaign", "old", "-o", str(cli_out)]) == 0
    assert parquet_metadata(cli_out) == parquet_metadata(res / "old" / "runs.parquet")
    pd.testing.assert_frame_equal(pd.read_parquet(cli_out), old)
    # an Extra-P input file read by the same rule, its published law found
    ep = json.loads((res / "ep" / "models.json").read_text())
    assert ep["n_runs"] == 25 and ep["source"].startswith(f"Extra-P input {EXTRAP_FILE}")
    (effect,) = ep["effects"]
    assert effect["formula"] == "value = 2 + 0.884 * log2(p) * s"

    paper = tmp_path / "results" / "paper"
    csv = pd.read_csv(paper / "sweep_models.csv")
    assert set(csv["campaign"]) == {"mm", "old", "flaky", "ep"}  # flaky: its order-1 line
    assert csv[csv["campaign"] == "flaky"]["cv_rmse"].isna().all()
    assert csv.groupby(["campaign", "effect"])["best"].sum().max() == 1
    assert (paper / "sweep_models.md").read_text().startswith("| campaign | effect |")
    assert (paper / "sweep_fit.png").read_bytes()[:8] == PNG



def test_a_new_parameter_value_runs_only_its_jobs(tmp_path, snakemake_run):
    """A value added to a parameter: only its runs are new jobs; the campaign's check and the
    runs already measured are not redone (their files are untouched)."""

    def config(values):
        return {"sweep": {"campaigns": {"c": {
            "command": "echo {x} {y}", "parameters": {"x": values, "y": [1, 2]},
            "iterations": 1, "timeout_s": 10, "models": [{"y": "wall_s"}]}}}}

    snakemake_run(tmp_path, config([1, 2]), targets=["all"])
    res = tmp_path / "results" / "sweep" / "c"
    runs = sorted((res / "runs").rglob("*.json"))
    assert len(runs) == 4
    before = {p: p.stat().st_mtime_ns for p in runs}
    dry = snakemake_run(tmp_path, config([1, 2, 3]), targets=["all"], extra=["-n"])
    assert job_count(dry, "sweep_run") == 2
    assert job_count(dry, "sweep_sensors") == 0
    snakemake_run(tmp_path, config([1, 2, 3]), targets=["all"])
    assert {p: p.stat().st_mtime_ns for p in runs} == before
    assert len(pd.read_parquet(res / "runs.parquet")) == 6


def test_bad_campaigns_are_refused_before_any_run(tmp_path, snakemake_run):
    cfg = {"sweep": {"campaigns": {"c": {"command": "echo {n} {typo}",
                                         "parameters": {"n": [1, 2]}, "iterations": 1}}}}
    proc = snakemake_run(tmp_path / "a", cfg, targets=["all"], check=False)
    assert proc.returncode != 0
    assert "unknown placeholder(s) {typo}" in proc.stdout + proc.stderr

    cfg = {"sweep": {"campaigns": {"c": {"command": "echo {n}", "parameters": {"n": [1, 2]},
                                         "iterations": 1, "sensors": {"rapl": True}}}}}
    proc = snakemake_run(tmp_path / "b", cfg, targets=["all"], check=False)
    assert proc.returncode != 0
    log = (tmp_path / "b" / "results" / "logs" / "sweep" / "c" / "sensors.log").read_text()
    assert "campaign not started" in log and "RAPL" in log
    assert not (tmp_path / "b" / "results" / "sweep" / "c" / "runs").exists()


def test_fail_fast_stops_the_campaign(tmp_path, snakemake_run):
    """With keep-going (the default profile's setting) the other runs still refuse to start;
    the next invocation starts the campaign again."""
    counter = tmp_path / "executions"
    cfg = {"sweep": {"campaigns": {"ff": {
        "command": f"echo {{n}} >> {counter}; exit 9", "parameters": {"n": [1, 2, 3, 4]},
        "iterations": 1, "fail_fast": True, "timeout_s": 10}}}}
    proc = snakemake_run(tmp_path, cfg, targets=["all"], cores=1, extra=["--keep-going"],
                         check=False)
    assert proc.returncode != 0
    assert len(counter.read_text().split()) == 1  # one execution, then the campaign stopped
    res = tmp_path / "results" / "sweep" / "ff"
    marker = json.loads((res / "STOPPED.json").read_text())
    assert marker["returncode"] == 9
    failed = json.loads((tmp_path / marker["record"]).read_text())
    assert failed["status"] == "failed" and failed["returncode"] == 9
    assert not (res / "runs.parquet").exists() and not list(res.glob("runs/*/*.json"))
    logs = " ".join(p.read_text() for p in (tmp_path / "results" / "logs" / "sweep" / "ff")
                    .rglob("iter1.log"))
    assert "stopped (fail_fast)" in logs
    snakemake_run(tmp_path, cfg, targets=["all"], cores=1, extra=["--keep-going"], check=False)
    assert len(counter.read_text().split()) == 2  # not blocked by the old invocation's marker
