"""Simulator, post-processing (joins, PKI), the collect settings, and the real perf backend."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from perfcast.counters.collect import check_perf_events, collect_perf, collect_simulated
from perfcast.counters.events import BaseEvents, check_unique, make_groups
from perfcast.counters.perfstat import format_perf_csv, parse_perf_stat, to_wide
from perfcast.counters.postprocess import postprocess
from perfcast.counters.settings import (
    CollectGroupsSettings,
    CollectSettings,
    PerfRun,
    PostprocessSettings,
    SimulatedRun,
    SimulateSettings,
    collect_settings,
)
from perfcast.counters.simulate import (
    GENERATIONS,
    SIM_EVENTS,
    benchmark_phases,
    phase_cpi,
    simulate_group_csv,
)
from perfcast.errors import HostCapabilityError, InputError
from perfcast.settings import as_params, build, from_section, validate

BASE = BaseEvents("instructions", "cycles")
#: the simulator's settings of the default config (counters.simulate)
SIM = {"noise": 0.05, "jitter": 0.02, "run_variation": 0.03}


def simulated(events, *, role="old", seed=5, scale=0.2, clock_ghz=None, sim=SIM):
    """The collect settings of one simulated group run (as collect_settings builds them)."""
    return CollectSettings(backend="simulate", interval_ms=100, base_events=BASE,
                           events=tuple(events), perf=None,
                           simulated=SimulatedRun(role=role, clock_ghz=clock_ghz, seed=seed,
                                                  simulate=SimulateSettings(scale=scale, **sim)))


def pp(files, events, base=BASE, join="instructions", **over):
    """postprocess with the schema's defaults and ``over``."""
    section = {"events": list(events), "join": join,
               "base_events": {"instructions": base.instructions, "cycles": base.cycles}, **over}
    return postprocess(files, from_section(PostprocessSettings, section, "counters_postprocess"))


def test_duplicate_spellings_refused_and_groups_carry_base_events():
    with pytest.raises(ValueError, match="L1I_CACHE_REFILL"):
        check_unique(["l1i_cache_refill", "L1I_CACHE_REFILL"])
    groups = make_groups(list(SIM_EVENTS), 5, BASE)
    assert len(groups) == 5 and all(g[:2] == ["instructions", "cycles"] for g in groups)
    flat = [e for g in groups for e in g[2:]]
    assert sorted(flat) == sorted(SIM_EVENTS)


def test_simulator_is_deterministic_and_perf_shaped(tmp_path):
    ev = ["instructions", "cycles", "l1d_cache_refill", "br_mis_pred"]
    kw = {"seed": 3, "interval_ms": 100, "clock_ghz": None, "scale": 0.1, "base": BASE.names,
          **SIM}
    a = simulate_group_csv("mcf", "old", 0, ev, **kw)
    b = simulate_group_csv("mcf", "old", 0, ev, **kw)
    c = simulate_group_csv("mcf", "old", 1, ev, **kw)
    assert a == b and a != c
    assert a.startswith("# started on") and "SIMULATED" in a.splitlines()[0]
    f = tmp_path / "s.csv"
    f.write_text(a)
    wide = to_wide(parse_perf_stat(f), f, required=["instructions", "cycles"])
    assert wide["duration_s"].iloc[-1] < 0.1  # partial last interval
    total = sum(p.ginst for p in benchmark_phases("mcf", 3, 0.1)) * 1e9
    # every phase retires its planned length within run_variation, so the total does too
    assert wide["instructions"].sum() == pytest.approx(total, rel=SIM["run_variation"])
    assert wide["instructions"].sum() != pytest.approx(total, rel=1e-6)
    exact = simulate_group_csv("mcf", "old", 0, ev, **{**kw, "run_variation": 0.0})
    f.write_text(exact)
    wide = to_wide(parse_perf_stat(f), f, required=["instructions", "cycles"])
    assert wide["instructions"].sum() == pytest.approx(total, rel=1e-6)


