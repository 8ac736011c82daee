"""Generated encodings and special files fed to every text reader and sub-command.

Each sub-command that reads a user's text gets a valid input, damaged in one way: a Latin-1
byte or a NUL byte on a chosen line, UTF-16 with its byte-order mark, a line longer than
:data:`perfcast.io.MAX_LINE_BYTES`, CRLF line ends, a UTF-8 byte-order mark; or given through a
FIFO, a ``/dev/fd/N`` pipe (what ``<(...)`` passes), stdin, ``/dev/null``, ``/dev/zero``, a
directory or an empty file. The answer is known: either the result of the intact file (CRLF, a
UTF-8 byte-order mark, a FIFO, a pipe, stdin), or one line on stderr naming the input and, for
a damaged line, that line (``watch`` may also stop before it reaches the line, with the intact
file's result). ``/dev/zero`` runs in a subprocess with its address space limited to 1 GiB and
a timeout, so a reader that holds it whole fails the test instead of the machine.
"""

from __future__ import annotations

import errno
import io
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import event, example, given
from hypothesis import strategies as st

from perfcast.cli import main
from perfcast.counters.perfstat import format_perf_csv
from perfcast.errors import InputError
from perfcast.io import MAX_LINE_BYTES

# ------------------------------------------------------------------ valid inputs, one per reader


def _readings() -> str:
    rng = np.random.default_rng(1)
    x = np.concatenate([np.linspace(2.0, 1.0, 10), 1.0 + 0.01 * rng.standard_normal(70)])
    return "".join(f"{v:.6f}\n" for v in x)


def _rounds() -> str:
    return "work,duration_s\n" + "".join(
        f"{w},{0.5 + w / 1000 + 0.001 * (w % 3):.6f}\n" for w in range(100, 3100, 100))


def _table() -> str:
    return "x,y\n" + "".join(f"{x},{3 + 2 * x + 0.01 * (x % 2):.4f}\n" for x in range(1, 31))


def _grid() -> str:
    return "program,cpu_cores,metric,value\n" + "".join(
        f"p,{c},runtime_s,{10 / c + 1:.6f}\n" for c in range(1, 25))


def _extrap() -> str:
    points = [2 ** k for k in range(1, 17)]
    return ("PARAMETER p\nPOINTS " + " ".join(f"( {p} )" for p in points)
            + "\nREGION fft\nMETRIC time\n"
            + "".join(f"DATA {p * 0.5 + 1:.3f} {p * 0.5 + 1.01:.3f}\n" for p in points))


def _perf() -> str:
    n = 8
    return format_perf_csv(np.arange(1, n + 1) / 10, {
        "instructions": np.full(n, 2e8), "cycles": np.full(n, 1e8),
        "branch-misses": np.linspace(4e5, 6e5, n)})


#: per sub-command: its arguments around the input (``{in}``) and an output (``{out}``), the
#: valid text, and whether it reads ``-`` as stdin
COMMANDS: dict[str, tuple[list[str], Callable[[], str], bool]] = {
    "ci": (["ci", "{in}"], _readings, True),
    "edm": (["edm", "{in}"], _readings, True),
    "stable": (["stable", "{in}"], _readings, True),
    "watch": (["watch", "{in}"], _readings, True),
    "wps": (["wps", "{in}"], _rounds, True),
    "fit": (["fit", "{in}", "--y", "y", "--x", "x"], _table, False),
    "sensitivity-eval": (["sensitivity-eval", "--data", "{in}", "--program", "p",
                          "--epsilon", "0.3"], _grid, False),
    "sweep-import": (["sweep-import", "--format", "extrap", "{in}", "--parameters", "p",
                      "-o", "{out}.csv"], _extrap, False),
    "postprocess": (["postprocess", "{in}", "--events", "branch-misses", "-o", "{out}.parquet"],
                    _perf, False),
}

#: the suffix each command's input is named with (fit and sweep-import read by suffix)
SUFFIX = {"fit": ".csv", "wps": ".csv", "sensitivity-eval": ".csv", "postprocess": ".csv"}


