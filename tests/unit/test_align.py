"""Alignment: the O(n+m) exact method gives tslearn's optimal DTW cost."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfcast.model.align import align_runs, dtw_path, exact_path, path_cost
from perfcast.model.settings import AlignSettings


def _valid_path(i, j, n, m):
    assert (i[0], j[0]) == (0, 0) and (i[-1], j[-1]) == (n - 1, m - 1)
    steps = np.stack([np.diff(i), np.diff(j)], axis=1)
    assert set(map(tuple, steps)) <= {(1, 0), (0, 1), (1, 1)}


def test_exact_matches_tslearn_on_adversarial_series():
    rng = np.random.default_rng(11)
    for _ in range(400):
        n, m = rng.integers(2, 70, size=2)
        a = np.cumsum(rng.lognormal(0, rng.uniform(0.1, 2), n))
        b = np.cumsum(rng.lognormal(rng.normal(0, 1), rng.uniform(0.1, 2), m))
        i, j, c = exact_path(a, b)
        _, _, c_ref = dtw_path(a, b)
        _valid_path(i, j, n, m)
        assert c == pytest.approx(c_ref, rel=1e-9)
        assert path_cost(a, b, i, j) == pytest.approx(c, rel=1e-12)


def test_the_interpreted_and_the_compiled_band_agree_exactly(monkeypatch):
    """The band is filled by the interpreter below COMPILED_FROM_CELLS cells and by the same
    loop compiled with numba above: the same path and the same cost, bit for bit."""
    from perfcast.model import align

    rng = np.random.default_rng(5)
    for n in [*rng.integers(2, 70, size=40), 3000]:
        m = max(2, int(n / rng.uniform(0.5, 2.0)))
        a = np.cumsum(rng.lognormal(0, rng.uniform(0.1, 2), n))
        b = np.cumsum(rng.lognormal(rng.normal(0, 1), rng.uniform(0.1, 2), m))
        lo, hi = align._band(a, b, 2)
        i, j, c = align._banded_dtw(a, b, lo, hi)
        ci, cj, cc = align._compiled_banded_dtw()(a, b, lo, hi)
        assert (i == ci).all() and (j == cj).all() and c == cc
    # and exact_path takes the compiled loop from the threshold on, with the same answer
    a = np.cumsum(rng.lognormal(0, 0.3, 500))
    b = np.cumsum(rng.lognormal(0, 0.3, 400))
    interpreted = exact_path(a, b)
    monkeypatch.setattr(align, "COMPILED_FROM_CELLS", 0)
    compiled = exact_path(a, b)
    assert all(np.array_equal(x, y) for x, y in zip(interpreted, compiled, strict=True))


def test_exact_matches_tslearn_on_generation_like_runs():
    """Same instruction stream, new generation ~1.4x faster with noisy intervals."""
    rng = np.random.default_rng(2)
    total = 3e11
    for n_old in (300, 1500):
        n_new = int(n_old / 1.4)
        a = np.cumsum(rng.lognormal(0, 0.2, n_old))
        b = np.cumsum(rng.lognormal(0, 0.2, n_new))
        a, b = a * total / a[-1], b * total / b[-1]
        _, _, c = exact_path(a, b)
        _, _, c_ref = dtw_path(a, b)
        assert c == pytest.approx(c_ref, rel=1e-9)


def test_published_example_mapping():
    """Patkar's published example (502.gcc_r): G2 row 1 -> G3 row 0, rows 4 and 5 -> G3 row 3."""
    g2 = [460190954.0, 1106484590.0, 1724588976.0, 2249696930.0, 2780771235.0, 3313773511.0,
          3797070083.0, 4311980235.0, 4851216305.0, 5393885229.0, 5943214302.0, 6520858849.0,
          7152711138.0]
    g3 = [672156965.0, 1657376501.0, 2344648605.0, 3021707178.0, 3687200150.0, 4247959294.0,
          4889782076.0, 5538932327.0, 6192166460.0, 7087454578.0]
    i, j, _ = exact_path(np.array(g2), np.array(g3))
    pairs = list(zip(i.tolist(), j.tolist(), strict=True))
    assert pairs[:9] == [(0, 0), (1, 0), (2, 1), (3, 2), (4, 3), (5, 3), (6, 4), (7, 5), (8, 6)]


def test_sakoe_chiba_radius_and_errors():
    a = np.arange(1.0, 41.0)
    b = np.arange(1.0, 41.0) + 0.5
    i, j, c = dtw_path(a, b, radius=2)
    assert np.all(np.abs(i - j) <= 2)
    with pytest.raises(ValueError, match="increase strictly"):
        exact_path(np.array([1.0, 1.0, 2.0]), b)
    with pytest.raises(ValueError, match="NaN"):
        exact_path(np.array([1.0, np.nan]), b)


