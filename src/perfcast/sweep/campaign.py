"""A campaign as the config declares it, checked before anything runs (ARPE; docs/methods/sweep.md).

A campaign is a command template with ``{parameter}`` placeholders, the values of each
parameter, ``iterations`` per configuration, optional ``before``/``after`` commands (run around
every execution, as ARPE's before.bash/after.bash), an environment, a timeout, the sensors to
record and the models to fit. Everything that can be wrong without running anything (an unknown
placeholder, an empty range, a parameter no template uses, a model over a column no sensor
produces) is refused here with the campaign and key named; whether the host *has* a sensor is
checked by :func:`perfcast.sweep.sensors.check_sensors` before the first run.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from perfcast.errors import InputError
from perfcast.sweep import expressions
from perfcast.sweep.space import (
    NAME_PATTERN,
    Value,
    is_numeric,
    parameter_values,
    point_id,
    product_points,
)

#: placeholders every template may use besides the parameters
RESERVED = ("python", "iteration")
#: columns every executed run has (seconds, KiB, cores)
TIME_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util", "max_rss_kb")
#: heartbeat summary columns
HEARTBEAT_COLUMNS = ("hb_count", "hb_first_s", "hb_rate", "hb_interval_mean", "hb_interval_cv")
#: RAPL totals (per-zone columns ``energy_<zone>_j`` are added when the host has them)
RAPL_COLUMNS = ("energy_j", "power_w")
#: effects modelled when a campaign lists no models (ARPE models real, user and sys time)
DEFAULT_TARGETS = ("wall_s", "user_s", "sys_s")
CUSTOM_MODES = ("before", "after", "delta")
CAMPAIGN_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-]*$")

# Defaults: the same values as workflow/schemas/sweep.schema.yaml (a test keeps them equal).
DEFAULTS: dict[str, Any] = {
    "iterations": 3,
    "before": "",
    "after": "",
    "timeout_s": 600,
    "fail_fast": False,
    "threads": 1,
    "mem_mb": 1000,
}
FIT_DEFAULTS: dict[str, Any] = {
    "max_order": 4,
    "cv_folds": 10,
    "alpha": 0.05,
    "forms": ["linear", "interaction", "quadratic", "purequadratic"],
}
HEARTBEAT_DEFAULT = r"^heartbeat\b"


def perf_column(event: str) -> str:
    """Column name of a perf event: ``task-clock`` -> ``perf_task_clock``."""
    return "perf_" + re.sub(r"[^A-Za-z0-9]+", "_", event).strip("_").lower()


@dataclass(frozen=True)
class CustomSensor:
    """A command whose printed number is recorded ``before``/``after`` the run, or the
    ``delta`` of two readings around it (a counter such as an energy meter)."""

    command: str
    mode: str = "after"


@dataclass(frozen=True)
class Sensors:
    """Which sensors a campaign records besides wall/user/sys/max-RSS/CPU utilisation."""

    perf_events: tuple[str, ...] = ()
    rapl: bool = False
    custom: Mapping[str, CustomSensor] = field(default_factory=dict)
    heartbeat: str | None = None

    def columns(self) -> list[str]:
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

    @classmethod
    def from_params(cls, d: Mapping[str, Any]) -> Sensors:
        return cls(
            perf_events=tuple(d.get("perf_events", ())),
            rapl=bool(d.get("rapl", False)),
            custom={k: CustomSensor(**v) for k, v in (d.get("custom") or {}).items()},
            heartbeat=d.get("heartbeat"),
        )


@dataclass(frozen=True)
class ModelSpec:
    """One effect ``y`` modelled from regressors ``x`` (parameters or derived columns)."""

    name: str
    y: str
    x: tuple[str, ...]


@dataclass(frozen=True)
class Analysis:
    """What is fitted on a campaign's run table (shared by run and imported campaigns)."""

    derived: Mapping[str, str]
    models: tuple[ModelSpec, ...]
    predict: tuple[Mapping[str, Any], ...]

    def to_params(self) -> dict[str, Any]:
        return {
            "derived": dict(self.derived),
            "models": [{"name": m.name, "y": m.y, "x": list(m.x)} for m in self.models],
            "predict": [dict(p) for p in self.predict],
        }


