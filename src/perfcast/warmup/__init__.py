"""Warm-up and cool-down detection, stable throughput with confidence (Pilot's methods).

Modules, one concept each:

* :mod:`~perfcast.warmup.edm_pilot` / :mod:`~perfcast.warmup.edm_robust` /
  :mod:`~perfcast.warmup.changepoint`: change points of unit readings (Pilot's EDM_percent, and
  the calibrated robust default);
* :mod:`~perfcast.warmup.segments`: the stable-segment rule and phase labels;
* :mod:`~perfcast.warmup.subsession` / :mod:`~perfcast.warmup.ci`: subsession analysis, CI of
  the arithmetic and harmonic mean, required sample size;
* :mod:`~perfcast.warmup.wps`: the work-per-second regression ``t = alpha + w / v``;
* :mod:`~perfcast.warmup.planner`: work amounts of successive rounds;
* :mod:`~perfcast.warmup.readings`, :mod:`~perfcast.warmup.runner`,
  :mod:`~perfcast.warmup.journal`, :mod:`~perfcast.warmup.session`: running a real command
  round after round (durably journalled, resumable) and analysing it
  (:mod:`~perfcast.warmup.analysis`);
* :mod:`~perfcast.warmup.counters`: the same phases on the counters stage's traces;
* :mod:`~perfcast.warmup.figures`: the Fig. 2-like figure and the paper table.
"""

from perfcast.warmup.changepoint import EdmSettings, change_points
from perfcast.warmup.ci import MeanCI, NotEnoughDataError, mean_ci, required_sample_size
from perfcast.warmup.planner import PlannerSettings, dyadic_fraction, next_round
from perfcast.warmup.segments import Phases, detect_phases, dominant_segment
from perfcast.warmup.subsession import PRESETS, subsession_size
from perfcast.warmup.wps import WpsResult, wps_regression

__all__ = [
    "PRESETS", "EdmSettings", "MeanCI", "NotEnoughDataError", "Phases", "PlannerSettings",
    "WpsResult", "change_points", "detect_phases", "dominant_segment", "dyadic_fraction",
    "mean_ci", "next_round", "required_sample_size", "subsession_size", "wps_regression",
]
