"""Atomic outputs: whole or absent, and readable as a plain open() would make them."""

from __future__ import annotations

import os
import stat

import pandas as pd
import pytest

from perfcast.io import atomic_path, write_parquet


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_outputs_follow_the_umask_like_open(tmp_path, mask, mode):
    old = os.umask(mask)
    try:
        write_parquet(pd.DataFrame({"a": [1.0]}), tmp_path / "t.parquet")
        with open(tmp_path / "plain", "w"):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "t.parquet").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == mode


def test_a_failed_writer_leaves_nothing(tmp_path):
    target = tmp_path / "out.csv"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer died")
    assert list(tmp_path.iterdir()) == []