@dataclass(frozen=True)
class Campaign:
    """A checked campaign: its parameters expanded, its templates known to be complete."""

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
    constants: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def _index(self) -> dict[str, dict[str, Value]]:
        return {point_id(p): p for p in product_points(self.parameters)}

    def points(self) -> list[dict[str, Value]]:
        """Every configuration, the first parameter varying slowest."""
        return [dict(p) for p in self._index.values()]

    def point_ids(self) -> list[str]:
        return list(self._index)

    def point(self, pid: str) -> dict[str, Value]:
        """The configuration a run-directory name stands for."""
        try:
            return dict(self._index[pid])
        except KeyError:
            raise InputError(None, f"campaign {self.name!r}: no configuration {pid!r}") from None

    def render(self, template: str, point: Mapping[str, Value], iteration: int,
               python: str) -> str:
        """``template`` with parameters, ``{iteration}``, ``{python}`` and constants filled."""
        values = {**self.constants, **point, "iteration": iteration, "python": python}
        return string.Formatter().vformat(template, (), values)

    def job_threads(self, point: Mapping[str, Value]) -> int:
        """Cores one run of ``point`` asks the scheduler for."""
        if isinstance(self.threads, int):
            return self.threads
        return max(1, int(point[self.threads]))

    def run_params(self, pid: str, iteration: int, python: str) -> dict[str, Any]:
        """Everything one run needs, and nothing that another configuration changes: a rule's
        ``params:`` built from it reruns exactly the runs whose settings changed."""
        point = self.point(pid)
        return {
            "campaign": self.name,
            "point": pid,
            "iteration": iteration,
            "parameters": dict(point),
            "command": self.render(self.command, point, iteration, python),
            "before": self.render(self.before, point, iteration, python),
            "after": self.render(self.after, point, iteration, python),
            "env": {k: self.render(v, point, iteration, python) for k, v in self.env.items()},
            "timeout_s": self.timeout_s,
            "fail_fast": self.fail_fast,
            "sensors": self.sensors_params(point, iteration, python),
        }

    def sensors_params(self, point: Mapping[str, Value], iteration: int,
                       python: str) -> dict[str, Any]:
        d = self.sensors.to_params()
        d["custom"] = {k: {"command": self.render(v["command"], point, iteration, python),
                           "mode": v["mode"]} for k, v in d["custom"].items()}
        return d

    def numeric_parameters(self) -> list[str]:
        return [n for n, v in self.parameters.items() if is_numeric(v)]


@dataclass(frozen=True)
class ImportSpec:
    """A campaign run by the original ARPE scripts, to be read instead of run."""

    name: str
    path: str
    parameters: tuple[str, ...]
    analysis: Analysis
    format: str = "arpe"


@dataclass(frozen=True)
class SweepConfig:
    campaigns: Mapping[str, Campaign]
    imports: Mapping[str, ImportSpec]
    fit: Mapping[str, Any]


# --------------------------------------------------------------------------------------------
# parsing


