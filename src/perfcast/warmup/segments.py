"""Which readings are warm-up, stable and cool-down: Pilot's dominant-segment rule.

The change points cut a round's unit readings into segments. Pilot takes as the stable phase
the one segment longer than ``floor(n / 2)`` readings (it is then also the longest); readings
before it are warm-up, readings after it cool-down. With no such segment the round has no
stable phase (Pilot ingests none of its readings). Fewer than 30 readings are too few to
split: all of them are kept as stable.

``fallback="edges"`` is an option for long traces with several genuine phases (program phases
in a counter trace), where no segment dominates: non-stable phases are then looked for only at
the edges. Warm-up ends at the last change point within the first ``edge_fraction`` of the
readings, cool-down starts at the first change point within the last ``edge_fraction``, and
everything between (program phases included) is stable.

``fallback="final"`` is the steady state of the virtual-machine warm-up literature (Barrett et
al. 2017; Traini et al. 2023 on JMH forks): where no segment dominates, the last segment is the
stable phase if it holds at least ``final_share`` of the readings (default a sixth: their 500
of 3,000 iterations), everything before it warm-up. A benchmark whose performance keeps
switching between levels ends in one of them; Pilot's rule calls that no stable phase.

References
----------
E. Barrett, C. F. Bolz-Tereick, R. Killick, S. Mount, L. Tratt, "Virtual machine warmup blows
hot and cold", Proc. ACM Program. Lang. 1 (OOPSLA), article 52, 2017, doi:10.1145/3133876.

L. Traini, V. Cortellessa, D. Di Pompeo, M. Tucci, "Towards effective assessment of steady
state performance in Java software: are we there yet?", Empirical Software Engineering 28,
article 13, 2023.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perfcast.warmup.changepoint import EdmSettings, change_points

#: fewer readings than this are not split (Pilot: "fewer than 30 readings: keep all")
MIN_READINGS = 30
PHASES = ("setup", "warmup", "stable", "cooldown", "unstable")
FALLBACKS = ("none", "edges", "final")
#: ``fallback="final"``: the last segment is stable if it holds at least this share of readings
FINAL_SHARE = 1 / 6


def segments(n: int, cps: list[int]) -> list[tuple[int, int]]:
    """``[begin, end)`` of each segment between the change points."""
    bounds = [0, *sorted(cps), n]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b > a]


def dominant_segment(n: int, cps: list[int]) -> tuple[int, int] | None:
    """The segment longer than ``n // 2`` readings, or None."""
    for a, b in segments(n, cps):
        if b - a > n // 2:
            return a, b
    return None


@dataclass(frozen=True)
class Phases:
    """Phases of one series of ``n`` readings; ``stable`` is ``[begin, end)`` or None."""

    n: int
    change_points: tuple[int, ...]
    stable: tuple[int, int] | None
    rule: str  # dominant | short | edges | none

    @property
    def has_stable(self) -> bool:
        return self.stable is not None

    @property
    def warmup_len(self) -> int | None:
        return None if self.stable is None else self.stable[0]

    @property
    def cooldown_len(self) -> int | None:
        return None if self.stable is None else self.n - self.stable[1]

    @property
    def stable_len(self) -> int:
        return 0 if self.stable is None else self.stable[1] - self.stable[0]

    def labels(self) -> np.ndarray:
        """Per reading: warmup / stable / cooldown, or unstable when there is no stable phase."""
        out = np.full(self.n, "unstable", dtype=object)
        if self.stable is not None:
            a, b = self.stable
            out[:a] = "warmup"
            out[a:b] = "stable"
            out[b:] = "cooldown"
        return out

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "change_points": list(self.change_points),
            "stable": (None if self.stable is None else  # the key edm, watch, stable use
                       {"begin": self.stable[0], "end": self.stable[1]}),
            "rule": self.rule,
            "warmup_len": self.warmup_len,
            "cooldown_len": self.cooldown_len,
        }


def detect_phases(
    x: np.ndarray,
    edm: EdmSettings,
    *,
    min_readings: int = MIN_READINGS,
    fallback: str = "none",
    edge_fraction: float | None = None,
    final_share: float = FINAL_SHARE,
) -> Phases:
    """Change points of ``x`` and the stable phase they imply (see the module docstring).

    Parameters
    ----------
    x : numpy.ndarray
        The readings, in order.
    edm : EdmSettings
        How change points are found (:func:`perfcast.warmup.changepoint.change_points`).
    min_readings : int, default=MIN_READINGS
        Fewer readings are not split; all of them are stable (Pilot's rule).
    fallback : str, default='none'
        When no segment dominates: ``"none"`` (no stable phase, Pilot's rule),
        ``"edges"`` (warm-up and cool-down at the edges only; ``warmup.counters.fallback``)
        or ``"final"`` (the last segment, if it holds ``final_share`` of the readings).
    edge_fraction : float or None, default=None
        With ``fallback="edges"``: warm-up and cool-down lie within this fraction of
        either end (``warmup.counters.edge_fraction``).
    final_share : float, default=FINAL_SHARE
        With ``fallback="final"``: the last segment's smallest share of the readings.

    Returns
    -------
    Phases
        its ``rule`` says which case applied: ``short``, ``dominant``, ``edges``, ``final``
        or ``none``.

    Raises
    ------
    ValueError
        an unknown ``fallback``, or ``"edges"`` without ``edge_fraction``.

    References
    ----------
    Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to
    Do Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
    doi:10.1109/MASCOTS.2016.31 (the dominant-segment rule).

    Examples
    --------
    A warm-up of 50 readings, 400 stable ones and a cool-down of 50:

    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> noise = 0.02 * np.random.default_rng(2).standard_normal(500)
    >>> x = np.r_[np.full(50, 2.0), np.full(400, 1.0), np.full(50, 1.5)] + noise
    >>> ph = detect_phases(x, command_settings("edm"))
    >>> ph.change_points, ph.stable, ph.rule, ph.warmup_len, ph.cooldown_len
    ((50, 450), (50, 450), 'dominant', 50, 50)

    Two levels in turn, the last one 200 readings long: no segment dominates; the last one is
    the stable phase with ``fallback="final"``:

    >>> y = np.r_[np.full(150, 1.0), np.full(150, 1.2), np.full(100, 1.0), np.full(200, 1.2)]
    >>> y = y + 0.01 * np.random.default_rng(3).standard_normal(600)
    >>> detect_phases(y, command_settings("edm")).rule
    'none'
    >>> ph = detect_phases(y, command_settings("edm"), fallback="final")
    >>> ph.stable, ph.rule, ph.warmup_len
    ((400, 600), 'final', 400)
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"unknown fallback {fallback!r} (expected one of {FALLBACKS})")
    if fallback == "edges" and edge_fraction is None:
        raise ValueError("fallback 'edges' needs edge_fraction")
    x = np.asarray(x, dtype=float)
    n = int(x.shape[0])
    if n < min_readings:
        return Phases(n, (), (0, n) if n else None, "short")
    cps = change_points(x, edm)
    dom = dominant_segment(n, cps)
    if dom is not None:
        return Phases(n, tuple(cps), dom, "dominant")
    if fallback == "edges":
        begin = max((c for c in cps if c <= edge_fraction * n), default=0)
        end = min((c for c in cps if c >= (1 - edge_fraction) * n), default=n)
        return Phases(n, tuple(cps), (begin, end), "edges")
    if fallback == "final" and cps and n - cps[-1] >= final_share * n:
        return Phases(n, tuple(cps), (cps[-1], n), "final")
    return Phases(n, tuple(cps), None, "none")
