"""Small helpers for benchmark scripts: peak memory of a child process, JSON results, AR(1)
series."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).parent / "out"


def run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints a JSON dict; adds its peak RSS in MB."""
    wrapped = code + "\nimport resource, json as _j\nprint(_j.dumps({**RESULT, 'peak_rss_mb': " \
        "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))\n"
    proc = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def save(name: str, result: dict) -> None:
    OUT.mkdir(exist_ok=True)
    (OUT / f"{name}.json").write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")


def ar1(rng, n: int, phi: float):
    """Stationary Gaussian AR(1) readings (300 burn-in readings dropped)."""
    from scipy.signal import lfilter

    return lfilter([1], [1, -phi], rng.normal(size=n + 300))[300:]
