"""Peak resource usage of a running program, sampled from ``/proc``.

The paper (step 1 of the ceiling algorithm) runs the program alone and unrestricted while
``collectl`` records its usage; the maximum seen is the resource ceiling. Here a thread samples
the program's whole process tree every ``interval_s`` through psutil and ``/proc``:

* resident set size, taken as each process's high-water mark ``VmHWM`` (so a peak between two
  samples is not missed);
* CPU time (-> cores busy per interval) and the threads in state R (running or ready to run:
  the cores it would use on a machine where other work competes for them);
* bytes read from and written to storage (``/proc/<pid>/io`` -> bytes/s);
* when an interface is named, the bytes it carried (``/sys/class/net/<if>/statistics``).

Processes that finish between two samples are caught by floors over the whole run: the average
cores busy from ``wait4`` and the interface's average byte rate. ``ru_maxrss`` is used only for
a run too short to sample: it counts the profiler's own pages that the child inherits between
``fork`` and ``exec``, so it overstates a small program's resident set.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from perfcast.process import RunResult

#: bytes per unit of each kind's level (see resources.UNITS)
_BYTES_PER_MIB = 1024 * 1024


@dataclass(frozen=True)
class Usage:
    """Peak usage of one run: cores busy, threads ready to run, resident bytes, storage and
    network bytes/s."""

    cpu_cores: float = 0.0
    cpu_runnable: int = 0
    rss_bytes: int = 0
    read_bps: float = 0.0
    write_bps: float = 0.0
    net_bps: float = 0.0
    samples: int = 0

    @property
    def cpu_demand(self) -> float:
        """Cores the program can use: busy cores, or more threads ready to run on a machine
        where other work keeps them from running (busy time alone would understate it)."""
        return max(self.cpu_cores, float(self.cpu_runnable))

    def peak_for(self, kind: str) -> float:
        """The peak in the unit of a dimension kind (cores, MiB, MB/s, Mbit/s)."""
        return {
            "cpu_cores": self.cpu_demand,
            "cpu_quota": self.cpu_demand,
            "memory": self.rss_bytes / _BYTES_PER_MIB,
            "disk_read": self.read_bps / 1e6,
            "disk_write": self.write_bps / 1e6,
            "network": self.net_bps * 8 / 1e6,
        }[kind]

    def as_dict(self) -> dict:
        """The fields as a plain dict (the summary's ``peak_usage``)."""
        return asdict(self)


def runnable_threads(pid: int) -> int:
    """Threads of ``pid`` running or ready to run (state ``R`` in /proc/<pid>/task/*/stat)."""
    n = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        n += state == "R"
    return n


def peak_rss(pid: int) -> int:
    """``VmHWM`` of ``pid`` in bytes: its resident-set high-water mark since ``exec``, so a peak
    between two samples is not missed (0 if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _net_bytes(interface: str | None) -> tuple[int, int]:
    if not interface:
        return 0, 0
    base = Path("/sys/class/net") / interface / "statistics"
    try:
        return (int((base / "rx_bytes").read_text()), int((base / "tx_bytes").read_text()))
    except OSError:
        return 0, 0


class UsageMonitor:
    """Sample a process tree until :meth:`stop`; ``start(pid)`` fits ``run_measured(on_start=)``.

    Parameters
    ----------
    interval_s : float
        Seconds between samples (``sensitivity.monitor_interval_s``).
    interface : str or None, default=None
        The network interface whose bytes count as the program's (None: no network).

    Raises
    ------
    ValueError
        ``interval_s`` is not positive.
    """

    def __init__(self, interval_s: float, interface: str | None = None) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.interval_s = interval_s
        self.interface = interface
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._peak = {"cpu": 0.0, "runnable": 0, "rss": 0, "read": 0.0, "write": 0.0, "net": 0.0}
        self._samples = 0

    def start(self, pid: int) -> None:
        """Start sampling process ``pid`` and its descendants in a background thread."""
        self._net0 = (sum(_net_bytes(self.interface)), time.monotonic())
        self._thread = threading.Thread(target=self._loop, args=(pid,), daemon=True)
        self._thread.start()

    def _tree(self, root: psutil.Process) -> list[psutil.Process]:
        try:
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def _loop(self, pid: int) -> None:
        try:
            root = psutil.Process(pid)
        except psutil.Error:
            return
        prev: dict[int, tuple[float, int, int]] = {}  # pid -> (cpu s, read B, written B)
        prev_net = sum(_net_bytes(self.interface))
        prev_t = time.monotonic()
        while not self._stop.is_set():
            self._stop.wait(self.interval_s)
            now = time.monotonic()
            dt = max(now - prev_t, 1e-6)
            cur: dict[int, tuple[float, int, int]] = {}
            rss = runnable = 0
            for p in self._tree(root):
                runnable += runnable_threads(p.pid)
                hwm = peak_rss(p.pid)
                try:
                    with p.oneshot():
                        ct = p.cpu_times()
                        mem = p.memory_info()
                        try:
                            io = p.io_counters()
                            rd, wr = int(io.read_bytes), int(io.write_bytes)
                        except (psutil.AccessDenied, AttributeError):
                            rd = wr = 0
                    cur[p.pid] = (ct.user + ct.system, rd, wr)
                    rss += max(int(mem.rss), hwm)
                except psutil.Error:
                    continue
            if not cur:
                break
            d_cpu = d_rd = d_wr = 0.0
            for q, (c, rd, wr) in cur.items():
                # a process not seen before started after the last sample
                c0, rd0, wr0 = prev.get(q, (0.0, 0, 0))
                d_cpu += max(c - c0, 0.0)
                d_rd += max(rd - rd0, 0)
                d_wr += max(wr - wr0, 0)
            net = sum(_net_bytes(self.interface))
            pk = self._peak
            pk["cpu"] = max(pk["cpu"], d_cpu / dt)
            pk["rss"] = max(pk["rss"], rss)
            pk["runnable"] = max(pk["runnable"], runnable)
            pk["read"] = max(pk["read"], d_rd / dt)
            pk["write"] = max(pk["write"], d_wr / dt)
            pk["net"] = max(pk["net"], max(net - prev_net, 0) / dt)
            prev, prev_net, prev_t = cur, net, now
            self._samples += 1

    def stop(self, run: RunResult | None = None) -> Usage:
        """Stop sampling; ``run`` adds the ``wait4`` floor (peak >= whole-run average)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        pk = dict(self._peak)
        if self.interface and hasattr(self, "_net0"):  # floor: the whole run's average rate
            n0, t0 = self._net0
            pk["net"] = max(pk["net"], max(sum(_net_bytes(self.interface)) - n0, 0)
                            / max(time.monotonic() - t0, 1e-6))
        if run is not None and run.wall_s > 0:
            pk["cpu"] = max(pk["cpu"], run.cpu_utilisation)
            if self._samples == 0:  # too short to sample: ru_maxrss, inflated by the fork of
                pk["rss"] = run.max_rss_kb * 1024  # the profiler before exec, is all there is
        return Usage(cpu_cores=round(pk["cpu"], 6), cpu_runnable=int(pk["runnable"]),
                     rss_bytes=int(pk["rss"]),
                     read_bps=round(pk["read"], 3), write_bps=round(pk["write"], 3),
                     net_bps=round(pk["net"], 3), samples=self._samples)
