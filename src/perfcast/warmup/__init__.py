"""Warm-up and cool-down detection, stable throughput with confidence (Pilot's methods).

Modules, one concept each:

* :mod:`~perfcast.warmup.settings`: the stage's settings, built from the validated ``warmup``
  config section, and the settings of each of its jobs; :mod:`~perfcast.warmup.cli_settings`:
  those of ``perfcast edm|ci|wps|watch|stable``, built from their flags;
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
* :mod:`~perfcast.warmup.truncation`: has the warm-up ended? MSER-5 truncation and
  Heidelberger & Welch's stationarity test of a candidate stable segment;
* :mod:`~perfcast.warmup.watch`: the same analysis, live, on a running benchmark's readings,
  and the stop rule (``perfcast watch``);
* :mod:`~perfcast.warmup.stable`: the stable segment's mean, median and harmonic mean with
  their CIs in one analysis (``perfcast stable``);
* :mod:`~perfcast.warmup.counter_phases`: the same phases on the counters stage's traces;
* :mod:`~perfcast.warmup.figures`: the Fig. 2-like figure and the paper tables;
* :mod:`~perfcast.warmup.rules` / :mod:`~perfcast.warmup.artifacts`: one function per rule of
  the workflow (the paper's artifacts in the latter).

Import from the module that defines a name (nothing is re-exported here), so that importing a
light module (:mod:`~perfcast.warmup.settings`, which the workflow reads when it parses its
rules) does not import numpy, scipy and numba.

References
----------
Y. Li, Y. Gupta, E. L. Miller, D. D. E. Long, "Pilot: A Framework that Understands How to Do
Performance Benchmarks the Right Way", Proc. 24th IEEE Int. Symp. on Modeling, Analysis, and
Simulation of Computer and Telecommunication Systems (MASCOTS 2016), 2016,
doi:10.1109/MASCOTS.2016.31.
"""
