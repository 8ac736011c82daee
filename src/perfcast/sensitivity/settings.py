"""Settings of the sensitivity stage: the ``sensitivity:`` config section as frozen dataclasses.

Each field is a key of the section as ``src/perfcast/schemas/sensitivity.schema.yaml`` defines it,
with no default of its own: the schema fills every default (:func:`perfcast.settings.validate`)
and :func:`perfcast.settings.build` constructs these classes from the validated mapping. Each
rule gets the settings of its jobs as one ``params:`` entry, built from the validated section
(``workflow/rules/common/sensitivity.smk``):

- ``sensitivity_profile``: :class:`ProfileSettings`, the section without the program list and
  the replay evaluation's keys, with the one program of the job (so that a change to another
  program reruns only that program's profile) and the workflow's seed;
- ``sensitivity_replay_eval``: :class:`EvaluationSettings` (``sensitivity.replay`` and the
  seed); ``sensitivity_replay_figures``: :class:`FigureSettings`; ``sensitivity_arcp_fetch``:
  :class:`SourceSettings` (``sensitivity.replay.source``).

The command line builds the same classes through the same schema.

The method is that of L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling
program's runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017
(docs/methods/sensitivity.md).

Examples
--------
>>> from perfcast.settings import build, validate
>>> section = validate({"replay": {"epsilons": [0.3], "lhs_repeats": 2}}, "sensitivity")
>>> evaluation = build(EvaluationSettings, {**section["replay"], "seed": 7})
>>> evaluation.epsilons, evaluation.ceiling, evaluation.lhs_repeats, evaluation.seed
((0.3,), 'table4', 2, 7)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfcast.errors import InputError
from perfcast.sensitivity.programs import ProfiledProgram
from perfcast.settings import build


@dataclass(frozen=True)
class Range:
    """The levels of one dimension (``sensitivity.dimensions.<name>``): ``lower`` to ``upper``
    in steps of ``step``."""

    lower: float
    upper: float
    step: float


@dataclass(frozen=True)
class CgroupSettings:
    """``sensitivity.cgroup``: where the per-run control groups go, which disk they throttle,
    and what happens on a host that cannot restrict a run (``if_unavailable``)."""

    version: str
    parent: str
    prefix: str
    target_path: str
    if_unavailable: str
    device: str | None
    cpus: tuple[int, ...] | None


@dataclass(frozen=True)
class NetworkSettings:
    """``sensitivity.network``: the interface a ``network_mbit`` dimension shapes and how."""

    interface: str | None
    mode: str


@dataclass(frozen=True)
class SourceSettings:
    """``sensitivity.replay.source``: the paper's ``raw data.zip`` (``url``, ``sha256``), or a
    local copy of it (``zip``), or an already converted table (``table``)."""

    url: str
    sha256: str
    zip: str | None
    table: str | None


@dataclass(frozen=True)
class GridLayout:
    """How one program's rows form a grid (``sensitivity.replay.layouts.<program>``, whose
    schema, ``$defs/layout``, fills every key; the paper's own are
    :data:`perfcast.sensitivity.published.ARCP_LAYOUTS`).

    ``levels``: extra levels per column (cells with no row are failed runs); ``exclude``: levels
    dropped with their rows; ``reverse``: columns whose value falls as the resource grows;
    ``kinds``: column -> resource kind where it differs from the column's own
    (:data:`perfcast.sensitivity.replay.AXIS_COLUMNS`); ``higher_is_better``: the metric's
    direction where its name does not tell it
    (:data:`perfcast.sensitivity.replay.METRIC_DIRECTION`; None: from the name).
    """

    levels: Mapping[str, tuple[float, ...]]
    exclude: Mapping[str, tuple[float, ...]]
    reverse: tuple[str, ...]
    kinds: Mapping[str, str]
    higher_is_better: bool | None


@dataclass(frozen=True)
class GridSettings:
    """How the measurement table's rows become grids, and their ceilings (keys ``ceiling``,
    ``peaks`` and ``layouts`` of ``sensitivity.replay``): what backend ``replay`` and the
    replay evaluation share."""

    ceiling: str
    peaks: Mapping[str, Mapping[str, float]]
    layouts: Mapping[str, GridLayout]


@dataclass(frozen=True)
class EvaluationSettings(GridSettings):
    """What the replay evaluation depends on: :class:`GridSettings`, the keys ``epsilons``,
    ``programs`` (empty: every program of the table) and ``lhs_repeats`` of
    ``sensitivity.replay``, and the top-level ``seed``."""

    epsilons: tuple[float, ...]
    programs: tuple[str, ...]
    lhs_repeats: int
    seed: int


@dataclass(frozen=True)
class FigureSettings:
    """What the replay evaluation's figures depend on (``sensitivity.replay``)."""

    figure_epsilon: float
    surfaces: tuple[str, ...]


@dataclass(frozen=True)
class ReplaySettings:
    """``sensitivity.replay``: the replay evaluation on the paper's measurements, and the data
    of backend ``replay``."""

    enabled: bool
    source: SourceSettings
    epsilons: tuple[float, ...]
    programs: tuple[str, ...]
    ceiling: str
    peaks: Mapping[str, Mapping[str, float]]
    layouts: Mapping[str, GridLayout]
    lhs_repeats: int
    figure_epsilon: float
    surfaces: tuple[str, ...]


