"""Sensitivity stage, library level: resource model, Eq. (1), sampling, interpolation against
functions with known values, replay of the paper's measurements, the CLI."""

from __future__ import annotations

import json
import re
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.interpolate import PchipInterpolator

from perfcast.errors import InputError
from perfcast.process import run_measured
from perfcast.sensitivity import published
from perfcast.sensitivity.evaluation import (
    comparison_table,
    epsilon_summary,
    error_vs_runs,
    evaluate_paper,
    evaluate_program,
    load_grids,
    resolve_peaks,
)
from perfcast.sensitivity.interpolation import fill_axis, pchip_line, sequential_pchip
from perfcast.sensitivity.metrics import Metric, MetricNotFound, sensitivity, sensitivity_array
from perfcast.sensitivity.profile import profile
from perfcast.sensitivity.programs import ProfiledProgram
from perfcast.sensitivity.replay import (
    AS_MEASURED,
    MeasuredGrid,
    ReplayBackend,
    read_measurements,
)
from perfcast.sensitivity.resources import (
    Dimension,
    ResourceModel,
    ceiling_range,
    range_levels,
)
from perfcast.sensitivity.rules import replay_evaluation
from perfcast.sensitivity.sampling import (
    adaptive_product,
    binary_recursive_search,
    lhs_levels,
    midpoint_index,
)
from perfcast.sensitivity.settings import (
    EvaluationSettings,
    Range,
    profile_settings,
)
from perfcast.settings import build, validate


def _evaluation(seed: int, **replay) -> EvaluationSettings:
    """The replay evaluation's settings of ``sensitivity.replay`` and ``seed``, as the workflow
    builds them."""
    return build(EvaluationSettings,
                 {**validate({"replay": replay}, "sensitivity")["replay"], "seed": seed})


def _dims(**dims: dict) -> dict[str, Range]:
    return {k: Range(**v) for k, v in dims.items()}

# --------------------------------------------------------------------------- resource model


def test_range_levels_and_refusals():
    assert range_levels(2, 8, 0.5) == tuple(2 + 0.5 * k for k in range(13))
    assert range_levels(20, 135, 5)[-1] == 135 and len(range_levels(20, 135, 5)) == 24
    with pytest.raises(InputError, match="whole"):
        range_levels(1, 2, 0.3)
    with pytest.raises(InputError):
        range_levels(3, 2, 1)


@pytest.mark.parametrize("lower, upper, step, levels", [(1, 1e12, 1, "1e+12"),
                                                        (0.5, 1e308, 1e-300, "inf"),
                                                        (1, 1001, 1, "1e+03")])
def test_range_levels_are_bounded(lower, upper, step, levels):
    """A range of a trillion levels (or of a tiny step: infinitely many) was expanded level by
    level; more than MAX_LEVELS is refused naming the dimension."""
    with pytest.raises(InputError, match=rf"dimension d: .* is {re.escape(levels)} levels "
                                         r"\(expected at most 1000 levels\)"):
        range_levels(lower, upper, step, name="d")
    assert len(range_levels(1, 1000, 1)) == 1000


def test_model_from_dimensions_orders_axes_like_arcptool():
    m = ResourceModel.from_dimensions(_dims(
        disk_read_mbps={"lower": 20, "upper": 40, "step": 10},
        memory_mb={"lower": 64, "upper": 128, "step": 64},
        cpu_quota={"lower": 0.5, "upper": 1.0, "step": 0.5},
    ))
    # CPU, then memory, network, disk write, disk read (ARCPTool's interpolation order)
    assert m.names == ("cpu_quota", "memory_mb", "disk_read_mbps")
    assert m.shape == (2, 2, 3)
    with pytest.raises(InputError, match="unknown dimension"):
        ResourceModel.from_dimensions(_dims(gpu={"lower": 1, "upper": 2, "step": 1}))
    with pytest.raises(InputError, match="whole"):
        ResourceModel.from_dimensions(_dims(cpu_cores={"lower": 0.5, "upper": 2, "step": 0.5}))


def test_ceiling_first_level_at_or_above_peak_plus_spare_core():
    mem = Dimension.from_range("mem", "memory", 2, 8, 0.5)
    cpu = Dimension.from_range("cpu", "cpu_cores", 2, 8, 1)
    assert mem.levels[ceiling_range(mem, 3.2, 1).ceiling] == 3.5
    assert mem.levels[ceiling_range(mem, 3.5, 1).ceiling] == 3.5  # at the peak counts
    # ARCPTool: searchTOP(2, cpu, 1) + 1
    assert cpu.levels[ceiling_range(cpu, 4, 1).ceiling] == 5
    assert cpu.levels[ceiling_range(cpu, 3.2, 1).ceiling] == 5
    assert cpu.levels[ceiling_range(cpu, 7.5, 1).ceiling] == 8  # capped at the upper bound
    assert cpu.levels[ceiling_range(cpu, 4, spare_cores=0).ceiling] == 4
    assert cpu.levels[ceiling_range(cpu, 4, spare_cores=2).ceiling] == 6
    low = ceiling_range(mem, 1.0, 1)  # used below the lower bound: non-effective, profiled once
    assert not low.effective and low.ceiling == 0 and list(low.indices) == [0]
    unknown = ceiling_range(mem, None, 1)
    assert unknown.effective and unknown.ceiling == len(mem) - 1


