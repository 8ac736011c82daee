"""Settings of the warm-up stage's commands ``perfcast edm``, ``ci``, ``wps``, ``watch`` and
``stable``: frozen dataclasses built from the values of their flags.

Each command's flags are the keys of its section of ``perfcast/schemas/warmup_cli.schema.yaml``,
which holds their defaults (those of the library on a user's own data) and checks them; a flag
left out (None) takes the schema's default (:func:`command_settings`). The workflow's settings of
the stage are in :mod:`perfcast.warmup.settings`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfcast.settings import build, validate_flags
from perfcast.warmup.settings import EdmSettings, PresetLimits, resolve_limit


@dataclass(frozen=True)
class CiCommandSettings(PresetLimits):
    """``perfcast ci``: the keys of its section of ``warmup_cli.schema.yaml`` (its flags)."""

    preset: str
    ac_limit: float | None
    min_samples: int | None
    confidence: float
    target_relative_width: float
    harmonic: bool


@dataclass(frozen=True)
class WpsCommandSettings:
    """``perfcast wps``: the keys of its section of ``warmup_cli.schema.yaml`` (its flags)."""

    preset: str
    ac_limit: float | None
    confidence: float
    lower_bound_s: float
    max_prediction_error: float

    @property
    def limit(self) -> float:
        """The autocorrelation limit used (:func:`resolve_limit`)."""
        return resolve_limit(self.ac_limit, self.preset)


@dataclass(frozen=True)
class WatchSettings(PresetLimits):
    """``perfcast watch``: the keys of its section of ``warmup_cli.schema.yaml`` (its flags).

    Attributes
    ----------
    target_relative_width, confidence : float
        Stop when the stable readings' CI at this level is at most this fraction of their mean
        wide ...
    preset : str
        ... and they reach its required sample size (subsession analysis,
        :class:`perfcast.warmup.settings.CiSettings`): Pilot's preset, ...
    ac_limit : float or None
        ... or an explicit autocorrelation limit, ...
    min_samples : int or None
        ... and smallest number of subsession means.
    min_readings : int
        No analysis before this many readings.
    growth : float
        The next checkpoint is at most this many times the readings so far
        (:mod:`perfcast.warmup.watch`).
    min_size : int or None
        The robust change-point detector's shortest segment (None: its own), ...
    alpha, min_effect : float
        ... false-alarm probability and smallest effect ...
    cycles : bool
        ... and whether a cycle is taken out first
        (:class:`perfcast.warmup.settings.EdmSettings`).
    """

    target_relative_width: float
    confidence: float
    preset: str
    ac_limit: float | None
    min_samples: int | None
    min_readings: int
    growth: float
    min_size: int | None
    alpha: float
    min_effect: float
    cycles: bool

    @property
    def edm(self) -> EdmSettings:
        """The change-point detector (robust mode)."""
        return EdmSettings(mode="robust", min_size=self.min_size, alpha=self.alpha,
                           min_effect=self.min_effect, cycles=self.cycles)


@dataclass(frozen=True)
class StableSettings(PresetLimits):
    """``perfcast stable``: the keys of its section of ``warmup_cli.schema.yaml`` (its flags).

    Attributes
    ----------
    min_size : int or None
        The robust change-point detector's shortest segment (None: its own), ...
    alpha, min_effect : float
        ... false-alarm probability and smallest effect ...
    cycles : bool
        ... and whether a cycle is taken out first
        (:class:`perfcast.warmup.settings.EdmSettings`).
    preset : str
        The subsession analysis (:class:`CiCommandSettings`): Pilot's preset, ...
    ac_limit : float or None
        ... or an explicit autocorrelation limit, ...
    min_samples : int or None
        ... and smallest number of subsession means.
    confidence : float
        The level of every interval.
    target_relative_width : float
        The width, relative to the mean, that ``required_readings`` is for.
    rates : bool
        The readings are rates: the harmonic mean is given too.
    """

    min_size: int | None
    alpha: float
    min_effect: float
    cycles: bool
    preset: str
    ac_limit: float | None
    min_samples: int | None
    confidence: float
    target_relative_width: float
    rates: bool

    @property
    def edm(self) -> EdmSettings:
        """The change-point detector (robust mode)."""
        return EdmSettings(mode="robust", min_size=self.min_size, alpha=self.alpha,
                           min_effect=self.min_effect, cycles=self.cycles)


@dataclass(frozen=True)
class PhasesSettings:
    """The stable phase ``perfcast edm`` and ``stable`` report where no segment dominates
    (``warmup_cli.schema.yaml``'s ``phases``, flags ``--fallback`` and ``--final-share``;
    :func:`perfcast.warmup.segments.detect_phases`)."""

    fallback: str
    final_share: float

    def to_dict(self) -> dict[str, Any]:
        return {"fallback": self.fallback, "final_share": self.final_share}

    def detect(self, x: Any, edm: EdmSettings) -> Any:
        """:func:`perfcast.warmup.segments.detect_phases` of ``x`` with this fallback."""
        from perfcast.warmup.segments import detect_phases

        return detect_phases(x, edm, fallback=self.fallback, final_share=self.final_share)

    @property
    def no_stable_note(self) -> str:
        """Why there is no stable phase, under this fallback."""
        last = ("" if self.fallback != "final" else
                f", and the last segment holds less than {self.final_share:.3g} of them")
        return f"no segment holds more than half of the readings{last}: no stable phase"


@dataclass(frozen=True)
class InputSettings:
    """How ``perfcast edm|ci|stable|watch`` read readings (``warmup_cli.schema.yaml``'s
    ``input``): ``allow_negative`` accepts readings below 0 (``--allow-negative``)."""

    allow_negative: bool


@dataclass(frozen=True)
class CommandSettings:
    """The settings of ``perfcast edm``, ``ci``, ``wps``, ``watch`` and ``stable``, and how they
    read readings (``input``): one attribute per section of ``warmup_cli.schema.yaml``."""

    edm: EdmSettings
    ci: CiCommandSettings
    wps: WpsCommandSettings
    watch: WatchSettings
    stable: StableSettings
    phases: PhasesSettings
    input: InputSettings


def command_settings(command: str, values: Mapping[str, Any] | None = None,
                     flags: Mapping[str, str] | None = None
                     ) -> (EdmSettings | CiCommandSettings | WpsCommandSettings | WatchSettings
                           | StableSettings | PhasesSettings | InputSettings):
    """The settings of ``perfcast COMMAND`` from the values of its flags.

    Parameters
    ----------
    command : str
        ``"edm"``, ``"ci"``, ``"wps"``, ``"watch"``, ``"stable"``, ``"phases"`` (the stable
        phase where no segment dominates) or ``"input"`` (how the readings are read): a
        section of ``warmup_cli.schema.yaml``.
    values : Mapping[str, Any] or None, default=None
        Setting -> value for the flags given; a None value (or no mapping) counts as not
        given: the schema's default is used.
    flags : Mapping[str, str] or None, default=None
        Setting -> the flag that sets it, to name the flag in an error
        (:func:`perfcast.settings.validate_flags`).

    Returns
    -------
    object
        The command's settings, every default filled in: :class:`EdmSettings`,
        :class:`CiCommandSettings`, :class:`WpsCommandSettings`, :class:`WatchSettings`,
        :class:`StableSettings`, :class:`PhasesSettings` or :class:`InputSettings`.

    Raises
    ------
    InputError
        A value the schema refuses (naming the setting, and its flag where ``flags`` has
        it).

    Examples
    --------
    >>> ci = command_settings("ci", {"confidence": 0.9, "preset": None})
    >>> ci.confidence, ci.preset, ci.limit, ci.samples_min
    (0.9, 'normal', 0.2, 50)
    >>> command_settings("edm").mode
    'robust'
    """
    given = {k: v for k, v in (values or {}).items() if v is not None}
    data = validate_flags({command: given}, "warmup_cli",
                          {f"{command}.{k}": f for k, f in (flags or {}).items()},
                          where="command line")
    return getattr(build(CommandSettings, data, where="warmup_cli"), command)
