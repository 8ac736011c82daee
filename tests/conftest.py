"""Fixtures shared by the unit tests (``tests/unit``) and the workflow tests (``tests/workflow``):
the repository, the reference data beside it (``../shared``), a local HTTP server of the paper's
zip, the repository's own files, and a counters-like trace."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import socket
import subprocess
import threading
import urllib.parse
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository's root folder."""
    return REPO


def run_perfcast(*args: str) -> subprocess.CompletedProcess:
    """``perfcast ARGS`` in this process (:func:`perfcast.cli.main`, the console script's entry
    point), its exit status and what it printed, as :func:`subprocess.run` returns them: a
    command's answers and errors tested without paying a Python start-up per call (seconds
    here). The console script itself, as a separate process, is tested by
    ``tests/unit/test_robustness.py`` and ``tests/workflow/test_installed.py``."""
    from perfcast.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["perfcast", *args], code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def perfcast_cli() -> Callable[..., subprocess.CompletedProcess]:
    """:func:`run_perfcast`: ``perfcast ARGS`` run in the test's process."""
    return run_perfcast


def _default_ending_signals() -> None:
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_DFL)


@pytest.fixture(scope="session")
def popen_to_signal() -> Callable[..., subprocess.Popen]:
    """:class:`subprocess.Popen` for a job a test ends by a signal: the job starts with SIGTERM,
    SIGHUP and SIGINT at their default dispositions, whatever the suite inherited. A suite
    started under ``nohup`` ignores SIGHUP, and one started in the background by a shell without
    job control (``sh -c 'make test &'``) ignores SIGINT; an ignored disposition passes through
    ``exec``, and perfcast rightly leaves an ignored signal ignored (tested on its own), so
    without this such a job would run on and the test time out."""

    def popen(*args: object, **kw: object) -> subprocess.Popen:
        return subprocess.Popen(*args, preexec_fn=_default_ending_signals, **kw)  # type: ignore[call-overload]

    return popen


# --- reference data: ../shared beside the repository ---------------------------------------------


def _reference(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.skip(f"{what} not found at {path} (shared/ must sit beside the repo)")
    return path


@pytest.fixture(scope="session")
def shared() -> Path:
    """``../shared`` (development reference data); the test is skipped when it is absent."""
    return _reference(SHARED, "reference data")


@pytest.fixture(scope="session")
def arcp_csv(shared) -> Path:
    """The paper's measurements as the tidy table (the reference the conversion must equal)."""
    return _reference(shared / "data" / "arcp" / "arcp_measurements.csv", "reference data")


@pytest.fixture(scope="session")
def arcp_zip(shared) -> Path:
    """The paper's ``raw data.zip`` (eight workbooks)."""
    return _reference(shared / "data" / "arcp" / "raw_data.zip", "the paper's raw data.zip")


class _Server:
    """Serves ``raw%20data.zip`` (intact) and ``bad/raw%20data.zip`` (one byte altered)."""

    def __init__(self, good: bytes) -> None:
        bad = bytearray(good)
        bad[len(bad) // 2] ^= 0xFF
        self.files = {"/raw data.zip": good, "/bad/raw data.zip": bytes(bad)}
        self.requests: list[str] = []
        files, requests = self.files, self.requests

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = urllib.parse.unquote(self.path)
                requests.append(path)
                body = files.get(path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/zip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.url = f"{self.base}/raw%20data.zip"
        self.bad_url = f"{self.base}/bad/raw%20data.zip"


@pytest.fixture
def server(arcp_zip) -> Iterator[_Server]:
    """A local HTTP server of the paper's zip: ``.url`` (intact), ``.bad_url`` (one byte
    altered), ``.base``; ``.requests`` lists the paths asked for."""
    srv = _Server(arcp_zip.read_bytes())
    # shutdown() waits for serve_forever's next poll: 0.05 s, not the default 0.5 s
    thread = threading.Thread(target=srv.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()
    thread.join(timeout=5)


def _closed_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was just free)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/raw%20data.zip"


@pytest.fixture(scope="session")
def closed_url() -> Callable[[], str]:
    """``closed_url()``: a URL on 127.0.0.1 where nothing listens (a fresh port each call)."""
    return _closed_url


# --- perf as the user the tests run as ----------------------------------------------------------


@pytest.fixture(scope="session")
def perf_user_mode_only() -> bool:
    """perf restricts the user the tests run as to user mode (not root, perf_event_paranoid
    >= 2): every event is printed with ``:u`` and the scheduler's events (context-switches,
    cpu-migrations) cannot count, so the collection refuses them."""
    paranoid = Path("/proc/sys/kernel/perf_event_paranoid")
    level = int(paranoid.read_text()) if paranoid.exists() else -1
    return os.geteuid() != 0 and level >= 2


# --- the repository's own files ------------------------------------------------------------------


@pytest.fixture
def tracked_files() -> list[str]:
    """The repository's files as a commit of the working tree would hold them (``git ls-files``:
    tracked, and untracked but not ignored), relative to the root; skips without git."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout of the repository (git ls-files) to export it")
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return sorted(f for f in out.split("\0") if f and (REPO / f).is_file())


# --- a counters-like trace -----------------------------------------------------------------------


def _counters_trace(seed=0, n=600, setup=3, warm=40, cool=25, phases=False):
    """A counters-like trace: the columns the counters stage writes, 100 ms intervals."""
    rng = np.random.default_rng(seed)
    dur = np.full(n, 0.1)
    dur[-1] = 0.04  # the last interval is partial
    ipc = np.full(n, 2.0)
    ipc[setup:setup + warm] = np.linspace(0.8, 1.9, warm)  # cold caches
    if phases:  # program phases of 100 intervals in the middle half of the run
        mid = np.arange(n // 4, 3 * n // 4)
        ipc[mid] = np.where(((mid - n // 4) // 100) % 2, 2.6, 1.6)
    ipc[n - cool:] = 1.2  # threads finishing
    ipc = ipc * (1 + rng.normal(0, 0.01, size=n))
    cycles = 2.5e9 * dur
    inst = ipc * cycles
    inst[:setup] = 1e5  # loading: (almost) no instructions retired
    ipc[:setup] = inst[:setup] / cycles[:setup]
    return pd.DataFrame({
        "interval": np.arange(n), "time": np.cumsum(dur), "duration_s": dur,
        "instructions": inst, "cycles": cycles, "ipc": inst / cycles,
        "instructions_cumulative_sum": np.cumsum(inst),
        "l1d_cache_refill_pki": rng.uniform(1, 2, size=n),
    })


@pytest.fixture(scope="session")
def counters_trace() -> Callable[..., pd.DataFrame]:
    """``counters_trace(seed, n, setup, warm, cool, phases)``: a counters-like trace (the
    columns the counters stage writes, 100 ms intervals) with warm-up and cool-down."""
    return _counters_trace
