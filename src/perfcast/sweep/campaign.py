"""A campaign as the config declares it, checked before anything runs (ARPE; docs/methods/sweep.md).

A campaign is a command template with ``{parameter}`` placeholders, the values of each
parameter, ``iterations`` per configuration, optional ``before``/``after`` commands (run around
every execution, as ARPE's before.bash/after.bash: https://github.com/martinamaggio/arpe), an
environment, a timeout, the sensors to record and the models to fit.

The ``sweep:`` section reaches this module validated by ``src/perfcast/schemas/sweep.schema.yaml``
(every default filled in, every key and value checked there); :func:`parse_sweep` builds its
settings (:mod:`perfcast.sweep.settings`) and checks only what a schema cannot express: a
placeholder that is not a parameter, a parameter no template uses, what a range gives, a model
over a column no sensor produces, a ``threads`` parameter that is not a positive integer. Each
is refused with the campaign and key named. Commands are rendered by :mod:`perfcast.program`,
the one renderer of every stage. Whether the host *has* a sensor is checked by
:func:`perfcast.sweep.sensors.check_sensors` before the first run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from perfcast.errors import InputError
from perfcast.program import Program, check_placeholders, render
from perfcast.settings import build
from perfcast.sweep import expressions
from perfcast.sweep.settings import (
    CampaignSettings,
    FitSettings,
    ImportSettings,
    ModelSettings,
    SensorSettings,
    SweepSettings,
)
from perfcast.sweep.space import Value, is_numeric, parameter_values, point_id, product_points

#: placeholders every template may use besides the parameters (``{python}`` is always known)
RESERVED = ("python", "iteration")
#: columns every executed run has (seconds, KiB, cores)
TIME_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util", "max_rss_kb")
#: heartbeat summary columns
HEARTBEAT_COLUMNS = ("hb_count", "hb_first_s", "hb_rate", "hb_interval_mean", "hb_interval_cv")
#: RAPL totals (per-zone columns ``energy_<zone>_j`` are added when the host has them)
RAPL_COLUMNS = ("energy_j", "power_w")
#: effects modelled when a campaign lists no models (ARPE models real, user and sys time)
DEFAULT_TARGETS = ("wall_s", "user_s", "sys_s")
#: the heartbeat lines of ``heartbeat: true``: lines starting with the word ``heartbeat``
HEARTBEAT_LINES = r"^heartbeat\b"
#: when a custom sensor given as a bare command is read (the schema's shorthand)
SHORTHAND_MODE = "after"
#: columns an ARPE import provides (``time -p`` real/user/sys)
ARPE_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util")


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

    def to_params(self) -> dict[str, Any]:
        """Plain data for a rule's ``params:`` (only what changes the measurement)."""
        return {
            "perf_events": list(self.perf_events),
            "rapl": self.rapl,
            "custom": {k: {"command": v.command, "mode": v.mode} for k, v in self.custom.items()},
            "heartbeat": self.heartbeat,
        }


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

    def to_params(self) -> dict[str, Any]:
        """Plain data for a rule's ``params:``; ``perfcast.settings.build(Analysis, d)``
        rebuilds the object."""
        return {
            "derived": dict(self.derived),
            "models": [{"name": m.name, "y": m.y, "x": list(m.x)} for m in self.models],
            "predict": [dict(p) for p in self.predict],
        }


