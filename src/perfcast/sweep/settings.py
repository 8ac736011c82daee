"""Settings of the sweep stage: the ``sweep:`` config section as frozen dataclasses.

Each field is a key of the section as ``src/perfcast/schemas/sweep.schema.yaml`` defines it, with no
default of its own: the schema fills every default (:func:`perfcast.settings.validate`) and
:func:`perfcast.settings.build` constructs these classes from the validated mapping. What the
schema cannot check (a placeholder that is not a parameter, the values a range gives, a model
over a column no sensor produces) is checked when :func:`perfcast.sweep.campaign_parser.parse_sweep`
turns these settings into runnable campaigns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ModelSettings:
    """One effect ``y`` modelled on regressors ``x`` (``sweep.campaigns.*.models[]``).

    ``name`` null: ``y~x1+x2``; ``x`` null: every numeric parameter.
    """

    name: str | None
    y: str
    x: tuple[str, ...] | None


@dataclass(frozen=True)
class SensorSettings:
    """``sweep.campaigns.*.sensors``: what a run records besides its times and max RSS.

    ``custom`` maps a column name to a command (read after the run) or to
    ``{command, mode}``; ``heartbeat`` is true, false or a regular expression.
    """

    perf_events: tuple[str, ...]
    rapl: bool
    custom: Mapping[str, Any]
    heartbeat: bool | str


@dataclass(frozen=True)
class SweepCampaignSettings:
    """One campaign of ``sweep.campaigns`` as the config gives it.

    ``parameters`` maps each name to a list of values, a single value or a range
    ``{start, stop, step, log}`` (expanded by :func:`perfcast.sweep.space.parameter_values`);
    ``program``/``command`` name or give the command, ``work`` and ``cwd`` override the
    program's (:class:`perfcast.program.Program`).
    """

    program: str | None
    command: str | None
    work: float | None
    cwd: str | None
    parameters: Mapping[str, Any]
    iterations: int
    before: str
    after: str
    env: Mapping[str, Any]
    timeout_s: float
    fail_fast: bool
    threads: int | str
    mem_mb: int
    sensors: SensorSettings
    derived: Mapping[str, str]
    models: tuple[ModelSettings, ...]
    predict: tuple[Mapping[str, float], ...]


@dataclass(frozen=True)
class ImportSettings:
    """One import of ``sweep.imports``: an ARPE results directory
    (https://github.com/martinamaggio/arpe) or an Extra-P input file (one region and metric)."""

    format: str
    path: str
    parameters: tuple[str, ...]
    region: str | None
    metric: str | None
    derived: Mapping[str, str]
    models: tuple[ModelSettings, ...]
    predict: tuple[Mapping[str, float], ...]


@dataclass(frozen=True)
class NormalFormSettings:
    """``sweep.fit.normal_form``: the normal-form search (:mod:`perfcast.sweep.normalform`).

    ``terms``: the terms p^i log2(p)^j searched, as ``"i:j"`` text; ``max_terms``: terms per
    parameter; ``aggregate``: mean or median per configuration.
    """

    enabled: bool
    aggregate: str
    terms: tuple[str, ...]
    max_terms: int


@dataclass(frozen=True)
class FitSettings:
    """``sweep.fit``: how every campaign's models are fitted (docs/methods/sweep.md).

    ``max_order``: highest univariate polynomial order tried; ``cv_folds``: folds over
    configurations; ``alpha``: intervals at level 1 - alpha; ``forms``: the multivariate OLS
    forms (MATLAB ``regstats`` names); ``normal_form``: the normal-form search.
    """

    max_order: int
    cv_folds: int
    alpha: float
    forms: tuple[str, ...]
    normal_form: NormalFormSettings


@dataclass(frozen=True)
class PaperSettings:
    """``sweep.paper``: the campaigns (or imports) in ``results/paper/sweep_*``; empty = all."""

    campaigns: tuple[str, ...]


@dataclass(frozen=True)
class SweepSettings:
    """The whole ``sweep:`` section."""

    enabled: bool
    campaigns: Mapping[str, SweepCampaignSettings]
    imports: Mapping[str, ImportSettings]
    fit: FitSettings
    paper: PaperSettings