def test_align_runs_ratio():
    old = pd.DataFrame({"interval": [0, 1, 2, 3], "ipc": [1.0, 1.0, 2.0, 2.0],
                        "instructions_cumulative_sum": [10.0, 20.0, 30.0, 40.0]})
    new = pd.DataFrame({"interval": [0, 1], "ipc": [1.5, 3.0],
                        "instructions_cumulative_sum": [15.0, 35.0]})
    for method in ("exact", "dtw"):
        pairs, _ = align_runs(old, new, AlignSettings(method, None, 0.1))
        assert pairs["old_interval"].tolist() == [0, 1, 2, 3]
        assert pairs["new_interval"].tolist() == [0, 0, 1, 1]
        np.testing.assert_allclose(pairs["ipc_ratio"], [1.5, 1.5, 1.5, 1.5])


def test_runs_of_different_work_are_refused_naming_both_files_and_totals(tmp_path):
    """Two generations' runs 30 % apart in instructions are two different programs (or a run
    cut short): the align job fails instead of aligning them."""
    from perfcast.errors import InputError
    from perfcast.io import write_parquet
    from perfcast.model.rules import align_files
    from perfcast.model.settings import AlignRunSettings

    def table(instr):
        n = len(instr)
        return pd.DataFrame({"interval": np.arange(n), "time": np.arange(1, n + 1) / 10,
                             "duration_s": np.full(n, 0.1), "instructions": instr,
                             "cycles": instr, "ipc": np.ones(n),
                             "instructions_cumulative_sum": np.cumsum(instr), "a_pki": 1.0})

    old, new = tmp_path / "old.parquet", tmp_path / "new.parquet"
    write_parquet(table(np.full(10, 1e8)), old)
    write_parquet(table(np.full(13, 1e8)), new)
    out = tmp_path / "pairs.parquet"
    settings = AlignRunSettings(AlignSettings("exact", None, 0.1), "x", ("g2", "g3"))
    with pytest.raises(InputError) as err:
        align_files(settings, str(old), str(new), str(out), None)
    msg = str(err.value)
    assert str(old) in msg and str(new) in msg and "1.3e+09" in msg and "1e+09" in msg
    assert "30.0% apart" in msg and "instruction_tolerance" in msg and not out.exists()
    write_parquet(table(np.full(10, 1.05e8)), new)  # 5 % apart: the same work
    pairs, _ = align_files(settings, str(old), str(new), str(out), None)
    assert len(pairs) >= 10


@pytest.mark.parametrize("n, radius, need", [(40_000, None, "~12.8 GB"),
                                             (950_000, 50, "~14440.0 GB")])
def test_a_dtw_too_large_is_refused_naming_both_files_before_allocating(tmp_path, capsys, n,
                                                                         radius, need):
    """perfcast align --method dtw on runs of 40,000 intervals (full DTW) or 950,000 (a band:
    tslearn still fills and masks the whole matrix) ended in a MemoryError traceback, raised
    by our own size check or by numpy; it is one line naming both files, the sizes, the memory
    and what to use instead, with nothing written."""
    from perfcast.cli import main
    from perfcast.io import write_parquet

    t = pd.DataFrame({"interval": np.arange(n), "time": 0.1 * (np.arange(n) + 1),
                      "duration_s": 0.1, "instructions": 1e9, "cycles": 1e9, "ipc": 1.0,
                      "instructions_cumulative_sum": 1e9 * (np.arange(n) + 1.0)})
    old, new, out = tmp_path / "old.parquet", tmp_path / "new.parquet", tmp_path / "pairs.parquet"
    write_parquet(t, old)
    write_parquet(t, new)
    argv = ["align", str(old), str(new), "--method", "dtw", "-o", str(out)]
    code = main(argv + ([] if radius is None else ["--radius", str(radius)]))
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert (f"{old}: and {new}: DTW of {n} x {n} intervals needs {need} (tslearn fills the "
            "whole matrix, band or not), more than the 3.2 GB allowed (expected align.method: "
            "exact") in err, err
    assert not out.exists()


def test_dtw_bytes_is_what_tslearn_allocates():
    """The estimate the refusal uses: a band does not shrink tslearn's matrices (the old
    estimate counted the band's cells only, so a radius let any size through to numpy)."""
    from perfcast.model.align import dtw_bytes

    assert dtw_bytes(3, 4, None) == 8 * 4 * 5
    assert dtw_bytes(3, 4, 1) == 8 * 4 * 5 + 8 * 3 * 4
