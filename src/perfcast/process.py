"""Run a real command and measure it: wall clock, rusage of the child (``os.wait4``), output lines.

Shared by every stage that executes programs (perf collection, warm-up rounds, cgroup-restricted
profiling runs, sweep campaigns). The child runs in its own session so a timeout kills the whole
process group, and each stdout line is stamped with a monotonic clock as it arrives (unit readings,
heartbeats).
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class RunResult:
    """What one execution did. ``max_rss_kb`` is ru_maxrss of the child (KiB on Linux)."""

    command: str
    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    timed_out: bool
    stdout: str
    stderr: str
    start_monotonic: float
    #: (seconds since start, line) for each stdout line, stamped when it arrived
    stdout_lines: list[tuple[float, str]] = field(default_factory=list)
    signal: int | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    @property
    def cpu_utilisation(self) -> float:
        """(user + sys) / wall: average cores busy."""
        return (self.user_s + self.sys_s) / self.wall_s if self.wall_s > 0 else 0.0


def run_measured(
    command: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout_s: float | None = None,
    preexec_fn: Callable[[], None] | None = None,
    on_start: Callable[[int], None] | None = None,
    on_line: Callable[[float, str], None] | None = None,
    stdin_devnull: bool = True,
) -> RunResult:
    """Run ``command`` (a shell string or an argv list) to completion and measure it.

    ``preexec_fn`` runs in the child before exec (e.g. join a cgroup); ``on_start`` gets the pid
    in the parent; ``on_line(t, line)`` sees each stdout line as it arrives.
    """
    shell = isinstance(command, str)
    text = command if shell else shlex.join(command)
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in env.items()})
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        shell=shell,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL if stdin_devnull else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        start_new_session=True,
        preexec_fn=preexec_fn,
    )
    if on_start is not None:
        on_start(proc.pid)
    lines: list[tuple[float, str]] = []
    err_chunks: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            t = time.monotonic() - start
            lines.append((t, line.rstrip("\n")))
            if on_line is not None:
                on_line(t, line.rstrip("\n"))

    def read_err() -> None:
        assert proc.stderr is not None
        err_chunks.append(proc.stderr.read())

    readers = [threading.Thread(target=read_out, daemon=True),
               threading.Thread(target=read_err, daemon=True)]
    for r in readers:
        r.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout_s, kill) if timeout_s else None
    if timer is not None:
        timer.start()
    try:
        _, status, rusage = os.wait4(proc.pid, 0)
    finally:
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    # the group may still hold grandchildren writing to our pipes
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for r in readers:
        r.join(timeout=5)
    sig = -proc.returncode if proc.returncode < 0 else None
    return RunResult(
        command=text,
        returncode=proc.returncode,
        wall_s=wall,
        user_s=rusage.ru_utime,
        sys_s=rusage.ru_stime,
        max_rss_kb=int(rusage.ru_maxrss),
        timed_out=timed_out.is_set(),
        stdout="".join(line + "\n" for _, line in lines),
        stderr="".join(err_chunks),
        start_monotonic=start,
        stdout_lines=lines,
        signal=sig,
    )
