"""The programs a profiling campaign runs, and how their performance is read.

A program is a :class:`perfcast.program.Program`: the stage's own ``sensitivity.programs`` entry
either carries the definition (``command``, ``env``, ``work``, ``cwd``, ``description``: the keys
of the top-level ``programs:`` map that every stage shares) or names an entry of that map
(``program: NAME``, or no ``command`` and the same name); local keys override. Commands are
rendered by :meth:`perfcast.program.Program.render` (``{python}``, ``{work}``, ``{seed}``).
What this stage adds is the :class:`~perfcast.sensitivity.metrics.Metric` that reads a run's
performance, and, for backend ``replay``, the program's name in the measurement table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfcast.program import Program
from perfcast.sensitivity.metrics import Metric
from perfcast.settings import build


@dataclass(frozen=True)
class ProfiledProgram:
    """A program to profile: what runs (``program``), how its performance is read (``metric``)
    and, for backend ``replay``, its name in the measurement table (``replay_program``)."""

    program: Program
    metric: Metric
    replay_program: str

    @property
    def name(self) -> str:
        """The stage's name of the program (its output files' name)."""
        return self.program.name

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any],
                    programs: Mapping[str, Mapping[str, Any]] | None) -> ProfiledProgram:
        """Program ``name`` of ``sensitivity.programs``.

        Parameters
        ----------
        name : the entry's key.
        entry : the entry, validated by the sensitivity schema (``metric`` and
            ``replay_program`` filled in; ``replay_program`` null stands for ``name``).
        programs : the top-level ``programs:`` map.

        Raises
        ------
        InputError
            the entry names a program that is not in ``programs``, or has no command.
        """
        return cls(program=Program.from_config(name, entry, programs, stage="sensitivity"),
                   metric=build(Metric, entry["metric"], where=f"sensitivity program {name!r}"
                                " metric"),
                   replay_program=entry["replay_program"] or name)
