"""The programs a profiling campaign runs, and how their performance is read.

A program is a :class:`perfcast.program.Program`: the stage's own ``sensitivity.programs`` entry
either carries the definition (``command``, ``env``, ``work``, ``cwd``, ``description``: the keys
of the top-level ``programs:`` map that every stage shares) or names an entry of that map
(``program: NAME``, or no ``command`` and the same name); local keys override. Commands are
rendered by :meth:`perfcast.program.Program.render` with the placeholders every stage supplies
(``{python}``, ``{work}``, ``{seed}``: :data:`perfcast.program.PLACEHOLDERS`), checked by
:func:`perfcast.program.check_program`.
What this stage adds is the :class:`~perfcast.sensitivity.metrics.Metric` that reads a run's
performance, and, for backend ``replay``, the program's name in the measurement table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from perfcast.program import Program, check_program
from perfcast.sensitivity.metrics import Metric
from perfcast.settings import build


@dataclass(frozen=True)
class ProfiledProgram:
    """A program to profile: what runs (``definition``: command, environment, work amount,
    working directory), how its performance is read (``metric``) and, for backend ``replay``,
    its name in the measurement table (``replay_program``)."""

    definition: Program
    metric: Metric
    replay_program: str

    @property
    def name(self) -> str:
        """The stage's name of the program (its output files' name)."""
        return self.definition.name

    @classmethod
    def from_config(cls, name: str, entry: Mapping[str, Any],
                    programs: Mapping[str, Mapping[str, Any]] | None) -> ProfiledProgram:
        """Program ``name`` of ``sensitivity.programs``, resolved and checked.

        Parameters
        ----------
        name : str
            The entry's key.
        entry : Mapping[str, Any]
            The entry, validated by the sensitivity schema (``metric`` and ``replay_program``
            filled in; ``replay_program`` null stands for ``name``).
        programs : Mapping[str, Mapping[str, Any]] or None
            The top-level ``programs:`` map the entry may refer to.

        Returns
        -------
        ProfiledProgram

        Raises
        ------
        InputError
            the entry names a program that is not in ``programs``, has no command, or its
            command or environment uses a placeholder the stages do not supply, or ``{work}``
            without a work amount (:func:`perfcast.program.check_program`).

        Examples
        --------
        >>> from perfcast.settings import validate
        >>> section = validate({"programs": {"small": {"program": "big", "work": 2}}},
        ...                    "sensitivity")
        >>> p = ProfiledProgram.from_config("small", section["programs"]["small"],
        ...                                 {"big": {"command": "run {work}", "work": 9}})
        >>> p.name, p.definition.render(), p.metric.name, p.replay_program
        ('small', 'run 2', 'runtime_s', 'small')
        """
        definition = Program.from_config(name, entry, programs, stage="sensitivity")
        check_program(definition, "sensitivity", where=f"sensitivity program {name!r}")
        return cls(definition=definition,
                   metric=build(Metric, entry["metric"], where=f"sensitivity program {name!r}"
                                " metric"),
                   replay_program=entry["replay_program"] or name)