@dataclass(frozen=True)
class Campaign:
    """A checked campaign: its parameters expanded, its templates known to be complete.

    ``constants`` are placeholders that are not parameters (the program's ``{work}`` when
    ``work`` is not swept); ``threads`` is a number of cores or the name of the parameter
    giving it.
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
        template : a command (``shell=True``: values shell-quoted) or an environment value
            (``shell=False``).
        point : the configuration; each value is substituted as the text of its run-directory
            name (``str(value)``: ``1.0`` stays ``1.0``).
        iteration : the run's iteration (``{iteration}``, from 1).
        where : the template's key, for an error message.

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

    def run_params(self, pid: str, iteration: int) -> dict[str, Any]:
        """Everything one run needs, and nothing that another configuration changes: a rule's
        ``params:`` built from it reruns exactly the runs whose settings changed.

        Returns
        -------
        dict
            ``campaign``, ``point``, ``iteration``, ``parameters``, the rendered ``command``,
            ``before``, ``after`` and ``env``, ``timeout_s``, ``fail_fast`` and ``sensors``
            (custom sensor commands rendered): the input of
            :func:`perfcast.sweep.runner.run_point`.
        """
        point = self.point(pid)
        return {
            "campaign": self.name,
            "point": pid,
            "iteration": iteration,
            "parameters": dict(point),
            "command": self.render(self.command, point, iteration),
            "before": self.render(self.before, point, iteration, where="before"),
            "after": self.render(self.after, point, iteration, where="after"),
            "env": {k: self.render(v, point, iteration, shell=False, where=f"env {k}")
                    for k, v in self.env.items()},
            "timeout_s": self.timeout_s,
            "fail_fast": self.fail_fast,
            "sensors": self.sensors_params(point, iteration),
        }

    def sensors_params(self, point: Mapping[str, Value], iteration: int) -> dict[str, Any]:
        """:meth:`Sensors.to_params` with the custom sensors' commands rendered for one run."""
        d = self.sensors.to_params()
        d["custom"] = {k: {"command": self.render(v["command"], point, iteration,
                                                  where=f"sensor {k}"),
                           "mode": v["mode"]} for k, v in d["custom"].items()}
        return d

    def numeric_parameters(self) -> list[str]:
        """The parameters whose values are all numbers (the ones a model may use)."""
        return [n for n, v in self.parameters.items() if is_numeric(v)]


@dataclass(frozen=True)
class ImportSpec:
    """A campaign run by the original ARPE scripts, to be read instead of run."""

    name: str
    path: str
    parameters: tuple[str, ...]
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


# --------------------------------------------------------------------------------------------
# parsing


def _check_templates(name: str, templates: Mapping[str, str], allowed: set[str],
                     parameters: Sequence[str]) -> None:
    """Every placeholder known (:func:`perfcast.program.check_placeholders`), every parameter
    used somewhere."""
    used: set[str] = set()
    for key, tpl in templates.items():
        used |= check_placeholders(tpl, allowed, where=f"campaign {name!r}, {key}")
    unused = [p for p in parameters if p not in used]
    if unused:
        raise InputError(None, f"campaign {name!r}: parameter(s) {unused} appear in no "
                               "command, env, before, after or sensor template",
                         expected="every swept parameter to change what runs")


def parse_sensors(name: str, settings: SensorSettings) -> Sensors:
    """A campaign's sensors: the custom shorthand expanded, ``heartbeat`` as a pattern.

    Raises
    ------
    InputError
        two perf events giving the same column, or a heartbeat pattern that is not a
        regular expression.
    """
    where = f"campaign {name!r}, sensors"
    events = tuple(settings.perf_events)
    if len({perf_column(e) for e in events}) != len(events):
        raise InputError(None, f"{where}: duplicate perf events in {list(events)}")
    custom = {
        cname: CustomSensor(command=spec, mode=SHORTHAND_MODE) if isinstance(spec, str)
        else CustomSensor(command=spec["command"], mode=spec["mode"])
        for cname, spec in settings.custom.items()
    }
    hb = settings.heartbeat
    heartbeat = HEARTBEAT_LINES if hb is True else None if hb is False else hb
    if heartbeat is not None:
        try:
            re.compile(heartbeat)
        except re.error as exc:
            raise InputError(None, f"{where}: heartbeat pattern {heartbeat!r}: {exc}",
                             expected="a Python regular expression") from exc
    return Sensors(perf_events=events, rapl=settings.rapl, custom=custom, heartbeat=heartbeat)


