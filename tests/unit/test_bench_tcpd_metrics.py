"""The change-point scores of benchmarks/bench_tcpd.py against the known answers of the Turing
Change Point Dataset's own ``f_measure`` and ``covering`` (van den Burg & Williams 2020, the
examples of TCPDBench's ``metrics.py``): the real-series figures of docs/methods/warmup.md
rest on them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_tcpd.py"


@pytest.fixture(scope="module")
def tcpd():
    spec = importlib.util.spec_from_file_location("bench_tcpd", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("annotations", "found", "want"), [
    ({"1": [10, 20], "2": [11, 20], "3": [10], "4": [0, 5]}, [10, 20], 1.0),
    ({"1": [], "2": [10], "3": [50]}, [10], 0.9090909090909091),
    ({"1": [], "2": [10], "3": [50]}, [], 0.8),
    # three annotators a reading apart, one detection: precision 1, not 2 (a detection counts
    # once however many annotators marked near it)
    ({"1": [97], "2": [98], "3": [99]}, [97], 1.0),
])
def test_f1_is_the_datasets_f_measure(tcpd, annotations, found, want):
    got = tcpd.f1(annotations, found)
    assert got == pytest.approx(want, abs=1e-12)
    assert 0.0 <= got <= 1.0


@pytest.mark.parametrize(("annotations", "found", "want"), [
    ({"1": [10, 20], "2": [10], "3": [0, 5]}, [10, 20], 0.7962962962962963),
    ({"1": [], "2": [10], "3": [40]}, [10], 0.7954144620811286),
    ({"1": [], "2": [10], "3": [40]}, [], 0.8189300411522634),
])
def test_cover_is_the_datasets_covering(tcpd, annotations, found, want):
    assert tcpd.cover(annotations, found, 45) == pytest.approx(want, abs=1e-12)
