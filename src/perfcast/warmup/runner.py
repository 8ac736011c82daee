"""Run one round of a real command and turn its output into a :class:`RoundRecord`.

The workload's command is rendered by :mod:`perfcast.program` (the one rule of every stage):
``{work}`` becomes the round's work amount, ``{python}`` the running interpreter (so a shipped
workload runs in the same environment) and ``{seed}`` the workflow's seed, each value quoted for
the shell; the round runs in the program's ``cwd`` (:func:`perfcast.program.run_dir`). The
round's duration is the wall time on the monotonic clock (``perfcast.process.run_measured``),
and each output line is stamped with its arrival time, which locates the setup phase (the time
before the first unit started).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from perfcast.process import run_measured
from perfcast.program import run_dir
from perfcast.warmup.planner import PlannedRound
from perfcast.warmup.readings import ReadingParser
from perfcast.warmup.settings import SessionSettings


class RoundFailedError(RuntimeError):
    """The command of a round failed (exit status, signal or timeout)."""


@dataclass
class RoundRecord:
    """What one round did: its work, wall time, rusage and unit readings (seconds)."""

    round: int
    work: int
    stage: str
    duration_s: float
    returncode: int
    user_s: float
    sys_s: float
    max_rss_kb: int
    readings: list[float] = field(default_factory=list)
    reading_times: list[float] = field(default_factory=list)
    ignored_lines: int = 0

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: dict) -> RoundRecord:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in obj.items() if k in names})


def round_command(settings: SessionSettings, work: int) -> tuple[str, dict[str, str]]:
    """The shell command and extra environment of a round with ``work`` units
    (:meth:`perfcast.program.Program.render`, :meth:`~perfcast.program.Program.render_env`)."""
    values = {"work": int(work), "seed": int(settings.seed)}
    return settings.program.render(**values), settings.program.render_env(**values)


def run_round(settings: SessionSettings, planned: PlannedRound, index: int) -> RoundRecord:
    """Execute round ``index`` of the session with ``planned.work`` units.

    Parameters
    ----------
    settings : SessionSettings
        The session: its workload's program, timeout and reading parser.
    planned : PlannedRound
        The round's work amount.
    index : int
        The round's number in the session (names it in errors).

    Raises
    ------
    RoundFailedError
        the command exited with a non-zero status, was killed, ran past the workload's
        ``timeout_s``, or left a process running when it ended (killed, and named).
    InputError
        an output line the reading parser takes for a reading is not a duration.
    """
    spec = settings.workload
    command, env = round_command(settings, planned.work)
    cwd = run_dir(settings.program.cwd, where=f"warmup workload {settings.name!r}")
    res = run_measured(command, env=env or None, cwd=cwd, timeout_s=spec.timeout_s)
    if res.timed_out:
        raise RoundFailedError(f"round {index} (work {planned.work}) timed out after "
                               f"{spec.timeout_s} s: {command}")
    if res.returncode != 0:
        tail = res.stderr.strip().splitlines()[-5:]
        raise RoundFailedError(f"round {index} (work {planned.work}) exited with "
                               f"{res.returncode}: {command}\n" + "\n".join(tail))
    if res.leftover_error is not None:
        raise RoundFailedError(f"round {index} (work {planned.work}) {res.leftover_error}: "
                               f"{command}")
    parser = ReadingParser(spec.readings_regex, spec.readings_scale)
    values, times, ignored = parser.parse(res.stdout_lines,
                                          source=f"output of round {index} ({command})")
    return RoundRecord(
        round=index, work=int(planned.work), stage=planned.stage, duration_s=res.wall_s,
        returncode=res.returncode, user_s=res.user_s, sys_s=res.sys_s,
        max_rss_kb=res.max_rss_kb, readings=values.tolist(), reading_times=times.tolist(),
        ignored_lines=ignored,
    )
