"""The guards around the fast profiling method: the checked ceiling, per-program dimensions,
failed regions, the baseline's spread (docs/methods/sensitivity.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfcast.sensitivity.backends import RunOutcome
from perfcast.sensitivity.monitor import Usage
from perfcast.sensitivity.profile import profile
from perfcast.sensitivity.resources import Dimension, ResourceModel

MEMORY = tuple(float(m) for m in range(32, 129, 16))  # MiB: 32, 48, ..., 128
DISK = tuple(float(r) for r in range(10, 201, 10))  # MB/s


class SpillingSort:
    """A fake backend: a program model of an external ``sort`` (the logic under test needs no
    real program). It reads a 15 MB input in 1 s (a read peak of 15 MB/s unrestricted) and
    sorts in memory; under a memory limit below 160 MiB it spills ``(160 - memory) / 2`` MB of
    temporary files and reads them back at the disk limit; below 48 MiB it is killed (OOM).
    Runtime-like (lower is better). ``runs`` counts every run made."""

    name = "fake-sort"
    higher_is_better = False

    def __init__(self, oom_below: float = 48.0, noise: tuple[float, ...] = (1.0,)) -> None:
        self.model = ResourceModel.ordered([Dimension("memory_mb", "memory", MEMORY, "MiB"),
                                            Dimension("disk_read_mbps", "disk_read", DISK,
                                                      "MB/s")])
        self.oom_below = oom_below
        self.noise = noise
        self.runs = 0

    def time(self, memory: float, disk: float) -> float | None:
        if memory < self.oom_below:
            return None
        spill = max(0.0, (160.0 - memory) / 2.0)
        return 1.0 + max(0.0, 15.0 / disk - 1.0) + spill / disk

    def unrestricted(self) -> RunOutcome:
        return RunOutcome(performance=1.0, ok=True,
                          usage=Usage(cpu_cores=1.0, cpu_runnable=1.0, rss_bytes=200 << 20,
                                      read_bps=15e6, write_bps=0.0, net_bps=0.0, samples=20))

    def peaks(self, unrestricted: RunOutcome) -> dict[str, float | None]:
        return {"memory_mb": 200.0, "disk_read_mbps": 15.0}

    def run(self, point) -> RunOutcome:
        self.runs += 1
        t = self.time(point["memory_mb"], point["disk_read_mbps"])
        if t is None:
            return RunOutcome.failed("killed by the memory limit")
        return RunOutcome(performance=t, ok=True)

    def truth(self) -> np.ndarray:
        out = np.zeros(self.model.shape)
        for idx in self.model.indices():
            p = self.model.point(idx)
            t = self.time(p["memory_mb"], p["disk_read_mbps"])
            out[idx] = 0.0 if t is None else 1.0 / t
        return out


def test_a_ceiling_that_starves_a_spilling_program_is_raised():
    """Known answer: the read peak (15 MB/s) puts the disk ceiling at 20 MB/s, where at the
    memory ceiling (128 MiB, 16 MB spilled: 0.8 s more) S = 1 / 1.8 = 0.56 < 1 - epsilon;
    raising the disk to its top (200 MB/s) gives S = 1 / 1.08 = 0.93, so the disk ceiling
    becomes 200 MB/s (a fake backend: the logic needs no real program)."""
    be = SpillingSort()
    unchecked = profile(be, epsilon=0.3, sampling="binary", spare_cores=1, program="sort")
    assert unchecked.ranges[1].ceiling == DISK.index(20.0)  # the wrong ceiling, as published
    checked = profile(SpillingSort(), epsilon=0.3, sampling="binary", spare_cores=1,
                      program="sort", verify_ceiling=True)
    record = checked.ceiling_check
    assert record["s_at_ceiling"] == pytest.approx(1 / 1.8)
    assert record["raised"] == {"disk_read_mbps": [20.0, 200.0]}
    assert record["s_after"] == pytest.approx(1 / 1.08) and checked.warnings == ()
    assert checked.ranges[1].ceiling == len(DISK) - 1
    summary = checked.summary()
    assert summary["dimensions"]["disk_read_mbps"]["ceiling"] == 200.0
    assert summary["ceiling_check"]["raised"] == {"disk_read_mbps": [20.0, 200.0]}
    # the whole grid is nearer the truth: at 128 MiB and 200 MB/s, 0.56 before, 0.93 after
    truth = be.truth()
    top = (len(MEMORY) - 1, len(DISK) - 1)
    assert unchecked.grid[top] == pytest.approx(1 / 1.8)
    assert checked.grid[top] == pytest.approx(truth[top])
    assert checked.score(truth)["mae_full_grid"] < unchecked.score(truth)["mae_full_grid"]


def test_a_ceiling_no_dimension_explains_is_a_warning_naming_them():
    """Every dimension already at its top level, yet S at the ceiling is 0.56: nothing to raise,
    the profile says so (naming the dimensions) instead of passing as profiled."""
    be = SpillingSort()
    be.peaks = lambda unrestricted: {"memory_mb": 200.0, "disk_read_mbps": 10.0}
    be.model = ResourceModel.ordered([Dimension("memory_mb", "memory", MEMORY, "MiB"),
                                      Dimension("disk_read_mbps", "disk_read", (10.0, 20.0),
                                                "MB/s")])
    r = profile(be, epsilon=0.3, sampling="binary", spare_cores=1, program="sort",
                verify_ceiling=True)
    assert r.ceiling_check["raised"] == {"disk_read_mbps": [10.0, 20.0]}
    assert r.ceiling_check["s_after"] < 0.7
    (warning,) = r.warnings
    assert "disk_read_mbps" in warning and "1 - epsilon" in warning
    assert r.summary()["warnings"] == [warning]
    assert math.isfinite(r.ceiling_check["s_at_ceiling"])


def test_a_merged_config_removes_a_dimension_and_a_program_names_its_own(tmp_path):
    """Snakemake merges a --configfile over the default dict by dict, so a dimension of the
    default can only be removed by naming it with null; a program's own dimensions are merged
    over the section's; the summary table lists what each program was profiled on."""
    import json

    import yaml
    from snakemake.utils import update_config

    from perfcast.errors import InputError
    from perfcast.sensitivity.rules import summarize
    from perfcast.sensitivity.settings import profile_settings
    from perfcast.settings import validate

    config = yaml.safe_load(open("config/config.yaml"))
    update_config(config, {"sensitivity": {
        "dimensions": {"disk_write_mbps": None},
        "programs": {"sort": {"command": "sort -S 64M big.txt", "dimensions": {
            "memory_mb": {"lower": 32, "upper": 256, "step": 32}}},
            "pydict": {"command": "true", "dimensions": {"disk_read_mbps": None}}}}})
    section = validate(config, "config")["sensitivity"]
    dims = {name: ResourceModel.from_dimensions(
        profile_settings(section, name, {}, seed=1).dimensions).names
        for name in ("sort", "pydict", "cpuhash")}
    assert dims == {"sort": ("cpu_quota", "memory_mb", "disk_read_mbps"),
                    "pydict": ("cpu_quota", "memory_mb"),
                    "cpuhash": ("cpu_quota", "memory_mb", "disk_read_mbps")}
    sort = profile_settings(section, "sort", {}, seed=1)
    assert sort.dimensions["memory_mb"].upper == 256  # the program's own range
    everything = {k: None for k in section["dimensions"]}
    update_config(config, {"sensitivity": {"programs": {"none": {"command": "true",
                                                                 "dimensions": everything}}}})
    section = validate(config, "config")["sensitivity"]
    with pytest.raises(InputError, match=r"'none': no dimension left.*programs\.none"):
        profile_settings(section, "none", {}, seed=1)
    with pytest.raises(InputError, match="cpu_quota"):
        validate({"dimensions": {"cpu_quota": {"lower": 1}}}, "sensitivity")
    # the summary table names the dimensions each program was profiled on
    r = profile(SpillingSort(), epsilon=0.3, sampling="binary", spare_cores=1, program="sort")
    (tmp_path / "sort.json").write_text(json.dumps({**r.summary(), "status": "profiled"}))
    table = summarize(summaries=[tmp_path / "sort.json"], table=tmp_path / "t.parquet", csv=None)
    assert table.loc[0, "dimensions"] == "memory_mb,disk_read_mbps"