def test_new_generation_is_faster_on_every_phase():
    for bench in ("mcf", "x264", "exchange2", "lbm"):
        for ph in benchmark_phases(bench, 1, 1.0):
            ratio = phase_cpi(ph, GENERATIONS["old"]) / phase_cpi(ph, GENERATIONS["new"])
            assert 1.0 < ratio < 2.0


def _write(path, times, counts):
    path.write_text(format_perf_csv(np.asarray(times), {k: np.asarray(v, float)
                                                        for k, v in counts.items()}))
    return path


#: a hybrid CPU's run: each event on both PMUs, the program's count their sum
HYBRID = {"cpu_core/instructions/": 6e8, "cpu_atom/instructions/": 4e8,
          "cpu_core/cycles/": 3e8, "cpu_atom/cycles/": 2e8, "cpu_core/a/": 3e6, "cpu_atom/a/": 1e6}


@pytest.mark.parametrize(("events", "known"), [
    (["a"], {"a_pki": 4.0}),
    (["a", "cpu_core/a/"], {"a_pki": 4.0, "cpu_core/a/_pki": 3.0}),
    (["cpu_core/a/", "a"], {"a_pki": 4.0, "cpu_core/a/_pki": 3.0}),
    (["a", "cpu_atom/a/"], {"a_pki": 4.0, "cpu_atom/a/_pki": 1.0}),
    (["a", "cpu_core/instructions/"], {"a_pki": 4.0, "cpu_core/instructions/_pki": 600.0}),
    (["a", "cpu_core/cycles/"], {"a_pki": 4.0, "cpu_core/cycles/_pki": 300.0}),
])
def test_each_configured_name_gets_the_rows_it_names_whatever_else_is_configured(tmp_path,
                                                                                 events, known):
    """A name without a PMU is the sum over PMUs, a name with one that PMU's rows, each on its
    own: a PMU's name configured beside the plain one took the plain name's sum over (a_pki 1.0
    for 4.0 beside cpu_core/a/; the base events too: instructions 4e8 and IPC 0.8 beside
    cpu_core/instructions/, cycles 2e8 and IPC 5 beside cpu_core/cycles/)."""
    g0 = _write(tmp_path / "hyb.csv", [0.1, 0.2, 0.3, 0.4],
                {e: [v] * 4 for e, v in HYBRID.items()})
    t = pp([g0], events)
    assert t["instructions"].tolist() == [1e9] * 4 and t["cycles"].tolist() == [5e8] * 4
    assert t["ipc"].tolist() == [2.0] * 4
    for col, value in known.items():
        np.testing.assert_allclose(t[col], value)


def test_two_names_for_the_same_rows_are_refused_naming_both(tmp_path):
    """instructions:D stands for the file's instructions (pinning does not change the count):
    configured beside the base event it is that event twice. It was reported as a host
    without a PMU for instructions (the base event's rows had been handed to the other name)."""
    g0 = _write(tmp_path / "plain.csv", [0.1, 0.2, 0.3, 0.4],
                {"instructions": [1e9] * 4, "cycles": [5e8] * 4, "a": [1e6] * 4})
    with pytest.raises(InputError, match=r"plain.csv: events 'instructions' and 'instructions:D' "
                                         r"both stand for \['instructions'\] in the file"):
        pp([g0], ["a", "instructions:D"])
    with pytest.raises(InputError, match="events 'a' and 'a:pp' both stand for"):
        pp([g0], ["a", "a:pp"])
    # a name for two copies of one count (perf -e a,a:D): their sum would count it twice
    g1 = _write(tmp_path / "twice.csv", [0.1, 0.2],
                {"instructions": [1e9] * 2, "cycles": [5e8] * 2, "a": [1e6] * 2,
                 "a:D": [1e6] * 2})
    with pytest.raises(InputError, match=r"event 'a:p' stands for \['a', 'a:D'\] in the file: "
                                         "copies of one count"):
        pp([g1], ["a:p"])
    assert pp([g1], ["a", "a:D"])["a_pki"].tolist() == [1.0, 1.0]


