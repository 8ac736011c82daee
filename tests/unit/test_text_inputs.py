"""Text inputs read once, line by line, within bounds (:func:`perfcast.io.text_lines`): a bad
byte reported at its line and column, binary data on stdin refused naming its line, a line too
long refused before it fills memory, an error quoting a bounded excerpt, a pipe read once."""

from __future__ import annotations

import io
import os
import sys

import numpy as np
import pytest

from perfcast.cli import main
from perfcast.counters.perfstat import format_perf_csv
from perfcast.errors import MAX_MESSAGE, InputError
from perfcast.io import MAX_LINE_BYTES, read_parquet, read_text, text_lines

ROUNDS = "work,duration_s\n" + "".join(f"{w},{0.5 + w / 1000:.4f}\n" for w in range(100, 2100, 100))


def _cli(capsys, *argv: object) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _stdin(monkeypatch, data: bytes) -> None:
    """``data`` as the process's stdin, decoded as Python decodes a stdin in the C locale."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8",
                                                       errors="surrogateescape"))


def test_binary_data_on_stdin_is_refused_naming_its_line(capsys, monkeypatch):
    # a carriage return and bytes that are not UTF-8 in a row: the csv module raised its
    # _csv.Error out of `perfcast wps -`
    _stdin(monkeypatch, ROUNDS.encode() + b"2200,0.9\x9c\rx\x01\n")
    code, _, err = _cli(capsys, "wps", "-")
    line = _one_line(code, err)
    assert line.startswith("perfcast wps: error: <stdin>, line 22: not a text file: "
                           "byte 0x9c at column 9 "), line


def test_a_carriage_return_inside_a_row_is_refused_naming_its_line(capsys, monkeypatch):
    _stdin(monkeypatch, ROUNDS.encode() + b"2200,0.9\rx\n")
    line = _one_line(*_cli(capsys, "wps", "-")[::2])
    assert line.startswith("perfcast wps: error: <stdin>, line 22: "), line


@pytest.mark.parametrize("command", ["ci", "edm", "stable", "watch", "wps"])
def test_a_latin1_byte_is_reported_at_its_line_and_column(capsys, tmp_path, command):
    f = tmp_path / "in.csv"
    lines = (ROUNDS if command == "wps" else "".join(f"{1 + k / 100}\n" for k in range(40)))
    raw = lines.encode().split(b"\n")
    raw[12] = raw[12][:2] + b"\xe9" + raw[12][2:]  # line 13, its third byte
    f.write_bytes(b"\n".join(raw))
    line = _one_line(*_cli(capsys, command, f)[::2])
    offset = sum(len(r) + 1 for r in raw[:12]) + 3
    assert line.startswith(f"perfcast {command}: error: {f}, line 13: not a text file: "
                           f"byte 0xe9 at column 3 (byte {offset} of the input) is not UTF-8"), line


def test_a_perf_file_places_a_bad_byte_past_the_decoders_block_on_its_line(capsys, tmp_path):
    n = 400  # some 50 kB: past the 8 kB a text decoder reads ahead
    counts = {"instructions": np.full(n, 2e8), "cycles": np.full(n, 1e8),
              "branch-misses": np.full(n, 5e5)}
    raw = format_perf_csv(np.arange(1, n + 1) / 10, counts).encode().split(b"\n")
    raw[1000] += b"\xe9"
    f = tmp_path / "g0.csv"
    f.write_bytes(b"\n".join(raw))
    code, _, err = _cli(capsys, "postprocess", f, "--events", "branch-misses",
                        "-o", tmp_path / "t.parquet")
    assert _one_line(code, err).startswith(f"perfcast postprocess: error: {f}, line 1001: "), err


@pytest.mark.parametrize("bad, what", [(b"\x00", "a NUL byte at column 4"),
                                       (b"\xff", "byte 0xff at column 4")])
def test_text_lines_names_the_line_the_column_and_the_offset(tmp_path, bad, what):
    f = tmp_path / "r.txt"
    f.write_bytes(b"1.0\r\n2.0\n3.0" + bad + b"\n")
    with pytest.raises(InputError) as exc:
        list(text_lines(f))
    assert str(exc.value).startswith(f"{f}, line 3: not a text file: {what} "
                                     "(byte 13 of the input)"), exc.value


@pytest.mark.parametrize("block", [1, 3, 7, 1 << 16])
def test_lines_and_their_numbers_do_not_depend_on_the_blocks_read(tmp_path, monkeypatch, block):
    import perfcast.io

    monkeypatch.setattr(perfcast.io, "_BLOCK", block)
    f = tmp_path / "r.txt"
    f.write_bytes(b"\xef\xbb\xbf1.0\r\n\n2.0\r3\n\xc3\xa9\n4.0")  # a CR alone stays in its line
    assert list(text_lines(f)) == [(1, "1.0"), (2, ""), (3, "2.0\r3"), (4, "\u00e9"), (5, "4.0")]
    f.write_bytes(b"1.0\n" * 5 + b"2.0\xe9\n" + b"3.0\n")
    with pytest.raises(InputError, match=r", line 6: not a text file: byte 0xe9 at column 4 "
                                         r"\(byte 24 of the input\)"):
        list(text_lines(f))


def test_utf16_is_named_as_such(tmp_path):
    f = tmp_path / "r.txt"
    f.write_text("duration_s\n0.5\n", encoding="utf-16")
    with pytest.raises(InputError, match=r", line 1: not a text file: UTF-16 "):
        read_text(f)


def test_a_utf8_byte_order_mark_is_dropped(tmp_path):
    f = tmp_path / "rounds.csv"
    f.write_bytes(b"\xef\xbb\xbf" + ROUNDS.encode())
    assert read_text(f) == ROUNDS


def test_a_line_longer_than_the_bound_is_refused_after_reading_the_bound_only(tmp_path):
    with pytest.raises(InputError) as exc:
        next(text_lines("/dev/zero"))  # endless, without a newline: held whole, it filled memory
    assert str(exc.value).startswith(f"/dev/zero, line 1: line longer than {MAX_LINE_BYTES} "
                                     "bytes"), exc.value
    f = tmp_path / "r.txt"
    f.write_bytes(b"0.5\n" * 3 + b"1" * (MAX_LINE_BYTES + 1) + b"\n0.5\n")
    with pytest.raises(InputError, match=r", line 4: line longer than"):
        list(text_lines(f))
    f.write_bytes(b"0.5\n" * 3 + b"1" * MAX_LINE_BYTES + b"\r\n")  # the bound itself: read
    assert len(list(text_lines(f))[-1][1]) == MAX_LINE_BYTES
    # whatever the blocks read: a CR that ends one, its LF in the next
    pipe = _pipe_of(f.read_bytes(), cut=len(f.read_bytes()) - 1)
    try:
        assert len(list(text_lines(pipe))[-1][1]) == MAX_LINE_BYTES
    finally:
        os.close(int(pipe.rsplit("/", 1)[1]))


#: per command: its arguments, and an input of 500 kB whose line 2 is not what it reads
LONG = "x" * 500_000
LONG_LINES = {
    "postprocess": (["--events", "a", "-o", "t.parquet"], f"# started on\n{LONG}\n"),
    "fit": (["--y", "y", "--x", "x"], f"x,y\n1,{LONG}\n"),
    "sweep-import": (["--format", "extrap", "--parameters", "p", "-o", "t.csv"],
                     f"PARAMETER p\n{LONG}\n"),
    "wps": ([], f"work,duration_s\n{LONG},1\n"),
}


def _pipe_of(data: bytes, cut: int) -> str:
    """``/dev/fd/N`` of a pipe fed ``data`` by a thread in two writes, cut at ``cut``, so that
    a reader gets at most ``cut`` bytes in its first block."""
    import threading
    import time

    r, w = os.pipe()

    def feed() -> None:
        os.write(w, data[:cut])
        time.sleep(0.2)  # (the reader takes what arrived: the first part alone)
        os.write(w, data[cut:])
        os.close(w)

    threading.Thread(target=feed, daemon=True).start()
    return f"/dev/fd/{r}"


@pytest.mark.parametrize("command", sorted(LONG_LINES))
def test_an_error_quotes_a_bounded_excerpt_of_a_long_line(capsys, tmp_path, command):
    # a line within the line bound that the reader refuses: it was quoted whole (wps: the csv
    # module's field limit, a traceback)
    flags, text = LONG_LINES[command]
    f = tmp_path / ("in.txt" if command == "sweep-import" else "in.csv")
    f.write_text(text)
    flags = [str(tmp_path / a) if a.startswith("t.") else a for a in flags]
    line = _one_line(*_cli(capsys, command, f, *flags)[::2])
    assert line.startswith(f"perfcast {command}: error: {f}, line 2: "), line[:200]
    assert len(line) < 3 * MAX_MESSAGE, len(line)


def test_an_input_error_bounds_its_message_and_what_it_expected():
    exc = InputError("t.csv", "malformed line " + repr("y" * 10**6), row=7,
                     expected="z" * 10**6)
    assert str(exc).startswith("t.csv, line 7: malformed line 'yyy")
    assert len(str(exc)) < 2 * MAX_MESSAGE + 100


def _pipe(data: bytes) -> str:
    """``/dev/fd/N`` of a pipe holding ``data`` (as bash's ``<(...)`` passes it)."""
    r, w = os.pipe()
    assert len(data) < 65536  # held by the pipe whole: no writer needed
    os.write(w, data)
    os.close(w)
    return f"/dev/fd/{r}"


def test_postprocess_reads_a_pipe_once_as_the_file_it_carries(capsys, tmp_path):
    counts = {"instructions": [2e8, 2e8, 2e8], "cycles": [1e8, 1e8, 1e8],
              "branch-misses": [4e5, 6e5, 5e5]}
    text = format_perf_csv([0.1, 0.2, 0.3], counts)
    f = tmp_path / "g0.csv"
    f.write_text(text)
    pipe = _pipe(text.encode())
    try:
        code, _, err = _cli(capsys, "postprocess", pipe, "--events", "branch-misses",
                            "-o", tmp_path / "pipe.parquet")
        assert code == 0, err  # its start was taken by a look for an import header
    finally:
        os.close(int(pipe.rsplit("/", 1)[1]))
    code, _, err = _cli(capsys, "postprocess", f, "--events", "branch-misses",
                        "-o", tmp_path / "file.parquet")
    assert code == 0, err
    assert read_parquet(tmp_path / "pipe.parquet").equals(read_parquet(tmp_path / "file.parquet"))


def test_the_import_backend_reads_a_pipe_once(tmp_path):
    from perfcast.counters.collect import import_perf_csv
    from perfcast.counters.perfstat import IMPORT_HEADER

    counts = {"instructions": [2e8, 2e8], "cycles": [1e8, 1e8], "branch-misses": [4e5, 6e5]}
    text = format_perf_csv([0.1, 0.2], counts)
    pipe = _pipe(text.encode())
    try:
        import_perf_csv(pipe, tmp_path / "copy.csv", ["instructions", "cycles", "branch-misses"])
    finally:
        os.close(int(pipe.rsplit("/", 1)[1]))
    assert (tmp_path / "copy.csv").read_text() == f"{IMPORT_HEADER}{pipe}\n{text}"
