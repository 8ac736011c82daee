"""The paper's measurements: download (from a local HTTP server), checksum, conversion of the
eight workbooks into the tidy table, offline copies. (The workflow's fetch rules:
``tests/workflow/test_arcp_workflow.py``; the zip, the server and ``closed_url`` are fixtures of
``tests/conftest.py``.)"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Callable
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from perfcast.errors import InputError
from perfcast.sensitivity import arcp
from perfcast.settings import schema_default

#: the published zip: where it is downloaded from and its checksum (the schema's defaults)
URL = schema_default("sensitivity", "replay.source.url")
SHA256 = schema_default("sensitivity", "replay.source.sha256")

# ------------------------------------------------------------------------------- convert


def test_convert_reproduces_the_reference_table(arcp_zip, arcp_csv, tmp_path):
    out = tmp_path / "t.csv"
    df = arcp.convert(arcp_zip, out)
    pd.testing.assert_frame_equal(pd.read_csv(out), pd.read_csv(arcp_csv))
    pd.testing.assert_frame_equal(df, pd.read_csv(arcp_csv))
    assert out.read_bytes() == arcp_csv.read_bytes()
    counts = df.groupby("program").size()
    assert counts["Data Serving"] == 91 and counts["Data Caching"] == 299
    assert counts["mg.c.4"] == 83 and counts["fileiowr"] == 4


def _rezip(src: Path, dst: Path, edit: Callable[[str, bytes], bytes | None]) -> Path:
    """A copy of the zip whose members go through ``edit`` (None drops the member)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info))
            if data is not None:
                zout.writestr(info, data)
    return dst


def _set_cell(name: str, coord: str, value: object) -> Callable[[str, bytes], bytes | None]:
    def edit(member: str, data: bytes) -> bytes:
        if member != f"raw data/{name}":
            return data
        book = openpyxl.load_workbook(io.BytesIO(data))
        book.worksheets[0][coord] = value
        buf = io.BytesIO()
        book.save(buf)
        return buf.getvalue()

    return edit


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        (lambda m, d: None if m.endswith("parsec.xlsx") else d,
         ["no workbook 'parsec.xlsx'", "expected the workbooks"]),
        (lambda m, d: b"garbage" if m.endswith("Data Serving.xlsx") else d,
         ["raw data/Data Serving.xlsx", "not a readable Excel workbook"]),
        (_set_cell("mg.c.8.xlsx", "C5", "n/a"),
         ["raw data/mg.c.8.xlsx", "sheet '", "cell C5 (row 5)", "'n/a'",
          "expected a measured number"]),
        (_set_cell("Data Serving.xlsx", "B5", 2.2),
         ["Data Serving.xlsx", "cell B5 (row 5)", "above the previous one"]),
        (_set_cell("Data Serving.xlsx", "K20", 1),
         ["Data Serving.xlsx", "cell K20 (row 20)", "outside the labelled table"]),
        (_set_cell("Data Caching.xlsx", "A3", 333),
         ["Data Caching.xlsx", "cell D3 (row 3)", "label 23.53 (cpu 2, net 3) disagrees with "
          "label 333 in A3 (cpu 3, net 3)"]),
        (_set_cell("parsec.xlsx", "A4", None),
         ["parsec.xlsx", "cell C4 (row 4)", "outside the labelled table"]),
    ],
    ids=["missing-workbook", "not-a-workbook", "text-value", "levels-not-increasing",
         "stray-cell", "caching-label", "program-name-gap"],
)
def test_convert_names_the_damage(arcp_zip, tmp_path, edit, needles):
    bad = _rezip(arcp_zip, tmp_path / "bad.zip", edit)
    out = tmp_path / "t.csv"
    with pytest.raises(InputError) as err:
        arcp.convert(bad, out)
    for needle in needles:
        assert needle in str(err.value)
    assert list(tmp_path.iterdir()) == [bad]  # no table, no temporary file


def test_convert_rejects_a_file_that_is_no_zip(tmp_path):
    bad = tmp_path / "raw_data.zip"
    bad.write_bytes(b"<html>not found</html>")
    with pytest.raises(InputError, match="not a readable zip archive"):
        arcp.convert(bad, tmp_path / "t.csv")
    assert not (tmp_path / "t.csv").exists()


# --------------------------------------------------------------------------------- fetch


def test_fetch_downloads_and_verifies(server, tmp_path):
    dest = arcp.fetch(server.url, SHA256, tmp_path / "d" / "raw_data.zip")
    assert arcp.sha256_of(dest) == SHA256
    assert server.requests == ["/raw data.zip"]
    assert [p.name for p in dest.parent.iterdir()] == ["raw_data.zip"]


def test_fetch_checksum_mismatch_leaves_nothing(server, tmp_path):
    dest = tmp_path / "d" / "raw_data.zip"
    with pytest.raises(InputError) as err:
        arcp.fetch(server.bad_url, SHA256, dest)
    msg = str(err.value)
    assert server.bad_url in msg and "checksum mismatch" in msg and SHA256 in msg
    actual = hashlib.sha256(server.files["/bad/raw data.zip"]).hexdigest()
    assert actual in msg
    assert list(dest.parent.iterdir()) == []


def test_fetch_offline_says_what_to_set(tmp_path, closed_url):
    url = closed_url()
    dest = tmp_path / "raw_data.zip"
    with pytest.raises(arcp.DownloadError) as err:
        arcp.fetch(url, SHA256, dest, timeout_s=5)
    msg = str(err.value)
    assert url in msg and SHA256 in msg
    assert "sensitivity.replay.source.zip" in msg and "sensitivity.replay.source.table" in msg
    assert list(tmp_path.iterdir()) == []


def test_fetch_http_error_is_a_download_error(server, tmp_path):
    with pytest.raises(arcp.DownloadError, match="HTTP 404 Not Found"):
        arcp.fetch(f"{server.base}/missing.zip", SHA256, tmp_path / "z.zip")


def test_fetch_local_copy(arcp_zip, tmp_path, closed_url):
    dest = arcp.fetch(closed_url(), SHA256, tmp_path / "z.zip", local_zip=arcp_zip)
    assert dest.read_bytes() == arcp_zip.read_bytes()
    wrong = tmp_path / "wrong.zip"
    wrong.write_bytes(b"x")
    with pytest.raises(InputError, match=f"{wrong}.*checksum mismatch.*{SHA256}"):
        arcp.fetch(URL, SHA256, tmp_path / "y.zip", local_zip=wrong)
    with pytest.raises(InputError, match="cannot read the local copy"):
        arcp.fetch(URL, SHA256, tmp_path / "y.zip", local_zip=tmp_path / "none.zip")
    assert not (tmp_path / "y.zip").exists()


def test_schema_defaults_pin_the_published_zip():
    """The download is pinned: the authors' repository at one commit, and the checksum of the
    zip as published there (the reference copy's, when present, is checked above)."""
    assert URL == ("https://github.com/yishaou/ARCPTool/raw/"
                   "1d0118a3efabf9bf9df01b67f5d8b946c83f70be/raw%20data.zip")
    assert SHA256 == "15da7740693823fc7862f2744aeb3be5ed52bd8052d526ad7a982135c4467caa"