def parse_analysis(where: str, derived: Mapping[str, str], models: Sequence[ModelSettings],
                   predict: Sequence[Mapping[str, Any]], parameters: Sequence[str],
                   numeric_parameters: Sequence[str], columns: Sequence[str]) -> Analysis:
    """Derived columns and model specs, every name checked against the columns that exist.

    Parameters
    ----------
    where : names the campaign in messages.
    derived, models, predict : the campaign's settings of those keys.
    parameters, numeric_parameters : all parameter names, and the numeric ones (the default
        regressors, and the keys a prediction point gives).
    columns : the run-table columns the sensors produce.

    Returns
    -------
    Analysis
        With no models given: ``wall_s``, ``user_s`` and ``sys_s`` on every numeric
        parameter (ARPE's time effects); a model without ``name`` is named ``y~x1+x2``.

    Raises
    ------
    InputError
        a derived column that shadows a column or uses an unknown one, a model over an unknown
        or non-numeric column, duplicate model names, or a prediction point that does not give
        exactly the numeric parameters.
    """
    known = set(columns) | set(parameters)
    checked: dict[str, str] = {}
    for dname, expr in derived.items():
        if dname in known:
            raise InputError(None, f"{where}, derived: {dname!r} is not a new column name",
                             expected="a name not already a parameter or sensor column")
        names = expressions.expression_names(str(expr), where=f"{where}, derived {dname!r}")
        missing = sorted(names - known)
        if missing:
            raise InputError(None, f"{where}, derived {dname!r}: unknown column(s) {missing}",
                             expected=f"parameters, sensor columns or earlier derived "
                                      f"columns: {sorted(known)}")
        checked[dname] = str(expr)
        known.add(dname)
    specs = list(models) or [ModelSettings(name=None, y=y, x=None)
                             for y in DEFAULT_TARGETS if y in known]
    out = []
    seen = set()
    for i, m in enumerate(specs):
        x = tuple(m.x or numeric_parameters)
        mname = m.name or f"{m.y}~{'+'.join(x)}"
        if mname in seen:
            raise InputError(None, f"{where}, models[{i}]: duplicate model name {mname!r}")
        seen.add(mname)
        for col in (m.y, *x):
            if col not in known:
                raise InputError(None, f"{where}, models[{i}]: unknown column {col!r}",
                                 expected=f"one of {sorted(known)}")
        if not x:
            raise InputError(None, f"{where}, models[{i}]: no regressors",
                             expected="x: a list of numeric parameters or derived columns")
        if m.y in x:
            raise InputError(None, f"{where}, models[{i}]: {m.y!r} is both effect and regressor")
        non_numeric = [c for c in x if c in parameters and c not in numeric_parameters]
        if non_numeric:
            raise InputError(None, f"{where}, models[{i}]: parameter(s) {non_numeric} are not "
                                   "numeric", expected="numeric regressors")
        out.append(ModelSpec(name=mname, y=m.y, x=x))
    points = []
    for i, p in enumerate(predict):
        missing = [n for n in numeric_parameters if n not in p]
        extra = [n for n in p if n not in numeric_parameters]
        if missing or extra:
            raise InputError(None, f"{where}, predict[{i}]: give exactly the numeric "
                                   f"parameters (missing {missing}, unknown {extra})",
                             expected=f"keys {list(numeric_parameters)}")
        points.append(dict(p))
    return Analysis(derived=checked, models=tuple(out), predict=tuple(points))


def _program(name: str, settings: CampaignSettings,
             programs: Mapping[str, Any]) -> Program:
    """The campaign's program (:meth:`perfcast.program.Program.from_config`): its own
    ``command``, or the ``program:`` it names with ``command`` overriding; env is merged
    separately (the campaign's keys over the program's)."""
    if settings.program is None and settings.command is None and name not in programs:
        raise InputError(None, f"campaign {name!r}: no command",
                         expected="command: or program: (a name in the top-level programs:)")
    return Program.from_config(name, {"program": settings.program, "command": settings.command},
                               programs, stage="sweep campaign")


