"""Settings of the counters stage, from the validated ``counters`` config section.

Frozen dataclasses without defaults: every default lives in the schema
(``src/perfcast/schemas/counters.schema.yaml`` and ``counters_postprocess.schema.yaml``), which
:func:`perfcast.settings.validate` applies before :func:`perfcast.settings.build` makes these
objects. The fields of :class:`BaseEvents`, :class:`PostprocessSettings`,
:class:`SimulateSettings` are keys of the section. A collect job gets a :class:`CollectSettings`:
only what its one group run depends on (:func:`collect_settings`), so that a change reruns only
the runs it concerns (one generation's clock: that generation's simulated runs).

Each rule of the stage receives one settings object (its one ``settings`` param, built by a
function of ``workflow/rules/common/counters.smk``): :class:`CollectGroupsSettings`,
:class:`PostprocessRunSettings`, :class:`WholerunSettings`, :class:`CountersFigureSettings`,
:class:`CountersSummarySettings`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from perfcast.program import Program, check_program
from perfcast.settings import build


@dataclass(frozen=True)
class BaseEvents:
    """``counters.base_events``: the events that play the roles of instructions and cycles on
    the collecting host (counted in every group run: the PKI denominator and the axis the runs
    are joined on)."""

    instructions: str
    cycles: str

    @property
    def names(self) -> tuple[str, str]:
        """``(instructions, cycles)``."""
        return (self.instructions, self.cycles)


@dataclass(frozen=True)
class ReadSettings:
    """``counters.read``: the ``-x`` separator (``auto``: detected) and the aggregation ids
    whose rows are summed (shell patterns; empty: all)."""

    separator: str
    select: tuple[str, ...]


@dataclass(frozen=True)
class PostprocessSettings:
    """How the group runs of one benchmark on one generation become its table: ``events``,
    ``base_events``, ``join``, ``read``, ``run_tolerance``, ``software_run_tolerance``,
    ``coverage_tolerance`` and ``min_pct_running`` of the ``counters`` section (schema
    ``counters_postprocess``)."""

    events: tuple[str, ...]
    base_events: BaseEvents
    join: str
    read: ReadSettings
    run_tolerance: float
    software_run_tolerance: float
    coverage_tolerance: float
    min_pct_running: float


@dataclass(frozen=True)
class SimulateSettings:
    """``counters.simulate``: the two-generation simulator's length scale, noise and run-to-run
    variation."""

    scale: float
    noise: float
    jitter: float
    run_variation: float


@dataclass(frozen=True)
class SimulatedRun:
    """What the simulator needs for one run besides its events.

    Attributes
    ----------
    role : str
        ``"old"`` or ``"new"``: the simulated core of this run's generation
        (:data:`perfcast.counters.simulate.GENERATIONS`).
    clock_ghz : float or None
        ``counters.clock_ghz`` of this run's generation (None: the core's own clock).
    seed : int
        the workflow's top-level ``seed``.
    simulate : SimulateSettings
        ``counters.simulate``.
    """

    role: str
    clock_ghz: float | None
    seed: int
    simulate: SimulateSettings


@dataclass(frozen=True)
class PerfRun:
    """The ``perf`` backend's run of one benchmark.

    Attributes
    ----------
    binary : str
        ``counters.perf.binary``.
    timeout_s : float
        ``counters.perf.timeout_s``.
    command : str
        the benchmark's program (``counters.perf.programs``, else the benchmark's name, in
        the top-level ``programs:`` map) rendered by :mod:`perfcast.program`.
    env : mapping of str to str
        the program's environment, rendered the same way.
    cwd : str or None
        the folder the program runs in (the program's ``cwd``, relative to the workflow's
        working directory; None: that directory).
    """

    binary: str
    timeout_s: float
    command: str
    env: Mapping[str, str]
    cwd: str | None


@dataclass(frozen=True)
class CollectSettings:
    """Everything one group run (one benchmark, one generation, one counter group) depends on.

    Attributes
    ----------
    backend : str
        ``counters.backend`` (``simulate``, ``perf`` or ``import``).
    interval_ms : int
        ``counters.interval_ms``.
    base_events : BaseEvents
        ``counters.base_events``.
    events : tuple of str
        this group's events, the base events first
        (:func:`~perfcast.counters.events.make_groups`).
    simulated : SimulatedRun or None
        the simulator's inputs (backend ``simulate`` only, else None).
    perf : PerfRun or None
        the program to run under perf (backend ``perf`` only, else None).
    """

    backend: str
    interval_ms: int
    base_events: BaseEvents
    events: tuple[str, ...]
    simulated: SimulatedRun | None
    perf: PerfRun | None


def perf_run(benchmark: str, perf: Mapping[str, Any],
             programs: Mapping[str, Mapping[str, Any]], seed: int) -> PerfRun:
    """The perf backend's run of ``benchmark``: its program rendered as a shell command.

    Parameters
    ----------
    benchmark : str
        the benchmark's name (``counters.benchmarks``).
    perf : mapping of str to Any
        the validated ``counters.perf`` section.
    programs : mapping of str to mapping of str to Any
        the top-level ``programs:`` map.
    seed : int
        the top-level ``seed`` (``{seed}``).

    Returns
    -------
    PerfRun
        ``command`` rendered with :meth:`perfcast.program.Program.render`: ``{python}`` is this
        interpreter, ``{work}`` the program's ``work``, ``{seed}`` the seed (the placeholder set
        every stage supplies, :data:`perfcast.program.PLACEHOLDERS`); other braces are literal
        (``awk '{print $1}'``), ``{{``/``}}`` single braces.

    Raises
    ------
    InputError
        the program is not in ``programs:``, or its command uses a placeholder without a value
        (``{work}`` with no ``work`` amount, a misspelt name).
    """
    name = perf["programs"].get(benchmark, benchmark)
    program = Program.from_config(benchmark, {"program": name}, programs, stage="counters.perf")
    check_program(program, "counters", where=f"counters.perf program {name!r}")
    return PerfRun(binary=perf["binary"], timeout_s=perf["timeout_s"],
                   command=program.render(seed=seed), env=program.render_env(seed=seed),
                   cwd=program.cwd)


def collect_settings(counters: Mapping[str, Any], *, generation: str, benchmark: str,
                     events: Sequence[str], programs: Mapping[str, Mapping[str, Any]],
                     seed: int) -> CollectSettings:
    """The settings of one group run: only those of its backend, and of its generation.

    Parameters
    ----------
    counters : mapping of str to Any
        the validated ``counters`` section (every default filled in).
    generation : str
        the run's generation (a value of ``counters.generations``).
    benchmark : str
        the run's benchmark.
    events : sequence of str
        the group's events, base events first.
    programs : mapping of str to mapping of str to Any
        the top-level ``programs:`` map (backend ``perf``).
    seed : int
        the top-level ``seed`` (backend ``simulate``).

    Returns
    -------
    CollectSettings
        only the settings of the section's backend; of ``counters.clock_ghz`` only this
        generation's clock.

    Raises
    ------
    InputError
        backend ``perf``: see :func:`perf_run`.

    Examples
    --------
    >>> from perfcast.settings import validate
    >>> counters = validate({"generations": {"old": "g2", "new": "g3"}, "events": ["a"],
    ...                      "benchmarks": ["mcf"], "clock_ghz": {"g2": 2.5, "g3": 2.6}},
    ...                     "counters")
    >>> s = collect_settings(counters, generation="g3", benchmark="mcf",
    ...                      events=["instructions", "cycles", "a"], programs={}, seed=7)
    >>> s.backend, s.simulated.role, s.simulated.clock_ghz, s.perf
    ('simulate', 'new', 2.6, None)
    """
    backend = counters["backend"]
    simulated = perf = None
    if backend == "simulate":
        simulated = SimulatedRun(
            role="old" if generation == counters["generations"]["old"] else "new",
            clock_ghz=counters["clock_ghz"].get(generation), seed=seed,
            simulate=build(SimulateSettings, counters["simulate"]))
    elif backend == "perf":
        perf = perf_run(benchmark, counters["perf"], programs, seed)
    return CollectSettings(backend=backend, interval_ms=counters["interval_ms"],
                           base_events=build(BaseEvents, counters["base_events"]),
                           events=tuple(events), simulated=simulated, perf=perf)


@dataclass(frozen=True)
class CollectGroupsSettings:
    """Rule ``counters_collect``: every group run of one benchmark on one generation.

    Attributes
    ----------
    generation : str
        the run's generation (a value of ``counters.generations``).
    benchmark : str
        the run's benchmark.
    groups : tuple of CollectSettings
        one per counter group, group 0 (the reference run) first (:func:`collect_settings`).
    """

    generation: str
    benchmark: str
    groups: tuple[CollectSettings, ...]


@dataclass(frozen=True)
class RunProvenance:
    """What a counter table's metadata says about its run (rule ``counters_postprocess``).

    Attributes
    ----------
    generation, benchmark : str
        which run.
    backend : str
        ``counters.backend``.
    simulated : bool
        the counts come from the simulator (backend ``simulate``).
    interval_ms : int
        ``counters.interval_ms``.
    """

    generation: str
    benchmark: str
    backend: str
    simulated: bool
    interval_ms: int


@dataclass(frozen=True)
class PostprocessRunSettings:
    """Rule ``counters_postprocess`` (and ``perfcast postprocess``): how one run's group CSVs
    become its table, and what its metadata says about the run.

    Attributes
    ----------
    postprocess : PostprocessSettings
        the ``counters`` section's keys of schema ``counters_postprocess``.
    provenance : RunProvenance or None
        written into the table's metadata (None: the command line, which knows no run).
    """

    postprocess: PostprocessSettings
    provenance: RunProvenance | None


@dataclass(frozen=True)
class WholerunSettings:
    """Rule ``counters_wholerun``: one run's whole-run counts as its counter table.

    Attributes
    ----------
    postprocess : PostprocessSettings
        ``counters.events`` and ``counters.base_events`` (the other keys are not used).
    generation, benchmark : str
        which run (a CSV table names them in its machine and benchmark columns).
    clock_ghz : float or None
        ``counters.clock_ghz`` of this run's generation (None: the file's own time).
    pattern_fields : tuple of str
        the placeholders of ``counters.wholerun.pattern`` among ``gen`` and ``bench``: what
        the file's path identifies (one left out must be a column of a CSV table).
    """

    postprocess: PostprocessSettings
    generation: str
    benchmark: str
    clock_ghz: float | None
    pattern_fields: tuple[str, ...]


@dataclass(frozen=True)
class CountersFigureSettings:
    """Rule ``counters_figure``: IPC over time of every run.

    Attributes
    ----------
    runs : tuple of (str, str)
        ``(generation, benchmark)`` of each input table, in the same order.
    generations : (str, str)
        ``(old, new)``: colours and legend order.
    simulated : bool
        the counts come from the simulator (said in the title).
    """

    runs: tuple[tuple[str, str], ...]
    generations: tuple[str, str]
    simulated: bool


@dataclass(frozen=True)
class CountersSummarySettings:
    """Rule ``counters_summary``: one row per run.

    Attributes
    ----------
    runs : tuple of (str, str)
        ``(generation, benchmark)`` of each input table, in the same order.
    """

    runs: tuple[tuple[str, str], ...]
