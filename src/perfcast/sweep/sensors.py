"""Sensors of a sweep run besides wall/user/sys/max-RSS (which ``os.wait4`` gives every run).

- perf events: the program runs under ``perf stat -x, -o FILE -e EVENTS``. Software events
  (task-clock, context-switches, page-faults...) count on any Linux; hardware events read
  ``<not supported>`` on a host without a PMU (most VMs), so :func:`check_sensors` probes every
  event once before a campaign starts and refuses the ones the host cannot count (never zeros).
- RAPL energy: ``/sys/class/powercap/*/energy_uj`` read before and after the run; the counter
  wraps at ``max_energy_range_uj``. Root-only on most kernels since 2020 (CVE-2020-8694).
- custom: a shell command printing a number (the last line's first token), read before, after,
  or both (``delta``: a counter such as an external power meter's energy register).
- heartbeats: one output line per unit of work (Application Heartbeats, as ARPE's PARSEC case),
  matched by a regular expression and stamped when it arrived.
"""

from __future__ import annotations

import logging
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from perfcast.counters.events import resolve_event, split_event_list, user_mode_blind
from perfcast.errors import HostCapabilityError
from perfcast.process import run_measured, status_shell
from perfcast.sweep.campaign import HEARTBEAT_COLUMNS, Sensors

log = logging.getLogger(__name__)

POWERCAP_ROOT = "/sys/class/powercap"
#: how long a probe or a custom-sensor reading may take
SENSOR_TIMEOUT_S = 30.0
_NOT_COUNTED = ("<not counted>", "<not supported>")


# --------------------------------------------------------------------------------------------
# perf


def perf_command(command: str, events: Sequence[str], out_csv: str | Path, status_file: str | Path,
                 binary: str = "perf") -> list[str]:
    """argv running the shell ``command`` under ``perf stat``, its own exit status written to
    ``status_file`` (:func:`perfcast.process.status_shell`: perf's is not the command's).

    Parameters
    ----------
    command : str
        The shell command measured.
    events : sequence of str
        The perf events counted.
    out_csv : str or Path
        Where ``perf stat -x,`` writes its counts.
    status_file : str or Path
        Where the wrapper writes the command's exit status.
    binary : str, default="perf"
        The ``perf`` executable.

    Returns
    -------
    list of str
        The argv.
    """
    return [binary, "stat", "-x", ",", "-o", str(out_csv), "-e", ",".join(events), "--",
            *status_shell(command, status_file)]