def test_pki_and_ipc_known_answer(tmp_path):
    g0 = _write(tmp_path / "g0.csv", [0.1, 0.2], {"instructions": [1000, 2000],
                                                   "cycles": [500, 4000], "a": [10, 40]})
    g1 = _write(tmp_path / "g1.csv", [0.1, 0.2], {"instructions": [1000, 2000],
                                                   "cycles": [500, 4000], "b": [3, 8]})
    for join in ("instructions", "row"):
        t = pp([g0, g1], ["a", "b"], BASE, join)
        np.testing.assert_allclose(t["ipc"], [2.0, 0.5])
        np.testing.assert_allclose(t["a_pki"], [10.0, 20.0])
        np.testing.assert_allclose(t["b_pki"], [3.0, 4.0])
        np.testing.assert_allclose(t["instructions_cumulative_sum"], [1000, 3000])


def test_instruction_axis_join_follows_the_program_not_the_clock(tmp_path):
    """Group 1 ran slower (3 intervals for the same work): rows differ, instructions agree."""
    g0 = _write(tmp_path / "g0.csv", [0.1, 0.2], {"instructions": [100, 100],
                                                   "cycles": [100, 100], "a": [10, 30]})
    g1 = _write(tmp_path / "g1.csv", [0.1, 0.2, 0.3], {"instructions": [50, 50, 100],
                                                        "cycles": [100, 100, 100],
                                                        "b": [5, 5, 60]})
    t = pp([g0, g1], ["a", "b"], BASE, "instructions")
    np.testing.assert_allclose(t["b_pki"], [100.0, 600.0])  # 10 of 100, 60 of 100
    assert t["b_pki"].mul(t["instructions"]).sum() / 1000 == pytest.approx(70)  # conserved
    r = pp([g0, g1], ["a", "b"], BASE, "row")
    np.testing.assert_allclose(r["b_pki"], [100.0, 100.0])  # the row join of Patkar's method
    assert len(r) == 2


def test_each_group_pki_uses_its_own_runs_instructions(tmp_path):
    """Group 1 is a run that retired 15 % more instructions (10 intervals, 1e9 in group 0),
    each event at 2 per kilo-instruction of its own run: both PKIs are 2, not 2 and 2.3."""
    n = 10
    i0, i1 = np.full(n, 1e8), np.full(n, 1.15e8)
    g0 = _write(tmp_path / "g0.csv", np.arange(1, n + 1) / 10,
                {"instructions": i0, "cycles": i0, "a": i0 * 2e-3})
    g1 = _write(tmp_path / "g1.csv", np.arange(1, n + 1) / 10,
                {"instructions": i1, "cycles": i1, "b": i1 * 2e-3})
    t = pp([g0, g1], ["a", "b"], BASE, "instructions", run_tolerance=0.2)  # 15 %: admitted
    np.testing.assert_allclose(t["a_pki"], 2.0)
    np.testing.assert_allclose(t["b_pki"], 2.0)
    # and B's count is conserved: its run's instructions times its PKI give its total
    assert (t["b_pki"] * t["instructions"] * 1.15).sum() / 1000 == pytest.approx(2.3e6)


def _phased_run(path, bounds, times, total, pct=None):
    """A run of a two-phase program: event b at 1 per kilo-instruction over the first half of
    the program, 3 over the second; ``bounds`` are the run's interval ends as fractions of it."""
    frac = np.asarray(bounds, float)
    instr = np.diff(frac, prepend=0.0) * total
    rate = lambda f: np.where(f <= 0.5, f * 1e-3, 0.5e-3 + (f - 0.5) * 3e-3)  # noqa: E731
    b = np.diff(rate(frac), prepend=0.0) * total
    counts = {"instructions": instr, "cycles": instr * 1.5, "b": b}
    text = format_perf_csv(np.asarray(times, float), counts)
    if pct is not None:  # perf multiplexed b in interval pct[0] (pct[1] % of the time)
        lines = text.splitlines()
        k = [i for i, ln in enumerate(lines) if ",b," in ln]
        lines[k[pct[0]]] = lines[k[pct[0]]].replace(",100.00,", f",{pct[1]:.2f},")
        text = "\n".join(lines) + "\n"
    path.write_text(text)
    return path


