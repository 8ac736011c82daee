"""The counters stage's rules, one function each (``workflow/rules/counters.smk``); the command
line (``perfcast postprocess``) calls the same functions.

Imports are local to each function: a collect job of the simulator needs numpy alone, and with
hundreds of such jobs the interpreter start-up is most of their cost.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.counters.settings import CollectSettings, PostprocessSettings

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


def collect_group(settings: CollectSettings, out: str | Path, *, generation: str,
                  benchmark: str, group: int, source: str | Path | None = None) -> None:
    """One group run of rule ``counters_collect`` (:func:`collect_groups`): write its perf
    ``-I -x,`` CSV.

    Parameters
    ----------
    settings : the run's settings (:func:`perfcast.counters.settings.collect_settings`).
    out : the CSV to write (atomically).
    generation, benchmark, group : which run (the simulator derives the run from them).
    source : backend ``import``: the already-collected CSV to validate and copy.

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
        sim = settings.simulated
        collect_simulated(benchmark, sim.role, group, settings.events, out, seed=sim.seed,
                          interval_ms=settings.interval_ms, base=settings.base_events.names,
                          clock_ghz=sim.clock_ghz, scale=sim.simulate.scale,
                          noise=sim.simulate.noise, jitter=sim.simulate.jitter,
                          run_variation=sim.simulate.run_variation)
    elif settings.backend == "perf":
        run = settings.perf
        collect_perf(run.command, settings.events, out, interval_ms=settings.interval_ms,
                     perf=run.binary, env=run.env, timeout_s=run.timeout_s)
    else:
        if source is None:
            raise ValueError("the import backend needs the collected CSV (counters.import)")
        import_perf_csv(source, out, settings.events)


def collect_groups(settings: Sequence[Mapping[str, Any]], outs: Sequence[str | Path], *,
                   generation: str, benchmark: str,
                   sources: Sequence[str | Path] | None = None) -> None:
    """Rule ``counters_collect``: every group run of one benchmark on one generation, one after
    another (:func:`collect_group` each), so that all of them run on the same machine.

    Parameters
    ----------
    settings : one settings map per group (:func:`perfcast.settings.as_params` of
        :func:`perfcast.counters.settings.collect_settings`), group 0 first.
    outs : the CSV of each group, in the same order.
    sources : backend ``import``: the already-collected CSV of each group.
    """
    from perfcast.settings import build

    if len(settings) != len(outs) or (sources is not None and len(sources) != len(outs)):
        raise ValueError(f"{len(outs)} group outputs but {len(settings)} settings and "
                         f"{'no' if sources is None else len(sources)} sources")
    for group, (params, out) in enumerate(zip(settings, outs, strict=True)):
        collect_group(build(CollectSettings, params), out, generation=generation,
                      benchmark=benchmark, group=group,
                      source=None if sources is None else sources[group])


def postprocess_files(group_files: Sequence[str | Path], out: str | Path,
                      settings: PostprocessSettings, *,
                      provenance: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Rule ``counters_postprocess`` (and ``perfcast postprocess``): join one run's group CSVs
    into its per-interval table (:func:`perfcast.counters.postprocess.postprocess`).

    Parameters
    ----------
    group_files : one perf CSV per counter group, the reference run (group 0) first.
    out : the Parquet file to write.
    settings : events, base events and join.
    provenance : written into the Parquet metadata before ``join`` and ``groups`` (the rule's:
        generation, benchmark, backend, simulated, interval_ms).

    Returns
    -------
    pandas.DataFrame
        the table written.
    """
    from perfcast.checks import input_file
    from perfcast.counters.postprocess import postprocess
    from perfcast.io import write_parquet

    table = postprocess([input_file(f) for f in group_files], settings)
    log.info("%d intervals, %d counters, join=%s, %d multiplexed intervals", len(table),
             len(settings.events), settings.join, int(table["multiplexed"].sum()))
    write_parquet(table, out, metadata={**(provenance or {}), "join": settings.join,
                                        "groups": len(group_files)})
    return table


def ipc_figure(counter_files: Sequence[str | Path], runs: Sequence[tuple[str, str]],
               generations: tuple[str, str], out: str | Path, note: str = "") -> None:
    """Rule ``counters_figure``: IPC over time of every benchmark on both generations.

    Parameters
    ----------
    counter_files : the post-processed tables, one per run.
    runs : ``(generation, benchmark)`` of each file, in the same order.
    generations : ``(old, new)``, the legend's order.
    out : the PNG to write.
    note : added to the title (e.g. ``SIMULATED data``).
    """
    from perfcast.counters.figures import ipc_over_time
    from perfcast.io import read_parquet

    traces: dict[str, dict[str, pd.DataFrame]] = {}
    for (gen, bench), path in zip(runs, counter_files, strict=True):
        traces.setdefault(bench, {})[gen] = read_parquet(path, ["time", "ipc"])
    ipc_over_time(traces, generations, Path(out), note)


def summary_file(counter_files: Sequence[str | Path], runs: Sequence[tuple[str, str]],
                 out: str | Path) -> pd.DataFrame:
    """Rule ``counters_summary``: per run, its intervals, totals, mean IPC and multiplexed
    intervals (sorted by generation and benchmark); a warning in the log for each run perf
    multiplexed."""
    import pandas as pd

    from perfcast.io import read_parquet, write_csv

    rows = []
    for (gen, bench), path in zip(runs, counter_files, strict=True):
        t = read_parquet(path, ["instructions", "cycles", "pct_running_min", "multiplexed"])
        rows.append({"generation": gen, "benchmark": bench, "intervals": len(t),
                     "instructions": float(t["instructions"].sum()),
                     "cycles": float(t["cycles"].sum()),
                     "mean_ipc": float(t["instructions"].sum() / t["cycles"].sum()),
                     "multiplexed_intervals": int(t["multiplexed"].sum()),
                     "lowest_pct_running": float(t["pct_running_min"].min())})
        if rows[-1]["multiplexed_intervals"]:
            log.warning("%s/%s: %d of %d intervals multiplexed (lowest %.1f %% running): their "
                        "counts are perf's scaled estimates", gen, bench,
                        rows[-1]["multiplexed_intervals"], len(t),
                        rows[-1]["lowest_pct_running"])
    table = pd.DataFrame(rows).sort_values(["generation", "benchmark"], ignore_index=True)
    write_csv(table, out)
    return table