def _perf_lines(text: str) -> list[tuple[str, str]]:
    """``(value, event as perf printed it)`` of each counter line of ``perf stat -x,`` output.
    An event name may itself hold commas (``cha/event=0x34,umask=0x1fe001/``): a comma between
    a PMU's slashes belongs to the name (:func:`~perfcast.counters.events.split_event_list`)."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(",", 2)
        if len(fields) == 3:
            printed = split_event_list(fields[2])
            rows.append((fields[0].strip(), printed[0] if printed else ""))
    return rows


def _perf_line(rows: Sequence[tuple[str, str]], i: int, event: str) -> tuple[str, str] | None:
    """``(value, printed name)`` of ``event``: its line by name (the last one;
    :func:`~perfcast.counters.events.resolve_event`: ``task-clock`` is perf's ``task-clock:u``
    for a user it restricts to user mode), else the ``i``-th line (perf prints events in the
    order asked), else None."""
    found = resolve_event(event, dict.fromkeys(name for _, name in rows))
    named = [row for row in rows if row[1] in found]
    if named:
        return named[-1]
    return rows[i] if i < len(rows) else None


def _perf_status(row: tuple[str, str] | None) -> str:
    if row is None:
        return "missing"
    raw, printed = row
    if raw in _NOT_COUNTED:
        return raw
    why = user_mode_blind(printed)
    return "supported" if why is None else f"unsupported: {why}"


def parse_perf_csv(text: str, events: Sequence[str]) -> dict[str, float | None]:
    """Totals of ``perf stat -x,`` output.

    Parameters
    ----------
    text : str
        The output (columns: value, unit, event, run time, percentage running, metric,
        metric unit; see perf-stat(1), "CSV FORMAT").
    events : sequence of str
        The events asked for, in order.

    Returns
    -------
    dict
        event -> value; None for an event perf did not count (``<not counted>``,
        ``<not supported>``, one of the scheduler's events restricted to user mode, whose 0 is
        no count: :func:`~perfcast.counters.events.user_mode_blind`) or did not print. Lines
        are matched to ``events`` by name (with the modifier perf appends for a user it
        restricts to user mode), else by position.

    Examples
    --------
    >>> parse_perf_csv("3.5,msec,task-clock:u,3500,100.00,0.5,CPUs utilized\\n"
    ...                "0,,context-switches:u,3500,100.00,0.000,/sec\\n",
    ...                ["task-clock", "context-switches"])
    {'task-clock': 3.5, 'context-switches': None}
    """
    rows = _perf_lines(text)
    out: dict[str, float | None] = {}
    for i, ev in enumerate(events):
        row = _perf_line(rows, i, ev)
        out[ev] = _float_or_none(row[0]) if _perf_status(row) == "supported" else None
    return out


def perf_support(text: str, events: Sequence[str]) -> dict[str, str]:
    """What perf CSV says of each event asked for.

    Parameters
    ----------
    text : str
        ``perf stat -x,`` output.
    events : sequence of str
        The events asked for, in order.

    Returns
    -------
    dict
        event -> ``"supported"``, ``"<not supported>"``, ``"<not counted>"``, ``"missing"``, or
        ``"unsupported: <why>"`` for one of the scheduler's events that perf restricted to user
        mode (:func:`~perfcast.counters.events.user_mode_blind`).
    """
    rows = _perf_lines(text)
    return {ev: _perf_status(_perf_line(rows, i, ev)) for i, ev in enumerate(events)}


def probe_perf_events(events: Sequence[str], binary: str = "perf") -> dict[str, str]:
    """Count ``events`` once around ``true``; raise HostCapabilityError naming any the host
    cannot count (a VM without PMU: hardware events read ``<not supported>``).

    The scheduler's events that perf restricts to user mode for this user (``context-switches``
    printed ``context-switches:u``, which reads 0 whatever the program does) do not stop the
    campaign: their status is ``"unsupported: <why>"`` (:func:`perf_support`) and every run
    records them as not counted (:func:`parse_perf_csv`), never as 0."""
    if not events:
        return {}
    with tempfile.TemporaryDirectory(prefix="perfcast-perf-") as tmp:
        out = Path(tmp) / "probe.csv"
        try:
            res = run_measured([binary, "stat", "-x", ",", "-o", str(out), "-e", ",".join(events),
                                "--", "true"], timeout_s=SENSOR_TIMEOUT_S)
        except FileNotFoundError as exc:
            raise HostCapabilityError(f"perf events {list(events)} asked for, but the perf "
                                      f"binary {binary!r} is not installed") from exc
        text = out.read_text() if out.exists() else ""
    if res.returncode != 0:
        first = next((ln.strip() for ln in res.stderr.splitlines() if ln.strip()), "")
        raise HostCapabilityError(f"perf cannot count {list(events)}: {first} "
                                  f"(perf exit status {res.returncode}; see 'perf list')")
    status = perf_support(text, events)
    bad = {e: s for e, s in status.items()
           if s != "supported" and not s.startswith("unsupported: ")}
    for e, s in status.items():
        if s.startswith("unsupported: "):
            log.warning("perf event %s is not counted: %s", e, s.removeprefix("unsupported: "))
    if bad:
        raise HostCapabilityError(
            "perf events unavailable on this host: "
            + ", ".join(f"{e} reads {s}" for e, s in bad.items())
            + " (hardware events need a PMU, which most VMs lack; software events such as "
              "task-clock, context-switches, page-faults work everywhere)")
    return status


# --------------------------------------------------------------------------------------------
# RAPL


def rapl_zones(root: str | Path = POWERCAP_ROOT) -> dict[str, Path]:
    """Readable powercap zones, keyed ``package-0`` or ``package-0-dram`` (sub-zone after
    its parent). Raises HostCapabilityError saying why none is readable."""
    root = Path(root)
    if not root.is_dir():
        raise HostCapabilityError(f"RAPL energy asked for, but {root} does not exist "
                                  "(no powercap driver: a VM, or a CPU without RAPL)")
    zones: dict[str, Path] = {}
    problems = []
    for d in sorted(root.iterdir()):
        if not (d / "energy_uj").exists() or not (d / "name").exists():
            continue
        try:
            int((d / "energy_uj").read_text().strip())
        except (PermissionError, OSError, ValueError) as exc:
            problems.append(f"{d / 'energy_uj'}: {exc.__class__.__name__}")
            continue
        name = (d / "name").read_text().strip()
        parent = d.name.rsplit(":", 1)[0]
        if d.name.count(":") >= 2 and (root / parent / "name").exists():
            name = (root / parent / "name").read_text().strip() + "-" + name
        zones[name] = d
    if not zones:
        why = "; ".join(problems) if problems else f"no zone with energy_uj under {root}"
        raise HostCapabilityError(f"RAPL energy asked for, but none is readable: {why} "
                                  "(reading energy_uj needs root on most kernels)")
    return zones


def read_rapl(zones: Mapping[str, Path]) -> dict[str, tuple[int, int]]:
    """zone -> (energy_uj, max_energy_range_uj)."""
    out = {}
    for name, d in zones.items():
        e = int((d / "energy_uj").read_text().strip())
        rng_file = d / "max_energy_range_uj"
        rng = int(rng_file.read_text().strip()) if rng_file.exists() else 0
        out[name] = (e, rng)
    return out


def rapl_energy(before: Mapping[str, tuple[int, int]],
                after: Mapping[str, tuple[int, int]]) -> dict[str, float]:
    """Joules per zone between two readings, unwrapping one counter overflow."""
    out = {}
    for name, (e0, rng) in before.items():
        e1 = after[name][0]
        delta = e1 - e0
        if delta < 0 and rng > 0:
            delta += rng
        out[name] = delta / 1e6
    return out


def top_zones(zones: Mapping[str, Path]) -> list[str]:
    """Zones that are not sub-zones (``intel-rapl:0``, not ``intel-rapl:0:1``)."""
    return [n for n, d in zones.items() if Path(d).name.count(":") <= 1]


def rapl_columns(energy: Mapping[str, float], wall_s: float,
                 top: Sequence[str]) -> dict[str, float]:
    """``energy_<zone>_j`` per zone, ``energy_j`` (the top-level packages, or every top-level
    zone when none is a package: sub-zones and psys would count twice) and
    ``power_w = energy_j / wall_s``.

    Parameters
    ----------
    energy : mapping of str to float
        Joules per zone over the run (:func:`rapl_energy`).
    wall_s : float
        The run's wall time.
    top : sequence of str
        The top-level zones (:func:`top_zones`).

    Examples
    --------
    >>> rapl_columns({"package-0": 6.0, "package-0/core": 4.0}, 2.0, ["package-0"])
    {'energy_package_0_j': 6.0, 'energy_package_0_core_j': 4.0, 'energy_j': 6.0, 'power_w': 3.0}
    """
    cols = {f"energy_{re.sub(r'[^A-Za-z0-9]+', '_', z).lower()}_j": v for z, v in energy.items()}
    packages = [z for z in top if z.startswith("package")]
    total = sum(energy[z] for z in (packages or top))
    cols["energy_j"] = total
    cols["power_w"] = total / wall_s if wall_s > 0 else math.nan
    return cols


# --------------------------------------------------------------------------------------------
# custom sensors and heartbeats


def read_custom(command: str, env: Mapping[str, str] | None = None,
                timeout_s: float = SENSOR_TIMEOUT_S) -> float:
    """The number a sensor command prints (first token of its last non-empty line).

    Parameters
    ----------
    command : str
        The sensor's shell command (rendered).
    env : mapping of str to str, optional, default=None
        Its environment (added to this process's).
    timeout_s : float, default=SENSOR_TIMEOUT_S
        How long it may take.

    Raises
    ------
    ValueError
        It failed, timed out, left a process running or printed no number.

    Examples
    --------
    >>> read_custom("echo reading; echo '42 units'")
    42.0
    """
    res = run_measured(command, env=env, timeout_s=timeout_s)
    if res.leftover_error is not None:
        raise ValueError(f"sensor command {command!r} {res.leftover_error}")
    if not res.ok:
        why = "timed out" if res.timed_out else f"exit status {res.returncode}"
        err = res.stderr.strip().splitlines()[-1:] or [""]
        raise ValueError(f"sensor command {command!r} failed ({why}) {err[0]}".rstrip())
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"sensor command {command!r} printed nothing")
    token = lines[-1].split()[0]
    value = _float_or_none(token)
    if value is None:
        raise ValueError(f"sensor command {command!r} printed {lines[-1]!r}, not a number")
    return value


def heartbeat_summary(lines: Sequence[tuple[float, str]], pattern: str) -> dict[str, Any]:
    """Heartbeats among stamped output lines: their times and rate.

    ``hb_rate`` = (count - 1) / (last - first), units per second between the first and the last
    heartbeat (start-up excluded); ``hb_interval_cv`` = std / mean of the gaps (steadiness).
    A named group ``value`` in the pattern is averaged as ``hb_value_mean``.
    """
    rx = re.compile(pattern)
    times, values = [], []
    for t, line in lines:
        m = rx.search(line)
        if m is None:
            continue
        times.append(float(t))
        if "value" in rx.groupindex:
            values.append(_float_or_none(m.group("value") or ""))
    out: dict[str, Any] = dict.fromkeys(HEARTBEAT_COLUMNS, math.nan)
    out["hb_count"] = len(times)
    if times:
        out["hb_first_s"] = times[0]
    if len(times) >= 2:
        gaps = np.diff(times)
        span = times[-1] - times[0]
        out["hb_rate"] = (len(times) - 1) / span if span > 0 else math.nan
        out["hb_interval_mean"] = float(gaps.mean())
        out["hb_interval_cv"] = float(gaps.std() / gaps.mean()) if gaps.mean() > 0 else math.nan
    if "value" in rx.groupindex:
        vals = [v for v in values if v is not None]
        out["hb_value_mean"] = float(np.mean(vals)) if vals else math.nan
    out["times"] = [round(t, 6) for t in times]
    return out


# --------------------------------------------------------------------------------------------
# the pre-campaign check


def check_sensors(sensors: Sensors, *, env: Mapping[str, str] | None = None,
                  perf_binary: str = "perf",
                  powercap_root: str | Path = POWERCAP_ROOT) -> dict[str, Any]:
    """Try every sensor a campaign asks for once; refuse the campaign if any is unavailable.

    Parameters
    ----------
    sensors : Sensors
        The campaign's sensors, custom commands rendered for its first run.
    env : mapping of str to str, optional, default=None
        The environment the custom sensor commands run in.
    perf_binary : str, default="perf"
        The ``perf`` executable probed for the perf events.
    powercap_root : str or Path, default=POWERCAP_ROOT
        Where RAPL zones are looked for.

    Returns
    -------
    dict
        What the host offers (written next to the campaign's results): each perf event's
        support, the RAPL zones, each custom sensor's reading, the heartbeat pattern.

    Raises
    ------
    HostCapabilityError
        Listing every unavailable sensor.

    Examples
    --------
    >>> from perfcast.sweep.campaign import CustomSensor, Sensors
    >>> s = Sensors((), False, {"two": CustomSensor("echo 2", "after")}, None)
    >>> check_sensors(s)["custom"]
    {'two': 2.0}
    """
    report: dict[str, Any] = {"perf_events": {}, "rapl_zones": [], "custom": {},
                              "heartbeat": sensors.heartbeat}
    problems = []
    events = list(sensors.perf_events)
    if events:
        try:
            report["perf_events"] = probe_perf_events(events, perf_binary)
        except HostCapabilityError as exc:
            problems.append(str(exc))
    if sensors.rapl:
        try:
            zones = rapl_zones(powercap_root)
            report["rapl_zones"] = sorted(zones)
        except HostCapabilityError as exc:
            problems.append(str(exc))
    for name, spec in sensors.custom.items():
        try:
            report["custom"][name] = read_custom(spec.command, env=env)
        except (ValueError, OSError) as exc:
            problems.append(f"custom sensor {name!r}: {exc}")
    if problems:
        raise HostCapabilityError("sensor(s) unavailable on this host, campaign not started: "
                                  + " | ".join(problems))
    report["host"] = os.uname().nodename
    return report


def _float_or_none(text: str) -> float | None:
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None
