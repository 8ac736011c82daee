"""One run of one configuration: before command, sensors, the program, sensors, after command.

This is ARPE's generated ``execute.bash`` loop body (before.bash; ``time -p`` the command;
after.bash) for a single configuration x iteration, so each is its own Snakemake job. The program's
wall/user/sys time and max RSS come from ``os.wait4`` in a small shim
(:func:`perfcast.process.run_measured`), not from
``time -p``'s two decimals; with perf events they include ``perf stat`` itself (a few ms,
~14 MB). The program and its before and after commands run in the campaign's ``cwd``
(:func:`perfcast.program.run_dir`; sensors in the workflow's working directory). A failed or
timed-out run is a record with its exit status, not a lost job; with ``fail_fast`` it fails its
job and stops the campaign's later runs. A program, before or after command that leaves a
process running when it ends (``setsid``, ``nohup ... &``) fails its run, the record naming the
processes, which are killed (:attr:`perfcast.process.RunResult.leftover_error`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.io import write_json
from perfcast.process import RunResult, read_status, run_measured
from perfcast.program import run_dir
from perfcast.sweep import sensors as sn
from perfcast.sweep.campaign import perf_column

if TYPE_CHECKING:
    from perfcast.sweep.job_settings import RunSettings

log = logging.getLogger(__name__)

#: environment variable naming one Snakemake invocation (set when the workflow is parsed): a
#: fail-fast stop marker only stops runs of the invocation that wrote it
SESSION_ENV = "PERFCAST_SWEEP_SESSION"
STDERR_TAIL = 2000


class RunFailed(RuntimeError):
    """A run failed in a ``fail_fast`` campaign (its record is kept beside the results)."""


class CampaignStopped(RuntimeError):
    """An earlier run of this invocation failed in a ``fail_fast`` campaign."""


def run_env(settings: RunSettings) -> dict[str, str]:
    """The campaign's environment plus PERFCAST_CAMPAIGN/POINT/ITERATION and one
    PERFCAST_PARAM_<NAME> per parameter (what ARPE's after.bash found in CMD_EXECUTED)."""
    env = {k: str(v) for k, v in settings.env.items()}
    env["PERFCAST_CAMPAIGN"] = str(settings.campaign)
    env["PERFCAST_POINT"] = str(settings.point)
    env["PERFCAST_ITERATION"] = str(settings.iteration)
    for k, v in settings.parameters.items():
        env[f"PERFCAST_PARAM_{k.upper()}"] = str(v)
    return env


def check_not_stopped(stop_marker: str | Path | None, session: str | None) -> None:
    """Raise CampaignStopped when this invocation already stopped the campaign."""
    if stop_marker is None or session is None or not Path(stop_marker).exists():
        return
    try:
        marker = json.loads(Path(stop_marker).read_text())
    except (OSError, ValueError):
        return
    if marker.get("session") == session:
        raise CampaignStopped(
            f"campaign {marker.get('campaign')!r} stopped (fail_fast): run "
            f"{marker.get('point')}/iter{marker.get('iteration')} ended {marker.get('status')} "
            f"with exit status {marker.get('returncode')}; its record is {marker.get('record')}")


def _phase(command: str, env: Mapping[str, str], cwd: str | None,
           timeout_s: float) -> dict[str, Any] | None:
    if not command.strip():
        return None
    res = run_measured(command, env=env, cwd=cwd, timeout_s=timeout_s, own_rusage=False)
    if res.stdout.strip() or res.stderr.strip():
        log.info("%s\n--- stdout ---\n%s--- stderr ---\n%s", command, res.stdout, res.stderr)
    return {"command": command, "returncode": res.returncode, "timed_out": res.timed_out,
            "wall_s": res.wall_s, "leftover_error": res.leftover_error}


def _phase_error(phase: dict[str, Any] | None, name: str) -> str | None:
    """Why a before or after command failed (its exit status, or the processes it left
    running); None when it did not."""
    if phase is None:
        return None
    if phase["returncode"] != 0:
        return f"{name} command exited {phase['returncode']}"
    if phase["leftover_error"] is None:
        return None
    return f"{name} command {phase['command']!r} {phase['leftover_error']}"


def run_point(settings: RunSettings, *, perf_binary: str = "perf",
              powercap_root: str | Path = sn.POWERCAP_ROOT) -> dict[str, Any]:
    """Execute one configuration x iteration and return its record.

    Parameters
    ----------
    settings : RunSettings
        The run (:meth:`perfcast.sweep.campaign.Campaign.run_settings`, commands rendered).
    perf_binary : str, default="perf"
        The ``perf`` executable (with ``perf_events`` sensors).
    powercap_root : str or Path, default=sn.POWERCAP_ROOT
        Where RAPL zones are read (with the ``rapl`` sensor).

    Returns
    -------
    dict
        ``status`` (``ok``, ``failed``, ``timeout``, ``before_failed``, ``after_failed``,
        ``sensor_failed``), ``returncode``, ``signal``, the times and max RSS of the program
        (``os.wait4`` in the shim), the sensors' readings and the errors. A failing program
        does not raise: the record says how it failed.
    """
    env = run_env(settings)
    cwd = run_dir(settings.cwd, where=f"campaign {settings.campaign!r}")
    sensors = settings.sensors
    timeout = float(settings.timeout_s)
    record: dict[str, Any] = {
        "campaign": settings.campaign, "point": settings.point,
        "iteration": int(settings.iteration), "parameters": dict(settings.parameters),
        "command": settings.command, "status": "ok", "returncode": None, "signal": None,
        "timed_out": False, "perf": {}, "energy": {}, "custom": {}, "heartbeat": None,
        "before": None, "after": None, "errors": [], "host": os.uname().nodename,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for key in ("wall_s", "user_s", "sys_s", "cpu_s", "cpu_util", "max_rss_kb"):
        record[key] = math.nan
    record["before"] = _phase(settings.before, env, cwd, timeout)
    why = _phase_error(record["before"], "before")
    if why is not None:
        record["status"] = "before_failed"
        record["errors"].append(why)
        return record
    custom = sensors.custom
    readings: dict[str, float] = {}

    def read(name: str) -> float | None:
        try:
            return sn.read_custom(custom[name].command, env=env)
        except (ValueError, OSError) as exc:
            record["errors"].append(f"custom sensor {name!r}: {exc}")
            return None

    for name, spec in custom.items():
        if spec.mode in ("before", "delta"):
            readings[name] = read(name)
    zones = sn.rapl_zones(powercap_root) if sensors.rapl else {}
    rapl0 = sn.read_rapl(zones) if zones else {}
    events = list(sensors.perf_events)
    with tempfile.TemporaryDirectory(prefix="perfcast-run-") as tmp:
        perf_csv, status_file = Path(tmp) / "perf.csv", Path(tmp) / "status"
        if events:
            argv = sn.perf_command(settings.command, events, perf_csv, status_file,
                                   perf_binary)
        else:
            argv = ["/bin/sh", "-c", settings.command]
        res = run_measured(argv, env=env, cwd=cwd, timeout_s=timeout)
        rapl1 = sn.read_rapl(zones) if zones else {}
        shell_status = None
        if events:
            status = read_status(status_file)
            shell_status = -1 if status is None else status  # None: the wrapper was killed
            values = sn.parse_perf_csv(perf_csv.read_text() if perf_csv.exists() else "",
                                       events)
            record["perf"] = {perf_column(e): v for e, v in values.items()}
    _fill_time(record, res, shell_status)
    for name, spec in custom.items():
        if spec.mode == "after":
            readings[name] = read(name)
        elif spec.mode == "delta":
            after = read(name)
            before = readings.get(name)
            readings[name] = None if after is None or before is None else after - before
    record["custom"] = {k: (math.nan if v is None else v) for k, v in readings.items()}
    if zones:
        record["energy"] = sn.rapl_columns(sn.rapl_energy(rapl0, rapl1), res.wall_s,
                                           sn.top_zones(zones))
    if sensors.heartbeat:
        record["heartbeat"] = sn.heartbeat_summary(res.stdout_lines, sensors.heartbeat)
    log.info("command: %s\nstatus: %s (exit %s) wall %.3f s\n--- stderr ---\n%s",
             settings.command, record["status"], record["returncode"], record["wall_s"],
             res.stderr)
    record["after"] = _phase(settings.after, env, cwd, timeout)
    if record["status"] == "ok":
        why = _phase_error(record["after"], "after")
        if why is not None:
            record["status"] = "after_failed"
            record["errors"].append(why)
        elif record["errors"]:
            record["status"] = "sensor_failed"
    return record


def _fill_time(record: dict[str, Any], res: RunResult, shell_status: int | None) -> None:
    """Times, max RSS and exit status from the shim (the program's own rusage); if the shim
    was itself killed only the wall time of the attempt is known. Processes the program left
    running fail the run, named in its errors."""
    returncode = res.returncode
    if res.own_rusage:
        record.update(wall_s=res.wall_s, user_s=res.user_s, sys_s=res.sys_s,
                      max_rss_kb=res.max_rss_kb)
    else:
        record["wall_s"] = res.wall_s
    if shell_status is not None and shell_status >= 0:
        returncode = shell_status  # the command's own status (perf stat's is unreliable)
    elif shell_status is not None and not res.timed_out:
        returncode = -1 if returncode == 0 else returncode
        record["errors"].append("the wrapper shell died without writing the command's exit "
                                "status (killed by a signal; perf stat hides which)")
    record.update(returncode=returncode, timed_out=res.timed_out,
                  signal=-returncode if returncode < -1 else None)
    if res.own_rusage:
        record["cpu_s"] = record["user_s"] + record["sys_s"]
        record["cpu_util"] = record["cpu_s"] / record["wall_s"] if record["wall_s"] > 0 \
            else math.nan
    if res.timed_out:
        record["status"] = "timeout"
        record["errors"].append(f"timed out, killed after {res.wall_s:.3f} s")
    elif returncode != 0:
        record["status"] = "failed"
        record["errors"].append(f"exited with status {returncode}")
    if res.leftover_error is not None:
        record["status"] = "failed"
        record["errors"].append(res.leftover_error)
    if record["status"] != "ok":
        record["stderr_tail"] = res.stderr[-STDERR_TAIL:]


def json_safe(obj: Any) -> Any:
    """NaN/inf -> None, recursively, so every record is strict JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    return obj


def run_and_record(settings: RunSettings, out: str | Path, *, session: str | None = None,
                   perf_binary: str = "perf",
                   powercap_root: str | Path = sn.POWERCAP_ROOT) -> dict[str, Any]:
    """Run one point and write its record to ``out``.

    A failed run is written like any other, unless the campaign is ``fail_fast``: then its
    record goes to ``settings.failed_record`` (a failing job's outputs are deleted), a stop
    marker for this ``session`` is written to ``settings.stop_marker``, and RunFailed fails the
    job; the campaign's other runs of the same invocation then refuse to start
    (CampaignStopped).

    Parameters
    ----------
    settings : RunSettings
        The run (:meth:`perfcast.sweep.campaign.Campaign.run_settings`).
    out : str or Path
        Its record (JSON).
    session : str, optional, default=None
        This invocation's name; None: the environment variable :data:`SESSION_ENV`.
    perf_binary : str, default="perf"
        The ``perf`` executable.
    powercap_root : str or Path, default=sn.POWERCAP_ROOT
        Where RAPL zones are read.

    Returns
    -------
    dict
        The record written.

    Raises
    ------
    RunFailed
        The run failed in a ``fail_fast`` campaign.
    CampaignStopped
        An earlier run of this invocation failed in a ``fail_fast`` campaign.
    """
    session = session if session is not None else os.environ.get(SESSION_ENV)
    stop_marker, failed_record = settings.stop_marker, settings.failed_record
    check_not_stopped(stop_marker, session)
    record = run_point(settings, perf_binary=perf_binary, powercap_root=powercap_root)
    record = json_safe(record)
    if record["status"] != "ok" and settings.fail_fast:
        write_json(record, failed_record)
        write_json({"session": session, "campaign": record["campaign"],
                    "point": record["point"], "iteration": record["iteration"],
                    "status": record["status"], "returncode": record["returncode"],
                    "record": str(failed_record)}, stop_marker)
        raise RunFailed(f"run {record['point']}/iter{record['iteration']} of campaign "
                        f"{record['campaign']!r} ended {record['status']} (exit status "
                        f"{record['returncode']}); fail_fast stops the campaign; record: "
                        f"{failed_record}")
    write_json(record, out)
    return record