def test_runs_that_differ_in_totals_intervals_and_start_join_on_the_program(tmp_path):
    """Group 1 retired 8 % more, in 13 uneven intervals, its first ending at 0.037 s: each
    reference interval gets b at exactly the rate of the stretch of program it covers."""
    g0 = _write(tmp_path / "g0.csv", np.arange(1, 11) / 10,
                {"instructions": np.full(10, 1e8), "cycles": np.full(10, 2e8),
                 "a": np.full(10, 5e5)})
    bounds = [0.03, 0.1, 0.22, 0.3, 0.41, 0.5, 0.55, 0.61, 0.7, 0.8, 0.88, 0.93, 1.0]
    times = 0.037 + np.cumsum(np.linspace(0.05, 0.12, 13))
    g1 = _phased_run(tmp_path / "g1.csv", bounds, times, 1.08e9)
    t = pp([g0, g1], ["a", "b"], run_tolerance=0.1)  # 8 %: beyond the default for hardware
    assert len(t) == 10
    np.testing.assert_allclose(t["a_pki"], 5.0)
    np.testing.assert_allclose(t["b_pki"], [1.0] * 5 + [3.0] * 5, rtol=1e-9)
    # b's count is conserved: its own run's instructions over each stretch times its PKI
    assert (t["b_pki"] * t["instructions"] * 1.08).sum() / 1000 == pytest.approx(2e-3 * 1.08e9)
    # the row join of Patkar's method misreads it (interval k of one run is not of the other)
    r = pp([g0, g1], ["a", "b"], join="row", run_tolerance=0.1)
    assert not np.allclose(r["b_pki"], [1.0] * 5 + [3.0] * 5, rtol=0.05)


def test_a_run_cut_short_is_refused_naming_both_totals(tmp_path):
    """A group file that stops at 60 % of the program (the run was killed) is not stretched over
    the reference run's axis: the job fails naming both files and totals."""
    g0 = _write(tmp_path / "g0.csv", np.arange(1, 11) / 10,
                {"instructions": np.full(10, 1e8), "cycles": np.full(10, 2e8),
                 "a": np.full(10, 5e5)})
    g1 = _phased_run(tmp_path / "g1.csv", np.arange(1, 7) / 10, np.arange(1, 7) / 10, 1e9)
    with pytest.raises(InputError) as err:
        pp([g0, g1], ["a", "b"])
    msg = str(err.value)
    assert str(g1) in msg and str(g0) in msg and "6e+08" in msg and "1e+09" in msg
    assert "run_tolerance" in msg
    # a tolerance that admits it is the user's explicit choice
    assert len(pp([g0, g1], ["a", "b"], run_tolerance=1.0)) == 10


def test_multiplexed_intervals_are_kept_and_flagged(tmp_path):
    g0 = _write(tmp_path / "g0.csv", np.arange(1, 11) / 10,
                {"instructions": np.full(10, 1e8), "cycles": np.full(10, 2e8),
                 "a": np.full(10, 5e5)})
    g1 = _phased_run(tmp_path / "g1.csv", np.arange(1, 11) / 10, np.arange(1, 11) / 10, 1e9,
                     pct=(3, 62.5))
    t = pp([g0, g1], ["a", "b"])
    assert t["multiplexed"].tolist() == [k == 3 for k in range(10)]
    assert t["b_pct_running"].iloc[3] == 62.5 and t["a_pct_running"].eq(100).all()
    assert t["pct_running_min"].iloc[3] == 62.5
    assert not pp([g0, g1], ["a", "b"], min_pct_running=50)["multiplexed"].any()


