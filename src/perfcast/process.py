"""Run a real command and measure it: wall clock, rusage of the child (``os.wait4``), output lines.

Shared by every stage that executes programs (perf collection, warm-up rounds, cgroup-restricted
profiling runs, sweep campaigns, their before/after and sensor commands). Each stdout line is
stamped with a monotonic clock as it arrives (unit readings, heartbeats).

Every process a run starts is gone when the run ends. The program runs under a shim that is the
child subreaper of its tree (``prctl(PR_SET_CHILD_SUBREAPER)``), so whatever the program detaches
(``setsid``, a double fork, ``nohup ... &``, a server's ``--daemonize``) stays the shim's
descendant; when the program ends the shim names and kills what is still running, and the run
fails naming those processes (:attr:`RunResult.leftover_error`): a benchmark that daemonizes
measured something other than what it reports, and its daemon would load every later
measurement. A timeout kills the whole tree.

``ru_maxrss`` of a child includes the memory image it had *before* exec: a child forked from a
Snakemake script that has loaded pandas reports that script's ~250 MB as its peak, even for
``/bin/true``. So the program is forked by that shim, a bare ``python -I -S`` (~5 MB) that
``os.wait4``s it and reports the program's own wall, user, sys, max RSS and exit status (used by
default, ``own_rusage``); the shim's start-up and its search for leftovers (a few ms) stay
outside the measured interval.
"""

from __future__ import annotations

import contextlib
import json
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

#: the shim: become the subreaper of the program's tree, fork, exec argv, wait4, then kill and
#: list what the program left running; write "status wall user sys maxrss" and one JSON line
#: ``[pid, command line]`` per leftover; exit like the program. SIGTERM (a timeout) kills the
#: whole tree.
SHIM = r"""
import ctypes, os, signal, sys, time
out, argv = sys.argv[1], sys.argv[2:]
me, done, ending, known = os.getpid(), {}, [], {}
try:  # PR_SET_CHILD_SUBREAPER: the program's orphans become our children, not init's
    ctypes.CDLL(None).prctl(36, ctypes.c_ulong(1), 0, 0, 0)
except (OSError, AttributeError):
    pass
def tree():
    kids, alive, start = {}, set(), {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields, p = stat[stat.rindex(b")") + 2:].split(), int(name)
        kids.setdefault(int(fields[1]), []).append(p)
        start[p] = fields[19]
        if fields[0] not in (b"Z", b"X"):
            alive.add(p)
    todo = [me] + [k for k, t in known.items() if start.get(k, t) == t]
    while todo:
        for p in kids.get(todo.pop(), ()):
            if p not in known and p in start:
                known[p] = start[p]
                todo.append(p)
    return [p for p, t in known.items() if p in alive and start[p] == t]
def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as fh:
            raw = fh.read()
    except OSError:
        return "?"
    return raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", "replace") or "?"
def ended(pid):  # exited by itself since tree() listed it (a zombie or gone): not left running
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            stat = fh.read()
    except OSError:
        return True
    return stat[stat.rindex(b")") + 2:].split()[0] in (b"Z", b"X")
def reap(flags):
    while True:
        try:
            got, status, ru = os.wait4(-1, flags)
        except ChildProcessError:
            return False
        except InterruptedError:
            continue
        if got == 0:
            return True
        if got == pid:
            done["main"] = (status, ru)
            if flags == 0:
                return True
def kill_all(seen):
    deadline = time.monotonic() + 10.0
    while reap(os.WNOHANG) and time.monotonic() < deadline:
        for p in tree():
            if p == pid and "main" in done:
                continue
            if p not in seen:
                cmd = cmdline(p)
                for _ in range(50):  # empty while it execs: read it once exec is done
                    if cmd != "?" or ended(p):
                        break
                    time.sleep(0.001)
                    cmd = cmdline(p)
                if cmd == "?" and ended(p):
                    continue
                seen[p] = cmd
            try:
                os.kill(p, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # gone, or setuid: named anyway
                pass
        time.sleep(0.002)
def on_term(signum, frame):
    ending.append(signum)
    kill_all({})
pid = 0
signal.signal(signal.SIGTERM, on_term)
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
if ending:
    kill_all({})
while "main" not in done:
    reap(0)
wall = time.monotonic() - t0
left = {}
kill_all({} if ending else left)
reap(os.WNOHANG)
status, ru = done["main"]
with open(out, "w") as fh:
    fh.write("%d %.9f %.6f %.6f %d\n" % (status, wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss))
    if left:
        import json
        for p, cmd in left.items():
            fh.write(json.dumps([p, cmd]) + "\n")
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
class Leftover:
    """A process a run's program left running after it ended (killed by the shim)."""

    pid: int
    #: its command line, arguments separated by spaces (``?`` when it could not be read)
    command: str

    def __str__(self) -> str:
        return f"pid {self.pid} ({self.command})"


