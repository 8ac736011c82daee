"""Settings of a warm-up session, built from the ``warmup`` config section.

Everything a session does comes from these frozen dataclasses; :func:`session_settings` turns a
config dict (as validated by ``workflow/schemas/warmup.schema.yaml``, passed to scripts through
``params:``) into them, filling the documented defaults for keys left out.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from perfcast.warmup.changepoint import EdmSettings
from perfcast.warmup.planner import PlannerSettings
from perfcast.warmup.subsession import resolve_limit

STOP_CRITERIA = ("readings", "wps")


@dataclass(frozen=True)
class WorkloadSpec:
    """A real command run once per round. ``{work}`` is replaced by the round's work amount,
    ``{python}`` by the running interpreter, ``{seed}`` by ``seed``."""

    name: str
    command: str
    env: dict[str, str] = field(default_factory=dict)
    readings_regex: str | None = None
    readings_scale: float = 1.0
    timeout_s: float = 600.0
    seed: int = 0

    def __post_init__(self) -> None:
        if "{work}" not in self.command:
            raise ValueError(f"workload {self.name!r}: command has no {{work}} placeholder: "
                             f"{self.command!r}")


@dataclass(frozen=True)
class AnalysisSettings:
    edm: EdmSettings = field(default_factory=EdmSettings)
    ac_limit: float = 0.2
    confidence: float = 0.95
    target_relative_width: float = 0.1
    round_lower_bound_s: float = 3.0
    min_readings: int = 30


@dataclass(frozen=True)
class SessionSettings:
    workload: WorkloadSpec
    planner: PlannerSettings
    analysis: AnalysisSettings
    max_rounds: int = 200
    min_rounds: int = 5
    max_time_s: float = 600.0
    stop_on: tuple[str, ...] = ("readings", "wps")

    def __post_init__(self) -> None:
        bad = [s for s in self.stop_on if s not in STOP_CRITERIA]
        if bad:
            raise ValueError(f"unknown stop criteria {bad} (expected some of {STOP_CRITERIA})")

    def measurement_key(self) -> str:
        """Hash of what determines the measurements (command, parser, planner): a journal made
        under another key is not resumed."""
        w = asdict(self.workload)
        w.pop("timeout_s")
        blob = json.dumps({"workload": w, "planner": asdict(self.planner)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["analysis"]["edm"] = self.analysis.edm.to_dict()
        d["stop_on"] = list(self.stop_on)
        return d


def analysis_settings(cfg: dict[str, Any]) -> AnalysisSettings:
    """The analysis part of the stage config (``edm``, ``ci``, ``round_lower_bound_s``)."""
    edm = cfg.get("edm", {})
    ci = cfg.get("ci", {})
    return AnalysisSettings(
        edm=EdmSettings(mode=edm.get("mode", "robust"), min_size=edm.get("min_size"),
                        alpha=edm.get("alpha", 0.01), min_effect=edm.get("min_effect", 0.05)),
        ac_limit=resolve_limit(ci.get("ac_limit"), ci.get("preset")),
        confidence=ci.get("confidence", 0.95),
        target_relative_width=ci.get("target_relative_width", 0.1),
        round_lower_bound_s=cfg.get("round_lower_bound_s", 3.0),
    )


def session_settings(name: str, workload: dict[str, Any], stage: dict[str, Any],
                     programs: dict[str, Any] | None = None, seed: int = 0) -> SessionSettings:
    """Settings of workload ``name``: its own keys over the stage-wide ones.

    ``workload`` has ``command`` or ``program`` (a name in the top-level ``programs``), and may
    override ``work_min``/``work_max`` and the ``session`` limits.
    """
    programs = programs or {}
    if "command" in workload:
        command, env = workload["command"], dict(workload.get("env", {}))
    elif "program" in workload:
        prog = programs.get(workload["program"])
        if prog is None:
            raise ValueError(f"workload {name!r}: program {workload['program']!r} is not in "
                             f"programs ({sorted(programs)})")
        command = prog["command"]
        env = {**{k: str(v) for k, v in prog.get("env", {}).items()}, **workload.get("env", {})}
    else:
        raise ValueError(f"workload {name!r} needs a command or a program")
    merged = {**stage.get("session", {}), **workload.get("session", {})}
    analysis = analysis_settings(stage)
    return SessionSettings(
        workload=WorkloadSpec(
            name=name, command=command, env={k: str(v) for k, v in env.items()},
            readings_regex=workload.get("readings_regex"),
            readings_scale=workload.get("readings_scale", 1.0),
            timeout_s=workload.get("timeout_s", 600.0),
            seed=seed,
        ),
        planner=PlannerSettings(
            work_min=int(workload.get("work_min", 1)),
            work_max=int(workload["work_max"]),
            lower_bound_s=analysis.round_lower_bound_s,
            first_estimate_s=merged.get("first_estimate_s", 60.0),
            first_estimate_rounds=merged.get("first_estimate_rounds", 50),
        ),
        analysis=analysis,
        max_rounds=merged.get("max_rounds", 200),
        min_rounds=merged.get("min_rounds", 5),
        max_time_s=merged.get("max_time_s", 600.0),
        stop_on=tuple(merged.get("stop_on", STOP_CRITERIA)),
    )
