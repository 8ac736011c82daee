"""Change points of a series of unit readings, in Pilot's mode or the robust default.

``pilot`` reproduces Pilot's EDM_percent (min segment 30, percent 0.25, degree 1);
``robust`` is the calibrated rank-based method of :mod:`perfcast.warmup.edm_robust`
(no change point on i.i.d. noise in about 99% of series, unbiased locations, O(n log n)).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from perfcast.warmup import edm_pilot, edm_robust

MODES = ("robust", "pilot")


@dataclass(frozen=True)
class EdmSettings:
    """How change points are found.

    ``min_size`` is the shortest segment (None: 30 in pilot mode, 10 in robust mode);
    ``alpha`` and ``min_effect`` apply to the robust mode only.
    """

    mode: str = "robust"
    min_size: int | None = None
    alpha: float = edm_robust.ROBUST_ALPHA
    min_effect: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown EDM mode {self.mode!r} (expected one of {MODES})")
        if self.min_size is not None and self.min_size < 2:
            raise ValueError("min_size must be at least 2")

    @property
    def segment_min(self) -> int:
        if self.min_size is not None:
            return self.min_size
        return edm_pilot.PILOT_MIN_SIZE if self.mode == "pilot" else edm_robust.ROBUST_MIN_SIZE

    def to_dict(self) -> dict:
        d = asdict(self)
        d["min_size"] = self.segment_min
        return d


def change_points(x: np.ndarray, settings: EdmSettings | None = None) -> list[int]:
    """Sorted change points of ``x``: each is the index where a new segment starts."""
    settings = settings or EdmSettings()
    x = np.asarray(x, dtype=float)
    if settings.mode == "pilot":
        return edm_pilot.edm_percent(x, min_size=settings.segment_min)
    return edm_robust.edm_robust(
        x, min_size=settings.segment_min, alpha=settings.alpha, min_effect=settings.min_effect
    )
