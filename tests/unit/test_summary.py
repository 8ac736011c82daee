"""The run summary (perfcast.summary) and its HTML (perfcast.mdhtml): a missed target, a stage
that did not run and a failed run are warnings; the numbers are the stages' own."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from perfcast.mdhtml import to_html
from perfcast.summary import SummarySettings, build_summary, fmt, to_markdown, write_summary


def _warmup(path: Path, rel_width: float, target: float, met: dict[str, bool]) -> Path:
    path.write_text(json.dumps({
        "workload": "kvstore", "stop_reason": "time limit (15 s)", "rounds": 9,
        "rounds_used": 8, "rounds_with_stable_phase": 8, "total_round_time_s": 15.2,
        "stable_readings": 900, "required_readings": 1400,
        "throughput": {"value": 812.5, "lower": 740.0, "upper": 905.0, "width": 165.0,
                       "relative_width": rel_width, "confidence": 0.95, "unit": "units/s"},
        "target_relative_width": target, "target_met": met,
        "wps": {"relative_width": 0.35}, "warnings": [],
        "settings": {"max_rounds": 40, "max_time_s": 15},
    }))
    return path


def test_missed_ci_target_is_a_warning(tmp_path):
    w = _warmup(tmp_path / "w.json", 0.204, 0.1, {"readings": False, "wps": False})
    s = build_summary(warmup=[w])
    text = " ".join(s["warnings"])
    assert "CI width of the stable throughput missed: 20.4 % against <= 10.0 %" in text
    assert "stop criterion wps missed (WPS speed CI width 35.0 % of a 10.0 % target)" in text
    md = to_markdown(s)
    assert md.index("WARNING") < md.index("## Warm-up")
    assert "**812.50 units/s** [740.00, 905.00]" in md
    assert "rounds 9 of a budget of 40" in md


def test_met_targets_give_no_warning(tmp_path):
    w = _warmup(tmp_path / "w.json", 0.05, 0.1, {"readings": True})
    s = build_summary(warmup=[w])
    assert s["warnings"] == []
    assert "No warnings" in to_markdown(s)


def test_a_required_number_that_could_not_be_computed_is_said_so(tmp_path):
    """No stable readings (or a mean of 0) give no required sample size: the summary said
    '0 stable readings of None required'."""
    w = _warmup(tmp_path / "w.json", 0.3, 0.1, {"readings": False})
    d = json.loads(w.read_text())
    w.write_text(json.dumps({**d, "stable_readings": 0, "required_readings": None}))
    md = to_markdown(build_summary(warmup=[w]))
    assert "None" not in md
    assert "0 stable readings; the number required could not be computed" in md


def test_no_warnings_claims_only_the_stages_that_ran(tmp_path):
    w = _warmup(tmp_path / "w.json", 0.05, 0.1, {"readings": True})
    md = to_markdown(build_summary(warmup=[w]))
    assert "No warnings: every stage that ran met its targets." in md


def test_wps_cross_check_is_a_note_not_a_warning(tmp_path):
    """A session that stops on its readings only: the WPS fit's poor prediction is said (a note
    under its stage), but it is no missed target and no warning."""
    w = _warmup(tmp_path / "w.json", 0.073, 0.1, {"readings": True})
    d = json.loads(w.read_text())
    note = "wps (a cross-check, not a stop criterion): prediction error 27.9% is above 10.0%"
    w.write_text(json.dumps({**d, "notes": [note]}))
    s = build_summary(warmup=[w])
    assert s["warnings"] == []
    assert s["sections"][0]["notes"] == [f"kvstore: {note}"]
    assert f"- Note: kvstore: {note}" in to_markdown(s)


def test_sensitivity_not_profiled_says_why(tmp_path):
    p = tmp_path / "cpuhash.json"
    p.write_text(json.dumps({"program": "cpuhash", "status": "not_run",
                             "reason": "cannot write /sys/fs/cgroup/cgroup.subtree_control",
                             "requires": "root (or a delegated cgroup v2 subtree)"}))
    s = build_summary(sensitivity=[p])
    assert s["warnings"] == ["Resource sensitivity: cpuhash not profiled: cannot write "
                             "/sys/fs/cgroup/cgroup.subtree_control"]
    assert "- Not run: cpuhash: not profiled" in to_markdown(s)


def test_sensitivity_on_the_shipped_grid_marks_live_profiling_skipped(tmp_path):
    p = tmp_path / "cpuhash.json"
    p.write_text(json.dumps({
        "program": "cpuhash", "status": "shipped", "backend": "shipped", "epsilon": 0.3,
        "steps": {"runs_total": 12}, "score": {"mae": 0.0123}, "failed_runs": 0,
        "skipped": {"reason": "cannot write /sys/fs/cgroup/cgroup.subtree_control",
                    "requires": "root (or a delegated cgroup v2 subtree)"},
        "shipped": {"measured": "2026-11-24T11:00:00Z", "host": {"cpu_model": "Xeon X"}}}))
    s = build_summary(sensitivity=[p])
    assert s["warnings"] == []  # the stage has its result, and says how
    md = to_markdown(s)
    assert ("- Not run: cpuhash: live profiling skipped: cannot write "
            "/sys/fs/cgroup/cgroup.subtree_control (needs root") in md
    assert ("cpuhash: profiled on the grid shipped with perfcast (measured by its cgroup "
            "backend on Xeon X, 2026-11-24), 12 replayed runs") in md
    assert "against the whole measured grid 0.012" in md
    assert s["sections"][0]["numbers"]["cpuhash"]["status"] == "shipped"


def test_model_numbers_are_the_evaluations_medians(tmp_path):
    ev = pd.DataFrame({"benchmark": ["a", "b", "c"], "training_rows": "all",
                       "cycles_error_pct": [1.0, -3.0, 2.0],
                       "baseline_cycles_error_pct": [5.0, -9.0, 7.0]})
    ev.to_csv(tmp_path / "ev.csv", index=False)
    pred = tmp_path / "imagick.json"
    pred.write_text(json.dumps({
        "benchmark": "imagick", "predicted_new_runtime_s": 33.4,
        "predicted_new_runtime_s_lower": 32.0, "predicted_new_runtime_s_upper": 34.8,
        "interval_coverage": 0.9, "old_runtime_s": 40.0}))
    s = build_summary(evaluation=tmp_path / "ev.csv", predictions=[pred], simulated=True)
    sec = s["sections"][0]
    assert sec["numbers"]["median_error_pct_all"] == 2.0
    assert sec["numbers"]["baseline_median_error_pct_all"] == 7.0
    assert sec["numbers"]["predictions"]["imagick"]["lower"] == 32.0
    md = to_markdown(s)
    assert "SIMULATED" in md and "**2.00 %** (constant-ratio baseline 7.00 %)" in md
    assert "**33.40 s** [32.00, 34.80] (90.0 % prediction interval)" in md
    # a model worse than the constant ratio is a missed target
    ev.assign(cycles_error_pct=[9.0, 9.0, 9.0]).to_csv(tmp_path / "ev.csv", index=False)
    s = build_summary(evaluation=tmp_path / "ev.csv")
    assert any("beats the constant-ratio baseline" in w for w in s["warnings"])


def test_sweep_failed_runs_and_best_model(tmp_path):
    m = tmp_path / "models.json"
    m.write_text(json.dumps({
        "campaign": "matmul", "n_runs": 8, "n_ok": 7, "status": {"ok": 7, "timeout": 1},
        "effects": [{"effect": "wall_s", "y": "wall_s", "best": "poly[size]^2", "notes": [],
                     "models": [{"model": "poly[size]^1", "cv_rmse": 0.5, "adj_r2": 0.8},
                                {"model": "poly[size]^2", "cv_rmse": 0.1, "adj_r2": 0.99}]}]}))
    s = build_summary(sweep=[m])
    assert s["warnings"] == ["Parameter sweeps: matmul: runs succeeded missed: 7 against 8 "
                             "(ok 7, timeout 1)"]
    assert s["sections"][0]["numbers"]["matmul"]["best"]["wall_s"]["model"] == "poly[size]^2"
    assert "**poly[size]^2** (CV RMSE 0.1000, adjusted R^2 0.990)" in to_markdown(s)


def test_write_summary_and_html(tmp_path):
    w = _warmup(tmp_path / "w.json", 0.204, 0.1, {"readings": False})
    out = [tmp_path / n for n in ("s.json", "s.md", "s.html")]
    write_summary(SummarySettings(simulated=False, stages_off=("sweep",), predicted=()),
                  out_json=out[0], out_md=out[1], out_html=out[2], warmup=[w])
    data = json.loads(out[0].read_text())
    assert data["stages_off"] == ["sweep"] and len(data["warnings"]) == 2
    page = out[2].read_text()
    assert '<span class="warning">WARNING: Warm-up' in page
    assert "<strong>812.50 units/s</strong>" in page


def test_markdown_table_to_html():
    page = to_html("# T\n\n| a | b |\n|---|---|\n| x | 1.50 |\n| y | <2 |\n\ntext **b**")
    assert "<th>a</th><th>b</th>" in page
    assert "<tr><td>x</td><td>1.50</td></tr><tr><td>y</td><td>&lt;2</td></tr>" in page
    assert "<p>text <strong>b</strong></p>" in page


def test_fmt():
    assert fmt(None) == "n/a" and fmt(float("nan")) == "n/a" and fmt(3) == "3"
    assert fmt(1.23456, 3) == "1.235"


def test_home_page_shows_the_table_and_the_figure_in_place(tmp_path):
    import base64
    import re

    from perfcast.summary import home_page_extras

    (tmp_path / "ev.md").write_text("| benchmark | cycles_error_pct |\n|---|---|\n| mcf | 1.25 |\n")
    png = tmp_path / "nab.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    page = home_page_extras(tmp_path / "ev.md", [("nab: predicted IPC", png)])
    assert "<td>mcf</td><td>1.25</td>" in page
    data = re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1)
    assert base64.b64decode(data) == png.read_bytes()
    assert 'alt="nab: predicted IPC"' in page


def test_replay_beside_the_paper(tmp_path):
    pd.DataFrame({"epsilon": [0.3, 0.5], "programs": [8, 8], "product_points_total": [40, 20],
                  "probes_1d_total": [30, 25], "mae_binary_mean": [0.0123, 0.0456],
                  "paper_fig11_mae": [0.02, 0.04], "paper_fig12_steps": [80.0, 50.0]}
                 ).to_csv(tmp_path / "rep.csv", index=False)
    s = build_summary(replay=tmp_path / "rep.csv")
    sec = s["sections"][0]
    assert sec["stage"] == "sensitivity"
    assert sec["numbers"]["replay"]["0.3"] == {"mae_binary_mean": 0.0123,
                                               "paper_fig11_mae": 0.02, "steps": 40,
                                               "paper_fig12_steps": 80.0}
    # the 1-D probes are points of the product: 20 runs, not 20 + 25
    assert ("epsilon 0.5: mean |error| of binary sampling **0.0456** (paper: 0.0400), 20 runs "
            "(paper: 50)") in to_markdown(s)