def test_not_counted_interval_stays_nan_never_zero(tmp_path):
    g0 = _write(tmp_path / "g0.csv", [0.1, 0.2, 0.3], {"instructions": [100] * 3,
                                                        "cycles": [100] * 3, "a": [1, 2, 3]})
    g1 = tmp_path / "g1.csv"
    g1.write_text("\n".join([
        "0.1,100,,instructions,1,100.00,,", "0.1,100,,cycles,1,100.00,,", "0.1,4,,b,1,100.00,,",
        "0.2,100,,instructions,1,100.00,,", "0.2,100,,cycles,1,100.00,,",
        "0.2,<not counted>,,b,1,0.00,,",
        "0.3,100,,instructions,1,100.00,,", "0.3,100,,cycles,1,100.00,,", "0.3,6,,b,1,100.00,,",
    ]) + "\n")
    t = pp([g0, g1], ["a", "b"], BASE, "instructions")
    assert np.isnan(t["b_pki"].iloc[1]) and t["b_pki"].iloc[0] == pytest.approx(40)
    assert t["pct_running_min"].iloc[1] == 0.0


def test_missing_event_and_zero_instructions_are_named(tmp_path):
    g0 = _write(tmp_path / "g0.csv", [0.1, 0.2], {"instructions": [100, 100],
                                                   "cycles": [100, 100], "a": [1, 2]})
    with pytest.raises(InputError, match=r"no group run counted \['b'\]"):
        pp([g0], ["a", "b"], BASE, "instructions")
    g2 = _write(tmp_path / "g2.csv", [0.1, 0.2, 0.3], {"instructions": [100, 0, 100],
                                                        "cycles": [100, 100, 100], "a": [1, 2, 3]})
    with pytest.raises(InputError, match="instructions is missing or zero in interval 1"):
        pp([g2], ["a"], BASE, "instructions")


def test_simulated_group_runs_join_into_consistent_pki(tmp_path):
    groups = make_groups(list(SIM_EVENTS), 5, BASE)
    files = []
    for k, g in enumerate(groups):
        f = tmp_path / f"g{k}.csv"
        collect_simulated(simulated(g), f, benchmark="gcc", group=k)
        files.append(f)
    t = pp(files, list(SIM_EVENTS), BASE, "instructions")
    assert not t.isna().any().any()
    # the simulator's identities survive the join: l2d_cache = l1d refills + l1i refills
    ratio = t["l2d_cache_pki"] / (t["l1d_cache_refill_pki"] + t["l1i_cache_refill_pki"])
    assert ratio.median() == pytest.approx(1.0, abs=0.03)


def _pmu_available() -> bool:
    out = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"],
                         capture_output=True, text=True)
    return out.returncode == 0 and "<not supported>" not in out.stderr


def test_perf_backend_checks_the_host_for_hardware_events():
    if _pmu_available():
        check_perf_events(["instructions", "cycles"], "perf")
    else:
        with pytest.raises(HostCapabilityError, match="no hardware PMU"):
            check_perf_events(["instructions", "cycles"], "perf")


def test_perf_backend_multi_group_real_run(tmp_path, perf_user_mode_only):
    """Real perf, two groups, software events in the base roles (this VM has no PMU)."""
    base = BaseEvents("task-clock", "cpu-clock")
    # a user perf restricts to user mode cannot count context switches (perf prints 0): refused
    # with the reason, and major faults counted in their place
    second = "context-switches"
    if perf_user_mode_only:
        with pytest.raises(HostCapabilityError, match="context-switches:u counts nothing"):
            check_perf_events(["task-clock", "context-switches"], "perf")
        second = "major-faults"
    groups = make_groups(["page-faults", second, "minor-faults"], 2, base)
    assert len(groups) == 2
    # fixed work, so both runs fault the same pages and spend about the same CPU time even on a
    # loaded host: 20,000 fresh pages, then 0.6 s of CPU time
    prog = (f"{sys.executable} -c \"import time\nx=[bytearray(4096) for _ in range(20000)]\n"
            f"t=time.process_time()\nwhile time.process_time()-t<0.6: pass\"")
    files = []
    for k, g in enumerate(groups):
        f = tmp_path / f"group{k}.csv"
        run = PerfRun(binary="perf", timeout_s=600, command=prog, env={}, cwd=None)
        collect_perf(CollectSettings(backend="perf", interval_ms=100, base_events=base,
                                     events=tuple(g), simulated=None, perf=run), f)
        files.append(f)
    # task-clock stands in for instructions: it is CPU time, which varies with the host's load
    # (page faults under memory pressure, steal time); the tolerance is for instruction counts
    t = pp(files, ["page-faults", second, "minor-faults"], base, "instructions",
           run_tolerance=5.0)
    assert len(t) >= 5 and t["time"].iloc[-1] >= 0.5
    assert (t["page-faults_pki"] >= 0).all() and t["page-faults_pki"].sum() > 0
    # each event's rate over the whole run (each PKI weighted by the instructions it divides) is
    # its own run's total over that run's own task-clock: the join maps counts, it loses none
    from perfcast.counters.postprocess import read_group
    w = t["instructions"]
    read = from_section(PostprocessSettings, {"events": ["page-faults"]},
                        "counters_postprocess").read
    raw = [read_group(f, base, ("page-faults", second, "minor-faults"), read) for f in files]
    for k, ev in ((0, "page-faults"), (1, "minor-faults")):
        rate = (t[f"{ev}_pki"] * w).sum() / w.sum()
        own = raw[k][ev].sum() / raw[k]["task-clock"].sum() * 1000.0
        assert rate == pytest.approx(own, rel=0.02), ev
    # page faults of this program are minor faults: the same fixed work faults about as many
    # pages in either run (counts, not rates: task-clock varies with the host's load)
    assert raw[0]["page-faults"].sum() == pytest.approx(raw[1]["minor-faults"].sum(), rel=0.15)
    # task-clock and cpu-clock both count this task's time on a CPU
    np.testing.assert_allclose(np.median(t["ipc"]), 1.0, atol=0.1)


