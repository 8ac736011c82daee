"""Run a real command and measure it: wall clock, rusage of the child (``os.wait4``), output lines.

Shared by every stage that executes programs (perf collection, warm-up rounds, cgroup-restricted
profiling runs, sweep campaigns). The child runs in its own session so a timeout kills the whole
process group, and each stdout line is stamped with a monotonic clock as it arrives (unit readings,
heartbeats).

``ru_maxrss`` of a child includes the memory image it had *before* exec: a child forked from a
Snakemake script that has loaded pandas reports that script's ~250 MB as its peak, even for
``/bin/true``. So by default (``own_rusage``) the program is forked by a shim, a bare
``python -I -S`` (~5 MB) that ``os.wait4``s it and reports the program's own wall, user, sys, max
RSS and exit status; the shim's start-up (a few ms) stays outside the measured interval.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
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


#: the signals that end a run as SIGINT (KeyboardInterrupt) does: SIGTERM is what SLURM sends
#: on a time limit or ``scancel`` (and ``kill`` by default), SIGHUP what a closed terminal sends
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Terminated(BaseException):  # noqa: N818 - a signal, like KeyboardInterrupt, not an error
    """Raised in the main thread when an :data:`ENDING_SIGNALS` signal arrives inside
    :func:`ending_on_signals`: like KeyboardInterrupt for SIGINT, it unwinds the stack so every
    ``finally`` runs (the workload killed, its groups and shaping removed, temporary files
    deleted) instead of the process vanishing with all of them left behind."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"terminated by {signal.Signals(signum).name}")
        self.signum = signum


