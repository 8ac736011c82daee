"""The warm-up figure draws the round its caption names (workflow/report/warmup/phases.rst: the
longest round with a stable phase), on rounds analysed by the real session analysis."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.settings import validate
from perfcast.warmup.analysis import analyze_session
from perfcast.warmup.figures import phase_figure, pick_round
from perfcast.warmup.runner import RoundRecord
from perfcast.warmup.settings import session_settings


def _analysis():
    sec = validate({"workloads": {"w": {"command": "w {work}", "work_max": 5000}}}, "warmup")
    return session_settings("w", sec, {}, 0).analysis


def _record(i: int, x: np.ndarray) -> RoundRecord:
    setup = 0.2
    return RoundRecord(i, len(x), "dyadic", setup + x.sum(), 0, 0, 0, 0, x.tolist(),
                       (setup + np.cumsum(x)).tolist())


def test_the_figure_draws_the_longest_round_with_a_stable_phase(tmp_path):
    rng = np.random.default_rng(1)
    recs = []
    # round 0: short, with a long warm-up and a long cool-down (what the figure used to prefer);
    # round 1: the longest of all, no stable phase (a level change in the middle); round 2:
    # longer than round 0 with a stable phase, its edges short
    x0 = np.full(600, 0.001) + rng.normal(0, 1e-5, 600)
    x0[:120] += 0.01
    x0[-120:] += 0.004
    x1 = np.concatenate([np.full(1200, 0.001), np.full(1200, 0.004)]) + rng.normal(0, 1e-5, 2400)
    x2 = np.full(1500, 0.001) + rng.normal(0, 1e-5, 1500)
    x2[:20] += 0.01
    for i, x in enumerate((x0, x1, x2)):
        recs.append(_record(i, x))
    an = analyze_session(recs, _analysis())
    rounds = an.rounds_frame()
    assert rounds.set_index("round")["has_stable"].to_dict() == {0: True, 1: False, 2: True}
    assert pick_round(rounds) == 2
    drawn = phase_figure(rounds, an.readings_frame(), {"workload": "w"}, tmp_path / "phases.png")
    assert drawn == 2 and (tmp_path / "phases.png").stat().st_size > 0


def test_pick_round_without_a_stable_phase_takes_the_longest():
    rounds = pd.DataFrame({"round": [0, 1, 2], "readings": [10, 30, 30],
                           "has_stable": [False, False, False]})
    assert pick_round(rounds) == 1
    assert pick_round(rounds.iloc[:0]) is None