def test_table4_ceiling_steps_follow_from_the_implied_peaks():
    """Table 4's "Ceiling" column is the product of the ceiling-cut level counts."""
    cpu = Dimension.from_range("cpu_cores", "cpu_cores", 2, 8, 1)
    mem = Dimension.from_range("mem_gb", "memory", 2, 8, 0.5)
    model = ResourceModel((cpu, mem))
    for prog in ["mg.c.4", "mg.c.8", "ft.c.4", "ft.c.8", "Data Serving"]:
        ranges = model.ceilings(published.TABLE4_PEAKS.get(prog, {}),
                                published.ARCP_SPARE_CORES)
        steps = np.prod([r.ceiling + 1 for r in ranges])
        assert steps == published.TABLE4_CEILING_STEPS[prog], prog


# --------------------------------------------------------------------------- Eq. (1)


def test_sensitivity_both_directions_and_failures():
    assert sensitivity(50.0, 200.0, higher_is_better=True) == 0.25
    assert sensitivity(4.0, 1.0, higher_is_better=False) == 0.25  # runtime: T0 / T
    assert sensitivity(None, 1.0, True) == 0.0
    assert sensitivity(float("nan"), 1.0, False) == 0.0
    with pytest.raises(ValueError):
        sensitivity(1.0, 0.0, True)
    arr = sensitivity_array(np.array([2.0, np.nan, 8.0]), 4.0, higher_is_better=False)
    np.testing.assert_allclose(arr, [2.0, 0.0, 0.5])


def test_metric_reads_stdout_or_wall_time():
    res = run_measured([sys.executable, "-c", "print('rate=1.5'); print('rate=2.5')"])
    m = Metric("rate", "stdout", r"rate=([0-9.]+)", True)
    assert m.extract(res) == 2.5  # the last matching line
    assert Metric("runtime_s", "wall_time", None, False).extract(res) == pytest.approx(res.wall_s)
    with pytest.raises(MetricNotFound):
        Metric("x", "stdout", r"nothing=(\d+)", True).extract(res)
    with pytest.raises(ValueError, match="capture group"):
        Metric("x", "stdout", r"nothing", True)


# --------------------------------------------------------------------------- sampling


def test_binary_search_constant_curve_needs_only_the_ends():
    calls = []
    chosen = binary_recursive_search(range(17), lambda k: calls.append(k) or 0.7, 0.2)
    assert chosen == [0, 16] and calls == [0, 16]


def test_binary_search_locates_a_cliff_to_adjacent_levels():
    f = lambda k: 0.0 if k < 5 else 1.0  # noqa: E731  (a memory cliff: OOM below 5)
    calls = []
    chosen = binary_recursive_search(range(17), lambda k: calls.append(k) or f(k), 0.3)
    assert chosen == [0, 4, 5, 6, 8, 16]  # worked by hand, ARCPTool's midpoint rule
    assert sorted(calls) == chosen  # every level measured exactly once


def test_binary_search_uses_the_absolute_difference():
    # a falling curve: ARCPTool's signed test would stop at the ends
    chosen = binary_recursive_search(range(9), lambda k: 1.0 - k / 8, 0.3)
    assert chosen == [0, 2, 4, 6, 8]


def test_binary_search_linear_curve_segments_and_epsilon_monotonicity():
    lin = lambda k: k / 16  # noqa: E731
    assert binary_recursive_search(range(17), lin, 0.3) == [0, 4, 8, 12, 16]
    small = set(binary_recursive_search(range(17), lin, 0.1))
    big = set(binary_recursive_search(range(17), lin, 0.3))
    assert big <= small  # a smaller epsilon bisects every segment a larger one does


def test_midpoint_rule():
    assert midpoint_index([2, 3, 4, 5, 6, 7, 8], 0, 3) == 2  # first level >= 3.5 is 4
    # irregular axis (Data Caching memory 4.5, 5, 7): no interior level reaches 5.75
    assert midpoint_index([4.5, 5.0, 7.0], 0, 2) == 1