def parse_campaign(name: str, settings: CampaignSettings,
                   programs: Mapping[str, Any] | None = None) -> Campaign:
    """Check one campaign and expand its parameters (see the module docstring).

    Parameters
    ----------
    name : the campaign's name (a results directory; the schema checks it).
    settings : its settings, built from the validated section.
    programs : the top-level ``programs:`` map (``program:`` names one of it).

    Returns
    -------
    Campaign

    Raises
    ------
    InputError
        an unknown program, a reserved parameter name (``python``, ``iteration``, or ``work``
        when the program gives ``{work}``), an unknown placeholder, a parameter no template
        uses, a bad range, a ``threads: "{p}"`` whose values are not positive integers, a
        parameter named like a sensor column, or a bad model (:func:`parse_analysis`).
    """
    where = f"campaign {name!r}"
    program = _program(name, settings, programs or {})
    env = {**program.env, **{k: str(v) for k, v in settings.env.items()}}
    parameters = {p: parameter_values(p, v) for p, v in settings.parameters.items()}
    # the program's {work}, unless the campaign sweeps it
    constants = {"work": program.work} if program.work is not None \
        and "work" not in parameters else {}
    for p in parameters:
        if p in RESERVED or p in constants:
            raise InputError(None, f"{where}: parameter name {p!r} is reserved")
    sensors = parse_sensors(name, settings.sensors)
    templates = {"command": program.command, "before": settings.before, "after": settings.after}
    templates |= {f"env {k}": v for k, v in env.items()}
    templates |= {f"sensor {k}": s.command for k, s in sensors.custom.items()}
    _check_templates(name, templates, {*parameters, *RESERVED, *constants}, list(parameters))
    threads = settings.threads
    if isinstance(threads, str):
        tname = threads.strip()[1:-1]  # "{name}", as the schema's pattern says
        if tname not in parameters or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1
                for v in parameters[tname]):
            raise InputError(None, f"{where}: threads = {threads!r}",
                             expected="an integer >= 1 or '{param}' naming a parameter whose "
                                      "values are positive integers")
        threads = tname
    columns = [*TIME_COLUMNS, "returncode", *sensors.columns()]
    clash = sorted(set(parameters) & set(columns))
    if clash:
        raise InputError(None, f"{where}: parameter(s) {clash} clash with sensor columns")
    numeric = [n for n, v in parameters.items() if is_numeric(v)]
    analysis = parse_analysis(where, settings.derived, settings.models, settings.predict,
                              list(parameters), numeric, columns)
    return Campaign(
        name=name, command=program.command, parameters=parameters,
        iterations=settings.iterations, before=settings.before, after=settings.after, env=env,
        timeout_s=float(settings.timeout_s), fail_fast=settings.fail_fast, threads=threads,
        mem_mb=settings.mem_mb, sensors=sensors, analysis=analysis, constants=constants,
    )


def parse_import(name: str, settings: ImportSettings) -> ImportSpec:
    """Check one ARPE import: its parameters (numeric or categorical, known only once read:
    a categorical one is left out of the regressors and modelled per level) and its models
    over ARPE's columns.

    Raises
    ------
    InputError
        a parameter named like an ARPE column, or a bad model (:func:`parse_analysis`).
    """
    where = f"import {name!r}"
    params = tuple(settings.parameters)
    clash = [p for p in params if p in ARPE_COLUMNS]
    if clash:
        raise InputError(None, f"{where}: parameter name(s) {clash} are ARPE's columns",
                         expected=f"names other than {list(ARPE_COLUMNS)}")
    analysis = parse_analysis(where, settings.derived, settings.models, settings.predict,
                              list(params), list(params), [*ARPE_COLUMNS, "pidstat_cpu_util"])
    return ImportSpec(name=name, path=settings.path, parameters=params, analysis=analysis)


def parse_sweep(section: Mapping[str, Any] | None,
                programs: Mapping[str, Any] | None = None) -> SweepConfig:
    """Check the whole ``sweep:`` section: every campaign, import and the paper's choice.

    Parameters
    ----------
    section : the section as validated by ``src/perfcast/schemas/sweep.schema.yaml`` (the
        workflow's ``config["sweep"]``, or ``perfcast.settings.validate(section, "sweep")``);
        None: no sweep (no campaigns, no imports).
    programs : the top-level ``programs:`` map.

    Returns
    -------
    SweepConfig
        ``paper_campaigns`` is ``sweep.paper.campaigns``, or every campaign and import sorted.

    Raises
    ------
    InputError
        what :func:`parse_campaign` and :func:`parse_import` refuse, a name used both as
        campaign and as import, or a paper campaign that is neither; a section not validated
        (a missing key).
    """
    if section is None:
        return SweepConfig(campaigns={}, imports={}, fit=None, paper_campaigns=())
    settings = build(SweepSettings, section, where="sweep")
    campaigns = {n: parse_campaign(n, s, programs) for n, s in settings.campaigns.items()}
    imports = {n: parse_import(n, s) for n, s in settings.imports.items()}
    both = sorted(set(campaigns) & set(imports))
    if both:
        raise InputError(None, f"sweep: {both} named both as campaign and as import")
    paper = tuple(settings.paper.campaigns) or tuple(sorted([*campaigns, *imports]))
    unknown = [n for n in paper if n not in campaigns and n not in imports]
    if unknown:
        raise InputError(None, f"sweep.paper.campaigns: {unknown} are neither campaigns nor "
                               "imports", expected=f"some of {sorted([*campaigns, *imports])}")
    return SweepConfig(campaigns=campaigns, imports=imports, fit=settings.fit,
                       paper_campaigns=paper)
