"""The counters stage's rules, one function each (``workflow/rules/counters.smk``); the command
line (``perfcast postprocess``) calls the same functions.

Imports are local to each function: a collect job of the simulator needs numpy alone, and with
hundreds of such jobs the interpreter start-up is most of their cost.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from perfcast.counters.settings import (
    CollectGroupsSettings,
    CollectSettings,
    CountersFigureSettings,
    CountersSummarySettings,
    PostprocessRunSettings,
)

if TYPE_CHECKING:
    import pandas as pd

    from perfcast.counters.postprocess import UnverifiedRun

log = logging.getLogger(__name__)


def collect_group(settings: CollectSettings, out: str | Path, *, generation: str,
                  benchmark: str, group: int, source: str | Path | None = None) -> None:
    """One group run of rule ``counters_collect`` (:func:`collect_groups`): write its perf
    ``-I -x,`` CSV.

    Parameters
    ----------
    settings : CollectSettings
        the run's settings (:func:`perfcast.counters.settings.collect_settings`).
    out : str or Path
        the CSV to write (atomically).
    generation, benchmark : str
        which run (the simulator derives the run from them).
    group : int
        the group run's index.
    source : str or Path or None, default=None
        backend ``import``: the already-collected CSV to validate and copy (None for the other
        backends).

    Raises
    ------
    InputError
        an imported CSV that does not parse or lacks an event of the group.
    HostCapabilityError
        backend ``perf`` on a host that does not count the events.
    RuntimeError
        backend ``perf``: the program failed.
    """
    from perfcast.counters.collect import collect_perf, collect_simulated, import_perf_csv

    log.info("collect %s/%s group %d via %s: %s", generation, benchmark, group, settings.backend,
             list(settings.events))
    if settings.backend == "simulate":
        collect_simulated(settings, out, benchmark=benchmark, group=group)
    elif settings.backend == "perf":
        collect_perf(settings, out)
    else:
        if source is None:
            raise ValueError("the import backend needs the collected CSV (counters.import)")
        import_perf_csv(source, out, settings.events)


def collect_groups(settings: CollectGroupsSettings, outs: Sequence[str | Path], *,
                   sources: Sequence[str | Path] | None) -> None:
    """Rule ``counters_collect``: every group run of one benchmark on one generation, one after
    another (:func:`collect_group` each), so that all of them run on the same machine.

    Parameters
    ----------
    settings : CollectGroupsSettings
        the run (generation, benchmark) and one :class:`~perfcast.counters.settings.
        CollectSettings` per group, group 0 first.
    outs : sequence of str or Path
        the CSV of each group, in the same order.
    sources : sequence of str or Path, or None
        backend ``import``: the already-collected CSV of each group (None: the other backends).

    Raises
    ------
    ValueError
        as many outputs (and sources) as groups are needed.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.counters.settings import (BaseEvents, CollectGroupsSettings,
    ...     CollectSettings, SimulateSettings, SimulatedRun)
    >>> sim = SimulatedRun(role="new", clock_ghz=2.6, seed=1,
    ...                    simulate=SimulateSettings(0.02, 0.05, 0.02, 0.03))
    >>> group = CollectSettings(backend="simulate", interval_ms=100,
    ...                         base_events=BaseEvents("instructions", "cycles"),
    ...                         events=("instructions", "cycles", "l1d_cache_refill"),
    ...                         simulated=sim, perf=None)
    >>> job = CollectGroupsSettings(generation="g3", benchmark="mcf", groups=(group, group))
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     outs = [Path(tmp, "group0.csv"), Path(tmp, "group1.csv")]
    ...     collect_groups(job, outs, sources=None)
    ...     outs[0].read_text() != outs[1].read_text()  # each group run its own noise
    True
    """
    groups = settings.groups
    if len(groups) != len(outs) or (sources is not None and len(sources) != len(outs)):
        raise ValueError(f"{len(outs)} group outputs but {len(groups)} settings and "
                         f"{'no' if sources is None else len(sources)} sources")
    for group, (run, out) in enumerate(zip(groups, outs, strict=True)):
        collect_group(run, out, generation=settings.generation, benchmark=settings.benchmark,
                      group=group, source=None if sources is None else sources[group])


def postprocess_files(settings: PostprocessRunSettings, group_files: Sequence[str | Path],
                      out: str | Path) -> pd.DataFrame:
    """Rule ``counters_postprocess`` (and ``perfcast postprocess``): join one run's group CSVs
    into its per-interval table (:func:`perfcast.counters.postprocess.join_runs`); the group
    runs whose coverage nothing verified go into its metadata as ``unverified_runs``
    (:func:`unverified_runs`).

    Parameters
    ----------
    settings : PostprocessRunSettings
        events, base events, join and tolerances (``settings.postprocess``); the run's
        provenance (generation, benchmark, backend, simulated, interval_ms), written into the
        Parquet metadata before ``join`` and ``groups``.
    group_files : sequence of str or Path
        one perf CSV per counter group, the reference run (group 0) first.
    out : str or Path
        the Parquet file to write.

    Returns
    -------
    pandas.DataFrame
        the table written.

    Raises
    ------
    InputError
        naming the file, row and value: a CSV that does not parse, an event missing, runs that
        do not cover the same work (:func:`perfcast.counters.postprocess.postprocess`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.counters.perfstat import format_perf_csv
    >>> from perfcast.counters.settings import PostprocessRunSettings, PostprocessSettings
    >>> from perfcast.io import parquet_metadata
    >>> from perfcast.settings import from_section
    >>> pp = from_section(PostprocessSettings, {"events": ["branch-misses"]},
    ...                   "counters_postprocess")
    >>> counts = {"instructions": [2e8, 2e8], "cycles": [1e8, 1e8], "branch-misses": [4e5, 6e5]}
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     csv = Path(tmp, "group0.csv")
    ...     _ = csv.write_text(format_perf_csv([0.1, 0.2], counts))
    ...     table = postprocess_files(PostprocessRunSettings(pp, None), [csv],
    ...                               Path(tmp, "run.parquet"))
    ...     meta = parquet_metadata(Path(tmp, "run.parquet"))
    >>> table["ipc"].tolist(), table["branch-misses_pki"].tolist(), meta["join"]
    ([2.0, 2.0], [2.0, 3.0], 'instructions')
    """
    from perfcast.checks import input_file
    from perfcast.counters.postprocess import join_runs
    from perfcast.io import write_parquet

    pp = settings.postprocess
    table, runs = join_runs([input_file(f) for f in group_files], pp)
    log.info("%d intervals, %d counters, join=%s, %d multiplexed intervals", len(table),
             len(pp.events), pp.join, int(table["multiplexed"].sum()))
    provenance = dataclasses.asdict(settings.provenance) if settings.provenance else {}
    unverified = unverified_runs(runs, settings)
    write_parquet(table, out, metadata={**provenance, "join": pp.join,
                                        "groups": len(group_files),
                                        "unverified_runs": unverified})
    return table


#: backends whose group runs are known to be whole: the collect job fails a program that does not
#: finish (its exit status, or a missing one), and the simulator runs every program to its end
COLLECTED = ("perf", "simulate")


def unverified_runs(runs: Sequence[UnverifiedRun],
                    settings: PostprocessRunSettings) -> list[dict[str, object]]:
    """Of ``runs`` (group runs short of the longest by more than ``counters.coverage_tolerance``
    whose trace cannot tell whether they cover the whole program:
    :func:`perfcast.counters.postprocess.check_coverage`), those nothing verified, each logged as
    a warning: imported files and the command line's. A run this workflow collected is whole,
    since its collect job fails a program that does not finish: said at INFO level, and not
    returned.

    Not refused: a shortfall beyond the coverage tolerance is also what whole runs show where a
    software event stands in for instructions (CPU time varies with the host's load) and in the
    simulator (``run_variation``: in 19 of 128 joins of its whole runs tried, a run was 2.0-3.6 %
    short with a trace that could not judge it).
    """
    pp = settings.postprocess
    collected = settings.provenance is not None and settings.provenance.backend in COLLECTED
    for r in runs:
        if collected:
            log.info("%s; it was collected here, and its program finished", r.describe())
        else:
            log.warning("%s: if it was cut short, its counts are stretched over the whole "
                        "program. Check that its program finished (counters.coverage_tolerance "
                        "%g)", r.describe(), pp.coverage_tolerance)
    return [] if collected else [r.as_dict() for r in runs]


def ipc_figure(settings: CountersFigureSettings, counter_files: Sequence[str | Path],
               out: str | Path) -> None:
    """Rule ``counters_figure``: IPC over time of every benchmark on both generations
    (:func:`perfcast.counters.figures.ipc_over_time`).

    Parameters
    ----------
    settings : CountersFigureSettings
        ``(generation, benchmark)`` of each file, in the same order; ``(old, new)``, the
        legend's order; whether the data are simulated (said in the title).
    counter_files : sequence of str or Path
        the post-processed tables, one per run.
    out : str or Path
        the PNG to write.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.counters.settings import CountersFigureSettings
    >>> from perfcast.io import write_parquet
    >>> settings = CountersFigureSettings(runs=(("g2", "mcf"), ("g3", "mcf")),
    ...                                   generations=("g2", "g3"), simulated=True)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     files = [Path(tmp, "g2.parquet"), Path(tmp, "g3.parquet")]
    ...     for path, ipc in zip(files, (1.0, 1.3)):
    ...         write_parquet(pd.DataFrame({"time": [0.1, 0.2], "ipc": [ipc, ipc]}), path)
    ...     ipc_figure(settings, files, Path(tmp, "ipc.png"))
    ...     Path(tmp, "ipc.png").read_bytes()[:4]
    b'\x89PNG'
    """
    from perfcast.counters.figures import ipc_over_time
    from perfcast.io import read_parquet

    traces: dict[str, dict[str, pd.DataFrame]] = {}
    for (gen, bench), path in zip(settings.runs, counter_files, strict=True):
        traces.setdefault(bench, {})[gen] = read_parquet(path, ["time", "ipc"])
    ipc_over_time(traces, settings.generations, Path(out),
                  SIMULATED_NOTE if settings.simulated else "")


#: the note figures of simulated data carry in their title
SIMULATED_NOTE = "SIMULATED data"


def summary_file(settings: CountersSummarySettings, counter_files: Sequence[str | Path],
                 out: str | Path) -> pd.DataFrame:
    """Rule ``counters_summary``: per run, its intervals, totals, mean IPC, multiplexed
    intervals and unverified group runs (sorted by generation and benchmark); a warning in the
    log for each run perf multiplexed and each group run whose coverage of the program nothing
    verified (:func:`unverified_runs`).

    Parameters
    ----------
    settings : CountersSummarySettings
        ``(generation, benchmark)`` of each file, in the same order.
    counter_files : sequence of str or Path
        the post-processed tables, one per run.
    out : str or Path
        the CSV to write.

    Returns
    -------
    pandas.DataFrame
        the table written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import pandas as pd
    >>> from perfcast.counters.settings import CountersSummarySettings
    >>> from perfcast.io import write_parquet
    >>> run = pd.DataFrame({"instructions": [4e8, 4e8], "cycles": [2e8, 2e8],
    ...                     "pct_running_min": [100.0, 100.0], "multiplexed": [False, False]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     write_parquet(run, Path(tmp, "mcf.parquet"))
    ...     table = summary_file(CountersSummarySettings(runs=(("g2", "mcf"),)),
    ...                          [Path(tmp, "mcf.parquet")], Path(tmp, "summary.csv"))
    >>> table[["generation", "benchmark", "intervals", "mean_ipc"]].values.tolist()
    [['g2', 'mcf', 2, 2.0]]
    """
    import pandas as pd

    from perfcast.io import parquet_metadata, read_parquet, write_csv

    rows = []
    for (gen, bench), path in zip(settings.runs, counter_files, strict=True):
        t = read_parquet(path, ["instructions", "cycles", "pct_running_min", "multiplexed"])
        unverified = parquet_metadata(path).get("unverified_runs") or []
        rows.append({"generation": gen, "benchmark": bench, "intervals": len(t),
                     "instructions": float(t["instructions"].sum()),
                     "cycles": float(t["cycles"].sum()),
                     "mean_ipc": float(t["instructions"].sum() / t["cycles"].sum()),
                     "multiplexed_intervals": int(t["multiplexed"].sum()),
                     "lowest_pct_running": float(t["pct_running_min"].min()),
                     "unverified_group_runs": len(unverified)})
        if rows[-1]["multiplexed_intervals"]:
            log.warning("%s/%s: %d of %d intervals multiplexed (lowest %.1f %% running): their "
                        "counts are perf's scaled estimates", gen, bench,
                        rows[-1]["multiplexed_intervals"], len(t),
                        rows[-1]["lowest_pct_running"])
        for r in unverified:
            log.warning("%s/%s: group run %s retired %.1f %% of the instructions of %s, and its "
                        "trace cannot tell whether it covers the whole program", gen, bench,
                        r["file"], 100 * r["instructions_share"], r["longest"])
    table = pd.DataFrame(rows).sort_values(["generation", "benchmark"], ignore_index=True)
    write_csv(table, out)
    return table
