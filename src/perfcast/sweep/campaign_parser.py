"""The ``sweep:`` section -> checked campaigns and imports (ARPE; docs/methods/sweep.md).

The ``sweep:`` section reaches this module validated by ``src/perfcast/schemas/sweep.schema.yaml``
(every default filled in, every key and value checked there); :func:`parse_sweep` builds its
settings (:mod:`perfcast.sweep.settings`) and checks only what a schema cannot express: a
placeholder that is not a parameter, a parameter no template uses, what a range gives, a model
over a column no sensor produces, a ``threads`` parameter that is not a positive integer. Each
is refused with the campaign and key named. The result is the campaign model of
:mod:`perfcast.sweep.campaign`. Whether the host *has* a sensor is checked by
:func:`perfcast.sweep.sensors.check_sensors` before the first run.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from perfcast.errors import InputError
from perfcast.program import Program, check_placeholders, stage_placeholders
from perfcast.settings import NAME_MAX, build
from perfcast.sweep import expressions
from perfcast.sweep.campaign import (
    ARPE_COLUMNS,
    EXTRAP_COLUMNS,
    RUN_TABLE_COLUMNS,
    TIME_COLUMNS,
    Analysis,
    Campaign,
    CustomSensor,
    ImportSpec,
    ModelSpec,
    Sensors,
    SweepConfig,
    perf_column,
)
from perfcast.sweep.settings import (
    ImportSettings,
    ModelSettings,
    SensorSettings,
    SweepCampaignSettings,
    SweepSettings,
)
from perfcast.sweep.space import is_numeric, parameter_values

#: placeholders a campaign may sweep: a parameter of that name supplies it (over the program's
#: ``work`` or the workflow's ``seed``)
SWEPT_PLACEHOLDERS = ("work", "seed")
#: placeholder names no parameter may take (every run is given them)
RESERVED = tuple(p for p in stage_placeholders("sweep") if p not in SWEPT_PLACEHOLDERS)

#: effects modelled when a campaign lists no models (ARPE models real, user and sys time)
DEFAULT_TARGETS = ("wall_s", "user_s", "sys_s")
#: the heartbeat lines of ``heartbeat: true``: lines starting with the word ``heartbeat``
HEARTBEAT_LINES = r"^heartbeat\b"
#: when a custom sensor given as a bare command is read (the schema's shorthand)
SHORTHAND_MODE = "after"


def _check_templates(name: str, templates: Mapping[str, str], parameters: Sequence[str],
                     values: Mapping[str, Any]) -> None:
    """Every placeholder one the sweep supplies (:func:`perfcast.program.stage_placeholders`)
    and given a value (``{work}``: the program's ``work`` or a swept ``work``), every parameter
    used somewhere."""
    allowed = stage_placeholders("sweep", parameters)
    used: set[str] = set()
    for key, tpl in templates.items():
        used |= check_placeholders(tpl, allowed, where=f"campaign {name!r}, {key}")
    if "work" in used and "work" not in values and "work" not in parameters:
        raise InputError(None, f"campaign {name!r}: {{work}} is used but has no value",
                         expected="work: in the campaign or its program, or a swept parameter "
                                  "named work")
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
    where : str
        Names the campaign in messages.
    derived : mapping of str to str
        The campaign's derived columns, name -> expression.
    models : sequence of ModelSettings
        The campaign's models as the config gives them.
    predict : sequence of mapping
        The campaign's extra prediction points.
    parameters, numeric_parameters : sequence of str
        All parameter names, and the numeric ones (the default
        regressors, and the keys a prediction point gives).
    columns : sequence of str
        The run-table columns the sensors produce.

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


def _program(name: str, settings: SweepCampaignSettings,
             programs: Mapping[str, Any]) -> Program:
    """The campaign's program (:meth:`perfcast.program.Program.from_config`): its own
    ``command``, ``work`` and ``cwd``, or those of the ``program:`` it names, the campaign's
    overriding; env is merged separately (the campaign's keys over the program's)."""
    if settings.program is None and settings.command is None and name not in programs:
        raise InputError(None, f"campaign {name!r}: no command",
                         expected="command: or program: (a name in the top-level programs:)")
    return Program.from_config(name, {"program": settings.program, "command": settings.command,
                                      "work": settings.work, "cwd": settings.cwd},
                               programs, stage="sweep campaign")


#: the most runs (configurations times iterations) a campaign may have: each is a job
MAX_RUNS = 100_000


def _require_short_point_ids(where: str, parameters: Mapping[str, Sequence[Any]]) -> None:
    """The longest run-folder name (:func:`perfcast.sweep.space.point_id`, ``name~value_...``)
    of any configuration fits a file system's :data:`perfcast.settings.NAME_MAX` bytes, found
    without listing the configurations."""
    longest = len(parameters) - 1 + sum(
        max(len(f"{p}~{v}".encode()) for v in values) for p, values in parameters.items())
    if longest > NAME_MAX:
        raise InputError(None, f"{where}: the longest run folder name (name~value_... of "
                               f"parameters {list(parameters)}) is {longest} bytes",
                         expected=f"at most {NAME_MAX} bytes: fewer parameters or shorter "
                                  "names or values")


def parse_campaign(name: str, settings: SweepCampaignSettings,
                   programs: Mapping[str, Any] | None = None, *, seed: int) -> Campaign:
    """Check one campaign and expand its parameters (see the module docstring).

    Parameters
    ----------
    name : str
        The campaign's name (a results directory; the schema checks it).
    settings : SweepCampaignSettings
        Its settings, built from the validated section.
    programs : mapping of str to object, optional, default=None
        The top-level ``programs:`` map (``program:`` names one of it).
    seed : int
        The workflow's seed (the ``{seed}`` placeholder, as in every stage).

    Returns
    -------
    Campaign

    Raises
    ------
    InputError
        an unknown program, a reserved parameter name (:data:`RESERVED`: ``python``,
        ``iteration``; a parameter named ``work`` or ``seed`` supplies that placeholder), an
        unknown placeholder, ``{work}`` without a value, a parameter no template uses, a bad
        range, a ``threads: "{p}"`` whose values are not positive integers, a parameter named
        like a sensor column, a run folder name longer than 255 bytes, more than
        :data:`MAX_RUNS` runs, or a bad model (:func:`parse_analysis`).
    """
    where = f"campaign {name!r}"
    program = _program(name, settings, programs or {})
    env = {**program.env, **{k: str(v) for k, v in settings.env.items()}}
    parameters = {p: parameter_values(p, v) for p, v in settings.parameters.items()}
    _require_short_point_ids(where, parameters)
    runs = math.prod(len(v) for v in parameters.values()) * settings.iterations
    if runs > MAX_RUNS:
        raise InputError(None, f"{where}: {runs:,} runs ({settings.iterations} iterations of "
                               f"each configuration of {list(parameters)})",
                         expected=f"at most {MAX_RUNS:,} runs, each a job of its own")
    # the workflow's seed and the program's work, unless the campaign sweeps them
    constants = {k: v for k, v in (("seed", seed), ("work", program.work))
                 if v is not None and k not in parameters}
    for p in parameters:
        if p in RESERVED:
            raise InputError(None, f"{where}: parameter name {p!r} is reserved",
                             expected=f"a name other than {RESERVED}")
    sensors = parse_sensors(name, settings.sensors)
    templates = {"command": program.command, "before": settings.before, "after": settings.after}
    templates |= {f"env {k}": v for k, v in env.items()}
    templates |= {f"sensor {k}": s.command for k, s in sensors.custom.items()}
    _check_templates(name, templates, list(parameters), constants)
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
        cwd=program.cwd,
    )


def parse_import(name: str, settings: ImportSettings) -> ImportSpec:
    """Check one import: its parameters (numeric or categorical, known only once read: a
    categorical one is left out of the regressors and modelled per level) and its models over
    the source's columns: ARPE's time columns, or an Extra-P file's ``value`` (modelled on every
    parameter when no model is given).

    Raises
    ------
    InputError
        a parameter named like a column of the import's run table, ``region`` or ``metric``
        given for an ARPE import, or a bad model (:func:`parse_analysis`).
    """
    where = f"import {name!r}"
    params = tuple(settings.parameters)
    if settings.format == "extrap":
        columns, models = list(EXTRAP_COLUMNS), list(settings.models) or [
            ModelSettings(name=None, y="value", x=None)]
    else:
        given = [k for k in ("region", "metric") if getattr(settings, k) is not None]
        if given:
            raise InputError(None, f"{where}: {given} are keys of an Extra-P import",
                             expected="format: extrap, or no region and metric")
        columns, models = [*ARPE_COLUMNS, "pidstat_cpu_util"], list(settings.models)
    reserved = set(columns) | set(RUN_TABLE_COLUMNS) | set(TIME_COLUMNS)
    clash = [p for p in params if p in reserved]
    if clash:
        raise InputError(None, f"{where}: parameter name(s) {clash} are columns of the run "
                               "table", expected=f"names other than {sorted(reserved)}")
    analysis = parse_analysis(where, settings.derived, models, settings.predict,
                              list(params), list(params), columns)
    return ImportSpec(name=name, format=settings.format, path=settings.path, parameters=params,
                      region=settings.region, metric=settings.metric, analysis=analysis)


def parse_sweep(section: Mapping[str, Any] | None,
                programs: Mapping[str, Any] | None = None, *, seed: int) -> SweepConfig:
    """Check the whole ``sweep:`` section: every campaign, import and the paper's choice.

    Parameters
    ----------
    section : mapping of str to object, optional
        The section as validated by ``src/perfcast/schemas/sweep.schema.yaml`` (the
        workflow's ``config["sweep"]``, or ``perfcast.settings.validate(section, "sweep")``);
        None: no sweep (no campaigns, no imports).
    programs : mapping of str to object, optional, default=None
        The top-level ``programs:`` map.
    seed : int
        The workflow's seed (``{seed}`` in a campaign's templates).

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

    Examples
    --------
    >>> from perfcast.settings import validate
    >>> section = validate({"campaigns": {"mm": {
    ...     "command": "mm --size {size} --workers {workers}",
    ...     "parameters": {"size": {"start": 128, "stop": 512, "step": 2, "log": True},
    ...                    "workers": [1, 2]}}}}, "sweep")
    >>> mm = parse_sweep(section, seed=1).campaigns["mm"]
    >>> len(mm.points()), mm.iterations, mm.point_ids()[-1]
    (6, 3, 'size~512_workers~2')
    >>> [m.name for m in mm.analysis.models]
    ['wall_s~size+workers', 'user_s~size+workers', 'sys_s~size+workers']
    """
    if section is None:
        return SweepConfig(campaigns={}, imports={}, fit=None, paper_campaigns=())
    settings = build(SweepSettings, section, where="sweep")
    campaigns = {n: parse_campaign(n, s, programs, seed=seed)
                 for n, s in settings.campaigns.items()}
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
