"""Collection backends: one perf ``-I -x,`` CSV per generation x benchmark x counter group.

``perf``: runs the real program under ``perf stat`` after checking the host counts the events;
``import``: validates and takes over files collected elsewhere; ``simulate``: the two-generation
simulator (the embedded default).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from perfcast.counters.events import resolve_event, user_mode_blind
from perfcast.counters.perfstat import IMPORT_HEADER, parse_perf_stat, to_wide
from perfcast.counters.settings import CollectSettings
from perfcast.counters.simulate import simulate_group_csv
from perfcast.errors import HostCapabilityError, InputError
from perfcast.io import atomic_path, text_lines
from perfcast.process import read_status, run_measured, status_shell
from perfcast.program import run_dir


def check_perf_events(events: list[str], perf: str) -> None:
    """Fail unless ``perf stat`` counts every event on this host.

    A VM without a hardware PMU answers ``<not supported>`` for cycles and instructions; say so
    instead of collecting zeros.

    Raises
    ------
    HostCapabilityError
        ``perf`` is not installed, does not know an event, or reads ``<not supported>`` /
        ``<not counted>`` for one, or restricts one the scheduler counts in the kernel to user
        mode (:func:`~perfcast.counters.events.user_mode_blind`: it would read 0).
    """
    if shutil.which(perf) is None:
        raise HostCapabilityError(f"'{perf}' not found: install linux-perf (Debian) / perf")
    cmd = [perf, "stat", "-x,", "-e", ",".join(events), "--", "true"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 and not proc.stderr:
        raise HostCapabilityError(f"'{' '.join(cmd)}' failed with exit code {proc.returncode}")
    unsupported, uncounted, blind = [], [], []
    for line in proc.stderr.splitlines():
        fields = line.split(",")
        if len(fields) < 7 or line.startswith("#"):
            continue
        event = ",".join(fields[2:-4])
        if fields[0] == "<not supported>":
            unsupported.append(event)
        elif fields[0] == "<not counted>":
            uncounted.append(event)
        elif (why := user_mode_blind(event)) is not None:
            blind.append(why)
    if "event syntax error" in proc.stderr or "Cannot find PMU" in proc.stderr:
        raise HostCapabilityError(f"perf does not know an event of {events}: {proc.stderr.strip()}")
    if unsupported:
        raise HostCapabilityError(
            f"this host does not count {sorted(set(unsupported))} (perf reads <not supported>): "
            "it exposes no hardware PMU for them (typical of VMs and containers). Collect on "
            "bare metal or a VM with PMU pass-through, or use the import backend with files "
            "collected there."
        )
    if uncounted:
        raise HostCapabilityError(
            f"perf could not count {sorted(set(uncounted))} on this host (<not counted>): "
            "too many events for the PMU at once, or counters taken by another tool"
        )
    if blind:
        raise HostCapabilityError("; ".join(blind))
    if proc.returncode != 0:
        raise HostCapabilityError(f"'{' '.join(cmd)}' failed: {proc.stderr.strip()}")


def collect_perf(settings: CollectSettings, out: str | Path) -> None:
    """Run the benchmark's program under ``perf stat -I <interval_ms> -x, -e <events> -o out``
    (atomically).

    Parameters
    ----------
    settings : CollectSettings
        the run's settings, backend ``perf``: the group's events (base events first), the
        interval and ``settings.perf``: the program (a shell command run with ``sh -c``,
        already rendered), its environment (added to this process's for the run), the perf
        binary and the timeout after which the run is killed.
    out : str or Path
        the CSV to write; it appears only when the run succeeded and perf counted every event.

    Raises
    ------
    HostCapabilityError
        perf is missing or this host does not count an event (:func:`check_perf_events`).
    RuntimeError
        the command failed (its own exit status, which ``perf stat -I`` does not pass on:
        :func:`perfcast.process.status_shell`), timed out or left a process running (killed,
        and named), or perf wrote no line for an event.
    ValueError
        settings of another backend.
    """
    run, events = settings.perf, settings.events
    if settings.backend != "perf" or run is None:
        raise ValueError(f"collect_perf needs perf settings, not backend {settings.backend!r}")
    command, perf = run.command, run.binary
    check_perf_events(list(events), perf)
    with atomic_path(out) as tmp:
        status_file = tmp.with_name(tmp.name + ".status")
        argv = [perf, "stat", "-I", str(settings.interval_ms), "-x,", "-e", ",".join(events),
                "-o", os.path.abspath(tmp), "--",
                *status_shell(command, os.path.abspath(status_file))]
        try:
            res = run_measured(argv, env=run.env, cwd=run_dir(run.cwd, where=f"'{command}'"),
                               timeout_s=run.timeout_s)
            status = read_status(status_file)
        finally:
            status_file.unlink(missing_ok=True)
        if not res.ok or status != 0:
            if res.timed_out:
                why = "timed out"
            elif res.leftover_error is not None:
                why = res.leftover_error
            elif not res.ok:
                why = f"perf's exit code {res.returncode}"
            else:
                why = "killed: no exit status" if status is None else f"exit code {status}"
            raise RuntimeError(f"'{command}' under perf failed ({why}):\n{res.stderr[-2000:]}")
        long = parse_perf_stat(tmp)
        missing = sorted(e for e in events if not resolve_event(e, set(long["event"])))
        if missing:
            raise RuntimeError(f"perf wrote no lines for {missing} in {out}")


def import_perf_csv(source: str | Path, out: str | Path, events: Sequence[str]) -> None:
    """Copy an already-collected perf file to ``out``, with a first line naming ``source``
    (:data:`~perfcast.counters.perfstat.IMPORT_HEADER`), so that every later error about the
    copy names the user's file and its line, and validate the copy (any form
    :mod:`.perfstat` reads; parses, has ``events`` under their names or as modified / hybrid
    copies). The source is read once (:func:`perfcast.io.text_lines`): a FIFO or a ``<(...)``
    pipe imports as the file it carries; its lines are copied with ``\\n`` endings.

    Parameters
    ----------
    source : str or Path
        the already-collected perf file.
    out : str or Path
        the copy to write (atomically).
    events : sequence of str
        the group's events, base events first.

    Raises
    ------
    InputError
        naming ``source`` (and the line): unparseable, an event missing, an interval without
        every event.
    """
    source = Path(source)
    with atomic_path(out) as tmp:  # a first line naming the user's file, for later errors
        # the source is read once, line by line within bounds (a FIFO or a <(...) pipe gives
        # its data once), into the copy; the copy is then checked, its errors naming the source
        with open(tmp, "w", encoding="utf-8", newline="\n") as dst:
            dst.write(f"{IMPORT_HEADER}{source}\n")
            for _, line in text_lines(source):
                dst.write(f"{line}\n")
        long = parse_perf_stat(tmp)
        present = set(long["event"])
        missing = [e for e in events if not resolve_event(e, present)]
        if missing:
            raise InputError(source, f"missing event(s) {missing}",
                             expected=f"this group's events {list(events)}")
        to_wide(long, source, wanted=events)


def collect_simulated(settings: CollectSettings, out: str | Path, *, benchmark: str,
                      group: int) -> None:
    """Write the simulator's CSV of group run ``group`` of ``benchmark``
    (:func:`perfcast.counters.simulate.simulate_group_csv`).

    Parameters
    ----------
    settings : CollectSettings
        the run's settings, backend ``simulate`` (:func:`perfcast.counters.settings.
        collect_settings`): its events, interval, base events and simulator inputs.
    out : str or Path
        the CSV to write (atomically).
    benchmark : str
        a benchmark of :data:`perfcast.counters.simulate.BENCHMARKS` (any other name gets a
        random plan).
    group : int
        the group run's index (each run has its own noise and jitter).

    Raises
    ------
    ValueError
        settings of another backend, or an event the simulator has no model for.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from perfcast.counters.settings import (BaseEvents, CollectSettings, SimulateSettings,
    ...                                         SimulatedRun)
    >>> sim = SimulatedRun(role="old", clock_ghz=None, seed=1,
    ...                    simulate=SimulateSettings(scale=0.02, noise=0.05, jitter=0.02,
    ...                                              run_variation=0.03))
    >>> settings = CollectSettings(backend="simulate", interval_ms=100,
    ...                            base_events=BaseEvents("instructions", "cycles"),
    ...                            events=("instructions", "cycles", "br_mis_pred"),
    ...                            simulated=sim, perf=None)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     collect_simulated(settings, Path(tmp, "g0.csv"), benchmark="mcf", group=0)
    ...     lines = Path(tmp, "g0.csv").read_text().splitlines()
    >>> sorted({line.split(",")[3] for line in lines[2:]})  # perf's -I -x, lines
    ['br_mis_pred', 'cycles', 'instructions']
    """
    sim = settings.simulated
    if settings.backend != "simulate" or sim is None:
        raise ValueError(f"collect_simulated needs simulator settings, not backend "
                         f"{settings.backend!r}")
    text = simulate_group_csv(benchmark, sim.role, group, list(settings.events), seed=sim.seed,
                              interval_ms=settings.interval_ms, clock_ghz=sim.clock_ghz,
                              scale=sim.simulate.scale, noise=sim.simulate.noise,
                              jitter=sim.simulate.jitter,
                              run_variation=sim.simulate.run_variation,
                              base=settings.base_events.names)
    with atomic_path(out) as tmp:
        tmp.write_text(text)
