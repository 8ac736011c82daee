"""Performance metrics and the sensitivity of Eq. (1).

Wang et al. 2017, Eq. (1): ``S = P(restricted) / P(unrestricted)``. For a metric where lower is
better (runtime, latency) performance is its inverse, so ``S = T(unrestricted) / T(restricted)``.
A failed run (killed by the memory limit, timed out, crashed) has no performance: ``S = 0``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

import numpy as np

from perfcast.process import RunResult


class MetricNotFound(ValueError):
    """The run's output does not carry the metric."""


@dataclass(frozen=True)
class Metric:
    """How a run's performance is read.

    ``source="wall_time"``: the run's wall-clock seconds (lower is better).
    ``source="stdout"``: the first group of ``pattern`` on the last stdout line that matches it.
    """

    name: str = "runtime_s"
    source: Literal["wall_time", "stdout"] = "wall_time"
    pattern: str | None = None
    higher_is_better: bool = False

    def __post_init__(self) -> None:
        if self.source == "stdout":
            if not self.pattern:
                raise ValueError(f"metric {self.name}: source stdout needs a pattern")
            if re.compile(self.pattern).groups < 1:
                raise ValueError(f"metric {self.name}: pattern needs a capture group")
        elif self.source != "wall_time":
            raise ValueError(f"metric {self.name}: unknown source {self.source!r}")

    @classmethod
    def from_config(cls, spec: dict | None) -> Metric:
        spec = dict(spec or {})
        if spec.get("source", "wall_time") == "wall_time":
            spec.setdefault("name", "runtime_s")
            spec.setdefault("higher_is_better", False)
        return cls(**spec)

    def extract(self, run: RunResult) -> float:
        """The performance value of one finished run."""
        if self.source == "wall_time":
            return float(run.wall_s)
        rx = re.compile(self.pattern or "")
        for line in reversed(run.stdout.splitlines()):
            m = rx.search(line)
            if m:
                return float(m.group(1))
        raise MetricNotFound(f"metric {self.name}: no stdout line matches {self.pattern!r}")


def sensitivity(performance: float | None, baseline: float, higher_is_better: bool) -> float:
    """Eq. (1) for one run; 0 for a failed run (``None``/NaN/non-positive performance)."""
    if performance is None or not math.isfinite(performance) or performance <= 0:
        return 0.0
    if not (math.isfinite(baseline) and baseline > 0):
        raise ValueError(f"unrestricted performance must be positive and finite, got {baseline}")
    return performance / baseline if higher_is_better else baseline / performance


def sensitivity_array(performance: np.ndarray, baseline: float, higher_is_better: bool
                      ) -> np.ndarray:
    """Vectorised :func:`sensitivity`: NaN or non-positive cells are failed runs (0)."""
    p = np.asarray(performance, dtype=float)
    if not (math.isfinite(baseline) and baseline > 0):
        raise ValueError(f"unrestricted performance must be positive and finite, got {baseline}")
    ok = np.isfinite(p) & (p > 0)
    out = np.zeros_like(p)
    out[ok] = p[ok] / baseline if higher_is_better else baseline / p[ok]
    return out