@dataclass(frozen=True)
class ShimReport:
    """The measured program's own numbers (``returncode`` < 0: killed by that signal), and the
    processes it left running."""

    returncode: int
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    leftovers: tuple[Leftover, ...] = ()


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
    """The shim's measurements, or None when it never wrote them (the shim itself killed).

    Parameters
    ----------
    report : str or Path
        the file the shim wrote: ``status wall user sys maxrss``, then one JSON line
        ``[pid, command line]`` per process the program left running.

    Returns
    -------
    ShimReport or None
        None for a missing or malformed report.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = Path(f"{tmp}/r").write_text('0 1.5 1.0 0.5 2048\\n[42, "sleep 30"]\\n')
    ...     rep = read_report(f"{tmp}/r")
    >>> rep.returncode, rep.max_rss_kb, [str(x) for x in rep.leftovers]
    (0, 2048, ['pid 42 (sleep 30)'])
    """
    try:
        first, *rest = Path(report).read_text().splitlines() or [""]
    except OSError:
        return None
    fields = first.split()
    if len(fields) != 5:
        return None
    leftovers = []
    for line in rest:
        try:
            pid, command = json.loads(line)
            leftovers.append(Leftover(int(pid), str(command)))
        except (ValueError, TypeError):
            return None
    status = int(fields[0])
    return ShimReport(returncode=os.waitstatus_to_exitcode(status), wall_s=float(fields[1]),
                      user_s=float(fields[2]), sys_s=float(fields[3]),
                      max_rss_kb=int(fields[4]), leftovers=tuple(leftovers))


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
    #: processes the program left running when it ended, killed since (a failed run)
    leftovers: tuple[Leftover, ...] = ()
    #: the times, max RSS and exit status are the program's own (the shim's report); False:
    #: the parent's view of the shim (``own_rusage=False``, or the shim itself was killed)
    own_rusage: bool = False

    @property
    def ok(self) -> bool:
        """Exit status 0, not timed out and nothing left running."""
        return self.returncode == 0 and not self.timed_out and not self.leftovers

    @property
    def leftover_error(self) -> str | None:
        """Why a run that left processes running failed, naming them (pid and command line
        when the shim found them: a process caught between fork and exec shows its parent's);
        None when none.

        Examples
        --------
        >>> res = run_measured("sleep 30 & echo started")
        >>> res.ok, res.returncode, res.leftover_error  # doctest: +ELLIPSIS
        (False, 0, 'left 1 process(es) running after it ended (killed): pid ... (...sleep 30...)')
        """
        if not self.leftovers:
            return None
        return (f"left {len(self.leftovers)} process(es) running after it ended (killed): "
                + ", ".join(str(x) for x in self.leftovers))

    @property
    def cpu_utilisation(self) -> float:
        """(user + sys) / wall: average cores busy."""
        return (self.user_s + self.sys_s) / self.wall_s if self.wall_s > 0 else 0.0


