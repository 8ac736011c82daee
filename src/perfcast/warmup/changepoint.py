"""Change points of a series of unit readings, in Pilot's mode or the robust default.

``pilot`` reproduces Pilot's EDM_percent (min segment 30, percent 0.25, degree 1);
``robust`` is the calibrated rank-based method of :mod:`perfcast.warmup.edm_robust`
(no change point on i.i.d. noise in about 99% of series, unbiased locations, O(n log n)).
The settings (:class:`~perfcast.warmup.settings.EdmSettings`) come from ``warmup.edm``,
``warmup.counters.edm`` or the flags of ``perfcast edm``.

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE MASCOTS, 2016,
doi:10.1109/MASCOTS.2016.31.

N. A. James, A. Kejariwal, D. S. Matteson, "Leveraging Cloud Data to Mitigate User Experience
from 'Breaking Bad'", arXiv:1411.7955, 2014 (EDM).

D. S. Matteson, N. A. James, "A Nonparametric Approach for Multiple Change Point Analysis of
Multivariate Data", Journal of the American Statistical Association 109(505):334-345, 2014,
doi:10.1080/01621459.2013.849605 (E-divisive).
"""

from __future__ import annotations

import numpy as np

from perfcast.warmup.settings import EdmSettings

MODES = ("robust", "pilot")

__all__ = ["MODES", "EdmSettings", "change_points"]


def change_points(x: np.ndarray, settings: EdmSettings) -> list[int]:
    """Sorted change points of ``x``: each is the index where a new segment starts.

    Parameters
    ----------
    x : numpy.ndarray
        The readings, in order.
    settings : EdmSettings
        The detector (``mode``) and its parameters.

    Raises
    ------
    ValueError
        an unknown ``settings.mode`` (the schemas allow :data:`MODES` only).

    Examples
    --------
    >>> import numpy as np
    >>> from perfcast.warmup.cli_settings import command_settings
    >>> noise = 0.02 * np.random.default_rng(2).standard_normal(500)
    >>> x = np.r_[np.full(50, 2.0), np.full(400, 1.0), np.full(50, 1.5)] + noise
    >>> change_points(x, command_settings("edm"))
    [50, 450]
    """
    x = np.asarray(x, dtype=float)
    # each detector imported where it is used: Pilot's loads numba (about a second)
    if settings.mode == "pilot":
        from perfcast.warmup import edm_pilot

        return edm_pilot.edm_percent(x, min_size=settings.segment_min)
    if settings.mode == "robust":
        from perfcast.warmup import edm_robust

        return edm_robust.edm_robust(
            x, min_size=settings.segment_min, alpha=settings.alpha, min_effect=settings.min_effect,
            cycles=settings.cycles,
        )
    raise ValueError(f"unknown EDM mode {settings.mode!r} (expected one of {MODES})")
