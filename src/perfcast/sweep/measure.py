"""Measure a command's own rusage through a tiny intermediate process.

``ru_maxrss`` of a child includes the memory image it had *before* exec: a child forked (or
vforked) from a Snakemake script that has loaded pandas reports that script's ~250 MB as its
peak, even for ``/bin/true`` (measured here: ``run_measured("true")`` from a 500 MB parent reads
499772 KiB). So the program is forked by a shim, a bare ``python -I -S`` (~5 MB) that
``os.wait4``s it and writes its wall, user, sys, max RSS and exit status to a file. The shim
itself runs under :func:`perfcast.process.run_measured` (timeout, process group, stamped
output lines) and adds a few milliseconds of start-up outside the measured interval.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: the shim: fork, exec argv, wait4, write "status wall user sys maxrss", exit like the child
SHIM = r"""
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
while True:
    try:
        _, status, ru = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
wall = time.monotonic() - t0
with open(out, "w") as fh:
    fh.write("%d %.9f %.6f %.6f %d\n" % (status, wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


@dataclass(frozen=True)
class ShimReport:
    """The measured program's own numbers (``returncode`` < 0: killed by that signal)."""

    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int


def shim_argv(argv: Sequence[str], report: str | Path, python: str | None = None) -> list[str]:
    """``argv`` run under the shim, which writes its measurements to ``report``."""
    return [python or sys.executable, "-I", "-S", "-c", SHIM, str(report), *argv]


def read_report(report: str | Path) -> ShimReport | None:
    """The shim's measurements, or None when it never wrote them (killed on timeout)."""
    path = Path(report)
    try:
        fields = path.read_text().split()
    except OSError:
        return None
    if len(fields) != 5:
        return None
    status = int(fields[0])
    return ShimReport(returncode=os.waitstatus_to_exitcode(status), wall_s=float(fields[1]),
                      user_s=float(fields[2]), sys_s=float(fields[3]),
                      max_rss_kb=int(fields[4]))