def argv(command: str, given: str | Path, out: Path) -> list[str]:
    """The command line of ``command`` reading ``given`` and writing ``out``."""
    return [a.replace("{in}", str(given)).replace("{out}", str(out))
            for a in COMMANDS[command][0]]


def _same(text: str, given: str | Path, out: Path) -> str:
    """Output with the input's and the output's names left out, for comparing runs."""
    return text.replace(str(out), "<out>").replace(str(given), "<in>")


def run(capsys, command: str, given: str | Path, out: Path) -> tuple[int, str, str]:
    """``perfcast`` in this process: its status, stdout (names left out) and stderr."""
    capsys.readouterr()
    code = main(argv(command, given, out))
    got, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err, err
    return code, _same(got, given, out), err


def refused(code: int, err: str, command: str, name: str | Path, line: int | None = None) -> str:
    """The one line of a refusal, naming ``name`` (and ``line``)."""
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"perfcast {command}: error: {name}"), (name, err)
    if line is not None:
        assert lines[0].startswith(f"perfcast {command}: error: {name}, line {line}:"), err
    assert len(lines[0]) < 2000, len(lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def intact(tmp_path_factory) -> dict[str, tuple[int, str]]:
    """Per command, the status and the output of its intact input, read from a file."""
    import contextlib

    d = tmp_path_factory.mktemp("intact")
    answers = {}
    for command, (_, text, _) in COMMANDS.items():
        f = d / f"{command}{SUFFIX.get(command, '.txt')}"
        f.write_text(text())
        out_ = io.StringIO()
        with contextlib.redirect_stdout(out_):
            code = main(argv(command, f, d / f"{command}.out"))
        assert code in (0, 1), command
        answers[command] = (code, _same(out_.getvalue(), f, d / f"{command}.out"))
    return answers


# ---------------------------------------------------------------------------- encodings


def _damage(data: bytes, kind: str, line: int) -> bytes:
    """``data`` damaged: ``latin1`` / ``nul`` a byte at the end of line ``line``, ``long`` that
    line made longer than the bound, ``utf16`` the whole as UTF-16 with its byte-order mark,
    ``crlf`` CRLF line ends, ``bom`` a UTF-8 byte-order mark first."""
    if kind == "utf16":
        return data.decode().encode("utf-16")
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    lines = data.split(b"\n")
    extra = {"latin1": b"\xe9", "nul": b"\x00", "long": b"9" * (MAX_LINE_BYTES + 1)}[kind]
    lines[line - 1] += extra
    return b"\n".join(lines)


#: the line a damage is reported at (None: the result of the intact input)
def _expected_line(kind: str, line: int) -> int | None:
    return {"utf16": 1, "crlf": None, "bom": None}.get(kind, line)


@example(command="wps", kind="latin1", where=0.4, stdin=True)
@example(command="postprocess", kind="latin1", where=0.5, stdin=False)
@example(command="ci", kind="long", where=0.9, stdin=False)
@given(command=st.sampled_from(sorted(COMMANDS)),
       kind=st.sampled_from(["latin1", "nul", "long", "utf16", "crlf", "bom"]),
       where=st.floats(0, 1), stdin=st.booleans())
def test_every_reader_places_a_damaged_byte_on_its_line_or_reads_the_text(
        capsys, monkeypatch, tmp_path_factory, intact, command, kind, where, stdin):
    d = tmp_path_factory.mktemp("damaged")
    text = COMMANDS[command][1]().encode()
    n_lines = text.count(b"\n")
    line = 1 + min(int(where * n_lines), n_lines - 1)
    data = _damage(text, kind, line)
    stdin = stdin and COMMANDS[command][2]
    if stdin:
        given: str | Path = "-"
        name = "<stdin>"
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8",
                                                           errors="surrogateescape"))
    else:
        given = name = d / f"input{SUFFIX.get(command, '.txt')}"
        given.write_bytes(data)
    code, out, err = run(capsys, command, given, d / "out")
    event(f"{command} exit {code}")
    want = _expected_line(kind, line)
    if want is None or (command == "watch" and code != 2):
        # the text read as the intact file is (watch: it stopped before the damaged line)
        assert (code, out) == intact[command], err
        return
    why = refused(code, err, command, name, want)
    assert {"latin1": "not UTF-8", "nul": "NUL byte", "long": "longer than",
            "utf16": "UTF-16"}[kind] in why, why


