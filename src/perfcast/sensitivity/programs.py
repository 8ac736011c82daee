"""The programs a profiling campaign runs: declared once, referenced by name.

A program comes from the stage's own ``sensitivity.programs`` entry, which either carries the
definition (``command``, ``env``, ``work``, ``description``: the same keys as the top-level
``programs:`` map that the counters, warm-up and sweep stages use) or names an entry of that
top-level map (``program: NAME``, or no ``command`` and the same name); local keys override.
Its ``metric`` says how performance is read from a run. Commands are shell templates:
``{work}`` becomes the work amount, ``{python}`` the interpreter running perfcast.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from perfcast.errors import InputError
from perfcast.sensitivity.metrics import Metric

_DEF_KEYS = ("command", "env", "work", "description")
_PLACEHOLDER = re.compile(r"\{(python|work)\}")


def resolve_program(name: str, entry: Mapping[str, Any] | None,
                    programs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """A plain dict (command, env, work, description, metric) for stage program ``name``."""
    entry = dict(entry or {})
    ref = entry.pop("program", None)
    if ref is None and "command" not in entry:
        ref = name
    out: dict[str, Any] = {}
    if ref is not None:
        if ref not in programs:
            raise InputError(None, f"sensitivity program {name!r} refers to {ref!r}, which is "
                             "not in the top-level programs: map",
                             expected=f"one of {sorted(programs)}")
        out.update({k: v for k, v in programs[ref].items() if k in _DEF_KEYS})
    out.update(entry)
    if not out.get("command"):
        raise InputError(None, f"sensitivity program {name!r} has no command")
    out.setdefault("env", {})
    out.setdefault("metric", {})
    return out


@dataclass(frozen=True)
class ProgramSpec:
    """A runnable program and how its performance is measured."""

    name: str
    command: str
    metric: Metric = field(default_factory=Metric)
    env: Mapping[str, str] = field(default_factory=dict)
    work: float | None = None
    cwd: str | None = None

    @classmethod
    def from_dict(cls, name: str, d: Mapping[str, Any]) -> ProgramSpec:
        return cls(name=name, command=str(d["command"]),
                   metric=Metric.from_config(d.get("metric")),
                   env={k: str(v) for k, v in (d.get("env") or {}).items()},
                   work=d.get("work"), cwd=d.get("cwd"))

    def render(self) -> str:
        """The shell command with ``{python}`` and ``{work}`` substituted."""
        def sub(m: re.Match) -> str:
            if m.group(1) == "python":
                return sys.executable
            if self.work is None:
                raise InputError(None, f"program {self.name}: command uses {{work}} but no work "
                                 "amount is set")
            w = self.work
            return str(int(w)) if float(w).is_integer() else str(w)

        return _PLACEHOLDER.sub(sub, self.command)
