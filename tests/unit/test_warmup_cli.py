"""`perfcast edm|ci|wps`: JSON on stdout for good input, one clear line and exit 2 for bad."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfcast.cli import main
from perfcast.warmup.ci import mean_ci
from perfcast.warmup.cli_settings import command_settings
from perfcast.warmup.edm_pilot import edm_percent

PERFCAST = Path(sys.executable).with_name("perfcast")


def run(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if rc == 0 else None), err


def write(path: Path, values) -> Path:
    path.write_text("".join(f"{v}\n" for v in values))
    return path


@pytest.fixture
def warmup_file(tmp_path):
    rng = np.random.default_rng(0)
    x = 10 + rng.normal(size=400)
    x[:40] += 5
    x[-30:] += 4
    return write(tmp_path / "readings.txt", x), x


def test_edm_robust_and_pilot(capsys, warmup_file):
    path, x = warmup_file
    rc, out, _ = run(capsys, "edm", str(path))
    assert rc == 0 and out["mode"] == "robust" and out["n"] == 400
    assert out["rule"] == "dominant"
    assert abs(out["warmup_len"] - 40) <= 2 and abs(out["cooldown_len"] - 30) <= 2
    assert out["stable"]["end"] - out["stable"]["begin"] > 200
    assert sum(s["length"] for s in out["segments"]) == 400
    rc, out, _ = run(capsys, "edm", str(path), "--mode", "pilot")
    assert rc == 0 and out["change_points"] == edm_percent(x)
    assert out["settings"]["min_size"] == 30


def test_edm_reports_a_cycle_in_the_readings(capsys, tmp_path, warmup_file):
    """A cycle is neither noise nor a change: `edm`, `stable`, `ci` and `watch` say so (its
    period and amplitude, and a warning that a change smaller than its swing is not found);
    readings without one get ``season: null`` and no warning."""
    path, _ = warmup_file
    rc, out, err = run(capsys, "edm", str(path))
    assert rc == 0 and out["season"] is None and err == ""
    rng = np.random.default_rng(8)
    t = np.arange(800)
    cyclic = write(tmp_path / "cyclic.txt", 5 + 0.5 * np.sin(2 * np.pi * t / 12.5)
                   + 0.3 * rng.normal(size=800))
    rc, out, err = run(capsys, "edm", str(cyclic))
    assert rc == 0 and out["season"]["period"] == pytest.approx(12.5, rel=0.01)
    assert out["season"]["amplitude"] == pytest.approx(0.5, rel=0.15)
    assert "repeat every 12.5 readings" in err and err.count("\n") == 1
    # `stable`, the one command for the stable throughput, says so too
    assert main(["stable", str(cyclic)]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["season"]["period"] == pytest.approx(12.5, rel=0.01)
    assert "perfcast stable: warning:" in cap.err and "repeat every 12.5 readings" in cap.err
    assert main(["stable", str(path)]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["season"] is None and "repeat" not in cap.err
    # `ci` and `watch` (its last line) use the same key and the same warning
    rc, out, err = run(capsys, "ci", str(cyclic))
    assert rc == 0 and out["season"]["period"] == pytest.approx(12.5, rel=0.01)
    assert "perfcast ci: warning:" in err and "repeat every 12.5 readings" in err
    rc, out, err = run(capsys, "ci", str(path))
    assert rc == 0 and out["season"] is None and "repeat" not in err
    for file, period in ((cyclic, 12.5), (path, None)):
        main(["watch", str(file)])
        cap = capsys.readouterr()
        lines = [json.loads(v) for v in cap.out.splitlines()]
        assert all("season" not in v for v in lines[:-1])
        if period is None:
            assert lines[-1]["season"] is None and "repeat" not in cap.err
        else:
            assert lines[-1]["season"]["period"] == pytest.approx(period, rel=0.01)
            assert "perfcast watch: warning:" in cap.err


def test_flags_are_settings_of_the_cli_schema(capsys, warmup_file):
    path, _ = warmup_file
    # the defaults of flags left out are the schema's (src/perfcast/schemas/warmup_cli.schema.yaml)
    rc, out, _ = run(capsys, "edm", str(path))
    assert out["settings"] == {"mode": "robust", "min_size": 10, "alpha": 0.01,
                               "min_effect": 0.05, "cycles": True, "fallback": "final",
                               "final_share": pytest.approx(1 / 6)}
    # ... which are the workflow's, where both have the setting
    from perfcast.settings import validate

    workflow = validate({}, "warmup", where="test")["edm"]
    cli = validate({}, "warmup_cli", where="test")
    for command in ("edm", "stable"):
        for key in ("alpha", "min_effect", "min_size", "cycles"):
            assert cli[command][key] == workflow[key], (command, key)
    # a value the schema refuses is one line naming the setting, exit status 2
    for argv, key in ((["edm", "--alpha", "1.5"], "edm.alpha"),
                      (["edm", "--min-size", "1"], "edm.min_size"),
                      (["ci", "--cl", "1"], "ci.confidence"),
                      (["ci", "--target", "0"], "ci.target_relative_width"),
                      (["wps", "--ac-limit", "2"], "wps.ac_limit")):
        rc, _, err = run(capsys, *argv, str(path))
        assert rc == 2 and key in err and err.count("\n") == 1, (argv, err)


def test_edm_documented_behaviour_for_few_readings(capsys, tmp_path):
    rc, out, _ = run(capsys, "edm", str(write(tmp_path / "few.txt", range(1, 20))))
    assert rc == 0 and out["rule"] == "short" and out["change_points"] == []
    assert out["stable"] == {"begin": 0, "end": 19} and "fewer than 30" in out["note"]


def test_ci_arithmetic_and_harmonic(capsys, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.uniform(1, 3, size=300)
    path = write(tmp_path / "r.txt", x)
    rc, out, _ = run(capsys, "ci", str(path), "--cl", "0.9")
    ci = command_settings("ci", {"confidence": 0.9})
    ref = mean_ci(np.loadtxt(path), ac_limit=ci.limit, confidence=ci.confidence,
                  target_relative_width=ci.target_relative_width)
    assert rc == 0 and out["mean"] == pytest.approx(ref.mean) and out["q"] == ref.q
    assert out["width"] == pytest.approx(ref.width) and out["confidence"] == 0.9
    for key in ("variance", "autocorrelation", "required_readings", "lower", "upper"):
        assert key in out
    rc, out, _ = run(capsys, "ci", str(path), "--harmonic", "--ac-limit", "0.1")
    assert out["harmonic"] and out["ac_limit"] == 0.1
    assert out["mean"] == pytest.approx(1 / np.mean(1 / np.loadtxt(path)))
    rc, out, _ = run(capsys, "ci", str(path), "--preset", "quick")
    assert out["ac_limit"] == 0.8


def test_wps(capsys, tmp_path):
    rng = np.random.default_rng(2)
    w = rng.uniform(100, 1000, size=30).round()
    t = 1.5 + w / 200 + rng.normal(0, 0.05, size=30)
    path = tmp_path / "rounds.csv"
    rows = "".join(f"{a:g},{b:.6f}\n" for a, b in zip(w, t, strict=True))
    path.write_text("work,duration_s\n" + rows)
    rc, out, _ = run(capsys, "wps", str(path))
    assert rc == 0 and out["rounds"] == 30
    # rounds with less work than alpha stands for (alpha * v, ~300 here) are not used
    assert out["rounds_used_count"] == 30 - len(out["rounds_below_alpha"])
    assert all(w[i] < out["alpha_work"] for i in out["rounds_below_alpha"])
    assert out["v_lower"] <= 200 <= out["v_upper"] and out["q"] >= 1
    assert out["alpha"] == pytest.approx(1.5, abs=0.2)
    for key in ("alpha", "v", "v_lower", "v_upper", "q", "rounds_used"):
        assert key in out


def test_wps_warns_when_the_line_does_not_fit(capsys, tmp_path):
    rng = np.random.default_rng(3)
    w = rng.uniform(100, 1000, size=30).round()
    t = 0.2 + (w / 300) ** 3 + rng.normal(0, 0.05, size=30)  # cubic, not linear, in the work
    path = tmp_path / "rounds.csv"
    path.write_text("work,duration_s\n" + "".join(f"{a:g},{b:.6f}\n"
                                                  for a, b in zip(w, t, strict=True)))
    rc, out, err = run(capsys, "wps", str(path))
    assert rc == 0 and out["prediction_error"] > 0.1 and out["warning"]
    assert err.startswith("perfcast wps: warning: ") and str(path) in err
    assert len(err.strip().splitlines()) == 1
    rc, out, err = run(capsys, "wps", str(path), "--max-prediction-error", "0.9")
    assert rc == 0 and out["warning"] is None and err == ""


def test_wps_autocorrelation_message_names_the_absolute_value_it_compares(capsys, tmp_path):
    """Residuals in runs of three (+, -, +): every subsession size leaves a negative lag-1
    autocorrelation of the block means (-0.667 for pairs); the limit is on |r|, and so is the
    number the message compares with it."""
    w = np.arange(100, 1000, 100, dtype=float)
    t = 1 + w / 100 + 0.3 * np.repeat([1.0, -1.0, 1.0], 3)
    path = tmp_path / "rounds.csv"
    path.write_text("work,duration_s\n" + "".join(f"{a:g},{b:.6f}\n"
                                                  for a, b in zip(w, t, strict=True)))
    rc, _, err = run(capsys, "wps", str(path), "--ac-limit", "0.2")
    assert rc == 2 and str(path) in err
    assert "|lag-1 autocorrelation| 0.667 > 0.2" in err
    assert "-0.667 > 0.2" not in err  # a signed value is never set against the limit on |r|


BAD_READINGS = {
    "empty": ("", "no readings"),
    "text": ("1\n2\nfast\n", "line 3: 'fast' is not a number"),
    "nan": ("1\nnan\n", "line 2: 'nan' is not a finite number"),
    "negative": ("1\n-2\n", "line 2: negative reading -2"),
}


@pytest.mark.parametrize("case", sorted(BAD_READINGS))
@pytest.mark.parametrize("command", ["edm", "ci"])
def test_bad_readings_give_one_clear_line(capsys, tmp_path, case, command):
    text, message = BAD_READINGS[case]
    path = tmp_path / f"{case}.txt"
    path.write_text(text)
    rc, _, err = run(capsys, command, str(path))
    assert rc == 2
    assert err.count("\n") == 1 and str(path) in err and message in err
    assert "Traceback" not in err


def test_ci_needs_30_readings(capsys, tmp_path):
    rc, _, err = run(capsys, "ci", str(write(tmp_path / "few.txt", range(1, 30))))
    assert rc == 2 and "29 readings" in err and "at least 30" in err


@pytest.mark.parametrize("text,message", [
    ("", "no rounds"),
    ("work,seconds\n1,2\n", "missing column(s) ['duration_s']"),
    ("work,duration_s\n", "a header but no rounds"),
    ("work,duration_s\n10,1.0\n20,-1\n", "line 3: duration_s '-1' is not a positive duration"),
    ("work,duration_s\n10,1.0\nten,2\n", "line 3: work 'ten' is not a positive number"),
    ("work,duration_s\n10,nan\n", "line 2: duration_s 'nan'"),
    ("work,duration_s\n10,1\n20,2\n", "2 usable rounds"),
])
def test_bad_rounds(capsys, tmp_path, text, message):
    path = tmp_path / "rounds.csv"
    path.write_text(text)
    rc, _, err = run(capsys, "wps", str(path))
    assert rc == 2 and message in err and "Traceback" not in err


def test_console_script_exit_status_and_stdin(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1\n2\nNaN\n")
    p = subprocess.run([str(PERFCAST), "edm", str(bad)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.startswith("perfcast edm: error:")
    p = subprocess.run([str(PERFCAST), "ci", "-"], input="\n".join(map(str, range(100))),
                       capture_output=True, text=True)
    assert p.returncode == 0 and json.loads(p.stdout)["n"] == 100
    p = subprocess.run([str(PERFCAST), "edm", str(tmp_path / "missing.txt")],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "file not found" in p.stderr


LOADED = """
import sys
from perfcast.cli import main
main(sys.argv[1:])
print(" ".join(sorted(sys.modules)), file=sys.stderr)
"""


def test_edm_loads_neither_numba_nor_scipy_stats_in_robust_mode(tmp_path):

    f = tmp_path / "r.txt"
    f.write_text("".join(f"{1 + 0.01 * (i % 7)}\n" for i in range(1000)))
    proc = subprocess.run([sys.executable, "-c", LOADED, "edm", str(f)], capture_output=True,
                          text=True, timeout=120)
    modules = set(proc.stderr.split())
    assert "perfcast.warmup.edm_robust" in modules
    assert not modules & {"numba", "scipy.stats", "scipy.optimize", "perfcast.warmup.edm_pilot"}


def test_pilot_mode_warns_before_a_long_run(tmp_path, capsys, monkeypatch):
    import perfcast.cli.warmup as cli

    monkeypatch.setattr(cli, "PILOT_WARN_READINGS", 100)
    f = tmp_path / "r.txt"
    f.write_text("".join(f"{1 + 0.01 * (i % 7)}\n" for i in range(120)))
    assert main(["edm", str(f), "--mode", "pilot"]) == 0
    err = capsys.readouterr().err
    assert "120 readings in pilot mode" in err and "--mode robust" in err
    f.write_text("".join(f"{1 + 0.01 * (i % 7)}\n" for i in range(99)))
    assert main(["edm", str(f), "--mode", "pilot"]) == 0
    assert capsys.readouterr().err == ""


def test_a_harmonic_mean_refuses_a_zero_rate_naming_its_line(tmp_path, capsys):
    """A harmonic mean needs every reading above 0: a 0 (or, with --allow-negative, a negative
    reading) is refused naming the line it is on, counting the header, comment and blank
    lines, and the flag that asked for it; without the flag the same file is read."""
    f = tmp_path / "rates.txt"
    f.write_text("ops_per_s\n# warm machine\n\n" + "".join(f"{100 + i % 7}\n" for i in range(60))
                 + "0\n" + "".join(f"{100 + i % 5}\n" for i in range(40)))
    for argv, flag in ((["ci", "--harmonic"], "--harmonic"), (["stable", "--rates"], "--rates")):
        assert main([*argv, str(f)]) == 2
        err = capsys.readouterr().err
        assert "line 64: reading 0 is not positive" in err and flag in err, err
    assert main(["ci", str(f)]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 101
    f.write_text("50\n-5\n" + "50\n" * 60)
    assert main(["stable", "--rates", "--allow-negative", str(f)]) == 2
    assert "line 2: reading -5 is not positive" in capsys.readouterr().err


def test_every_reader_takes_a_header_and_negative_readings_on_request(tmp_path, capsys):
    rng = np.random.default_rng(6)
    x = rng.normal(size=400)
    x[100:] += 2.0  # centred data with a step: negative readings, rank-based detector
    f = tmp_path / "r.txt"
    f.write_text("duration_s\n" + "".join(f"{v}\n" for v in x))
    for command in ("edm", "ci", "stable", "watch"):
        rc = main([command, str(f)])
        err = capsys.readouterr().err
        assert rc == 2 and "negative reading" in err and "--allow-negative" in err, (command, err)
    assert main(["edm", str(f), "--allow-negative"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 400 and out["change_points"] == [100]  # the header is not a reading
    assert out["stable"] == {"begin": 100, "end": 400}
    assert main(["stable", str(f), "--allow-negative"]) == 0
    assert json.loads(capsys.readouterr().out)["detector_stable"]["begin"] == 100
    assert main(["ci", str(f), "--allow-negative"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 400
    assert main(["watch", str(f), "--allow-negative", "--target", "1e-6"]) == 1
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last["n"] == 400 and last["stable"]["begin"] >= 100
    # only the first line can be a header
    f.write_text("1.0\nduration_s\n2.0\n")
    assert main(["edm", str(f)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_edm_takes_the_last_segment_where_none_dominates(capsys, tmp_path):
    """Two levels in turn (150, 150, 100 and 200 readings): no segment holds more than half.
    The default fallback (final) reports the last one as the stable phase, named as such;
    --fallback none gives Pilot's answer; --final-share above the last one's share, none."""
    rng = np.random.default_rng(3)
    y = np.r_[np.full(150, 1.0), np.full(150, 1.2), np.full(100, 1.0), np.full(200, 1.2)]
    path = write(tmp_path / "levels.txt", y + 0.01 * rng.standard_normal(600))
    rc, out, _ = run(capsys, "edm", str(path))
    assert rc == 0 and out["change_points"] == [150, 300, 400]
    assert out["rule"] == "final" and out["stable"] == {"begin": 400, "end": 600}
    assert out["warmup_len"] == 400 and "last segment" in out["note"]
    rc, out, _ = run(capsys, "edm", str(path), "--fallback", "none")
    assert rc == 0 and out["rule"] == "none" and out["stable"] is None
    rc, out, _ = run(capsys, "edm", str(path), "--final-share", "0.4")
    assert out["rule"] == "none" and "less than 0.4 of them" in out["note"]
    rc, _, err = run(capsys, "edm", str(path), "--final-share", "0.6")
    assert rc == 2 and "phases.final_share" in err


def test_keep_cycles_judges_a_step_against_the_cycle(capsys, tmp_path):
    """A step of 1 sd under a cycle of 2 sd: found with the cycle taken out (the default),
    not with --keep-cycles (cycles: false, in the output's settings); ``stable`` likewise."""
    t = np.arange(600)
    rng = np.random.default_rng(1)
    x = 10 + 2 * np.sin(2 * np.pi * t / 20) + rng.normal(size=600) + 1.0 * (t >= 300)
    path = tmp_path / "cyclic.txt"
    path.write_text("\n".join(f"{v:.6f}" for v in x) + "\n")
    _, out, err = run(capsys, "edm", str(path))
    assert out["settings"]["cycles"] is True
    assert len(out["change_points"]) == 1 and abs(out["change_points"][0] - 300) <= 5
    assert out["season"]["period"] == pytest.approx(20, rel=0.01)
    assert out["season"]["taken_out"] is True and "was taken out" in err
    _, kept, err = run(capsys, "edm", str(path), "--keep-cycles")
    assert kept["settings"]["cycles"] is False and kept["change_points"] == []
    assert kept["season"]["taken_out"] is False and "was kept in" in err
    # a cycle that starts half-way is kept in by the detector (the series of
    # test_a_cycle_that_differs_between_the_halves_is_not_taken_out), and the output says so;
    # ci runs no detector: not known there
    half = tmp_path / "half.txt"
    u = np.arange(800)
    y = 10 + 2.0 * np.sin(2 * np.pi * u / 16) * (u >= 400) + np.random.default_rng(4).normal(
        size=800)
    half.write_text("\n".join(f"{v:.6f}" for v in y) + "\n")
    _, out, err = run(capsys, "edm", str(half))
    assert out["season"]["taken_out"] is False and "was kept in" in err
    _, out, err = run(capsys, "ci", str(path))
    assert out["season"]["taken_out"] is None and "otherwise judged" in err
    _, stable, _ = run(capsys, "stable", str(path))
    _, stable_kept, _ = run(capsys, "stable", str(path), "--keep-cycles")
    assert stable["settings"]["cycles"] is True and stable_kept["settings"]["cycles"] is False
    # the stable segment starts at the step; with the cycle kept, before it (both levels mixed)
    assert stable["stable"]["begin"] >= 295 and stable_kept["stable"]["begin"] < 295


def test_a_harmonic_ci_without_upper_bound_is_flagged_and_warned(capsys, tmp_path):
    """99 rates of 1000 and one of 1e-6: the CI of mean(1/x) reaches 0, so the harmonic
    mean's has no upper bound. ``upper``, ``width`` and ``relative_width`` are null as before,
    now beside ``upper_unbounded`` true and a warning on stderr saying why and what narrows
    it (the old output: nothing on stderr, no flag), as ``wps`` does for ``v_upper``."""
    f = write(tmp_path / "r.txt", [1000] * 99 + ["0.000001"])
    rc, out, err = run(capsys, "ci", "--harmonic", str(f))
    assert rc == 0 and out["upper"] is None and out["width"] is None
    assert out["relative_width"] is None and out["upper_unbounded"] is True
    assert out["lower"] > 0 and "no upper bound" in out["warning"]
    assert err.count("\n") == 1 and f"perfcast ci: warning: {f}: the harmonic mean's 95 % CI " \
        "has no upper bound" in err and "more readings narrow it" in err
    rc, out, err = run(capsys, "stable", "--rates", str(f))
    assert rc == 0 and out["harmonic_mean"]["upper"] is None
    assert out["harmonic_mean"]["upper_unbounded"] is True
    assert out["mean"]["upper_unbounded"] is False  # (an arithmetic mean's CI always ends)
    assert "no upper bound" in out["note"] and "perfcast stable: warning:" in err
    # a bounded one says so too
    rc, out, err = run(capsys, "ci", "--harmonic", str(write(tmp_path / "ok.txt",
                                                                [1000 + i % 7 for i in range(60)])))
    assert rc == 0 and out["upper_unbounded"] is False and "warning" not in out and err == ""


def test_the_workflows_throughput_ci_without_upper_bound_is_flagged():
    """The workflow's throughput is 1 / the mean unit duration: where the duration's CI
    reaches 0 the throughput's has no upper bound, flagged and warned in the summary."""
    from perfcast.warmup.analysis import SessionAnalysis

    x = np.r_[np.full(99, 1e-6), 1000.0]  # one stall among fast units
    ci = mean_ci(x, ac_limit=0.2, confidence=0.95, target_relative_width=0.1)
    assert ci.lower <= 0
    an = SessionAnalysis([], None, ci, None, None, None)
    tp = an.throughput()
    assert tp["upper"] is None and tp["upper_unbounded"] is True and tp["lower"] > 0
    assert "no upper bound" in an.throughput_warning()
    ok = SessionAnalysis([], None, mean_ci(1 + 0.01 * (np.arange(40) % 3), ac_limit=0.2,
                                             confidence=0.95, target_relative_width=0.1),
                         None, None, None)
    assert ok.throughput()["upper_unbounded"] is False and ok.throughput_warning() is None


@pytest.mark.parametrize("command", ["ci", "edm", "stable", "watch"])
def test_a_literal_that_underflows_to_0_is_refused_like_one_too_small(capsys, tmp_path, command):
    """``1e-400`` reads as 0.0 (below the smallest double): it was taken for a reading of 0
    (``ci``: n 41, mean 0.9756), where ``1e-200`` is refused as too small; now it is refused the
    same way, by every reader and ``watch``'s fast path. Literals that are 0 stay readings."""
    f = write(tmp_path / "u.txt", ["1.0"] * 40 + ["1e-400"])
    assert main([command, str(f)]) == 2
    err = capsys.readouterr().err
    assert err == (f"perfcast {command}: error: {f}, line 41: '1e-400' is too small to compute "
                   "with (expected 0 or a magnitude between 1e-150 and 1e+150)\n")
    zeros = write(tmp_path / "z.txt", ["1.0"] * 40 + ["0", "0.000", "0e-400", "-0"])
    assert main([command, str(zeros)]) in (0, 1)
    out = capsys.readouterr().out
    if command == "ci":
        assert json.loads(out)["n"] == 44


def test_wps_refuses_an_underflowing_literal_as_too_small(capsys, tmp_path):
    f = tmp_path / "r.csv"
    f.write_text("work,duration_s\n100,1.1\n200,1e-400\n")
    assert main(["wps", str(f)]) == 2
    assert "line 3: '1e-400' is too small to compute with" in capsys.readouterr().err


def test_ci_names_the_readings_its_mean_is_of(capsys, tmp_path):
    """``used`` in ``perfcast ci``'s JSON: the newest ``n_used`` readings (whole subsessions of
    q), whose mean is ``mean``."""
    rng = np.random.default_rng(0)
    x = np.empty(1000)
    x[0] = 0.0
    for i in range(1, 1000):
        x[i] = 0.95 * x[i - 1] + rng.normal()
    x += 20
    f = tmp_path / "ar.txt"
    f.write_text("".join(f"{float(v)!r}\n" for v in x))
    rc, out, _ = run(capsys, "ci", str(f))
    assert rc == 0 and out["q"] > 1 and out["used"] == {"begin": 1000 - out["n_used"], "end": 1000}
    assert out["mean"] == pytest.approx(x[out["used"]["begin"]:].mean(), rel=1e-12, abs=0)
