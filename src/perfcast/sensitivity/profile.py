"""One profiling campaign: ceiling, sampling, measuring, interpolation (Wang et al. 2017).

1. Run the program unrestricted and monitor it: its performance is Eq. (1)'s denominator, its
   peak usage cuts every dimension at the resource ceiling (non-effective dimensions: one level).
   The ceiling is then checked (:func:`check_ceiling`, ours): the run with every dimension at
   its ceiling must perform as the unrestricted run did (S at least ``1 - epsilon``). A program
   whose need of one resource grows when another is restricted (``sort`` spilling to disk under
   a memory limit) is not at its ceiling there: the dimension whose top level restores S has its
   ceiling raised to the top, and where none does the profile carries a warning naming them.
2. Choose levels per dimension. ``binary``: binary recursive search along each effective
   dimension, the other dimensions held at their ceiling (non-effective ones at the lower
   bound) - the *1-D probes*; with repeated runs, a difference within the two points'
   confidence intervals is not bisected. ``lhs``: the same number of levels per dimension,
   boundary levels plus Latin hypercube interior levels. ``brute``: every level up to the ceiling.
   ``adaptive`` (ours): budgeted joint refinement of the product of levels over all effective
   dimensions (:func:`~perfcast.sensitivity.sampling.adaptive_product`).
3. Measure the Cartesian product of the chosen levels (the probes are part of it, so each point
   runs once).
   A failed run (killed by the memory limit, timed out) has no performance: where a measured
   failure and a measured success are two chosen levels apart on some line, the level between
   them is added and measured (:func:`bisect_failures`, ours), until failure and success sit on
   adjacent levels, so no cell is interpolated across the boundary.
4. Fill the whole grid by sequential 1-D PCHIP (:mod:`perfcast.sensitivity.interpolation`);
   cells whose every bracketing measured point failed are failed (:func:`failed_cells`).

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017 (Figs. 6-7);
docs/methods/sensitivity.md.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from perfcast.sensitivity.backends import Backend, RunOutcome
from perfcast.sensitivity.interpolation import sequential_pchip
from perfcast.sensitivity.metrics import sensitivity, sensitivity_interval
from perfcast.sensitivity.resources import AxisRange, ResourceModel
from perfcast.sensitivity.sampling import (
    adaptive_product,
    binary_recursive_search,
    lhs_levels,
    midpoint_index,
)

log = logging.getLogger(__name__)
SAMPLINGS = ("binary", "lhs", "brute", "adaptive")


class ProfileError(RuntimeError):
    """The campaign cannot produce sensitivities (e.g. the unrestricted run failed)."""


@dataclass(frozen=True)
class Measurement:
    """A grid point measured once: when (``order``), for what (``phase``), with what result."""

    idx: tuple[int, ...]
    phase: str
    order: int
    outcome: RunOutcome
    sensitivity: float
    #: the interval of S from the repeats' confidence interval (NaN: one run, or failed)
    s_low: float = float("nan")
    s_high: float = float("nan")


@dataclass
class _Prober:
    """Measure each grid point once; ``done`` may be shared by campaigns on one backend."""

    backend: Backend
    model: ResourceModel
    baseline: float
    done: dict[tuple[int, ...], Measurement] = field(default_factory=dict)
    touched: list[tuple[int, ...]] = field(default_factory=list)

    def __call__(self, idx: tuple[int, ...], phase: str) -> float:
        if idx not in self.done:
            out = self.backend.run(self.model.point(idx))
            s = sensitivity(out.performance if out.ok else None, self.baseline,
                            self.backend.higher_is_better)
            lo, hi = (sensitivity_interval(out.ci_low, out.ci_high, self.baseline,
                                           self.backend.higher_is_better)
                      if out.ok else (float("nan"), float("nan")))
            self.done[idx] = Measurement(idx, phase, len(self.done), out, s, lo, hi)
        if idx not in self._seen:
            self._seen.add(idx)
            self.touched.append(idx)
        return self.done[idx].sensitivity

    def __post_init__(self) -> None:
        self._seen: set[tuple[int, ...]] = set()

    def same(self, p: tuple[int, ...], q: tuple[int, ...]) -> bool:
        """True when the confidence intervals of S at measured points ``p`` and ``q`` overlap:
        their difference is not a change (False where either has no interval)."""
        a, b = self.done[p], self.done[q]
        if not all(np.isfinite([a.s_low, a.s_high, b.s_low, b.s_high])):
            return False
        return a.s_low <= b.s_high and b.s_low <= a.s_high


@dataclass
class ProfileResult:
    """What a campaign measured and the interpolated sensitivity of every grid cell."""

    program: str
    backend: str
    sampling: str
    epsilon: float
    model: ResourceModel
    baseline: RunOutcome
    peaks: dict[str, float | None]
    ranges: tuple[AxisRange, ...]
    chosen: tuple[tuple[int, ...], ...]
    measurements: list[Measurement]
    grid: np.ndarray
    probe_points: int
    #: per dimension, the segments binary search bisected: (low level, high level, |dS|)
    splits: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)
    #: ``adaptive`` only: the chosen levels after each refinement step (corners first)
    trace: tuple[tuple[tuple[int, ...], ...], ...] = ()
    #: what :func:`check_ceiling` found (empty: not checked)
    ceiling_check: dict = field(default_factory=dict)
    #: what a reader of the profile must know (a ceiling the check could not repair)
    warnings: tuple[str, ...] = ()
    #: cells whose every bracketing measured point failed (:func:`failed_cells`; None: unknown)
    failed: np.ndarray | None = None
    #: the baseline's own uncertainty (:func:`baseline_spread`)
    spread: dict = field(default_factory=dict)

    @property
    def product_points(self) -> int:
        """Runs of the Cartesian product of the chosen levels (the paper's steps)."""
        return int(np.prod([len(c) for c in self.chosen]))

    @property
    def steps(self) -> dict[str, int]:
        """1-D probes, product points, and every distinct run (+1: the unrestricted run)."""
        return {"probes_1d": self.probe_points, "product_points": self.product_points,
                "runs_total": len(self.measurements) + 1}

    def region_mask(self) -> np.ndarray:
        """Cells inside the profiled box (every axis at or below its ceiling)."""
        mask = np.ones(self.model.shape, dtype=bool)
        for a, r in enumerate(self.ranges):
            sl = [slice(None)] * mask.ndim
            sl[a] = slice(r.ceiling + 1, None)
            mask[tuple(sl)] = False
        return mask

    def score(self, truth: np.ndarray, mask: np.ndarray | None = None) -> dict[str, float]:
        """Average absolute error against ``truth`` inside the profiled box (``mae``) and over
        the whole grid (``mae_full_grid``, where ``mask``, e.g. truth known, allows); the
        largest error in each, the whole grid's worst cell, and the ``noise_floor`` of one run
        (:func:`baseline_spread`; NaN: unknown) that no error can be told from."""
        truth = np.asarray(truth, dtype=float)
        ok = np.isfinite(truth) if mask is None else (mask & np.isfinite(truth))
        err = np.abs(self.grid - truth)
        box = ok & self.region_mask()
        worst = np.unravel_index(np.nanargmax(np.where(ok, err, -1.0)), err.shape)
        return {
            "mae": float(err[box].mean()) if box.any() else float("nan"),
            "max_abs_error_box": float(err[box].max()) if box.any() else float("nan"),
            "max_abs_error": float(err[ok].max()) if ok.any() else float("nan"),
            "mae_full_grid": float(err[ok].mean()) if ok.any() else float("nan"),
            "cells_scored": int(box.sum()),
            "cells_full_grid": int(ok.sum()),
            "worst_point": {k: float(v) for k, v in self.model.point(worst).items()},
            "worst_truth": float(truth[worst]),
            "worst_predicted": float(self.grid[worst]),
            # the run-to-run noise of one run's S: an error this small is all a profile can show
            "noise_floor": self.spread.get("noise_floor", float("nan")),
        }

    def grid_frame(self) -> pd.DataFrame:
        """One row per grid cell: levels, interpolated sensitivity, whether it was measured."""
        idx = np.array(list(self.model.indices()), dtype=int).reshape(-1, len(self.model.dims))
        measured = {m.idx: m for m in self.measurements}
        product = set(itertools.product(*self.chosen))
        region = self.region_mask()
        cols: dict[str, object] = {}
        for a, d in enumerate(self.model.dims):
            cols[d.name] = np.asarray(d.levels, dtype=float)[idx[:, a]]
        keys = [tuple(int(v) for v in row) for row in idx]
        cols["sensitivity"] = self.grid[tuple(idx.T)]
        cols["measured"] = [k in product for k in keys]
        cols["in_ceiling"] = region[tuple(idx.T)]
        cols["failed"] = ([bool(self.failed[k]) for k in keys] if self.failed is not None
                          else [k in measured and not measured[k].outcome.ok for k in keys])
        return pd.DataFrame(cols)

    def runs_frame(self) -> pd.DataFrame:
        """Every run in the order it ran (the unrestricted run first)."""
        rows = [self._run_row("unrestricted", -1, None, self.baseline, 1.0)]
        for m in sorted(self.measurements, key=lambda m: m.order):
            rows.append(self._run_row(m.phase, m.order, m.idx, m.outcome, m.sensitivity,
                                      (m.s_low, m.s_high)))
        return pd.DataFrame(rows)

    def _run_row(self, phase: str, order: int, idx, out: RunOutcome, s: float,
                 s_ci: tuple[float, float] = (float("nan"), float("nan"))) -> dict:
        row: dict[str, object] = {"order": order, "phase": phase}
        for a, d in enumerate(self.model.dims):
            row[d.name] = float(d.levels[idx[a]]) if idx is not None else float("nan")
        row.update({"performance": out.performance, "performance_ci_low": out.ci_low,
                    "performance_ci_high": out.ci_high, "sensitivity": s,
                    "sensitivity_ci_low": s_ci[0], "sensitivity_ci_high": s_ci[1], "ok": out.ok,
                    "reason": out.reason, "wall_s": out.wall_s,
                    "returncode": -999 if out.returncode is None else int(out.returncode),
                    "memory_peak_bytes": -1 if out.memory_peak_bytes is None
                    else int(out.memory_peak_bytes),
                    "repeats": out.repeats})
        return row

    def above_spread(self) -> list[dict[str, float]]:
        """The measured points whose S exceeds the best unrestricted run's (``spread``'s
        ``s_high``): faster than the program ever ran unrestricted, a sign of a noisy host or a
        slow baseline (empty where the spread is unknown)."""
        top = self.spread.get("s_high", float("nan"))
        if not np.isfinite(top):
            return []
        return [{**self.model.point(m.idx), "sensitivity": m.sensitivity}
                for m in self.measurements if m.outcome.ok and m.sensitivity > top + 1e-12]

    def summary(self) -> dict:
        """The campaign as a JSON-able dict: unrestricted performance, peak usage, per dimension
        its levels, peak, ceiling and chosen levels, steps, bisected segments, failures."""
        failed = [m for m in self.measurements if not m.outcome.ok]
        return {
            "program": self.program,
            "backend": self.backend,
            "sampling": self.sampling,
            "epsilon": self.epsilon,
            "unrestricted_performance": self.baseline.performance,
            "peak_usage": self.baseline.usage.as_dict() if self.baseline.usage else None,
            "dimensions": {
                r.dim.name: {
                    "kind": r.dim.kind, "unit": r.dim.unit, "levels": list(r.dim.levels),
                    "peak": r.peak, "effective": r.effective,
                    "ceiling": r.dim.levels[r.ceiling],
                    "chosen": [r.dim.levels[i] for i in c],
                }
                for r, c in zip(self.ranges, self.chosen, strict=True)
            },
            "baseline": self.spread,
            "above_baseline_spread": self.above_spread(),
            "profiled_dimensions": [r.dim.name for r in self.ranges],
            "ceiling_check": self.ceiling_check,
            "warnings": list(self.warnings),
            "steps": self.steps,
            "bisected": {k: [list(t) for t in v] for k, v in self.splits.items()},
            "failed_runs": len(failed),
            "failure_reasons": sorted({m.outcome.reason for m in failed}),
        }


def baseline_spread(baseline: RunOutcome, higher_is_better: bool) -> dict[str, float]:
    """The baseline's own uncertainty: the sensitivity of each unrestricted run against their
    median (the denominator of every S).

    Parameters
    ----------
    baseline : RunOutcome
        The unrestricted run; ``runs`` holds every repeat's performance (fewer than two: the
        spread is unknown, NaN).
    higher_is_better : bool
        The metric's direction.

    Returns
    -------
    dict
        ``runs``, ``performance`` (the median), ``performance_min`` and ``_max``, ``s_low`` and
        ``s_high`` (the S of the worst and best unrestricted run: the spread of S = 1) and
        ``noise_floor``, the mean ``|S - 1|`` of the unrestricted runs: the error one run's S
        has from run-to-run noise alone, which no interpolation can go below.

    Examples
    --------
    Three runs of 1.0, 1.1 and 1.66 s: the median 1.1 s is the denominator.

    >>> b = RunOutcome(performance=1.1, ok=True, runs=(1.0, 1.1, 1.66))
    >>> d = baseline_spread(b, higher_is_better=False)
    >>> round(d["s_low"], 3), round(d["s_high"], 3), round(d["noise_floor"], 3)
    (0.663, 1.1, 0.146)
    """
    runs = [float(v) for v in baseline.runs]
    nan = float("nan")
    if len(runs) < 2:
        return {"runs": len(runs), "performance": baseline.performance,
                "performance_min": nan, "performance_max": nan, "s_low": nan, "s_high": nan,
                "noise_floor": nan}
    s = np.array([sensitivity(v, baseline.performance, higher_is_better) for v in runs])
    return {"runs": len(runs), "performance": baseline.performance,
            "performance_min": min(runs), "performance_max": max(runs),
            "s_low": float(s.min()), "s_high": float(s.max()),
            "noise_floor": float(np.mean(np.abs(s - 1.0)))}


def check_ceiling(ranges: Sequence[AxisRange], measure: Callable[[tuple[int, ...], str], float],
                  epsilon: float, margin: float = 0.0, spread_low: float = float("nan")
                  ) -> tuple[tuple[AxisRange, ...], dict, tuple[str, ...]]:
    """Measure the run with every dimension at its ceiling and raise the ceiling that holds it back.

    The resource ceiling of Wang et al. (2017, Eq. 2) takes each dimension's peak from one
    unrestricted run, each dimension on its own. A program whose need of one resource grows
    when another is restricted breaks that: ``sort`` under a memory limit reads its spilled
    temporary files back from disk, so at the memory ceiling its disk ceiling (the unrestricted
    run's read peak) slows it five-fold, and every probe held at that point sees the slowdown.
    The point at every ceiling must have ``S >= 1 - epsilon`` (the binary search's own tolerance):
    where it has not, each dimension below its top level is raised to the top on its own (one run
    each); the one whose raise gives the highest S, if it gains more than ``margin``, keeps its
    top level as its ceiling (and becomes effective), and the check repeats from there. Where no
    raise helps, the ranges stay and the failure is a warning naming the dimensions tried.

    Parameters
    ----------
    ranges : sequence of AxisRange
        The ceilings from the unrestricted run's peaks.
    measure : callable
        ``measure(idx, phase)``: the sensitivity at grid index ``idx`` (each point runs once).
    epsilon : float
        The tolerance: the point at every ceiling passes with ``S >= 1 - epsilon``.
    margin : float, default=0.0
        A raise counts only if it gains more S than this (the baseline's run-to-run spread).
    spread_low : float, default=float('nan')
        The S of the slowest unrestricted run (:func:`baseline_spread`): a point at the ceiling
        below it is also checked (raised where a dimension explains it); it is a warning only
        below ``1 - epsilon``, above that it is within what the profile resolves.

    Returns
    -------
    tuple
        the ranges (with any raised ceiling), a JSON-able record (``s_at_ceiling`` before and
        after, ``threshold``, ``raised``: dimension -> [old, new ceiling level], ``tried``:
        dimension -> S with it at its top) and the warnings.

    Examples
    --------
    Memory (levels 1..3) and disk (levels 1..3): the peaks put disk at level 1, but at the
    memory ceiling the program needs disk level 3 (S 0.25 there, 1 at disk level 3):

    >>> from perfcast.sensitivity.resources import Dimension, ceiling_range
    >>> mem = Dimension("memory_mb", "memory", (1.0, 2.0, 3.0))
    >>> disk = Dimension("disk_read_mbps", "disk_read", (1.0, 2.0, 3.0))
    >>> ranges = (ceiling_range(mem, 3.0, 0), ceiling_range(disk, 1.0, 0))
    >>> s = lambda idx, phase: 0.25 * [1, 2, 4][idx[1]]
    >>> new, record, warnings = check_ceiling(ranges, s, epsilon=0.3)
    >>> [r.ceiling for r in new], record["raised"], warnings
    ([2, 2], {'disk_read_mbps': [1.0, 3.0]}, ())
    """
    threshold = 1.0 - epsilon
    rs = list(ranges)

    def anchor() -> tuple[int, ...]:
        return tuple(r.anchor for r in rs)

    s0 = s = float(measure(anchor(), "ceiling"))
    raised: dict[str, list[float]] = {}
    tried: dict[str, float] = {}
    def short(v: float) -> bool:
        return v < threshold or (math.isfinite(spread_low) and v < spread_low)

    while short(s):
        trials = []
        for a, r in enumerate(rs):
            top = len(r.dim) - 1
            if r.ceiling >= top or r.dim.reverse:
                continue
            idx = list(anchor())
            idx[a] = top
            st = float(measure(tuple(idx), "ceiling"))
            tried[r.dim.name] = st
            trials.append((st, -a))
        if not trials:
            break
        best, neg_a = max(trials)
        if best <= s + margin:
            break
        a = -neg_a
        r = rs[a]
        raised[r.dim.name] = [r.dim.levels[r.ceiling], r.dim.levels[-1]]
        rs[a] = AxisRange(r.dim, True, len(r.dim) - 1, r.peak)
        s = best
    warnings: tuple[str, ...] = ()
    if s < threshold:
        capped = [r.dim.name for r in rs if r.ceiling < len(r.dim) - 1]
        names = ", ".join(sorted(set(tried) | set(raised))) or "none (every dimension is at " \
            "its top level)"
        warnings = (f"ceiling check: S = {s:.3g} with every dimension at its ceiling, below "
                    f"1 - epsilon = {threshold:.3g}; raising {names} to the top level did not "
                    f"restore it (still capped: {', '.join(capped) or 'none'}): the profile's "
                    "sensitivities are relative to a point the program does not reach",)
    record = {"s_at_ceiling": s0, "s_after": s, "threshold": threshold, "raised": raised,
              "tried": tried, "below_baseline_spread": bool(math.isfinite(spread_low)
                                                             and s < spread_low)}
    return tuple(rs), record, warnings


def bisect_failures(chosen: Sequence[Sequence[int]], coords: Sequence[Sequence[float]],
                    measure: Callable[[tuple[int, ...], str], float],
                    failed: Callable[[tuple[int, ...]], bool]) -> tuple[tuple[int, ...], ...]:
    """Add levels until no measured failure and success lie two chosen levels apart.

    Binary search bisects a segment whose sensitivity changes by more than epsilon; at a
    failure (S = 0, no performance) that change is a cliff, not a slope, and PCHIP through it
    draws a ramp of made-up sensitivities over cells where every run fails. Here, on every axis,
    a segment between adjacent chosen levels with an unchosen level inside, whose ends differ in
    failure on some measured line, gets its midpoint level
    (:func:`~perfcast.sensitivity.sampling.midpoint_index`), measured on every line of the
    product (so it stays a product); until no such segment is left: the boundary is then
    located to adjacent levels on every line.

    Parameters
    ----------
    chosen : sequence of sequence of int
        The chosen level indices per axis (their product measured).
    coords : sequence of sequence of float
        Per axis, the levels' coordinates.
    measure : callable
        ``measure(idx, phase)`` measures grid index ``idx`` (each point runs once).
    failed : callable
        ``failed(idx)``: whether the measured point ``idx`` failed.

    Returns
    -------
    tuple of tuple of int
        the chosen levels with those added, sorted.

    Examples
    --------
    One axis of 9 levels that fails below level 5: the boundary is found between 4 and 5.

    >>> ok = lambda idx: idx[0] >= 5
    >>> bisect_failures([[0, 8]], [range(9)], lambda idx, phase: float(ok(idx)),
    ...                 lambda idx: not ok(idx))
    ((0, 4, 5, 6, 8),)
    """
    levels = [list(c) for c in chosen]
    while True:
        target = None
        for a, lv in enumerate(levels):
            others = [levels[b] if b != a else [0] for b in range(len(levels))]
            for i, j in itertools.pairwise(lv):
                if j - i < 2:
                    continue
                for line in itertools.product(*others):
                    lo = line[:a] + (i,) + line[a + 1:]
                    hi = line[:a] + (j,) + line[a + 1:]
                    if failed(lo) != failed(hi):
                        target = (a, midpoint_index(coords[a], i, j))
                        break
                if target:
                    break
            if target:
                break
        if target is None:
            return tuple(tuple(sorted(c)) for c in levels)
        a, m = target
        levels[a] = sorted([*levels[a], m])
        for idx in itertools.product(*levels):
            measure(idx, "boundary")


def failed_cells(shape: Sequence[int], chosen: Sequence[Sequence[int]],
                 failed: Callable[[tuple[int, ...]], bool]) -> np.ndarray:
    """The cells whose every bracketing measured point failed.

    A cell's bracket on each axis is the chosen level equal to its own, else the nearest
    chosen levels below and above it (the nearest one beyond the chosen range); the cell is
    failed when every corner of that box failed. After :func:`bisect_failures` every box is
    all failed or all successful, so this is exact on the levels measured.

    Parameters
    ----------
    shape : sequence of int
        The grid's shape.
    chosen : sequence of sequence of int
        The chosen level indices per axis (their product measured).
    failed : callable
        ``failed(idx)``: whether the measured point ``idx`` failed.

    Returns
    -------
    numpy.ndarray
        a boolean array of ``shape``.

    Examples
    --------
    >>> failed_cells((5,), [[0, 2, 4]], lambda idx: idx[0] <= 2).tolist()
    [True, True, True, False, False]
    """
    brackets = []
    for n, c in zip(shape, chosen, strict=True):
        c = sorted(c)
        per = []
        for k in range(n):
            below = [x for x in c if x <= k]
            above = [x for x in c if x >= k]
            per.append(tuple(sorted({below[-1] if below else above[0],
                                     above[0] if above else below[-1]})))
        brackets.append(per)
    out = np.zeros(tuple(shape), dtype=bool)
    for cell in itertools.product(*(range(n) for n in shape)):
        corners = itertools.product(*(brackets[a][k] for a, k in enumerate(cell)))
        out[cell] = all(failed(c) for c in corners)
    return out


def profile(
    backend: Backend,
    *,
    epsilon: float,
    sampling: str,
    spare_cores: float,
    counts: Sequence[int] | None = None,
    seed: int | np.random.SeedSequence = 0,
    program: str = "",
    baseline: RunOutcome | None = None,
    cache: dict[tuple[int, ...], Measurement] | None = None,
    budget: int | None = None,
    verify_ceiling: bool = False,
    ranges: Sequence[AxisRange] | None = None,
    bisect_failed: bool = False,
) -> ProfileResult:
    """Run one campaign on ``backend`` (see the module docstring).

    A library function, also used outside the workflow (the replay evaluation, the tests): the
    workflow passes the ``sensitivity`` section's ``sampling`` and ``spare_cores``, the replay
    evaluation the method's (binary search and the campaigns compared with it, one spare core).

    Parameters
    ----------
    backend : Backend
        Where runs come from (cgroup or replay).
    epsilon : float
        Binary recursive search bisects while ``|dS| > epsilon``.
    sampling : str
        ``binary``, ``lhs``, ``brute`` or ``adaptive`` (``sensitivity.sampling``).
    spare_cores : float
        Cores added to a CPU ceiling (:func:`~perfcast.sensitivity.resources.ceiling_range`;
        ``sensitivity.spare_cores``).
    counts : sequence of int or None, default=None
        ``lhs`` only, levels per dimension (normally those binary search chose); without them
        binary search runs first to find them.
    seed : int or numpy.random.SeedSequence, default=0
        The Latin hypercube's seed.
    program : str, default=""
        Names the program in the result and the log.
    baseline : RunOutcome or None, default=None
        The unrestricted run, if already made.
    cache : dict or None, default=None
        Measured points, shared by campaigns compared on one backend (each point runs once).
    budget : int or None, default=None
        ``adaptive`` only, the most grid points measured (None: until no segment varies by
        more than ``epsilon``).
    verify_ceiling : bool, default=False
        Check the ceiling (:func:`check_ceiling`) before sampling (the workflow's
        ``sensitivity.verify_ceiling``; False: the method as published, as the replay
        evaluation runs it).
    ranges : sequence of AxisRange or None, default=None
        The ceilings to use (another campaign's, checked); None: from the peaks.
    bisect_failed : bool, default=False
        Locate the boundary between measured failures and successes to adjacent levels
        (:func:`bisect_failures`) before interpolating (the workflow's
        ``sensitivity.bisect_failures``; False: the method as published).

    Returns
    -------
    ProfileResult

    Raises
    ------
    ValueError
        an unknown ``sampling``, or ``counts`` not one per dimension.
    ProfileError
        the unrestricted run failed.

    Examples
    --------
    A runtime that halves with each doubling of cores, replayed from its measured grid with
    a peak of 2 cores (the ceiling: 2 + one spare core, so 4):

    >>> import pandas as pd
    >>> from perfcast.sensitivity.replay import AS_MEASURED, MeasuredGrid, ReplayBackend
    >>> table = pd.DataFrame({"program": "p", "cpu_cores": [1.0, 2, 4, 8], "metric": "runtime_s",
    ...                       "value": [8.0, 4.0, 2.0, 1.0]})
    >>> grid = MeasuredGrid.from_frame(table, "p", AS_MEASURED)
    >>> r = profile(ReplayBackend(grid, {"cpu_cores": 2}), epsilon=0.1, sampling="binary",
    ...             spare_cores=1, program="p")
    >>> r.chosen, r.steps["product_points"], r.grid.tolist()
    (((0, 1, 2),), 3, [0.125, 0.25, 0.5, 0.5])
    """
    if sampling not in SAMPLINGS:
        raise ValueError(f"sampling must be one of {SAMPLINGS}, got {sampling!r}")
    model = backend.model
    base = baseline if baseline is not None else backend.unrestricted()
    if not base.ok:
        raise ProfileError(f"{program or 'program'}: the unrestricted run failed ({base.reason});"
                           " there is no performance to compare against")
    peaks = backend.peaks(base)
    measure = _Prober(backend, model, base.performance, cache if cache is not None else {})
    spread = baseline_spread(base, backend.higher_is_better)
    check: dict = {}
    warnings: tuple[str, ...] = ()
    if ranges is None:
        ranges = model.ceilings(peaks, spare_cores)
        if verify_ceiling:
            known = np.isfinite(spread["s_low"])
            ranges, check, warnings = check_ceiling(
                ranges, measure, epsilon,
                margin=spread["s_high"] - spread["s_low"] if known else 0.0,
                spread_low=spread["s_low"] if known else float("nan"))
            check["runs"] = len(measure.touched)
            for w in warnings:
                log.warning("%s: %s", program or "program", w)
    ranges = tuple(ranges)
    anchor = tuple(r.anchor for r in ranges)
    splits: dict[str, list[tuple[float, float, float]]] = {}

    def binary() -> tuple[tuple[int, ...], ...]:
        chosen = []
        for a, r in enumerate(ranges):
            if not r.effective:
                chosen.append((0,))
                continue

            def probe(k: int, a: int = a) -> float:
                idx = list(anchor)
                idx[a] = k
                return measure(tuple(idx), "probe")

            def same(i: int, j: int, a: int = a) -> bool:
                lo, hi = list(anchor), list(anchor)
                lo[a], hi[a] = i, j
                return measure.same(tuple(lo), tuple(hi))

            coords = r.dim.coords[: r.ceiling + 1]
            cuts: list[tuple[int, int, float]] = []
            chosen.append(tuple(binary_recursive_search(coords, probe, epsilon, cuts,
                                                        same=same)))
            splits[r.dim.name] = [(r.dim.levels[i], r.dim.levels[j], d) for i, j, d in cuts]
        return tuple(chosen)

    probe_points = 0
    if sampling == "binary":
        chosen = binary()
        probe_points = len(measure.touched)
    elif sampling == "lhs":
        if counts is None:
            counts = [len(c) for c in binary()]
            probe_points = len(measure.touched)
        if len(counts) != len(ranges):
            raise ValueError(f"{len(counts)} counts for {len(ranges)} dimensions")
        rng = np.random.default_rng(seed)
        chosen = tuple(tuple(lhs_levels(r.ceiling + 1, int(k), rng)) if r.effective else (0,)
                       for r, k in zip(ranges, counts, strict=True))
    elif sampling == "adaptive":
        trace: list[tuple[tuple[int, ...], ...]] = []
        coords = [r.dim.coords[: r.ceiling + 1] if r.effective else r.dim.coords[:1]
                  for r in ranges]
        chosen = adaptive_product(coords, lambda idx: measure(idx, "adaptive"), budget=budget,
                                  epsilon=epsilon, same=measure.same, trace=trace)
    else:
        chosen = tuple(tuple(r.indices) for r in ranges)

    for idx in itertools.product(*chosen):
        measure(idx, "product" if sampling != "brute" else "brute")

    def failed(idx: tuple[int, ...]) -> bool:
        return not measure.done[idx].outcome.ok

    if bisect_failed:
        chosen = bisect_failures(chosen, [d.coords for d in model.dims], measure, failed)
    values = np.full(model.shape, np.nan)
    for idx in itertools.product(*chosen):
        values[idx] = measure.done[idx].sensitivity
    grid = sequential_pchip(values, [d.coords for d in model.dims])
    failed_mask = failed_cells(model.shape, chosen, failed)
    grid[failed_mask] = 0.0
    log.info("%s: %s eps=%g chose %s -> %d product points", program, sampling, epsilon,
             [len(c) for c in chosen], int(np.prod([len(c) for c in chosen])))
    result = ProfileResult(program=program, backend=backend.name, sampling=sampling,
                         epsilon=epsilon, model=model, baseline=base, peaks=peaks,
                         ranges=ranges, chosen=chosen,
                         measurements=[measure.done[i] for i in measure.touched],
                         grid=grid, probe_points=probe_points, splits=splits,
                         trace=tuple(trace) if sampling == "adaptive" else (),
                         ceiling_check=check, warnings=warnings, failed=failed_mask,
                         spread=spread)
    high = result.above_spread()
    if high:
        result.warnings = (*result.warnings,
                           f"{len(high)} measured point(s) have S above the best unrestricted "
                           f"run's {spread['s_high']:.3g} (up to "
                           f"{max(h['sensitivity'] for h in high):.3g}): the baseline's "
                           f"{spread['runs']} runs spread over S {spread['s_low']:.3g}-"
                           f"{spread['s_high']:.3g}, so the host's noise is at least that")
    return result