@pytest.mark.parametrize("command,why", [
    ("exit 3", "exit code 3"),
    ("kill -TERM $$", "exit code 143"),  # a program killed half-way
    ("{python} -c 'import sys; sys.exit(7)'", "exit code 7"),
])
def test_perf_backend_fails_when_the_program_fails(tmp_path, command, why):
    """``perf stat -I`` exits 0 whatever its program did (perf 6.1), so a failed or killed
    program would pass for a short complete run; its own exit status fails the collect run,
    and no CSV is left."""
    command = command.replace("{python}", sys.executable)
    base = BaseEvents("task-clock", "cpu-clock")
    run = PerfRun(binary="perf", timeout_s=60, command=command, env={}, cwd=None)
    out = tmp_path / "group0.csv"
    with pytest.raises(RuntimeError, match=f"under perf failed \\({why}\\)"):
        collect_perf(CollectSettings(backend="perf", interval_ms=100, base_events=base,
                                     events=("task-clock", "cpu-clock"), simulated=None,
                                     perf=run), out)
    assert list(tmp_path.iterdir()) == []
    ok = PerfRun(binary="perf", timeout_s=60, command="true", env={}, cwd=None)
    collect_perf(CollectSettings(backend="perf", interval_ms=100, base_events=base,
                                 events=("task-clock", "cpu-clock"), simulated=None, perf=ok),
                 out)
    assert [p.name for p in tmp_path.iterdir()] == ["group0.csv"]


def test_collect_groups_writes_every_group_run_as_collect_group_would(tmp_path):
    """One collect job runs all of its run's groups: each CSV equals the one a job of that
    group alone writes; settings, outputs and sources must pair up one to one."""
    from perfcast.counters.rules import collect_group, collect_groups

    counters = _counters(events=["l1d_cache", "br_pred", "mem_access"], group_size=2)
    groups = make_groups(counters["events"], 2, build(BaseEvents, counters["base_events"]))
    assert len(groups) == 2
    settings = [collect_settings(counters, generation="g3", benchmark=None, events=g,
                                 programs={}, seed=5) for g in groups]
    outs = [tmp_path / f"all{k}.csv" for k in range(2)]
    job = build(CollectGroupsSettings, as_params(
        CollectGroupsSettings(generation="g3", benchmark="mcf", groups=tuple(settings))))
    assert job.groups == tuple(settings)  # through the rule's params and back, unchanged
    collect_groups(job, outs, sources=None)
    for k, s in enumerate(settings):
        alone = tmp_path / f"alone{k}.csv"
        collect_group(s, alone, generation="g3", benchmark="mcf", group=k)
        assert outs[k].read_bytes() == alone.read_bytes()
    assert outs[0].read_bytes() != outs[1].read_bytes()
    with pytest.raises(ValueError, match="2 group outputs but 1 settings"):
        collect_groups(CollectGroupsSettings("g3", "mcf", (settings[0],)), outs, sources=None)
    with pytest.raises(ValueError, match="and 1 sources"):
        collect_groups(job, outs, sources=[outs[0]])