@given(kind=st.sampled_from(["latin1", "nul", "long", "utf16"]), where=st.floats(0, 1))
def test_the_wholerun_reader_places_a_damaged_byte_on_its_line(tmp_path_factory, kind, where):
    from perfcast.counters.settings import BaseEvents
    from perfcast.counters.wholerun import read_wholerun

    text = ("benchmark,machine,instructions,cycles,branch-misses,time_s\n"
            + "".join(f"b{k},m1,3e11,3.6e11,2e9,122.9\n" for k in range(12))).encode()
    line = 1 + min(int(where * 13), 12)
    f = tmp_path_factory.mktemp("wholerun") / "runs.csv"
    f.write_bytes(_damage(text, kind, line))
    with pytest.raises(InputError) as exc:
        read_wholerun(f, benchmark="b3", machine="m1", base=BaseEvents("instructions", "cycles"),
                      events=["branch-misses"], clock_ghz=None)
    assert str(exc.value).startswith(f"{f}, line {_expected_line(kind, line)}:"), exc.value


# ------------------------------------------------------------------------- special files


def _feed(fifo: Path | int, data: bytes, deadline: float) -> None:
    """Write ``data`` into a FIFO (a path) or a pipe (a descriptor) once a reader opens it;
    give up at ``deadline`` (the reader never came)."""
    if isinstance(fifo, int):
        fd = fifo
    else:
        while True:
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError as exc:
                if exc.errno != errno.ENXIO or time.monotonic() > deadline:
                    return
                time.sleep(0.01)
        os.set_blocking(fd, True)
    try:
        os.write(fd, data)  # (below the pipe's 64 KiB or written whole: blocking)
    except OSError:
        pass
    finally:
        os.close(fd)


def _subprocess(args: list[str], *, limit_as: int | None = None, pass_fds: tuple[int, ...] = (),
                timeout: float = 120) -> subprocess.CompletedProcess:
    """``perfcast ARGS`` in a subprocess, bounded in time (and in address space)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "perfcast", *args], capture_output=True,
                          text=True, timeout=timeout, pass_fds=pass_fds, env=env,
                          preexec_fn=None if limit_as is None else limit,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("how", ["fifo", "pipe"])
def test_a_fifo_or_a_pipe_is_read_once_as_the_file_it_carries(tmp_path, intact, command, how):
    data = COMMANDS[command][1]().encode()
    out = tmp_path / "out"
    deadline = time.monotonic() + 90
    if how == "fifo":
        given: str | Path = tmp_path / f"input{SUFFIX.get(command, '.txt')}"
        os.mkfifo(given)
        writer = threading.Thread(target=_feed, args=(given, data, deadline), daemon=True)
        writer.start()
        done = _subprocess(argv(command, given, out), timeout=90)
    else:  # what bash's <(...) passes: /dev/fd/N, a pipe
        r, w = os.pipe()
        given = f"/dev/fd/{r}"
        writer = threading.Thread(target=_feed, args=(w, data, deadline), daemon=True)
        writer.start()
        try:
            done = _subprocess(argv(command, given, out), pass_fds=(r,), timeout=90)
        finally:
            os.close(r)
    writer.join(5)
    assert (done.returncode, _same(done.stdout, given, out)) == intact[command], done.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_dev_zero_is_refused_at_its_first_line_within_bounded_memory(tmp_path, command):
    done = _subprocess(argv(command, "/dev/zero", tmp_path / "out"), limit_as=1 << 30)
    refused(done.returncode, done.stderr, command, "/dev/zero", 1)
    assert "longer than" in done.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("special", ["/dev/null", "directory", "empty"])
def test_an_empty_input_or_a_directory_is_refused_naming_it(capsys, tmp_path, command, special):
    given: str | Path = special
    if special == "directory":
        given = tmp_path / "a-directory"
        given.mkdir()
    elif special == "empty":
        given = tmp_path / f"empty{SUFFIX.get(command, '.txt')}"
        given.write_bytes(b"")
    code, _, err = run(capsys, command, given, tmp_path / "out")
    refused(code, err, command, given)