def template_fields(template: str, *, where: str) -> set[str]:
    """Placeholder names in a ``str.format`` template (``{{``/``}}`` are literal braces)."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise InputError(None, f"{where}: malformed template {template!r}: {exc}",
                         expected="{name} placeholders; write {{ and }} for literal braces"
                         ) from exc
    names = set()
    for _, field_name, _, _ in parsed:
        if field_name is None:
            continue
        if not NAME_PATTERN.match(field_name):
            raise InputError(None, f"{where}: placeholder {{{field_name}}} is not a plain name",
                             expected="{name}; write {{ and }} for literal braces "
                                      "(e.g. ${{HOME}} in shell)")
        names.add(field_name)
    return names


def _check_templates(name: str, templates: Mapping[str, str], allowed: set[str],
                     parameters: Sequence[str]) -> None:
    used: set[str] = set()
    for key, tpl in templates.items():
        where = f"campaign {name!r}, {key}"
        fields = template_fields(tpl, where=where)
        unknown = sorted(fields - allowed)
        if unknown:
            raise InputError(None, f"{where}: unknown placeholder(s) "
                                   + ", ".join(f"{{{u}}}" for u in unknown),
                             expected=f"parameters {list(parameters)} or {list(RESERVED)}")
        used |= fields
    unused = [p for p in parameters if p not in used]
    if unused:
        raise InputError(None, f"campaign {name!r}: parameter(s) {unused} appear in no "
                               "command, env, before, after or sensor template",
                         expected="every swept parameter to change what runs")


def parse_sensors(name: str, spec: Mapping[str, Any] | None) -> Sensors:
    spec = dict(spec or {})
    where = f"campaign {name!r}, sensors"
    unknown = set(spec) - {"perf_events", "rapl", "custom", "heartbeat"}
    if unknown:
        raise InputError(None, f"{where}: unknown sensor(s) {sorted(unknown)}",
                         expected="perf_events, rapl, custom, heartbeat")
    events = tuple(spec.get("perf_events") or ())
    for e in events:
        if not re.match(r"^[A-Za-z0-9_.:/=\-]+$", str(e)):
            raise InputError(None, f"{where}: perf event {e!r} is not an event name")
    if len({perf_column(e) for e in events}) != len(events):
        raise InputError(None, f"{where}: duplicate perf events in {list(events)}")
    custom = {}
    for cname, cspec in (spec.get("custom") or {}).items():
        if not NAME_PATTERN.match(cname):
            raise InputError(None, f"{where}: custom sensor name {cname!r} is not a name")
        if isinstance(cspec, str):
            cspec = {"command": cspec}
        mode = cspec.get("mode", "after")
        if mode not in CUSTOM_MODES:
            raise InputError(None, f"{where}: custom sensor {cname!r} mode {mode!r}",
                             expected=f"one of {list(CUSTOM_MODES)}")
        if not str(cspec.get("command", "")).strip():
            raise InputError(None, f"{where}: custom sensor {cname!r} has no command")
        custom[cname] = CustomSensor(command=str(cspec["command"]), mode=mode)
    hb = spec.get("heartbeat")
    if hb is True:
        hb = HEARTBEAT_DEFAULT
    elif hb is False:
        hb = None
    if hb is not None:
        try:
            re.compile(hb)
        except re.error as exc:
            raise InputError(None, f"{where}: heartbeat pattern {hb!r}: {exc}",
                             expected="a Python regular expression") from exc
    return Sensors(perf_events=events, rapl=bool(spec.get("rapl", False)), custom=custom,
                   heartbeat=hb)


def parse_analysis(name: str, spec: Mapping[str, Any], parameters: Sequence[str],
                   numeric_parameters: Sequence[str], columns: Sequence[str]) -> Analysis:
    """Derived columns and model specs, every name checked against the columns that exist."""
    where = f"campaign {name!r}"
    known = set(columns) | set(parameters)
    derived: dict[str, str] = {}
    for dname, expr in (spec.get("derived") or {}).items():
        if not NAME_PATTERN.match(dname) or dname in known:
            raise InputError(None, f"{where}, derived: {dname!r} is not a new column name",
                             expected="a name not already a parameter or sensor column")
        names = expressions.expression_names(str(expr), where=f"{where}, derived {dname!r}")
        missing = sorted(names - known)
        if missing:
            raise InputError(None, f"{where}, derived {dname!r}: unknown column(s) {missing}",
                             expected=f"parameters, sensor columns or earlier derived "
                                      f"columns: {sorted(known)}")
        derived[dname] = str(expr)
        known.add(dname)
    model_specs = spec.get("models") or [
        {"y": y, "x": list(numeric_parameters)} for y in DEFAULT_TARGETS if y in known
    ]
    models = []
    seen = set()
    for i, m in enumerate(model_specs):
        y = m.get("y")
        x = tuple(m.get("x") or numeric_parameters)
        mname = m.get("name") or f"{y}~{'+'.join(x)}"
        if mname in seen:
            raise InputError(None, f"{where}, models[{i}]: duplicate model name {mname!r}")
        seen.add(mname)
        for col in (y, *x):
            if col not in known:
                raise InputError(None, f"{where}, models[{i}]: unknown column {col!r}",
                                 expected=f"one of {sorted(known)}")
        if not x:
            raise InputError(None, f"{where}, models[{i}]: no regressors",
                             expected="x: a list of numeric parameters or derived columns")
        if y in x:
            raise InputError(None, f"{where}, models[{i}]: {y!r} is both effect and regressor")
        non_numeric = [c for c in x if c in parameters and c not in numeric_parameters]
        if non_numeric:
            raise InputError(None, f"{where}, models[{i}]: parameter(s) {non_numeric} are not "
                                   "numeric", expected="numeric regressors")
        models.append(ModelSpec(name=mname, y=y, x=x))
    predict = []
    for i, p in enumerate(spec.get("predict") or []):
        missing = [n for n in numeric_parameters if n not in p]
        extra = [n for n in p if n not in numeric_parameters]
        if missing or extra:
            raise InputError(None, f"{where}, predict[{i}]: give exactly the numeric "
                                   f"parameters (missing {missing}, unknown {extra})",
                             expected=f"keys {list(numeric_parameters)}")
        predict.append(dict(p))
    return Analysis(derived=derived, models=tuple(models), predict=tuple(predict))


def parse_campaign(name: str, spec: Mapping[str, Any],
                   programs: Mapping[str, Any] | None = None) -> Campaign:
    """Check one campaign of the config and expand its parameters (see module docstring)."""
    if not CAMPAIGN_PATTERN.match(name):
        raise InputError(None, f"campaign name {name!r} cannot name a directory",
                         expected="letters, digits, '.' or '-'")
    spec = {**DEFAULTS, **spec}
    where = f"campaign {name!r}"
    programs = programs or {}
    env: dict[str, str] = {}
    constants: dict[str, Any] = {}
    command = spec.get("command")
    if spec.get("program") is not None:
        prog_name = spec["program"]
        if prog_name not in programs:
            raise InputError(None, f"{where}: program {prog_name!r} is not in programs",
                             expected=f"one of {sorted(programs)}")
        prog = programs[prog_name]
        if command is None:
            command = prog["command"]
        env.update({k: str(v) for k, v in (prog.get("env") or {}).items()})
        if prog.get("work") is not None and "work" not in (spec.get("parameters") or {}):
            constants["work"] = prog["work"]  # the program's default {work}, unless swept
    if not command or not str(command).strip():
        raise InputError(None, f"{where}: no command", expected="command: or program:")
    env.update({k: str(v) for k, v in (spec.get("env") or {}).items()})
    raw_params = spec.get("parameters") or {}
    if not raw_params:
        raise InputError(None, f"{where}: no parameters", expected="at least one parameter")
    parameters = {p: parameter_values(p, v) for p, v in raw_params.items()}
    for p in parameters:
        if p in RESERVED or p in constants:
            raise InputError(None, f"{where}: parameter name {p!r} is reserved")
    if isinstance(spec["iterations"], bool) or int(spec["iterations"]) < 1:
        raise InputError(None, f"{where}: iterations = {spec['iterations']!r}",
                         expected="an integer >= 1")
    sensors = parse_sensors(name, spec.get("sensors"))
    allowed = set(parameters) | set(RESERVED) | set(constants)
    templates = {"command": str(command), "before": str(spec["before"]),
                 "after": str(spec["after"])}
    templates |= {f"env {k}": v for k, v in env.items()}
    templates |= {f"sensor {k}": s.command for k, s in sensors.custom.items()}
    _check_templates(name, templates, allowed, list(parameters))
    threads = spec["threads"]
    if isinstance(threads, str):
        m = re.fullmatch(r"\{([A-Za-z][A-Za-z0-9_]*)\}", threads.strip())
        tname = m.group(1) if m else None
        if tname not in parameters or not all(
                isinstance(v, int) and not isinstance(v, bool) and v >= 1
                for v in parameters[tname]):
            raise InputError(None, f"{where}: threads = {threads!r}",
                             expected="an integer >= 1 or '{param}' naming a parameter whose "
                                      "values are positive integers")
        threads = tname
    elif isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise InputError(None, f"{where}: threads = {threads!r}", expected="an integer >= 1")
    timeout = float(spec["timeout_s"])
    if not timeout > 0:
        raise InputError(None, f"{where}: timeout_s = {timeout}", expected="> 0 seconds")
    columns = [*TIME_COLUMNS, "returncode", *sensors.columns()]
    clash = sorted(set(parameters) & set(columns))
    if clash:
        raise InputError(None, f"{where}: parameter(s) {clash} clash with sensor columns")
    numeric = [n for n, v in parameters.items() if is_numeric(v)]
    analysis = parse_analysis(name, spec, list(parameters), numeric, columns)
    return Campaign(
        name=name, command=str(command), parameters=parameters,
        iterations=int(spec["iterations"]), before=str(spec["before"]),
        after=str(spec["after"]), env=env, timeout_s=timeout, fail_fast=bool(spec["fail_fast"]),
        threads=threads, mem_mb=int(spec["mem_mb"]), sensors=sensors, analysis=analysis,
        constants=constants,
    )


#: columns an ARPE import provides (``time -p`` real/user/sys)
ARPE_COLUMNS = ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util")


def parse_import(name: str, spec: Mapping[str, Any]) -> ImportSpec:
    if not CAMPAIGN_PATTERN.match(name):
        raise InputError(None, f"import name {name!r} cannot name a directory",
                         expected="letters, digits, '.' or '-'")
    where = f"import {name!r}"
    fmt = spec.get("format", "arpe")
    if fmt != "arpe":
        raise InputError(None, f"{where}: format {fmt!r}", expected="arpe")
    if not spec.get("path"):
        raise InputError(None, f"{where}: no path", expected="the ARPE results directory")
    params = tuple(spec.get("parameters") or ())
    if not params:
        raise InputError(None, f"{where}: no parameter names",
                         expected="parameters: the names of ARPE's parameters, in order")
    for p in params:
        if not NAME_PATTERN.match(p) or p in ARPE_COLUMNS:
            raise InputError(None, f"{where}: parameter name {p!r} is not usable")
    # ARPE parameters are assumed numeric; the importer refuses a non-numeric value
    analysis = parse_analysis(name, spec, list(params), list(params),
                              [*ARPE_COLUMNS, "pidstat_cpu_util"])
    return ImportSpec(name=name, path=str(spec["path"]), parameters=params, analysis=analysis)


def parse_sweep(section: Mapping[str, Any] | None,
                programs: Mapping[str, Any] | None = None) -> SweepConfig:
    """Check the whole ``sweep:`` config section: every campaign, import and fit setting."""
    section = section or {}
    campaigns = {n: parse_campaign(n, s, programs)
                 for n, s in (section.get("campaigns") or {}).items()}
    imports = {n: parse_import(n, s) for n, s in (section.get("imports") or {}).items()}
    both = sorted(set(campaigns) & set(imports))
    if both:
        raise InputError(None, f"sweep: {both} named both as campaign and as import")
    fit = {**FIT_DEFAULTS, **(section.get("fit") or {})}
    bad_forms = [f for f in fit["forms"] if f not in FIT_DEFAULTS["forms"]]
    if bad_forms:
        raise InputError(None, f"sweep, fit: unknown form(s) {bad_forms}",
                         expected=f"some of {FIT_DEFAULTS['forms']}")
    if int(fit["max_order"]) < 1 or int(fit["cv_folds"]) < 2 or not 0 < fit["alpha"] < 1:
        raise InputError(None, f"sweep, fit: {dict(fit)}",
                         expected="max_order >= 1, cv_folds >= 2, 0 < alpha < 1")
    return SweepConfig(campaigns=campaigns, imports=imports, fit=fit)