# --- the settings of one collect job ------------------------------------------------------------


def _counters(**over):
    """A validated counters section (every default filled, as the workflow has it)."""
    section = {"generations": {"old": "g2", "new": "g3"}, "clock_ghz": {"g2": 2.5, "g3": 2.6},
               "events": ["a", "b"], "benchmarks": ["spin"], **over}
    return validate(section, "counters")


def test_perf_backend_renders_a_python_program_with_literal_braces():
    """A ``{python} -m ...`` program: ``{python}`` is this interpreter (quoted), ``{work}`` the
    program's work, ``awk '{print $1}'`` and ``${HOME}`` stay literal, ``{{x}}`` is ``{x}``."""
    programs = {"spin": {"command": "{python} -m perfcast.workloads.cpuhash --mb {work} | "
                                    "awk '{print $1}' > ${HOME}/{{x}}.txt",
                         "work": 8, "env": {"OUT": "{work}MB"}}}
    s = collect_settings(_counters(backend="perf"), generation="g2", benchmark="spin",
                         events=["instructions", "cycles", "a"], programs=programs, seed=1)
    assert s.perf.command == (f"{shlex.quote(sys.executable)} -m perfcast.workloads.cpuhash "
                              "--mb 8 | awk '{print $1}' > ${HOME}/{x}.txt")
    assert s.perf.env == {"OUT": "8MB"}
    assert (s.perf.binary, s.perf.timeout_s) == ("perf", 3600)
    assert s.simulated is None and s.events == ("instructions", "cycles", "a")


def test_perf_backend_program_named_by_perf_programs_and_errors_named():
    programs = {"busy": {"command": "sleep {work}"}}
    with pytest.raises(InputError, match=r"\{work\}"):  # a placeholder without a value
        collect_settings(_counters(backend="perf", perf={"programs": {"spin": "busy"}}),
                         generation="g2", benchmark="spin", events=["a"], programs=programs,
                         seed=1)
    with pytest.raises(InputError, match="'spin'.*not in the top-level programs"):
        collect_settings(_counters(backend="perf"), generation="g2", benchmark="spin",
                         events=["a"], programs=programs, seed=1)


def test_simulated_run_depends_on_its_own_generation_only():
    """The settings of a g2 run do not change with g3's clock (rerun granularity)."""
    kw = {"benchmark": "spin", "events": ["instructions", "cycles", "a"], "programs": {},
          "seed": 7}
    g2 = collect_settings(_counters(), generation="g2", **kw)
    g3 = collect_settings(_counters(), generation="g3", **kw)
    faster = collect_settings(_counters(clock_ghz={"g2": 2.5, "g3": 3.0}), generation="g2", **kw)
    assert as_params(g2) == as_params(faster)
    assert (g2.simulated.role, g2.simulated.clock_ghz) == ("old", 2.5)
    assert (g3.simulated.role, g3.simulated.clock_ghz) == ("new", 2.6)
    assert g2.perf is None and g2.simulated.simulate.scale == 1.0
    # the rule passes the plain dict; the script rebuilds the same object
    assert build(CollectSettings, as_params(g2)) == g2


def test_cli_postprocess_writes_the_rules_metadata_and_checks_flags_by_the_schema(tmp_path,
                                                                                  capsys):
    from perfcast.cli import main
    from perfcast.io import parquet_metadata

    g0 = _write(tmp_path / "g0.csv", [0.1, 0.2], {"instructions": [1000, 2000],
                                                   "cycles": [500, 4000], "a": [10, 40]})
    out = tmp_path / "t.parquet"
    assert main(["postprocess", str(g0), "--events", "a", "-o", str(out)]) == 0
    assert json.loads(capsys.readouterr().out) == {"intervals": 2, "multiplexed_intervals": 0,
                                                   "unverified_runs": [], "output": str(out)}
    # the rule's function wrote it: join from the schema's default, groups counted
    assert parquet_metadata(out) == {"join": "instructions", "groups": 1, "unverified_runs": []}
    assert main(["postprocess", str(g0), "--events", "a;b", "-o", str(out)]) == 2
    assert "counters_postprocess: events.0: 'a;b' does not match" in capsys.readouterr().err


