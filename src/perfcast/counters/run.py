"""File-level steps of the counters stage, one per rule.

Imports are local to each step: a collect job of the simulator needs numpy alone, and with
hundreds of such jobs the interpreter start-up is most of their cost.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)


def collect_group(
    backend: str,
    out: str | Path,
    *,
    bench: str,
    gen: str,
    role: str,
    group: int,
    events: list[str],
    interval_ms: int,
    base: tuple[str, str],
    seed: int = 0,
    clock_ghz: float | None = None,
    simulate: dict | None = None,
    command: str | None = None,
    env: dict | None = None,
    perf: str = "perf",
    timeout_s: float | None = None,
    source: str | None = None,
) -> None:
    """Write one group run's perf CSV with the configured backend."""
    from perfcast.counters.collect import collect_perf, collect_simulated, import_perf_csv

    log.info("collect %s/%s group %d via %s: %s", gen, bench, group, backend, events)
    if backend == "simulate":
        collect_simulated(bench, role, group, events, out, seed=seed, interval_ms=interval_ms,
                          base=base, clock_ghz=clock_ghz, **(simulate or {}))
    elif backend == "perf":
        if not command:
            raise ValueError(f"benchmark {bench!r}: no command (declare it under programs:)")
        collect_perf(command, events, out, interval_ms=interval_ms, perf=perf, env=env,
                     timeout_s=timeout_s)
    elif backend == "import":
        if not source:
            raise ValueError("import backend: no source file")
        import_perf_csv(source, out, events)
    else:
        raise ValueError(f"unknown backend {backend!r}")


def postprocess_files(group_files: list[str], out: str | Path, *, events: list[str],
                      base: tuple[str, str], join: str, meta: dict) -> None:
    from perfcast.counters.events import BaseEvents
    from perfcast.counters.postprocess import postprocess
    from perfcast.io import write_parquet

    table = postprocess(group_files, events, BaseEvents(*base), join)
    log.info("%d intervals, %d counters, join=%s", len(table), len(events), join)
    write_parquet(table, out, metadata={**meta, "join": join, "groups": len(group_files)})


def ipc_figure(files: dict[str, dict[str, str]], gens: tuple[str, str], out: str | Path,
               note: str = "") -> None:
    """``files[bench][gen]`` -> counters Parquet; draws IPC over time for each benchmark."""
    from perfcast.io import read_parquet
    from perfcast.model import plots

    runs = {b: {g: read_parquet(p, ["time", "ipc"]) for g, p in d.items()} for b, d in
            files.items()}
    plots.ipc_over_time(runs, gens, Path(out), note)