def test_lhs_levels_one_per_stratum_with_the_ends():
    rng = np.random.default_rng(1)
    for _ in range(20):
        ch = lhs_levels(17, 5, rng)
        assert ch[0] == 0 and ch[-1] == 16 and len(set(ch)) == 5
        interior = np.array(ch[1:-1]) - 1  # 15 interior levels, 3 strata of 5 levels
        assert sorted(interior // 5) == [0, 1, 2]
        ch6 = lhs_levels(17, 6, rng)
        assert ch6[0] == 0 and ch6[-1] == 16 and len(set(ch6)) == 6
    assert lhs_levels(5, 9, rng) == [0, 1, 2, 3, 4]
    assert lhs_levels(1, 3, rng) == [0]
    a = lhs_levels(30, 7, np.random.default_rng(5))
    assert a == lhs_levels(30, 7, np.random.default_rng(5))


# --------------------------------------------------------------------------- interpolation


def test_pchip_line_is_scipys_pchip_inside_and_flat_outside():
    x = np.linspace(0, 10, 11)
    y = np.sqrt(x)
    known = np.zeros(11, dtype=bool)
    known[[1, 3, 6, 8]] = True
    out = pchip_line(x, np.where(known, y, np.nan), known)
    ref = PchipInterpolator(x[known], y[known])(x[1:9])
    np.testing.assert_allclose(out[1:9], ref)
    assert out[0] == y[1] and np.all(out[9:] == y[8])  # held constant beyond the known range
    single = np.zeros(11, dtype=bool)
    single[4] = True
    assert np.all(pchip_line(x, np.where(single, 2.0, np.nan), single) == 2.0)


def test_pchip_is_exact_on_linear_data_and_does_not_overshoot():
    x = np.array([1.0, 2, 3, 5, 8, 13])
    known = np.array([True, False, True, False, False, True])
    lin = 0.5 + 0.1 * x
    np.testing.assert_allclose(pchip_line(x, np.where(known, lin, np.nan), known), lin)
    step = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    k2 = np.array([True, True, True, True, False, True])
    out = pchip_line(x, np.where(k2, step, np.nan), k2)
    assert out.min() >= 0.0 and out.max() <= 1.0 and np.all(np.diff(out) >= 0)


def test_sequential_pchip_exact_for_multilinear_functions():
    """On a product of measured levels, a function linear along every axis comes back exactly
    (every 1-D PCHIP through collinear points is the line)."""
    xs = [np.linspace(2, 8, 7), np.linspace(2, 8, 13), np.linspace(20, 100, 17)]
    X, Y, Z = np.meshgrid(*xs, indexing="ij")
    f = 1.0 + 0.2 * X - 0.05 * Y + 0.01 * X * Y + 0.003 * Z + 0.0004 * X * Z
    values = np.full(f.shape, np.nan)
    chosen = [[0, 3, 6], [0, 5, 12], [0, 16]]
    sub = np.ix_(*chosen)
    values[sub] = f[sub]
    filled = sequential_pchip(values, xs)
    np.testing.assert_allclose(filled, f, atol=1e-12)
    np.testing.assert_array_equal(filled[sub], f[sub])  # measured cells untouched


def test_sequential_pchip_smooth_surface_error_small():
    x, y = np.linspace(0, 1, 21), np.linspace(0, 1, 21)
    X, Y = np.meshgrid(x, y, indexing="ij")
    f = (1 - np.exp(-4 * X)) * np.sqrt(Y + 0.05)
    sel = [0, 2, 5, 10, 15, 20]
    values = np.full(f.shape, np.nan)
    values[np.ix_(sel, sel)] = f[np.ix_(sel, sel)]
    filled = sequential_pchip(values, [x, y])
    assert np.abs(filled - f).max() < 0.03
    assert np.abs(filled - f).mean() < 0.005


def test_sequential_pchip_axis_by_axis_and_unreachable_cells():
    x = np.arange(3.0)
    v = np.full((3, 3), np.nan)
    v[0, 0], v[2, 2] = 1.0, 2.0  # not a product: axis 0 fills columns 0 and 2 (flat) ...
    w = fill_axis(v, x, 0)
    assert np.isnan(w[:, 1]).all() and np.all(w[:, 0] == 1.0) and np.all(w[:, 2] == 2.0)
    full = sequential_pchip(v, [x, x])  # ... then axis 1 joins them
    np.testing.assert_allclose(full, [[1.0, 1.5, 2.0]] * 3)
    with pytest.raises(ValueError, match="not reachable"):
        sequential_pchip(np.full((3, 3), np.nan), [x, x])
    with pytest.raises(ValueError, match="coordinates"):
        sequential_pchip(v, [x, np.arange(4.0)])


# --------------------------------------------------------------------------- campaign (replay)


def _grid_from_function(fn, levels: dict[str, list[float]], kinds: dict[str, str],
                        higher_is_better: bool = True) -> MeasuredGrid:
    dims = [Dimension(n, kinds[n], tuple(v)) for n, v in levels.items()]
    model = ResourceModel.ordered(dims)
    mesh = np.meshgrid(*[np.asarray(d.levels) for d in model.dims], indexing="ij")
    return MeasuredGrid("f", "throughput", higher_is_better, model, fn(*mesh))


def test_profile_on_known_function_counts_and_exactness():
    # throughput linear in CPU and memory: S is linear along both axes -> filled exactly
    levels = {"cpu_cores": list(range(2, 9)), "mem_gb": list(np.arange(2, 8.5, 0.5))}
    g = _grid_from_function(lambda c, m: 10 + 5 * c + 10 * m, levels,
                            {"cpu_cores": "cpu_cores", "mem_gb": "memory"})
    res = profile(ReplayBackend(g), epsilon=0.1, sampling="binary", spare_cores=1)
    np.testing.assert_allclose(res.grid, g.truth(), atol=1e-12)
    assert res.steps["product_points"] == np.prod([len(c) for c in res.chosen])
    assert res.steps["probes_1d"] == sum(len(c) for c in res.chosen) - 1  # shared corner
    assert res.steps["runs_total"] == res.steps["product_points"] + 1
    assert res.score(g.truth())["mae"] == pytest.approx(0.0, abs=1e-12)


def test_profile_non_effective_dimension_runs_once_and_failures_count_zero():
    levels = {"cpu_cores": [1.0, 2.0, 3.0, 4.0], "mem_gb": [1.0, 2.0, 3.0, 4.0]}
    # memory below 2 fails (NaN): sensitivity 0; CPU peak 0.5 below its lower bound
    g = _grid_from_function(lambda c, m: np.where(m < 2, np.nan, 2.0 + 0 * c),
                            levels, {"cpu_cores": "cpu_cores", "mem_gb": "memory"},
                            higher_is_better=False)
    res = profile(ReplayBackend(g, peaks={"cpu_cores": 0.5}), epsilon=0.3, sampling="binary",
                  spare_cores=1)
    cpu, mem = res.ranges
    assert not cpu.effective and res.chosen[0] == (0,)
    assert res.grid[:, 0].tolist() == [0.0] * 4  # failed level: S = 0 on every CPU level
    assert res.grid[:, 1:].min() == pytest.approx(1.0)
    fails = [m for m in res.measurements if not m.outcome.ok]
    assert fails and all("no measurement" in m.outcome.reason for m in fails)
    runs = res.runs_frame()
    assert runs.iloc[0]["phase"] == "unrestricted" and len(runs) == len(res.measurements) + 1


def test_profile_lhs_uses_the_same_counts():
    g = _grid_from_function(lambda c, m: c * np.sqrt(m), {"cpu_cores": list(range(2, 9)),
                            "mem_gb": [2.0, 3, 4, 5, 6, 7, 8]},
                            {"cpu_cores": "cpu_cores", "mem_gb": "memory"})
    b = profile(ReplayBackend(g), epsilon=0.1, sampling="binary", spare_cores=1)
    lh = profile(ReplayBackend(g), epsilon=0.1, sampling="lhs", spare_cores=1,
                 counts=[len(c) for c in b.chosen], seed=3)
    assert [len(c) for c in lh.chosen] == [len(c) for c in b.chosen]
    assert lh.steps["probes_1d"] == 0
    brute = profile(ReplayBackend(g), epsilon=0.1, sampling="brute", spare_cores=1)
    assert brute.steps["product_points"] == 49
    np.testing.assert_allclose(brute.grid, g.truth())


# --------------------------------------------------------------------------- the paper's data


def test_arcp_grids(arcp_csv):
    grids = load_grids(arcp_csv, [], {})
    assert len(grids) == 14
    ds = grids["Data Serving"]
    assert ds.model.shape == (7, 13) and np.isfinite(ds.values).all()
    assert ds.baseline == 478.0 and ds.higher_is_better
    mg = grids["mg.c.4"]  # 91 cells, 83 measured, the rest failed runs (S = 0)
    assert mg.model.shape == (7, 13) and int(np.isfinite(mg.values).sum()) == 83
    assert (mg.truth()[~np.isfinite(mg.values)] == 0).all()
    dc = grids["Data Caching"]
    assert dc.model.names == ("cpu_cores", "mem_gb", "net_code")
    assert dc.model["net_code"].levels == (6.0, 5.0, 4.0, 3.0, 2.0)  # reversed, 7 left out
    assert dc.baseline == pytest.approx(3.496727, rel=1e-6) and not dc.higher_is_better
    assert grids["fileiowr"].model.dims[0].kind == "disk_write"


def test_read_measurements_names_bad_rows(tmp_path):
    bad = tmp_path / "m.csv"
    bad.write_text("program,cpu_cores,metric,value\np,2,runtime_s,10\np,3,runtime_s,ten\n")
    with pytest.raises(InputError, match=r"m.csv, line 3: column 'value'"):
        read_measurements(bad)
    (tmp_path / "n.csv").write_text("program,cpu_cores,value\np,2,1\n")
    with pytest.raises(InputError, match="missing column"):
        read_measurements(tmp_path / "n.csv")
    dup = tmp_path / "d.csv"
    dup.write_text("program,cpu_cores,metric,value\np,2,runtime_s,10\np,2,runtime_s,11\n")
    with pytest.raises(InputError, match="line 3.*|measured twice"):
        MeasuredGrid.from_frame(read_measurements(dup), "p", AS_MEASURED)


def test_replay_reproduces_table4_steps_and_scores_the_whole_grid(arcp_csv):
    """At epsilon 0.3 the binary search needs the paper's own Table 4 step counts for the
    programs whose runs the data holds unchanged. The headline error is over the whole measured
    grid: Data Caching's in-box error flatters it (memory above the 4 GB ceiling is never
    compared), its whole-grid error misses Table 5, and the verdict says so."""
    res, _ = evaluate_paper(arcp_csv, _evaluation(1, epsilons=[0.3], lhs_repeats=3))
    table = comparison_table(res).set_index("program")
    same = ["blackscholes", "bodytrack", "facesim", "ferret", "freqmine", "x264", "fileiord",
            "fileiowr", "mg.c.4", "ft.c.4", "ft.c.8"]
    for p in same:
        assert table.loc[p, "product_points"] == published.TABLE4_STEPS[p], p
    # the whole grid (280 cells) is never better than the profiled box
    assert (table["mae_binary"] >= table["mae_binary_box"] - 1e-12).all()
    dc = table.loc["Data Caching"]
    assert dc["grid_points"] == 280 and dc["ceiling_points"] < dc["grid_points"]
    assert dc["mae_binary_box"] < 0.02 < published.TABLE5_MAE["Data Caching"] < dc["mae_binary"]
    assert dc["verdict"] == "misses" and "whole-grid error" in dc["why"]
    for p in ("Data Serving", "ft.c.8", "fileiord"):  # no ceiling cut: both errors agree
        assert table.loc[p, "mae_binary"] == pytest.approx(table.loc[p, "mae_binary_box"])
    misses = table[table["verdict"] == "misses"]
    assert (misses["why"].str.len() > 0).all()  # every miss is explained
    # the ceiling's origin is stated, and the no-ceiling replay stands beside it
    assert "back-computed from Table 4" in dc["ceiling_source"]
    assert table.loc["Data Serving", "ceiling_source"].startswith("table4: no peak")
    assert dc["product_points_no_ceiling"] > dc["product_points"]
    assert dc["mae_binary_no_ceiling"] < dc["mae_binary"]
    assert set(res["ceiling"]) == {"table4", "none"}


def test_adaptive_sampler_is_ahead_of_the_paper_at_its_own_run_counts(arcp_csv):
    """At Table 4's run counts the adaptive sampler's whole-grid error is at or below Table 5
    on every program with a dense grid, with the configured ceiling and without one; binary
    search is not (Data Caching at every epsilon)."""
    res, _ = evaluate_paper(arcp_csv, _evaluation(
        3, epsilons=[0.2, 0.3, 0.4, 0.5], lhs_repeats=2,
        programs=["Data Serving", "Data Caching", "mg.c.8", "ft.c.8"]))
    table = comparison_table(res)
    for p, paper in [("Data Serving", 0.0257), ("Data Caching", 0.0664), ("mg.c.8", 0.0472),
                     ("ft.c.8", 0.0465)]:
        t = table[table["program"] == p]
        assert (t["adaptive_paper_runs"] <= published.TABLE4_STEPS[p]).all(), p
        assert (t["mae_adaptive_paper"] <= paper).all(), p
        assert (t["mae_adaptive_paper_no_ceiling"] <= paper).all(), p
        assert (t["adaptive_verdict"] == "meets").all(), p
    dc = table[table["program"] == "Data Caching"]
    assert (dc["verdict"] == "misses").all()
    # brute force measures the whole box: no error inside it
    brute = res[res["sampling"] == "brute"]
    assert (brute["mae_box"] < 1e-12).all()
    assert (brute["product_points"] == brute["ceiling_points"]).all()
    curves = error_vs_runs(res)
    ad = curves[(curves["sampling"] == "adaptive") & (curves["ceiling"] == "none")]
    for p, c in ad.groupby("program"):  # refined until no segment varies: error 0
        assert c["runs"].is_monotonic_increasing and c["mae_grid"].iloc[-1] < 1e-12, p
        assert c["runs"].iloc[-1] <= res[res["program"] == p]["grid_points"].iloc[0]
    assert set(curves["sampling"]) == {"adaptive", "binary", "lhs", "brute", "paper"}


def test_binary_beats_lhs_and_epsilon_trades_steps_for_error(arcp_csv):
    progs = ["Data Serving", "mg.c.8", "ft.c.8", "fileiord"]
    res, cells = evaluate_paper(arcp_csv, _evaluation(2, epsilons=[0.2, 0.5], programs=progs,
                                                      lhs_repeats=5))
    summ = epsilon_summary(res)
    assert (summ["mae_binary_mean"] < summ["mae_lhs_mean"]).all()  # the paper's Fig. 10
    b = res[(res["sampling"] == "binary") & res["headline"]].set_index(["program", "epsilon"])
    for p in progs:
        assert b.loc[(p, 0.2), "product_points"] >= b.loc[(p, 0.5), "product_points"]
    assert summ.loc[0, "mae_binary_mean"] <= summ.loc[1, "mae_binary_mean"]
    assert set(cells["program"]) == set(progs)
    c = cells[cells["measured"]]
    np.testing.assert_allclose(c["predicted"], c["truth"])  # measured cells are the truth


def test_lhs_seeds_are_reproducible(arcp_csv):
    g = load_grids(arcp_csv, ["mg.c.8"], {})["mg.c.8"]
    pk = resolve_peaks("table4", None)["mg.c.8"]
    a = evaluate_program(g, 0.3, peaks=pk, lhs_repeats=4, seed=9).rows()
    b = evaluate_program(g, 0.3, peaks=pk, lhs_repeats=4, seed=9).rows()
    assert a == b


def test_cli_sensitivity_eval(perfcast_cli, arcp_csv):
    data = ("sensitivity-eval", "--data", str(arcp_csv), "--epsilon", "0.3")
    out = perfcast_cli(*data, "--program", "Data Serving")
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    g = load_grids(arcp_csv, ["Data Serving"], {})["Data Serving"]
    row = evaluate_program(g, 0.3, peaks=None, lhs_repeats=1, seed=0).rows()[0]
    assert j["steps"] == {"probes_1d": row["probes_1d"], "product_points":
                          row["product_points"], "runs_total": row["runs_total"]}
    assert j["average_absolute_error"] == pytest.approx(row["mae_grid"])
    assert j["average_absolute_error_in_box"] == pytest.approx(row["mae_box"])
    assert j["ceiling_source"].startswith("table4")
    ad = perfcast_cli(*data, "--program", "Data Serving", "--sampling", "adaptive",
                      "--budget", "10", "--ceiling", "none")
    assert ad.returncode == 0, ad.stderr
    ja = json.loads(ad.stdout)
    assert ja["budget"] == 10 and ja["steps"]["product_points"] <= 10
    assert ja["average_absolute_error"] <= published.TABLE5_MAE["Data Serving"]
    lhs = perfcast_cli(*data, "--program", "Data Serving", "--sampling", "lhs",
                       "--lhs-repeats", "3")
    assert lhs.returncode == 0, lhs.stderr
    jl = json.loads(lhs.stdout)
    assert jl["steps"]["product_points"] == j["steps"]["product_points"]
    assert jl["steps"]["probes_1d"] == 0
    bad = perfcast_cli(*data, "--program", "nope")
    assert bad.returncode == 2 and "no rows for program 'nope'" in bad.stderr


def test_cells_without_a_measurement_are_named_not_silently_failed(perfcast_cli, tmp_path,
                                                                    arcp_csv):
    """A cell without a row is a failed run (sensitivity 0), as the paper's data need (NPB at
    little memory). A level mistyped (3.5 cores for 3) makes a column of such cells: the
    output counts and lists them, the replay table has the count, and stderr says so. The
    paper's own table: Data Caching misses 2 of its 280 cells, ft.c.4 63 of 91."""
    rows = [f"p,{c},{m},runtime_s,{8 / c + 1 / m}" for c in (1, 2, 4, 8) for m in (1, 2)]
    good = tmp_path / "good.csv"
    good.write_text("program,cpu_cores,mem_gb,metric,value\n" + "\n".join(rows) + "\n")
    data = ("sensitivity-eval", "--epsilon", "0.1", "--program", "p", "--ceiling", "none")
    out = perfcast_cli(*data, "--data", str(good))
    assert out.returncode == 0 and "no measurement" not in out.stderr, out.stderr
    j = json.loads(out.stdout)
    assert (j["failed_cells"], j["failed_points"], j["grid_points"]) == (0, [], 8)
    typo = tmp_path / "typo.csv"
    typo.write_text(good.read_text().replace("p,4,1,", "p,3.5,1,"))
    out = perfcast_cli(*data, "--data", str(typo))
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert j["grid_points"] == 10 and j["failed_cells"] == 2
    assert j["failed_points"] == [{"cpu_cores": 3.5, "mem_gb": 2.0},
                                  {"cpu_cores": 4.0, "mem_gb": 1.0}]
    assert "2 of 10 grid cells of 'p' have no measurement" in out.stderr
    g = load_grids(typo, ["p"], {})["p"]
    assert evaluate_program(g, 0.1, peaks=None, lhs_repeats=1, seed=0).rows()[0][
        "failed_cells"] == 2
    for program, failed, cells in (("Data Caching", 2, 280), ("ft.c.4", 63, 91)):
        grid = load_grids(arcp_csv, [program], {})[program]
        assert (len(grid.failed_points()), grid.values.size) == (failed, cells)


def test_a_runtime_of_zero_is_refused_where_an_empty_cell_is_a_counted_failure(
        perfcast_cli, tmp_path):
    """A failed run is a cell without a value; a runtime of 0 read as a number scored S = 0
    (Eq. 1 reads it as a failed run) while failed_cells said 0 and stderr said nothing.
    sensitivity-eval, the workflow's replay evaluation and the replay backend all refuse it,
    naming the line; an empty value is counted and named as before."""
    head = "program,cpu_cores,metric,value\n"
    zero = tmp_path / "zero.csv"
    zero.write_text(head + "x,1,runtime_s,8\nx,2,runtime_s,4\nx,3,runtime_s,0\n"
                           "x,4,runtime_s,2\n")
    data = ("sensitivity-eval", "--program", "x", "--epsilon", "0.3", "--ceiling", "none")
    out = perfcast_cli(*data, "--data", str(zero))
    assert out.returncode == 2 and out.stdout == ""
    want = f"{zero}, line 4: program 'x': runtime_s 0 at {{'cpu_cores': 3}}"
    assert want in out.stderr
    with pytest.raises(InputError) as err:  # the workflow's path (rules replay_evaluation)
        replay_evaluation(_evaluation(1, epsilons=[0.3], ceiling="none"), data=zero,
                          results=tmp_path / "r.parquet", table=tmp_path / "t.csv",
                          summary=tmp_path / "s.csv", cells=tmp_path / "c.parquet",
                          markdown=None)
    assert want in str(err.value) and not (tmp_path / "r.parquet").exists()
    empty = tmp_path / "empty.csv"
    empty.write_text(zero.read_text().replace("x,3,runtime_s,0", "x,3,runtime_s,"))
    out = perfcast_cli(*data, "--data", str(empty))
    assert out.returncode == 0, out.stderr
    j = json.loads(out.stdout)
    assert (j["failed_cells"], j["failed_points"]) == (1, [{"cpu_cores": 3.0}])
    assert "1 of 4 grid cells of 'x' have no measurement" in out.stderr
    # a throughput of 0 is a measurement: S = P / P0 = 0 exactly, not a failure
    tput = tmp_path / "tput.csv"
    tput.write_text(head + "y,1,throughput,0\ny,2,throughput,4\ny,4,throughput,8\n")
    g = load_grids(tput, ["y"], {})["y"]
    assert g.failed_points() == [] and g.truth().tolist() == [0.0, 0.5, 1.0]


# --------------------------------------------------------------------------- programs


def test_programs_resolve_from_the_top_level_map():
    top = {"lbm": {"command": "run-lbm {work}", "work": 3, "env": {"A": 1}}}
    section = validate({"programs": {"lbm": {"metric": {"source": "wall_time"}},
                                     "lbm_small": {"program": "lbm", "work": 1},
                                     "x": {}, "py": {"command": "{python} -c pass"},
                                     "typo": {"command": "run {sise}"},
                                     "envtypo": {"command": "run", "env": {"B": "{wrk}"}}}},
                       "sensitivity")
    r = profile_settings(section, "lbm", top, seed=0).program
    assert r.definition.command == "run-lbm {work}" and r.definition.work == 3
    assert r.definition.env == {"A": "1"} and r.replay_program == "lbm"
    assert r.metric == Metric("runtime_s", "wall_time", None, False)  # the schema's defaults
    assert r.definition.render() == "run-lbm 3"
    assert profile_settings(section, "lbm_small", top, seed=0).program.definition.render() == (
        "run-lbm 1")
    with pytest.raises(InputError, match="not in the top-level programs"):
        profile_settings(section, "x", top, seed=0)
    with pytest.raises(InputError, match="unknown placeholder.*sise"):
        profile_settings(section, "typo", top, seed=0)
    with pytest.raises(InputError, match="env B.*unknown placeholder.*wrk"):
        profile_settings(section, "envtypo", top, seed=0)
    py = profile_settings(section, "py", top, seed=0).program
    assert py.definition.render() == f"{sys.executable} -c pass"  # a plain path: unquoted
    again = ProfiledProgram.from_config("lbm", validate({"programs": {"lbm": {}}},
                                                        "sensitivity")["programs"]["lbm"], top)
    assert again == r


def test_profile_settings_hold_one_program_and_round_trip():
    """A rule's params: the profile of one program (another program's change does not touch
    it, nor do the replay evaluation's keys), replay settings only with backend replay;
    rebuilt by the script unchanged."""
    from perfcast.sensitivity.settings import ProfileSettings
    from perfcast.settings import as_params

    def section(b_command: str, lhs_repeats: int, backend: str = "replay") -> dict:
        return validate({"backend": backend, "programs": {"a": {"command": "true"},
                                                          "b": {"command": b_command}},
                         "replay": {"ceiling": "none", "lhs_repeats": lhs_repeats}},
                        "sensitivity")

    a = profile_settings(section("false", 3), "a", {}, seed=5)
    params = as_params(a)
    assert "programs" not in params and params["program"]["definition"]["name"] == "a"
    assert params["replay"] == {"ceiling": "none", "peaks": {}, "layouts": {}}
    assert build(ProfileSettings, params) == a
    assert as_params(profile_settings(section("b2", 4), "a", {}, seed=5)) == params
    assert as_params(profile_settings(section("b2", 4), "a", {}, seed=6)) != params
    assert as_params(profile_settings(section("false", 3, "cgroup"), "a", {}, 5))[
        "replay"] is None


def test_grid_frame_and_summary_are_consistent():
    g = _grid_from_function(lambda c, m: c + m, {"cpu_cores": [2.0, 3, 4], "mem_gb": [1.0, 2]},
                            {"cpu_cores": "cpu_cores", "mem_gb": "memory"})
    r = profile(ReplayBackend(g), epsilon=0.05, sampling="binary", spare_cores=1)
    gf = r.grid_frame()
    assert len(gf) == 6 and gf["measured"].sum() == r.steps["product_points"]
    s = r.summary()
    assert s["dimensions"]["cpu_cores"]["chosen"] == [g.model["cpu_cores"].levels[i]
                                                      for i in r.chosen[0]]
    json.dumps(s)  # serialisable
    assert isinstance(r.runs_frame(), pd.DataFrame)


def test_replay_outputs_are_byte_identical(tmp_path, arcp_csv):
    outs = []
    for k in range(2):
        d = tmp_path / str(k)
        paths = [d / "r.parquet", d / "t.csv", d / "s.csv", d / "c.parquet", d / "t.md"]
        replay_evaluation(_evaluation(11, epsilons=[0.3], programs=["mg.c.8", "fileiord"],
                                      lhs_repeats=2),
                          data=arcp_csv, results=paths[0], table=paths[1], summary=paths[2],
                          cells=paths[3], markdown=paths[4])
        outs.append([p.read_bytes() for p in paths])
    assert outs[0] == outs[1]


# --------------------------------------------------------------------------- adaptive sampler


def _counting(f):
    calls = []

    def probe(idx):
        calls.append(idx)
        return f(idx)
    return probe, calls


def test_adaptive_product_refines_where_the_surface_varies_and_keeps_the_budget():
    # S varies along axis 1 only (a step between levels 5 and 6 of 0..12); axis 0 is flat
    coords = [np.arange(7.0), np.arange(13.0)]
    probe, calls = _counting(lambda idx: 0.2 if idx[1] <= 5 else 0.9)
    trace = []
    chosen = adaptive_product(coords, probe, budget=None, epsilon=0.0, trace=trace)
    assert chosen[0] == (0, 6)  # the flat axis keeps its ends
    assert 5 in chosen[1] and 6 in chosen[1]  # the step is located exactly
    assert len(calls) == len(set(calls)) == 2 * len(chosen[1])  # each point once, a product
    assert trace[0] == ((0, 6), (0, 12)) and trace[-1] == chosen
    # interpolating the product reproduces the step function everywhere
    truth = np.where(np.arange(13) <= 5, 0.2, 0.9)[None, :].repeat(7, axis=0)
    v = np.full(truth.shape, np.nan)
    v[np.ix_(*chosen)] = truth[np.ix_(*chosen)]
    np.testing.assert_allclose(sequential_pchip(v, coords), truth, atol=1e-12)
    # a budget caps the runs; the corners are always measured
    for budget in (4, 5, 7):
        probe, calls = _counting(lambda idx: 0.2 if idx[1] <= 5 else 0.9)
        ch = adaptive_product(coords, probe, budget=budget)
        assert len(calls) <= budget and len(calls) == np.prod([len(c) for c in ch])
    probe, calls = _counting(lambda idx: float(idx[1]))
    assert adaptive_product(coords, probe, budget=1) == ((0, 6), (0, 12)) and len(calls) == 4


def test_adaptive_product_stops_at_epsilon_and_within_confidence_intervals():
    coords = [np.arange(9.0)]
    lin = lambda idx: 0.1 * idx[0]  # noqa: E731
    assert adaptive_product(coords, lin, budget=None, epsilon=0.8) == ((0, 8),)
    assert adaptive_product(coords, lin, budget=None, epsilon=0.5) == ((0, 4, 8),)
    assert adaptive_product(coords, lin, budget=None, epsilon=0.3) == ((0, 2, 4, 6, 8),)
    # differences the points' intervals cannot tell from zero are not changes
    assert adaptive_product(coords, lin, budget=None, epsilon=0.0,
                            same=lambda p, q: True) == ((0, 8),)
    with pytest.raises(ValueError, match="budget"):
        adaptive_product(coords, lin, budget=0)


def test_profile_adaptive_on_a_replayed_grid():
    # throughput saturating in CPU at 5 cores, linear in memory: exact once 5 is chosen
    levels = {"cpu_cores": list(range(2, 9)), "mem_gb": list(np.arange(2, 8.5, 0.5))}
    g = _grid_from_function(lambda c, m: 10 + 5 * np.minimum(c, 5) + 10 * m, levels,
                            {"cpu_cores": "cpu_cores", "mem_gb": "memory"})
    r = profile(ReplayBackend(g), epsilon=0.0, sampling="adaptive", spare_cores=1, budget=12)
    assert r.product_points <= 12 and r.trace[0] == ((0, 6), (0, 12))
    assert {m.phase for m in r.measurements} == {"adaptive"}
    assert r.grid_frame()["measured"].sum() == r.product_points
    binary = profile(ReplayBackend(g), epsilon=0.05, sampling="binary", spare_cores=1)
    full = profile(ReplayBackend(g), epsilon=0.0, sampling="adaptive", spare_cores=1, budget=None)
    assert full.score(g.truth())["mae_full_grid"] < 1e-12  # refined until nothing varies
    assert r.score(g.truth())["mae_full_grid"] <= binary.score(g.truth())["mae_full_grid"] \
        or r.product_points < binary.product_points


# --------------------------------------------------------------------------- noise: repeats


def test_repeat_ci_is_the_student_t_interval_of_the_mean():
    from scipy import stats

    from perfcast.sensitivity.metrics import repeat_ci, sensitivity_interval

    x = [10.0, 12.0, 11.0, 13.0, 9.5]
    m, lo, hi = repeat_ci(x, 0.95)
    ref = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
    assert m == pytest.approx(np.mean(x)) and (lo, hi) == pytest.approx(ref)
    assert repeat_ci([3.0, 3.0, 3.0], 0.9) == (3.0, 3.0, 3.0)
    assert np.isnan(repeat_ci([3.0], 0.9)[1])
    with pytest.raises(ValueError, match="finite"):
        repeat_ci([1.0, float("nan")], 0.9)
    # runtime-like: the slower end of the interval is the lower sensitivity
    assert sensitivity_interval(8.0, 10.0, 4.0, False) == (0.4, 0.5)


class IntervalBackend(ReplayBackend):
    """A measured grid whose every point comes with a confidence interval of +- ``half``
    (what repeated runs give), to test that differences inside the intervals are not
    changes."""

    def __init__(self, grid, half):
        super().__init__(grid)
        self.half = half

    def run(self, point):
        from dataclasses import replace

        out = super().run(point)
        return replace(out, ci_low=out.performance - self.half,
                       ci_high=out.performance + self.half, repeats=10)


def test_no_bisection_within_the_points_confidence_intervals():
    # throughput 10 .. 20 along 9 CPU levels: |dS| over the whole range 0.5 > epsilon 0.1
    levels = {"cpu_cores": list(range(1, 10))}
    g = _grid_from_function(lambda c: 10 + 10 * (c - 1) / 8, levels,
                            {"cpu_cores": "cpu_cores"})
    narrow = profile(IntervalBackend(g, 0.01), epsilon=0.1, sampling="binary", spare_cores=1)
    # 10 +- 6 overlaps 20 +- 6
    wide = profile(IntervalBackend(g, 6.0), epsilon=0.1, sampling="binary", spare_cores=1)
    assert len(narrow.chosen[0]) > 2 and wide.chosen[0] == (0, 8)
    m = wide.measurements[0]
    assert m.s_low == pytest.approx((m.outcome.performance - 6) / 20)
    runs = wide.runs_frame()
    assert {"sensitivity_ci_low", "sensitivity_ci_high", "performance_ci_low"} <= set(runs)
    ad = profile(IntervalBackend(g, 6.0), epsilon=0.0, sampling="adaptive", spare_cores=1,
                 budget=None)
    assert ad.chosen[0] == (0, 8)
    # binary search itself: an interval test on levels
    s = [0.0, 0.2, 0.4, 0.6, 0.8]
    assert binary_recursive_search(range(5), lambda k: s[k], 0.1) == [0, 1, 2, 3, 4]
    assert binary_recursive_search(range(5), lambda k: s[k], 0.1,
                                   same=lambda i, j: j - i < 4) == [0, 2, 4]


def test_a_configured_layout_is_checked_and_changes_the_grid(tmp_path):
    """sensitivity.replay.layouts.<program>: the schema fills every key and refuses unknown
    ones; the layout built from it drops, adds and reverses levels of that program's grid."""
    from perfcast.settings import as_params

    table = tmp_path / "t.csv"
    table.write_text("program,cpu_cores,net_code,metric,value\n" + "".join(
        f"p,{c},{n},latency,{c * 10 + n}\n" for c in (1, 2, 4) for n in (1, 2)))
    settings = _evaluation(0, layouts={"p": {"exclude": {"cpu_cores": [2]},
                                             "levels": {"cpu_cores": [3]},
                                             "reverse": ["net_code"]}})
    layouts = settings.layouts
    assert layouts["p"].kinds == {} and layouts["p"].higher_is_better is None  # filled
    assert build(EvaluationSettings, as_params(settings)) == settings  # the rule's params
    grid = load_grids(table, ["p"], layouts)["p"]
    assert grid.model["cpu_cores"].levels == (1.0, 3.0, 4.0)  # 2 dropped, 3 added
    assert grid.model["net_code"].levels == (2.0, 1.0)  # reversed: a larger code is less
    assert np.isnan(grid.values[1]).all()  # the added level was never measured: failed runs
    assert grid.values[2, 1] == 41.0 and grid.baseline == 41.0  # 4 cores, the least code
    as_measured = load_grids(table, ["p"], {})["p"]
    assert as_measured.model["cpu_cores"].levels == (1.0, 2.0, 4.0)
    with pytest.raises(InputError, match=r"replay\.layouts\.p.*'revers' was unexpected"):
        _evaluation(0, layouts={"p": {"revers": ["net_code"]}})
    with pytest.raises(InputError, match=r"replay\.layouts\.p\.kinds\.cpu_cores"):
        _evaluation(0, layouts={"p": {"kinds": {"cpu_cores": "gpu"}}})