#: how long a run's shim has to kill the program's tree after SIGTERM before its whole process
#: group is killed
KILL_GRACE_S = 15.0


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
    """Run ``command`` (a shell string or an argv list) to completion and measure it; every
    process it starts is gone when this returns.

    Parameters
    ----------
    command : str or sequence of str
        a shell command line (run by ``/bin/sh -c``) or an argv list (run directly).
    env : mapping of str to str or None, default=None
        variables added to this process's environment (None: the environment unchanged).
    cwd : str or None, default=None
        the working directory (None: this process's).
    timeout_s : float or None, default=None
        the wall-clock limit; past it every process of the run is killed and the result says
        ``timed_out`` (None or 0: no limit).
    preexec_fn : callable or None, default=None
        runs in the child before exec (e.g. join a cgroup).
    on_start : callable or None, default=None
        ``on_start(pid)`` in the parent once started (the shim's pid, whose only child is the
        program).
    on_line : callable or None, default=None
        ``on_line(t, line)`` for each stdout line as it arrives, ``t`` in seconds since start.
    stdin_devnull : bool, default=True
        the child reads ``/dev/null`` (False: it inherits this process's stdin).
    own_rusage : bool, default=True
        the times, max RSS and exit status are the program's own, measured by the shim (see
        the module docstring; a timed-out run's wall time is the parent's, from start to
        kill); False: the parent's view of the shim (whose max RSS includes the memory image
        this process had when it forked it).

    Returns
    -------
    RunResult
        what the run did, its stdout lines stamped as they arrived, and the processes it left
        running (``leftovers``: killed, and the run not ``ok``).

    Examples
    --------
    >>> res = run_measured(["sh", "-c", "echo one; echo two; exit 3"])
    >>> res.returncode, res.ok, [line for _, line in res.stdout_lines]
    (3, False, ['one', 'two'])

    Notes
    -----
    The program runs under the shim (:data:`SHIM`), which makes itself the child subreaper of
    the program's tree (``prctl(PR_SET_CHILD_SUBREAPER)``): a process the program detaches
    (``setsid``, a double fork, ``nohup ... &``, a server's ``--daemonize``) is re-parented to
    the shim instead of to init, so when the program ends the shim finds whatever it left
    still running among its own descendants (``/proc``), records each one's pid and command
    line, and kills them all. Each run has its own shim, so runs in several threads are told
    apart, and this process's other children (perf, monitors) are never touched. A program
    that leaves processes behind measured something other than what it reports (the
    detached part ran outside its wall time and ``wait4``): the run is not ``ok``, and each
    stage fails it naming the leftovers (:attr:`RunResult.leftover_error`). On a timeout or
    an interrupt the shim gets SIGTERM and kills the tree; its process group is killed too
    if it has not ended after :data:`KILL_GRACE_S`.
    """
    argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
    text = command if isinstance(command, str) else shlex.join(command)
    with tempfile.TemporaryDirectory(prefix="perfcast-rusage-") as tmp:
        report = Path(tmp) / "rusage"
        res = _run(shim_argv(argv, report), env=env, cwd=cwd, timeout_s=timeout_s,
                   preexec_fn=preexec_fn, on_start=on_start, on_line=on_line,
                   stdin_devnull=stdin_devnull)
        own = read_report(report)
    res = replace(res, command=text)
    if own is None:
        return res
    if not own_rusage:
        return replace(res, leftovers=own.leftovers)
    # a timed-out run's wall time is the parent's: the limit it was killed at, and the kill
    wall = res.wall_s if res.timed_out else own.wall_s
    return replace(res, returncode=own.returncode, wall_s=wall, user_s=own.user_s,
                   sys_s=own.sys_s, max_rss_kb=own.max_rss_kb, leftovers=own.leftovers,
                   signal=-own.returncode if own.returncode < 0 else None, own_rusage=True)


def _end(pid: int, finished: threading.Event) -> None:
    """SIGTERM the shim ``pid`` (it kills the program's tree); SIGKILL its process group if
    ``finished`` is not set within :data:`KILL_GRACE_S`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    if not finished.wait(KILL_GRACE_S):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _end_now(pid: int) -> None:
    """SIGTERM the shim ``pid`` and reap it, SIGKILLing its process group if it has not ended
    within :data:`KILL_GRACE_S` (from the thread that started it, on an interrupt)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_S
    with contextlib.suppress(ChildProcessError):
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return
            time.sleep(0.01)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def _run(
    argv: list[str],
    *,
    env: Mapping[str, str] | None,
    cwd: str | None,
    timeout_s: float | None,
    preexec_fn: Callable[[], None] | None,
    on_start: Callable[[int], None] | None,
    on_line: Callable[[float, str], None] | None,
    stdin_devnull: bool,
) -> RunResult:
    """Run the shim ``argv`` in a session of its own: the parent's view of it."""
    full_env = None
    if env:
        full_env = dict(os.environ)
        full_env.update({k: str(v) for k, v in env.items()})
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
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
    finished = threading.Event()
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
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        _end(proc.pid, finished)

    timer = threading.Timer(timeout_s, kill) if timeout_s else None
    if timer is not None:
        timer.daemon = True
    try:
        if on_start is not None:
            on_start(proc.pid)
        for r in readers:
            r.start()
        if timer is not None:
            timer.start()
        _, status, rusage = os.wait4(proc.pid, 0)
    except BaseException:  # interrupted (SIGINT, Terminated): the program does not outlive us
        _end_now(proc.pid)
        raise
    finally:
        finished.set()
        if timer is not None:
            timer.cancel()
    wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    # the shim killed the program's tree; its group may still hold what it could not kill
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    for r in readers:
        r.join(timeout=5)
    sig = -proc.returncode if proc.returncode < 0 else None
    return RunResult(
        command=shlex.join(argv),
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
