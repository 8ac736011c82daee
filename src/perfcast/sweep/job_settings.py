"""The settings of each job of the sweep stage: one frozen dataclass per rule.

Each is built from the checked campaign (:class:`perfcast.sweep.campaign.Campaign`,
:class:`perfcast.sweep.campaign.SweepConfig`) by ``workflow/rules/common/sweep.smk``, passed to
its rule as the one ``settings`` param (:func:`perfcast.settings.as_params`, so Snakemake reruns
exactly the jobs whose settings changed), rebuilt in the rule script by
:func:`perfcast.rulekit.rule_settings` and handed whole to the job's function in
:mod:`perfcast.sweep.rules`. The command line builds the same objects (:mod:`perfcast.cli.sweep`).
No field has a default: every value comes from the validated ``sweep:`` section, whose defaults
live in ``src/perfcast/schemas/sweep.schema.yaml`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from perfcast.sweep.campaign import Analysis, Sensors
from perfcast.sweep.settings import FitSettings
from perfcast.sweep.space import Value


@dataclass(frozen=True)
class SensorCheckSettings:
    """Rule ``sweep_sensors``: the sensors and environment of a campaign's first run (custom
    sensor commands rendered), each tried once before the campaign starts."""

    campaign: str
    sensors: Sensors
    env: Mapping[str, str]


@dataclass(frozen=True)
class RunSettings:
    """Rule ``sweep_run``: one configuration x iteration, its commands rendered.

    ``stop_marker`` and ``failed_record`` are where a failed run of a ``fail_fast`` campaign
    stops the campaign's later runs and keeps its record (files of the invocation, not
    outputs: a failing job's outputs are deleted).
    """

    campaign: str
    point: str
    iteration: int
    parameters: Mapping[str, Value]
    command: str
    before: str
    after: str
    env: Mapping[str, str]
    cwd: str | None
    timeout_s: float
    fail_fast: bool
    sensors: Sensors
    stop_marker: str
    failed_record: str


@dataclass(frozen=True)
class RunTableSettings:
    """Rule ``sweep_run_table``: the campaign's name and its parameter names, in order."""

    campaign: str
    parameters: tuple[str, ...]


@dataclass(frozen=True)
class ImportTableSettings:
    """Rule ``sweep_import`` and ``perfcast sweep-import``: what is read (``format`` ``arpe``:
    an ARPE results directory, https://github.com/martinamaggio/arpe; ``extrap``: an Extra-P
    input file, its ``region`` and ``metric``) and the parameter names, in the source's order."""

    campaign: str
    format: str
    path: str
    parameters: tuple[str, ...]
    region: str | None
    metric: str | None


@dataclass(frozen=True)
class ModelsSettings:
    """Rule ``sweep_models``: what a campaign's models depend on, its parameters, its
    analysis (derived columns, models, prediction points) and the stage's fit settings."""

    campaign: str
    parameters: tuple[str, ...]
    analysis: Analysis
    fit: FitSettings


@dataclass(frozen=True)
class PaperTableSettings:
    """Rule ``sweep_paper_table``: the campaigns (or imports) the paper's table and figure
    show, in order."""

    campaigns: tuple[str, ...]