@dataclass(frozen=True)
class CampaignSettings:
    """The keys of the ``sensitivity`` section a profiling campaign uses (shared by the section
    and by one program's :class:`ProfileSettings`)."""

    backend: str
    epsilon: float
    sampling: str
    budget: int | None
    compare: tuple[str, ...]
    verify_ceiling: bool
    bisect_failures: bool
    spare_cores: float
    repeats: int
    baseline_repeats: int
    confidence: float
    timeout_s: float
    monitor_interval_s: float
    #: dimension name -> range; None: left out (a config merged over the default removes one so)
    dimensions: Mapping[str, Range | None]
    cgroup: CgroupSettings
    network: NetworkSettings


@dataclass(frozen=True)
class ProfileSettings(CampaignSettings):
    """Everything one program's profile depends on.

    The :class:`CampaignSettings`, ``program`` (the job's program, resolved against the
    top-level ``programs:`` map), ``replay`` (the :class:`GridSettings` with backend ``replay``;
    null with backend ``cgroup``) and the workflow's ``seed`` (Latin hypercube levels; the
    ``{seed}`` placeholder).
    """

    program: ProfiledProgram
    replay: GridSettings | None
    seed: int


@dataclass(frozen=True)
class SensitivitySettings(CampaignSettings):
    """The ``sensitivity`` section. ``programs`` holds the stage's entries as the config gives
    them (:meth:`perfcast.sensitivity.programs.ProfiledProgram.from_config` resolves one)."""

    enabled: bool
    programs: Mapping[str, Mapping[str, Any]]
    replay: ReplaySettings


def profile_settings(section: Mapping[str, Any], name: str,
                     programs: Mapping[str, Mapping[str, Any]] | None,
                     seed: int) -> ProfileSettings:
    """The settings of program ``name``'s profile, built from the validated section.

    :func:`perfcast.settings.build` of :class:`ProfileSettings` from the section's campaign
    keys, the program resolved against the top-level map
    (:meth:`~perfcast.sensitivity.programs.ProfiledProgram.from_config`), the grid keys of
    ``replay`` with backend ``replay`` (None with ``cgroup``) and ``seed``: what the workflow
    passes to one program's profile, so that a change to another program, or to the replay
    evaluation's keys, does not rerun it.

    Parameters
    ----------
    section : Mapping[str, Any]
        The ``sensitivity`` section, validated (:func:`perfcast.settings.validate`: defaults
        filled).
    name : str
        A key of ``section["programs"]``.
    programs : Mapping[str, Mapping[str, Any]] or None
        The top-level ``programs:`` map the entry may refer to.
    seed : int
        The workflow's seed.

    Returns
    -------
    ProfileSettings

    Raises
    ------
    InputError
        as :meth:`~perfcast.sensitivity.programs.ProfiledProgram.from_config`.

    Examples
    --------
    >>> from perfcast.settings import validate
    >>> section = validate({"programs": {"a": {"command": "run {work}", "work": 2},
    ...                                  "b": {"command": "other"}}}, "sensitivity")
    >>> settings = profile_settings(section, "a", {}, seed=3)
    >>> settings.program.definition.render(), settings.backend, settings.replay, settings.seed
    ('run 2', 'cgroup', None, 3)
    """
    entry = section["programs"][name]
    program = ProfiledProgram.from_config(name, entry, programs)
    replay = section["replay"] if section["backend"] == "replay" else None
    return build(ProfileSettings, {**section, "program": program, "replay": replay, "seed": seed,
                                   "dimensions": program_dimensions(section, name)},
                 where=f"sensitivity program {name!r}")


def program_dimensions(section: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The dimensions program ``name`` is profiled on: the section's ``dimensions`` with the
    program's own ``dimensions`` merged over them, those set to null left out.

    Parameters
    ----------
    section : Mapping[str, Any]
        The ``sensitivity`` section, validated.
    name : str
        A key of ``section["programs"]``.

    Returns
    -------
    dict
        dimension name -> its range (a mapping with ``lower``, ``upper``, ``step``), in the
        section's order, the program's additions after.

    Raises
    ------
    InputError
        backend ``cgroup`` and every dimension set to null, naming the program and the keys.

    Examples
    --------
    >>> from perfcast.settings import validate
    >>> section = validate({"dimensions": {"memory_mb": {"lower": 32, "upper": 64, "step": 32},
    ...                                    "disk_read_mbps": None},
    ...                     "programs": {"p": {"command": "true", "dimensions": {
    ...                         "memory_mb": {"lower": 64, "upper": 128, "step": 64},
    ...                         "cpu_quota": {"lower": 1, "upper": 2, "step": 1}}}}},
    ...                    "sensitivity")
    >>> {k: v["lower"] for k, v in program_dimensions(section, "p").items()}
    {'memory_mb': 64, 'cpu_quota': 1}
    """
    own = section["programs"][name].get("dimensions") or {}
    merged = {**section["dimensions"], **own}
    dims = {k: v for k, v in merged.items() if v is not None}
    if not dims and merged and section["backend"] == "cgroup":
        removed = [f"sensitivity.programs.{name}.dimensions.{k}" if k in own
                   else f"sensitivity.dimensions.{k}" for k in merged]
        raise InputError(None, f"sensitivity program {name!r}: no dimension left to profile "
                         f"(set to null: {', '.join(removed) or 'none given'})",
                         expected="at least one dimension with lower, upper and step")
    return dims