@contextlib.contextmanager
def ending_on_signals(signals: Sequence[int] = ENDING_SIGNALS) -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` (in the main thread) when
    their handler is the default one (a signal the caller ignores or handles stays so).

    The first one raises; any further one while the stack unwinds is ignored, so the cleanup it
    started is not cut short (SLURM sends SIGKILL after its ``KillWait`` anyway). The previous
    handlers are restored on leaving. Outside the main thread (where Python cannot set handlers)
    the block runs unchanged. The top level ends the process by :func:`exit_for`.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}

    def handler(signum: int, frame: object) -> None:
        for s in previous:
            signal.signal(s, signal.SIG_IGN)
        raise Terminated(signum)

    for s in signals:
        if signal.getsignal(s) is signal.SIG_DFL:
            previous[s] = signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)  # type: ignore[arg-type]


def exit_for(exc: Terminated) -> None:
    """End the process by the signal that raised ``exc`` (its default action), so the parent (a
    shell, Snakemake, SLURM) sees the same status as without the handler; the cleanup already
    ran while ``exc`` unwound the stack."""
    signal.signal(exc.signum, signal.SIG_DFL)
    os.kill(os.getpid(), exc.signum)
    raise SystemExit(128 + exc.signum)  # not reached unless the signal is blocked


@dataclass(frozen=True)
class ShimReport:
    """The measured program's own numbers (``returncode`` < 0: killed by that signal)."""

    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int


def status_shell(command: str, status_file: str | Path) -> list[str]:
    """argv of a wrapper shell that runs the shell ``command`` in a shell of its own, then writes
    the command's exit status (128 + signal for a command killed by one, as a shell reports it)
    to ``status_file`` (:func:`read_status`).

    For programs run under ``perf stat``, whose exit status is not its program's: ``perf stat
    -I`` exits 0 whatever the program did (perf 6.1: ``perf stat -I 100 -- sh -c 'exit 3'``
    exits 0), and plain ``perf stat`` exits 0 when the program dies of a signal and, measured
    here, in about 8 % of runs of ``sh -c 'exit 5'``. perf counts the wrapper too (~1 ms).
    """
    inner = (f"/bin/sh -c {shlex.quote(command)}\n__perfcast_rc=$?\n"
             f"echo $__perfcast_rc > {shlex.quote(str(status_file))}\nexit $__perfcast_rc")
    return ["/bin/sh", "-c", inner]


def read_status(status_file: str | Path) -> int | None:
    """The exit status :func:`status_shell` wrote; None when it wrote none (the wrapper shell
    was itself killed).

    >>> import subprocess, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     rc = subprocess.run(status_shell("exit 3", f"{tmp}/s")).returncode
    ...     rc, read_status(f"{tmp}/s"), read_status(f"{tmp}/missing")
    (3, 3, None)
    """
    try:
        text = Path(status_file).read_text().strip()
    except OSError:
        return None
    return int(text) if text.lstrip("-").isdigit() else None


def shim_argv(argv: Sequence[str], report: str | Path, python: str | None = None) -> list[str]:
    """``argv`` run under the shim, which writes its measurements to ``report``.

    Parameters
    ----------
    argv : sequence of str
        the program and its arguments.
    report : str or Path
        the file the shim writes (``status wall user sys maxrss``; :func:`read_report`).
    python : str or None, default=None
        the interpreter that runs the shim (None: this one, ``sys.executable``).

    Returns
    -------
    list of str
        the argv to execute: ``python -I -S -c SHIM report argv...``.
    """
    return [python or sys.executable, "-I", "-S", "-c", SHIM, str(report), *argv]


def read_report(report: str | Path) -> ShimReport | None:
    """The shim's measurements, or None when it never wrote them (killed on timeout)."""
    try:
        fields = Path(report).read_text().split()
    except OSError:
        return None
    if len(fields) != 5:
        return None
    status = int(fields[0])
    return ShimReport(returncode=os.waitstatus_to_exitcode(status), wall_s=float(fields[1]),
                      user_s=float(fields[2]), sys_s=float(fields[3]),
                      max_rss_kb=int(fields[4]))


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
    own_rusage: bool = True,
) -> RunResult:
    """Run ``command`` (a shell string or an argv list) to completion and measure it.

    Parameters
    ----------
    command : str or sequence of str
        a shell command line (run by ``/bin/sh -c``) or an argv list (run directly).
    env : mapping of str to str or None, default=None
        variables added to this process's environment (None: the environment unchanged).
    cwd : str or None, default=None
        the working directory (None: this process's).
    timeout_s : float or None, default=None
        the wall-clock limit; past it the whole process group is killed and the result says
        ``timed_out`` (None or 0: no limit).
    preexec_fn : callable or None, default=None
        runs in the child before exec (e.g. join a cgroup).
    on_start : callable or None, default=None
        ``on_start(pid)`` in the parent once started (the shim's pid with ``own_rusage``, whose
        only child is the program).
    on_line : callable or None, default=None
        ``on_line(t, line)`` for each stdout line as it arrives, ``t`` in seconds since start.
    stdin_devnull : bool, default=True
        the child reads ``/dev/null`` (False: it inherits this process's stdin).
    own_rusage : bool, default=True
        the times, max RSS and exit status are the program's own, measured by the shim (see
        the module docstring); a run killed on timeout keeps the parent's view.

    Returns
    -------
    RunResult
        what the run did, its stdout lines stamped as they arrived.

    Examples
    --------
    >>> res = run_measured(["sh", "-c", "echo one; echo two; exit 3"])
    >>> res.returncode, res.ok, [line for _, line in res.stdout_lines]
    (3, False, ['one', 'two'])
    """
    if own_rusage:
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        with tempfile.TemporaryDirectory(prefix="perfcast-rusage-") as tmp:
            report = Path(tmp) / "rusage"
            res = run_measured(shim_argv(argv, report), env=env, cwd=cwd, timeout_s=timeout_s,
                               preexec_fn=preexec_fn, on_start=on_start, on_line=on_line,
                               stdin_devnull=stdin_devnull, own_rusage=False)
            own = read_report(report)
        text = command if isinstance(command, str) else shlex.join(command)
        if own is None:
            return replace(res, command=text)
        return replace(res, command=text, returncode=own.returncode, wall_s=own.wall_s,
                       user_s=own.user_s, sys_s=own.sys_s, max_rss_kb=own.max_rss_kb,
                       signal=-own.returncode if own.returncode < 0 else None)
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
    except BaseException:  # interrupted (SIGINT, Terminated): the program does not outlive us
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(proc.pid, 0)
        raise
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