def _oom_profile(bisect: bool):
    """The fake sort killed below 72 MiB (32-64 MiB fail, 80 MiB runs), profiled as published
    (no ceiling check) at epsilon 0.6: S at 128 MiB is 0.56, so binary search never bisects
    memory and only the failure boundary can bring the levels between 32 and 128 MiB in."""
    be = SpillingSort(oom_below=72.0)
    return be, profile(be, epsilon=0.6, sampling="binary", spare_cores=1, program="sort",
                       bisect_failed=bisect)


def test_no_ramp_is_interpolated_through_failed_runs():
    """Known answer: 48 and 64 MiB fail (S 0, no performance); between a failure at 32 MiB and
    a success at 128 MiB PCHIP draws a ramp there. With the boundary bisected, 64 MiB (failed)
    and 80 MiB (ran) are measured, the cells at 32-64 MiB are failed with S 0, and 80 MiB holds
    its measured value."""
    be, plain = _oom_profile(bisect=False)
    col = DISK.index(20.0)
    assert plain.chosen[0] == (0, len(MEMORY) - 1)
    assert plain.grid[MEMORY.index(64.0), col] > 0.1  # the ramp through failure
    be, r = _oom_profile(bisect=True)
    mem = [MEMORY[i] for i in r.chosen[0]]
    assert 64.0 in mem and 80.0 in mem
    truth = be.truth()
    for m in (32.0, 48.0, 64.0):
        assert r.grid[MEMORY.index(m), col] == 0.0 and r.failed[MEMORY.index(m), col]
    assert r.grid[MEMORY.index(80.0), col] == pytest.approx(truth[MEMORY.index(80.0), col])
    assert not r.failed[MEMORY.index(80.0):].any()
    frame = r.grid_frame()
    at48 = frame[(frame["memory_mb"] == 48.0) & (frame["disk_read_mbps"] == 20.0)]
    assert at48["failed"].item() and not at48["measured"].item()  # failed, not measured
    assert {m.phase for m in r.measurements} >= {"boundary"}