def test_cli_postprocess_reads_per_cpu_perf_output_with_a_selection(tmp_path, capsys):
    """perf -A output of this machine (tests/data/perf): the rows of the selected CPU only,
    with software events in the base roles."""
    from perfcast.cli import main
    from perfcast.io import read_parquet

    data = Path(__file__).parent.parent / "data" / "perf"
    out = tmp_path / "t.parquet"
    flags = ["--events", "page-faults", "--instructions-event", "task-clock",
             "--cycles-event", "cpu-clock", "-o", str(out)]
    assert main(["postprocess", str(data / "no_aggr_pipe.csv"), "--select", "CPU1",
                 "--separator", "|", *flags]) == 0
    capsys.readouterr()
    cpu1 = read_parquet(out)
    assert main(["postprocess", str(data / "per_core.json"), "--select", "S0-D0-C1",
                 *flags]) == 0
    np.testing.assert_allclose(read_parquet(out)["page-faults_pki"], cpu1["page-faults_pki"],
                               rtol=1e-3)
    assert main(["postprocess", str(data / "no_aggr.csv"), "--separator", "|", *flags]) == 2
    assert "the separator is ','" in capsys.readouterr().err


# --- the command line's help names the schema's defaults ----------------------------------------


def test_cli_help_shows_the_defaults_the_schema_fills_in(capsys):
    """perfcast postprocess / align / predict: each flag's help names the default that
    validation fills in for its config key (read from the schema, never typed twice)."""
    from perfcast.cli import main

    pp = validate({"events": ["x"]}, "counters_postprocess")
    align, predict = validate({}, "align"), validate({}, "predict")
    expected = {
        "postprocess": [pp["base_events"]["instructions"], pp["base_events"]["cycles"],
                        pp["join"], pp["read"]["separator"], pp["run_tolerance"],
                        pp["software_run_tolerance"], pp["coverage_tolerance"],
                        pp["min_pct_running"]],
        "align": [align["method"], align["instruction_tolerance"]],
        "predict": [" ".join(str(v) for v in predict["ipc_range"])],
    }
    for command, defaults in expected.items():
        with pytest.raises(SystemExit):
            main([command, "--help"])
        text = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
        for value in defaults:
            assert f"(default: {value})" in text, (command, value)
    source = (Path(__file__).parents[2] / "src/perfcast/cli/counters.py").read_text()
    assert "(default: " not in source  # no default typed by hand beside the schema's


def test_a_simulated_run_of_too_many_intervals_is_refused_before_it_starts():
    """Scale, interval and clock each within their schema bounds can still multiply to days of
    simulation (scale 100 at 10 ms and 0.1 GHz: about 2e7 intervals); such a run is refused,
    naming the keys, instead of running without visible end."""
    from perfcast.counters.simulate import MAX_INTERVALS, simulate_group_csv

    kw = dict(seed=7, noise=0.05, jitter=0.02, base=("instructions", "cycles"),
              run_variation=0.03)
    with pytest.raises(InputError, match=r"the simulated run would take about .* intervals of "
                                         r"10 ms at 0\.1 GHz \(expected at most 1,000,000: a "
                                         r"smaller counters\.simulate\.scale"):
        simulate_group_csv("mcf", "old", 0, ["br_mis_pred"], interval_ms=10, clock_ghz=0.1,
                           scale=100, **kw)
    assert MAX_INTERVALS == 1_000_000
    text = simulate_group_csv("mcf", "old", 0, ["br_mis_pred"], interval_ms=100, clock_ghz=None,
                              scale=0.02, **kw)
    assert text.count("br_mis_pred") > 1
