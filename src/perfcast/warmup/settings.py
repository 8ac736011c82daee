"""Settings of the warm-up stage in the workflow: frozen dataclasses built from the validated
``warmup`` config section (``perfcast/schemas/warmup.schema.yaml``), and the settings of each of
the stage's jobs.

Every field of a section dataclass is a key of the section; the defaults live in the schema only:
the section is validated there (which fills every default) and the dataclass is built with
:func:`perfcast.settings.build` (:func:`warmup_settings`). A job's settings (:class:`RunSettings`,
:class:`TraceSettings`, :class:`PaperSettings`) hold what that job depends on and nothing else:
the workflow passes them as the rule's one ``settings`` param (their plain dict,
:func:`perfcast.settings.as_params`), so that Snakemake reruns exactly the jobs whose settings
changed. The settings of the ``perfcast edm|ci|wps|watch|stable`` commands are in
:mod:`perfcast.warmup.cli_settings`; the pieces both use (:class:`EdmSettings`,
:class:`PresetLimits`) are here.

This module imports neither numpy nor the detectors, so that the workflow can build and check
settings when it parses its rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from perfcast.errors import InputError
from perfcast.program import Program, check_program
from perfcast.settings import as_params, build, from_section
from perfcast.warmup.planner import PlannerSettings

#: the keys of the ``warmup`` section that every workload's measurement session depends on
SESSION_KEYS = ("edm", "ci", "round_lower_bound_s", "wps_max_prediction_error", "session")


@dataclass(frozen=True)
class EdmSettings:
    """How change points are found (``warmup.edm``, ``warmup.counters.edm``, ``perfcast edm``).

    Attributes
    ----------
    mode : str
        ``"robust"`` (the calibrated rank-based detector of
        :mod:`perfcast.warmup.edm_robust`) or ``"pilot"`` (Pilot's EDM_percent,
        :mod:`perfcast.warmup.edm_pilot`).
    min_size : int or None
        Shortest segment in readings; None for the mode's own
        (:attr:`segment_min`).
    alpha : float
        Robust mode: probability of reporting a change point in a series without one.
    min_effect : float
        Robust mode: smallest change of the median (a fraction of the overall median)
        kept as a change point.
    cycles : bool
        Robust mode: take a cycle of the readings out before the search, when both halves
        show the same one (:func:`perfcast.warmup.season.deseasonalised`).
    """

    mode: str
    min_size: int | None
    alpha: float
    min_effect: float
    cycles: bool = True

    @property
    def segment_min(self) -> int:
        """The shortest segment: ``min_size``, else 30 in pilot mode (Pilot's constant) and 10
        in robust mode."""
        if self.min_size is not None:
            return self.min_size
        if self.mode == "pilot":  # (imports numba: only where it is used)
            from perfcast.warmup import edm_pilot

            return edm_pilot.PILOT_MIN_SIZE
        from perfcast.warmup import edm_robust

        return edm_robust.ROBUST_MIN_SIZE

    def to_dict(self) -> dict[str, Any]:
        """The settings as written to summaries (``min_size`` resolved to the one used)."""
        d = dataclasses.asdict(self)
        d["min_size"] = self.segment_min
        return d


def resolve_limit(ac_limit: float | None, preset: str) -> float:
    """The autocorrelation limit of subsession means: ``ac_limit`` when given, else the
    preset's (Pilot's presets: quick 0.8, normal 0.2, strict 0.1;
    :data:`perfcast.warmup.subsession.PRESETS`)."""
    if ac_limit is not None:
        return float(ac_limit)
    from perfcast.warmup.subsession import PRESETS

    return PRESETS[preset]


def resolve_min_samples(min_samples: int | None, preset: str) -> int:
    """The smallest number of subsession means a required sample size asks for:
    ``min_samples`` when given, else the preset's (Pilot: quick 30, normal 50, strict 200;
    :data:`perfcast.warmup.subsession.PRESET_MIN_SAMPLES`)."""
    if min_samples is not None:
        return int(min_samples)
    from perfcast.warmup.subsession import PRESET_MIN_SAMPLES

    return PRESET_MIN_SAMPLES[preset]


class PresetLimits:
    """Mixin: the autocorrelation limit and the minimum number of subsession means of a settings
    object with ``preset``, ``ac_limit`` and ``min_samples``: explicit values, else the
    preset's (:class:`CiSettings`, and the commands' settings of
    :mod:`perfcast.warmup.cli_settings`)."""

    preset: str
    ac_limit: float | None
    min_samples: int | None

    @property
    def limit(self) -> float:
        """The autocorrelation limit used (:func:`resolve_limit`)."""
        return resolve_limit(self.ac_limit, self.preset)

    @property
    def samples_min(self) -> int:
        """The smallest number of subsession means used (:func:`resolve_min_samples`)."""
        return resolve_min_samples(self.min_samples, self.preset)


@dataclass(frozen=True)
class CiSettings(PresetLimits):
    """Confidence interval of the stable throughput (``warmup.ci``).

    Attributes
    ----------
    preset : str
        Pilot's autocorrelation limit of subsession means and smallest number of them:
        quick, normal or strict.
    ac_limit : float or None
        An explicit limit instead of the preset's, or None.
    min_samples : int or None
        An explicit smallest number of subsession means instead of the preset's, or
        None.
    confidence : float
        Confidence level of every interval.
    target_relative_width : float
        A session stops when its CIs are at most this fraction of the
        estimate wide.
    """

    preset: str
    ac_limit: float | None
    min_samples: int | None
    confidence: float
    target_relative_width: float


@dataclass(frozen=True)
class SessionLimits:
    """Budget and stopping rule of a session (``warmup.session``, a workload's ``session``
    overriding some of them).

    Attributes
    ----------
    max_rounds, min_rounds : int
        At most this many rounds; never stop on the target before
        ``min_rounds``.
    max_time_s : float
        Stop when the rounds took this long (the next round's predicted time
        included).
    first_estimate_s : float
        Pilot's ``t``: the first rounds should give a first estimate in ``t`` seconds ...
    first_estimate_rounds : int
        ... from Pilot's ``n`` rounds (the planner's ramp).
    stop_on : tuple of str
        The CIs that must meet the target: ``"readings"`` (unit readings), ``"wps"``
        (the work-per-second regression).
    allow_other_host : bool
        Resume a journal whose rounds were measured on another host or CPU
        model (:mod:`perfcast.warmup.journal`; refused by default).
    """

    max_rounds: int
    min_rounds: int
    max_time_s: float
    first_estimate_s: float
    first_estimate_rounds: int
    stop_on: tuple[str, ...]
    allow_other_host: bool


@dataclass(frozen=True)
class WorkloadSettings:
    """One workload (``warmup.workloads.<name>``): a real command run round after round.

    Attributes
    ----------
    command : str or None
        The shell command of one round (``{work}``, ``{python}``, ``{seed}``
        placeholders, :mod:`perfcast.program`), or None when ``program`` names one.
    program : str or None
        A name under the top-level ``programs:``, or None.
    env : Mapping[str, str or float]
        Extra environment variables (over the program's).
    cwd : str or None
        The directory the rounds run in (over the program's; :func:`perfcast.program.run_dir`).
    work_min, work_max : int
        Work amount of the first round, and the largest (Pilot's ``b``).
    readings_regex : str or None
        How unit readings are picked out of output lines, and ...
    readings_scale : float
        ... what multiplies them into seconds (:class:`perfcast.warmup.readings.ReadingParser`).
    timeout_s : float
        A round running longer fails the job.
    session : Mapping[str, Any]
        Overrides of the stage's :class:`SessionLimits` (some of its keys).
    """

    command: str | None
    program: str | None
    env: Mapping[str, str | float]
    cwd: str | None
    work_min: int
    work_max: int
    readings_regex: str | None
    readings_scale: float
    timeout_s: float
    session: Mapping[str, Any]


@dataclass(frozen=True)
class CounterPhaseSettings:
    """Phases of the counters stage's traces (``warmup.counters``;
    :func:`perfcast.warmup.counter_phases.counter_phases`).

    Attributes
    ----------
    edm : EdmSettings
        Change-point detection on the per-interval instruction rate.
    setup_fraction : float
        Leading intervals whose rate is below this fraction of the median rate
        are setup.
    fallback : str
        ``"edges"`` or ``"none"``: what is stable when no segment holds more than half
        of the intervals (:func:`perfcast.warmup.segments.detect_phases`).
    edge_fraction : float
        Fallback edges: warm-up and cool-down lie within this fraction of either
        end.
    ac_limit, confidence : float
        Subsession analysis and confidence level of the stable IPC.
    target_relative_width : float
        The stable IPC's ``required_readings`` are for a CI this fraction of its mean wide.
    """

    edm: EdmSettings
    setup_fraction: float
    fallback: str
    edge_fraction: float
    ac_limit: float
    confidence: float
    target_relative_width: float


@dataclass(frozen=True)
class WarmupSettings:
    """The whole ``warmup`` section (:func:`warmup_settings`)."""

    enabled: bool
    edm: EdmSettings
    ci: CiSettings
    round_lower_bound_s: float
    wps_max_prediction_error: float
    session: SessionLimits
    workloads: Mapping[str, WorkloadSettings]
    counters: CounterPhaseSettings


@dataclass(frozen=True)
class AnalysisSettings:
    """What the analysis of a session's rounds depends on (keys ``edm``, ``ci``,
    ``round_lower_bound_s`` and ``wps_max_prediction_error`` of the ``warmup`` section)."""

    edm: EdmSettings
    ci: CiSettings
    round_lower_bound_s: float
    wps_max_prediction_error: float


@dataclass(frozen=True)
class SessionSettings:
    """Everything the measurement session of one workload depends on (a ``warmup_run`` job).

    Built by :func:`session_settings`: the workload's ``name`` and its settings
    (``workload``), the entry of the top-level ``programs:`` it names (``programs``, empty for
    a workload with its own ``command``), the workflow's ``seed``, and the ``warmup`` section's
    ``edm``, ``ci``, ``round_lower_bound_s``, ``wps_max_prediction_error`` and ``session``.

    Raises
    ------
    InputError
        (when built) ``work_min`` above ``work_max``; a ``program`` not in ``programs``; a
        command without ``{work}`` or with a placeholder the stages do not supply
        (:func:`perfcast.program.check_program`).
    """

    name: str
    seed: int
    workload: WorkloadSettings
    programs: Mapping[str, Mapping[str, Any]]
    edm: EdmSettings
    ci: CiSettings
    round_lower_bound_s: float
    wps_max_prediction_error: float
    session: SessionLimits

    def __post_init__(self) -> None:
        where = f"warmup.workloads.{self.name}"
        if self.workload.work_min > self.workload.work_max:
            raise InputError(None, f"{where}: work_min {self.workload.work_min} is above "
                             f"work_max {self.workload.work_max}", expected="work_min <= work_max")
        program = self.program
        if "work" not in check_program(program, "warmup", where=where):
            raise InputError(None, f"{where}: the command has no {{work}} placeholder: "
                             f"{program.command!r}", expected="{work} where the work amount goes")

    @cached_property
    def program(self) -> Program:
        """The workload's command and environment (:mod:`perfcast.program`): its own
        ``command``, or the program it names; its ``env`` over the program's."""
        entry = {"command": self.workload.command, "program": self.workload.program,
                 "cwd": self.workload.cwd}
        program = Program.from_config(self.name, entry, self.programs, stage="warmup")
        env = {**program.env, **{k: str(v) for k, v in self.workload.env.items()}}
        return dataclasses.replace(program, env=env)

    @cached_property
    def limits(self) -> SessionLimits:
        """The stage's session limits with the workload's overrides."""
        return build(SessionLimits, {**as_params(self.session), **self.workload.session},
                     where=f"warmup.workloads.{self.name}.session")

    @cached_property
    def planner(self) -> PlannerSettings:
        """The planner's settings (:func:`perfcast.warmup.planner.next_round`)."""
        return PlannerSettings(
            work_min=int(self.workload.work_min), work_max=int(self.workload.work_max),
            lower_bound_s=self.round_lower_bound_s,
            first_estimate_s=self.limits.first_estimate_s,
            first_estimate_rounds=self.limits.first_estimate_rounds,
        )

    @cached_property
    def analysis(self) -> AnalysisSettings:
        """The analysis settings (:func:`perfcast.warmup.analysis.analyze_session`)."""
        return AnalysisSettings(edm=self.edm, ci=self.ci,
                                round_lower_bound_s=self.round_lower_bound_s,
                                wps_max_prediction_error=self.wps_max_prediction_error)

    def to_dict(self) -> dict[str, Any]:
        """The settings as the session's summary records them (``summary.json``)."""
        from perfcast.warmup.ci import MIN_READINGS

        limits = self.limits
        return {
            "workload": {
                "name": self.name, "command": self.program.command, "env": dict(self.program.env),
                "readings_regex": self.workload.readings_regex,
                "readings_scale": self.workload.readings_scale,
                "timeout_s": self.workload.timeout_s, "seed": self.seed,
            },
            "planner": dataclasses.asdict(self.planner),
            "analysis": {
                "edm": self.edm.to_dict(), "ac_limit": self.ci.limit,
                "min_samples": self.ci.samples_min,
                "confidence": self.ci.confidence,
                "target_relative_width": self.ci.target_relative_width,
                "round_lower_bound_s": self.round_lower_bound_s, "min_readings": MIN_READINGS,
            },
            "max_rounds": limits.max_rounds, "min_rounds": limits.min_rounds,
            "max_time_s": limits.max_time_s, "stop_on": list(limits.stop_on),
        }

    def measurement_key(self) -> str:
        """Hash of what determines the measurements (command, environment, reading parser,
        seed, planner): a journal written under another key is not resumed."""
        d = self.to_dict()
        workload = {k: v for k, v in d["workload"].items() if k != "timeout_s"}
        blob = json.dumps({"workload": workload, "planner": d["planner"]}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def warmup_settings(section: Mapping[str, Any] | None) -> WarmupSettings:
    """The ``warmup`` section validated against ``perfcast/schemas/warmup.schema.yaml``, every
    default filled in, as :class:`WarmupSettings`.

    Parameters
    ----------
    section : Mapping[str, Any] or None
        The ``warmup`` section of a config (None: all defaults).

    Returns
    -------
    WarmupSettings
        The whole section.

    Raises
    ------
    InputError
        A value the schema refuses (naming its key).

    Examples
    --------
    >>> s = warmup_settings({"ci": {"preset": "strict"}})
    >>> s.ci.limit, s.ci.samples_min, s.edm.mode, s.counters.fallback, s.session.stop_on
    (0.1, 200, 'robust', 'edges', ('readings', 'wps'))
    """
    return from_section(WarmupSettings, section, "warmup")


def session_settings(name: str, section: Mapping[str, Any], programs: Mapping[str, Any],
                     seed: int) -> SessionSettings:
    """The settings of workload ``name``'s measurement session.

    Parameters
    ----------
    name : str
        A key of ``section["workloads"]``.
    section : Mapping[str, Any]
        The ``warmup`` section, validated (its defaults filled in).
    programs : Mapping[str, Any]
        The top-level ``programs:`` map; only the entry the workload names is kept.
    seed : int
        The workflow's seed (``{seed}``).

    Returns
    -------
    SessionSettings
        The workload, the one program it names, the seed and the keys :data:`SESSION_KEYS` of
        ``section``: what the session depends on and nothing else, so that Snakemake reruns
        the ``warmup_run`` job exactly when one of them changes.

    Raises
    ------
    InputError
        The workload names a program that ``programs`` lacks, or :class:`SessionSettings`
        refuses the settings (``work_min`` above ``work_max``, a command without ``{work}``).

    Examples
    --------
    >>> from perfcast.settings import validate
    >>> section = validate({"workloads": {"kv": {"command": "{python} kv.py {work}",
    ...                                          "work_max": 100}}}, "warmup")
    >>> s = session_settings("kv", section, {}, seed=7)
    >>> s.name, s.seed, s.workload.work_min, s.limits.max_rounds, s.ci.limit
    ('kv', 7, 1, 200, 0.2)
    """
    workload = section["workloads"][name]
    ref = workload["program"]
    if ref is not None and ref not in programs:
        raise InputError(None, f"warmup.workloads.{name}.program: {ref!r} is not in the "
                         "top-level programs: map", expected=f"one of {sorted(programs)}")
    params = {"name": name, "seed": seed, "workload": workload,
              "programs": {} if ref is None else {ref: programs[ref]},
              **{key: section[key] for key in SESSION_KEYS}}
    return build(SessionSettings, params, where=f"warmup.workloads.{name}")


@dataclass(frozen=True)
class RunSettings:
    """The settings of one ``warmup_run`` job (:func:`perfcast.warmup.rules.run_workload`).

    Attributes
    ----------
    session : SessionSettings
        The workload's measurement session (:func:`session_settings`).
    journal : str
        The durable journal of the finished rounds: not an output, so that it survives a
        failed or killed job, which then resumes from it.
    """

    session: SessionSettings
    journal: str


@dataclass(frozen=True)
class TraceSettings:
    """The settings of one ``warmup_counter_phases`` job
    (:func:`perfcast.warmup.rules.run_counter_phases`).

    Attributes
    ----------
    phases : CounterPhaseSettings
        How the phases of a counter trace are found (``warmup.counters``).
    generation, benchmark : str
        The trace's CPU generation and benchmark, recorded in its outputs.
    """

    phases: CounterPhaseSettings
    generation: str
    benchmark: str


@dataclass(frozen=True)
class PaperSettings:
    """The settings of the ``warmup_paper`` job (:func:`perfcast.warmup.artifacts.write_paper`).

    Attributes
    ----------
    workloads : tuple of str
        The workloads, in the order of the job's input lists (a panel and a row each).
    """

    workloads: tuple[str, ...]
