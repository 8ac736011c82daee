"""The grid shipped with perfcast: a sensitivity result for a user who cannot restrict a run.

Profiling a program live needs root (or a delegated cgroup v2 subtree): every run is made in a
fresh control group with the level's limits. Where this host refuses (and
``sensitivity.cgroup.if_unavailable`` is ``shipped``), the program is profiled instead by
*replaying* a grid that perfcast itself measured with its cgroup backend on a reference machine
and ships as package data (``perfcast/sensitivity/data/shipped_grid.{csv,json}``): every level
of the CPU and memory dimensions, each cell one real run of the shipped workload under those
limits (:func:`measure_grid`). The profile then runs the same campaign (binary sampling, the
product of the chosen levels, PCHIP) against that grid, and its error against
the grid is known exactly. The summary says which it is: the live profiling skipped, and why;
the result replayed, with where and when the grid was measured (the ``.json`` beside it).

Regenerate the grid (as root, on a quiet machine) with::

    python -m perfcast.sensitivity.shipped config/config.yaml src/perfcast/sensitivity/data \\
        --repeats 5

Reference: L. Wang, D. Qian, Z. Luan, G. Wei, R. Wang, H. Yang, "Speeding up profiling program's
runtime characteristics for workload consolidation", PLoS ONE 12(4): e0175861, 2017.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import platform
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from perfcast.io import write_csv, write_json
from perfcast.sensitivity.replay import AS_MEASURED, MeasuredGrid, ReplayBackend, read_measurements

log = logging.getLogger(__name__)

#: the dimensions the shipped grid varies: CPU (cores of CPU time) and memory (MiB)
DIMENSIONS = ("cpu_quota", "memory_mb")


def shipped_files() -> tuple[Path, Path]:
    """The shipped grid (CSV, a measurement table) and its provenance (JSON)."""
    data = resources.files("perfcast.sensitivity") / "data"
    return Path(str(data / "shipped_grid.csv")), Path(str(data / "shipped_grid.json"))


def provenance() -> dict[str, Any]:
    """Where, when and how the shipped grid was measured (its ``.json``)."""
    import json

    return json.loads(shipped_files()[1].read_text())


def shipped_backend(program: str) -> ReplayBackend | None:
    """A replay of ``program``'s shipped grid (None: the grid holds no such program)."""
    table = read_measurements(shipped_files()[0])
    if program not in set(table["program"]):
        return None
    return ReplayBackend(MeasuredGrid.from_frame(table, program, AS_MEASURED), None)


def grid_rows(program: str, higher_is_better: bool,
              outcomes: Mapping[tuple[float, float], float | None]) -> list[dict[str, Any]]:
    """Measurement-table rows (``program, cpu_cores, mem_gb, metric, value``) of one program's
    runs: ``(cpu_quota cores, memory MiB) -> performance`` (None: the run failed, an empty
    cell). Memory is written in GiB (MiB / 1024), the table's unit; the metric is
    ``throughput`` where higher is better, else ``runtime_s`` (the replay's two directions).

    Parameters
    ----------
    program : str
        The program's name in the table.
    higher_is_better : bool
        Its metric is a throughput (else a runtime).
    outcomes : mapping of (float, float) to float or None
        ``(cpu_quota cores, memory MiB) -> performance`` of each cell.

    Examples
    --------
    >>> rows = grid_rows("p", False, {(1.0, 512.0): 2.5, (0.5, 512.0): None})
    >>> [(r["cpu_cores"], r["mem_gb"], r["value"]) for r in rows]  # sorted by level
    [(0.5, 0.5, None), (1.0, 0.5, 2.5)]
    """
    metric = "throughput" if higher_is_better else "runtime_s"
    return [{"program": program, "cpu_cores": cpu, "mem_gb": mem / 1024, "metric": metric,
             "value": value} for (cpu, mem), value in sorted(outcomes.items())]