def test_the_figure_draws_failed_cells_as_failed(tmp_path):
    """Reading the artists: no interpolated line through failed cells (NaN there, so no jump
    from 0 to the first success), their crosses in every axis's legend, memory in MiB."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from perfcast.sensitivity import figures

    _, r = _oom_profile(bisect=True)
    captured = {}
    orig = figures.save_figure
    figures.save_figure = lambda fig, out: captured.setdefault("fig", fig)
    try:
        figures.plot_profile(r.grid_frame(), {**r.summary(), "status": "profiled"},
                             tmp_path / "f.png")
    finally:
        figures.save_figure = orig
    fig = captured["fig"]
    ax = next(a for a in fig.axes if a.get_xlabel().startswith("memory_mb"))
    assert ax.get_xlabel() == "memory_mb [MiB]"
    line = next(ln for ln in ax.get_lines() if ln.get_label() == "interpolated (PCHIP)")
    x, y = line.get_xdata(), np.asarray(line.get_ydata(), dtype=float)
    assert np.isnan(y[x < 72]).all() and np.isfinite(y[x > 72]).all()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "failed run (killed, timed out)" in labels
    assert all(a.get_legend() is not None for a in fig.axes if a.name != "3d")
    plt.close(fig)


def test_replayed_memory_is_labelled_gib():
    """The replayed and shipped grids hold memory in GiB (memory_mb / 1024)."""
    from perfcast.sensitivity import shipped

    be = shipped.shipped_backend("memstream")
    assert be.model["mem_gb"].unit == "GiB"


class NoisyBaseline(SpillingSort):
    """The fake sort (no spilling: memory above 160 MiB's need is not limited here) with three
    unrestricted runs of 1.0, 1.1 and 1.66 s (a 1.66x spread, as seen on an idle host), and a
    program 0.9 s fast at 128 MiB and 20 MB/s, its ceiling (faster than any unrestricted run)."""

    def unrestricted(self) -> RunOutcome:
        from dataclasses import replace

        return replace(super().unrestricted(), performance=1.1, runs=(1.0, 1.1, 1.66))

    def time(self, memory: float, disk: float) -> float | None:
        if memory == 128.0 and disk == 20.0:
            return 0.9
        return 1.1 + max(0.0, 15.0 / disk - 1.0)


def test_sensitivity_is_against_the_median_baseline_with_its_spread():
    """Known answer: S = 1.1 / T against the median run, not one run or the mean (1.253); the
    spread of S = 1 is 1.1 / 1.66 .. 1.1 / 1.0, the noise floor the mean |S - 1| of the
    unrestricted runs (0.146); the point at 0.9 s (S 1.22 > 1.1) is flagged."""
    r = profile(NoisyBaseline(), epsilon=0.3, sampling="binary", spare_cores=1, program="p",
                verify_ceiling=True)
    b = r.summary()["baseline"]
    assert b["performance"] == 1.1 and b["runs"] == 3
    assert b["s_low"] == pytest.approx(1.1 / 1.66) and b["s_high"] == pytest.approx(1.1)
    floor = (abs(1.1 / 1.0 - 1) + 0 + abs(1.1 / 1.66 - 1)) / 3
    assert b["noise_floor"] == pytest.approx(floor)
    s = {m.idx: m.sensitivity for m in r.measurements}
    top = (len(MEMORY) - 1, DISK.index(20.0))
    assert s[top] == pytest.approx(1.1 / 0.9)
    flagged = r.summary()["above_baseline_spread"]
    assert flagged == [{"memory_mb": 128.0, "disk_read_mbps": 20.0,
                        "sensitivity": pytest.approx(1.1 / 0.9)}]
    assert any("above the best unrestricted run" in w for w in r.warnings)
    assert r.score(np.ones(r.model.shape))["noise_floor"] == pytest.approx(floor)


def test_the_cgroup_baseline_is_the_median_of_its_runs(monkeypatch):
    """CgroupBackend.unrestricted: the median of baseline_repeats runs, every run kept."""
    from perfcast.sensitivity import backends
    from perfcast.sensitivity.backends import CgroupBackend

    times = iter([1.0, 1.66, 1.1])
    be = CgroupBackend.__new__(CgroupBackend)

    class S:
        repeats, baseline_repeats, confidence, monitor_interval_s = 1, 3, 0.95, 0.05
        network = type("N", (), {"interface": None})

    be.settings = S()
    be.program = type("P", (), {"name": "p"})
    usage = SpillingSort().unrestricted().usage
    monkeypatch.setattr(be, "_once", lambda limits, net, mon: (
        RunOutcome(performance=next(times), ok=True, usage=usage), None), raising=False)
    monkeypatch.setattr(backends, "UsageMonitor", lambda *a: None)
    out = be.unrestricted()
    assert out.performance == 1.1 and out.runs == (1.0, 1.66, 1.1)


def test_the_run_summary_carries_a_profiles_warnings(tmp_path):
    """A profile whose ceiling could not be repaired is no plain 'profiled' in the run summary:
    its warning is one of the run's warnings."""
    import json

    from perfcast.summary import sensitivity_section

    be = SpillingSort()
    be.peaks = lambda unrestricted: {"memory_mb": 200.0, "disk_read_mbps": 10.0}
    be.model = ResourceModel.ordered([Dimension("memory_mb", "memory", MEMORY, "MiB"),
                                      Dimension("disk_read_mbps", "disk_read", (10.0, 20.0),
                                                "MB/s")])
    r = profile(be, epsilon=0.3, sampling="binary", spare_cores=1, program="sort",
                verify_ceiling=True)
    path = tmp_path / "sort.json"
    path.write_text(json.dumps({**r.summary(), "status": "profiled", "backend": "cgroup"}))
    section = sensitivity_section([path])
    assert any("sort" in w and "ceiling check" in w for w in section.warnings)


def test_the_guards_keep_or_improve_the_paper_replay(arcp_csv):
    """On the paper's replayed grids (binary, epsilon 0.3, Table 4's ceilings) the ceiling check
    raises nothing, and bisecting the failure boundary never worsens a program's whole-grid
    error (the NPB programs, whose low-memory runs failed, get better)."""
    import pandas as pd

    from perfcast.sensitivity import published
    from perfcast.sensitivity.evaluation import load_grids, resolve_peaks
    from perfcast.sensitivity.replay import ReplayBackend

    programs = sorted(pd.read_csv(arcp_csv)["program"].unique())
    grids, peaks = load_grids(arcp_csv, programs, {}), resolve_peaks("table4", None)
    better = []
    for p in programs:
        errors = []
        for guard in (False, True):
            r = profile(ReplayBackend(grids[p], peaks.get(p)), epsilon=0.3, sampling="binary",
                        spare_cores=published.ARCP_SPARE_CORES, program=p,
                        verify_ceiling=guard, bisect_failed=guard)
            errors.append(r.score(grids[p].truth())["mae_full_grid"])
            assert not r.ceiling_check.get("raised") and not r.warnings
        assert errors[1] <= errors[0] + 1e-12, p
        better += [p] if errors[1] < errors[0] - 1e-4 else []
    assert {"ft.c.4", "ft.c.8"} <= set(better)
