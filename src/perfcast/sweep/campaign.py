"""A checked campaign: what runs, with which values and sensors, and what is fitted (ARPE;
docs/methods/sweep.md).

A campaign is a command template with ``{parameter}`` placeholders, the values of each
parameter, ``iterations`` per configuration, optional ``before``/``after`` commands (run around
every execution, as ARPE's before.bash/after.bash: https://github.com/martinamaggio/arpe), an
environment, a timeout, the sensors to record and the models to fit. These classes hold a
campaign once :mod:`perfcast.sweep.campaign_parser` has checked the ``sweep:`` section; this
module expands a campaign into its configurations and renders each run's commands
(:mod:`perfcast.program`, the one renderer of every stage).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from perfcast.errors import InputError
from perfcast.program import render
from perfcast.sweep.space import Value, is_numeric, point_id, product_points

if TYPE_CHECKING:
    from perfcast.sweep.job_settings import (
        ImportTableSettings,
        ModelsSettings,
        PaperTableSettings,
        RunSettings,
        RunTableSettings,
        SensorCheckSettings,
    )
    from perfcast.sweep.settings import FitSettings

#: columns every executed run has (seconds, KiB, cores)
TIME_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util", "max_rss_kb")
#: heartbeat summary columns
HEARTBEAT_COLUMNS = ("hb_count", "hb_first_s", "hb_rate", "hb_interval_mean", "hb_interval_cv")
#: RAPL totals (per-zone columns ``energy_<zone>_j`` are added when the host has them)
RAPL_COLUMNS = ("energy_j", "power_w")
#: columns an ARPE import provides (``time -p`` real/user/sys)
ARPE_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util")
#: the measured column of an Extra-P import (one row per repetition)
EXTRAP_COLUMNS = ("value",)
#: the columns every run table has beside its parameters and measurements
RUN_TABLE_COLUMNS = ("campaign", "point", "iteration", "status", "returncode", "signal",
                     "timed_out", "source", "n_errors")


def perf_column(event: str) -> str:
    """Column name of a perf event: ``task-clock`` -> ``perf_task_clock``,
    ``cha/event=0x34,umask=0x1fe001/`` -> ``perf_cha_event_0x34_umask_0x1fe001``."""
    return "perf_" + re.sub(r"[^A-Za-z0-9]+", "_", event).strip("_").lower()


@dataclass(frozen=True)
class CustomSensor:
    """A command whose printed number is recorded ``before``/``after`` the run, or the
    ``delta`` of two readings around it (a counter such as an energy meter)."""

    command: str
    mode: str


@dataclass(frozen=True)
class Sensors:
    """Which sensors a campaign records besides wall/user/sys/max-RSS/CPU utilisation.

    ``heartbeat`` is the regular expression of a heartbeat line, or None for no heartbeats.
    """

    perf_events: tuple[str, ...]
    rapl: bool
    custom: Mapping[str, CustomSensor]
    heartbeat: str | None

    def columns(self) -> list[str]:
        """The run-table columns these sensors add."""
        cols = [perf_column(e) for e in self.perf_events]
        if self.rapl:
            cols += list(RAPL_COLUMNS)
        cols += list(self.custom)
        if self.heartbeat is not None:
            cols += list(HEARTBEAT_COLUMNS)
            if "value" in re.compile(self.heartbeat).groupindex:
                cols.append("hb_value_mean")
        return cols


@dataclass(frozen=True)
class ModelSpec:
    """One effect ``y`` modelled from regressors ``x`` (parameters or derived columns)."""

    name: str
    y: str
    x: tuple[str, ...]


@dataclass(frozen=True)
class Analysis:
    """What is fitted on a campaign's run table (shared by run and imported campaigns):
    derived columns (name -> expression), the models, and extra prediction points."""

    derived: Mapping[str, str]
    models: tuple[ModelSpec, ...]
    predict: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Campaign:
    """A checked campaign: its parameters expanded, its templates known to be complete.

    ``constants`` are placeholders that are not parameters (the workflow's ``{seed}`` and the
    program's ``{work}``, each unless swept); ``cwd`` is where the runs and their ``before`` and
    ``after`` commands run (None: the workflow's working directory); ``threads`` is a number of
    cores or the name of the parameter giving it.
    """

    name: str
    command: str
    parameters: Mapping[str, list[Value]]
    iterations: int
    before: str
    after: str
    env: Mapping[str, str]
    timeout_s: float
    fail_fast: bool
    threads: int | str
    mem_mb: int
    sensors: Sensors
    analysis: Analysis
    constants: Mapping[str, Any]
    cwd: str | None

    @cached_property
    def _index(self) -> dict[str, dict[str, Value]]:
        return {point_id(p): p for p in product_points(self.parameters)}

    def points(self) -> list[dict[str, Value]]:
        """Every configuration, the first parameter varying slowest."""
        return [dict(p) for p in self._index.values()]

    def point_ids(self) -> list[str]:
        """Every configuration's run-directory name (:func:`perfcast.sweep.space.point_id`)."""
        return list(self._index)

    def point(self, pid: str) -> dict[str, Value]:
        """The configuration a run-directory name stands for.

        Raises
        ------
        InputError
            ``pid`` names no configuration of this campaign.
        """
        try:
            return dict(self._index[pid])
        except KeyError:
            raise InputError(None, f"campaign {self.name!r}: no configuration {pid!r}") from None

    def render(self, template: str, point: Mapping[str, Value], iteration: int, *,
               shell: bool = True, where: str = "command") -> str:
        """``template`` rendered by :func:`perfcast.program.render` for one run.

        Parameters
        ----------
        template : str
            A command (``shell=True``: values shell-quoted) or an environment value
            (``shell=False``).
        point : mapping of str to Value
            The configuration; each value is substituted as the text of its run-directory
            name (``str(value)``: ``1.0`` stays ``1.0``).
        iteration : int
            The run's iteration (``{iteration}``, from 1).
        shell : bool, default=True
            Shell-quote the values (a command), or not (an environment value).
        where : str, default="command"
            The template's key, for an error message.

        Returns
        -------
        str
            The template with ``{python}`` (this interpreter), ``{iteration}``, the
            parameters and the constants filled in.
        """
        values = {**self.constants, **{k: str(v) for k, v in point.items()},
                  "iteration": iteration}
        return render(template, values, shell=shell, where=f"campaign {self.name!r}, {where}")

    def job_threads(self, point: Mapping[str, Value]) -> int:
        """Cores one run of ``point`` asks the scheduler for."""
        if isinstance(self.threads, int):
            return self.threads
        return max(1, int(point[self.threads]))

    def run_settings(self, pid: str, iteration: int, *, stop_marker: str,
                     failed_record: str) -> RunSettings:
        """Everything one run needs, and nothing that another configuration changes: the
        ``settings`` param of rule ``sweep_run`` built from it reruns exactly the runs whose
        settings changed.

        Parameters
        ----------
        pid : str
            The configuration's run-directory name (:meth:`point_ids`).
        iteration : int
            The run's iteration, from 1.
        stop_marker : str
            Where a ``fail_fast`` failure stops the campaign (a file of this invocation).
        failed_record : str
            Where the record of a failed ``fail_fast`` run is kept.

        Returns
        -------
        RunSettings
            The rendered ``command``, ``before``, ``after`` and ``env``, the sensors (custom
            commands rendered) and the campaign's limits: the input of
            :func:`perfcast.sweep.runner.run_point`.

        Examples
        --------
        >>> c = Campaign(name="demo", command="prog --n {n}", parameters={"n": [1, 2]},
        ...              iterations=1, before="", after="", env={"N": "{n}"}, timeout_s=60.0,
        ...              fail_fast=False, threads=1, mem_mb=100,
        ...              sensors=Sensors((), False, {}, None),
        ...              analysis=Analysis({}, (), ()), constants={}, cwd=None)
        >>> c.point_ids()
        ['n~1', 'n~2']
        >>> s = c.run_settings("n~2", 1, stop_marker="STOP.json", failed_record="f.json")
        >>> s.command, dict(s.env)
        ('prog --n 2', {'N': '2'})
        """
        from perfcast.sweep.job_settings import RunSettings

        point = self.point(pid)
        return RunSettings(
            campaign=self.name,
            point=pid,
            iteration=iteration,
            parameters=dict(point),
            command=self.render(self.command, point, iteration),
            before=self.render(self.before, point, iteration, where="before"),
            after=self.render(self.after, point, iteration, where="after"),
            env=self.run_env(point, iteration),
            cwd=self.cwd,
            timeout_s=self.timeout_s,
            fail_fast=self.fail_fast,
            sensors=self.run_sensors(point, iteration),
            stop_marker=stop_marker,
            failed_record=failed_record,
        )

    def run_env(self, point: Mapping[str, Value], iteration: int) -> dict[str, str]:
        """The campaign's environment rendered for one run (values are not shell-quoted)."""
        return {k: self.render(v, point, iteration, shell=False, where=f"env {k}")
                for k, v in self.env.items()}

    def run_sensors(self, point: Mapping[str, Value], iteration: int) -> Sensors:
        """The campaign's sensors with the custom sensors' commands rendered for one run."""
        custom = {k: CustomSensor(command=self.render(v.command, point, iteration,
                                                      where=f"sensor {k}"), mode=v.mode)
                  for k, v in self.sensors.custom.items()}
        return Sensors(perf_events=self.sensors.perf_events, rapl=self.sensors.rapl,
                       custom=custom, heartbeat=self.sensors.heartbeat)

    def sensor_check_settings(self) -> SensorCheckSettings:
        """What the sensor check before the campaign needs (rule ``sweep_sensors``): the
        sensors and environment of its first run."""
        from perfcast.sweep.job_settings import SensorCheckSettings

        point = self.point(self.point_ids()[0])
        return SensorCheckSettings(campaign=self.name, sensors=self.run_sensors(point, 1),
                                   env=self.run_env(point, 1))

    def numeric_parameters(self) -> list[str]:
        """The parameters whose values are all numbers (the ones a model may use)."""
        return [n for n, v in self.parameters.items() if is_numeric(v)]


@dataclass(frozen=True)
class ImportSpec:
    """Measurements taken elsewhere, read instead of run: an ARPE results directory
    (``format`` ``arpe``) or one region and metric of an Extra-P input file (``extrap``)."""

    name: str
    format: str
    path: str
    parameters: tuple[str, ...]
    region: str | None
    metric: str | None
    analysis: Analysis


@dataclass(frozen=True)
class SweepConfig:
    """Every checked campaign and import, the fit settings and the paper's campaigns."""

    campaigns: Mapping[str, Campaign]
    imports: Mapping[str, ImportSpec]
    fit: FitSettings | None
    paper_campaigns: tuple[str, ...]

    def spec(self, name: str) -> Campaign | ImportSpec:
        """The campaign or import called ``name``."""
        return self.campaigns[name] if name in self.campaigns else self.imports[name]

    def parameter_names(self, name: str) -> list[str]:
        """The parameter names of campaign or import ``name``, in order."""
        return list(self.spec(name).parameters)

    def run_table_settings(self, name: str) -> RunTableSettings:
        """Rule ``sweep_run_table`` of campaign ``name``."""
        from perfcast.sweep.job_settings import RunTableSettings

        return RunTableSettings(campaign=name, parameters=tuple(self.parameter_names(name)))

    def import_settings(self, name: str) -> ImportTableSettings:
        """Rule ``sweep_import`` of import ``name``."""
        from perfcast.sweep.job_settings import ImportTableSettings

        spec = self.imports[name]
        return ImportTableSettings(campaign=name, format=spec.format, path=spec.path,
                                   parameters=spec.parameters, region=spec.region,
                                   metric=spec.metric)

    def models_settings(self, name: str) -> ModelsSettings:
        """Rule ``sweep_models`` of campaign or import ``name``.

        Raises
        ------
        InputError
            no ``sweep:`` section was given (no fit settings).
        """
        from perfcast.sweep.job_settings import ModelsSettings

        if self.fit is None:
            raise InputError(None, "sweep: no section, no fit settings")
        spec = self.spec(name)
        return ModelsSettings(campaign=name, parameters=tuple(spec.parameters),
                              analysis=spec.analysis, fit=self.fit)

    def paper_table_settings(self) -> PaperTableSettings:
        """Rule ``sweep_paper_table``: the campaigns the paper shows."""
        from perfcast.sweep.job_settings import PaperTableSettings

        return PaperTableSettings(campaigns=tuple(self.paper_campaigns))