def measure_grid(config: Mapping[str, Any], out_dir: str | Path,
                 repeats: int | None = None) -> pd.DataFrame:
    """Measure every (CPU, memory) level of each program of ``config``'s sensitivity section with
    the cgroup backend (one run a cell, other dimensions unrestricted) and write the shipped grid
    and its provenance into ``out_dir``. Needs root (or a delegated cgroup v2 subtree).

    Parameters
    ----------
    config : Mapping
        A perfcast config (its ``sensitivity``, ``programs`` and ``seed``).
    out_dir : str or Path
        Where ``shipped_grid.csv`` and ``shipped_grid.json`` are written.
    repeats : int, default=None
        Runs a cell (their mean); None: the section's ``repeats``.

    Returns
    -------
    pandas.DataFrame
        The table written.
    """
    from perfcast import __version__
    from perfcast.sensitivity.backends import CgroupBackend
    from perfcast.sensitivity.settings import profile_settings
    from perfcast.settings import validate
    from perfcast.warmup.journal import host_metadata

    section = dict(config["sensitivity"])
    section["dimensions"] = {k: v for k, v in section["dimensions"].items() if k in DIMENSIONS}
    if repeats is not None:
        section["repeats"] = repeats
    section = validate(section, "sensitivity", where="sensitivity")
    load_before = os.getloadavg()
    rows, programs = [], {}
    for name in sorted(section["programs"]):
        settings = profile_settings(section, name, config.get("programs") or {}, config["seed"])
        be = CgroupBackend(settings)
        be.probe()
        cpu, mem = (be.model[d].levels for d in DIMENSIONS)
        outcomes = {}
        for c in cpu:
            for m in mem:
                out = be.run({"cpu_quota": c, "memory_mb": m})
                outcomes[(c, m)] = out.performance if out.ok else None
        rows += grid_rows(name, be.higher_is_better, outcomes)
        # the command as configured (``{python}``, ``{work}``): no path of the measuring host
        definition = settings.program.definition
        programs[name] = {"command": definition.command, "work": definition.work,
                          "metric": settings.program.metric.name,
                          "higher_is_better": be.higher_is_better, "cpu_quota": list(cpu),
                          "memory_mb": list(mem),
                          "failed_cells": sum(v is None for v in outcomes.values())}
    table = pd.DataFrame(rows)
    out_dir = Path(out_dir)
    write_csv(table, out_dir / "shipped_grid.csv")
    write_json({
        "what": "every CPU x memory level of the shipped workloads, each cell the mean of "
                "`repeats` real runs measured by perfcast's cgroup backend "
                "(perfcast.sensitivity.shipped)",
        "measured": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "perfcast": __version__, "host": {**host_metadata(), "cpus": os.cpu_count(),
                                          "kernel": platform.release()},
        # the host's 1-, 5- and 15-minute load averages before and after: a busy host's cells
        # scatter (each run shares the CPUs with whatever else runs)
        "load_average": {"before": [round(v, 2) for v in load_before],
                         "after": [round(v, 2) for v in os.getloadavg()]},
        "repeats": section["repeats"], "units": {"cpu_cores": "cores of CPU time "
                                                     "(cpu_quota)", "mem_gb": "GiB (memory_mb "
                                                     "/ 1024)"},
        "programs": programs,
    }, out_dir / "shipped_grid.json")
    return table


def main(argv: list[str] | None = None) -> int:
    """``python -m perfcast.sensitivity.shipped CONFIG OUT_DIR``: :func:`measure_grid`."""
    from perfcast.configfile import load_config_file
    from perfcast.settings import validate

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", help="a perfcast config (its sensitivity section)")
    p.add_argument("out_dir", help="where shipped_grid.csv and shipped_grid.json are written")
    p.add_argument("--repeats", type=int, default=None,
                   help="runs a cell, their mean (default: the config's sensitivity.repeats)")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    config = validate(load_config_file(args.config), "config", where=args.config)
    measure_grid(config, args.out_dir, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
