"""What a hostile or unlucky user gives: names that would become paths outside their folder,
numbers beyond what a counter can hold, repeated columns, truncated runs, program templates with
shell metacharacters, huge configs. Each is refused with one line naming the file, line or key,
or gives the right result; none runs code, loses data or writes a wrong number."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from perfcast.counters.collect import collect_simulated
from perfcast.counters.events import BaseEvents, make_groups
from perfcast.counters.postprocess import postprocess
from perfcast.counters.settings import PostprocessSettings
from perfcast.errors import InputError
from perfcast.settings import from_section, validate

COUNTERS = {"generations": {"old": "g2", "new": "g3"}, "events": ["x"], "benchmarks": ["mcf"]}


def _counters(**changes) -> dict:
    return {"counters": COUNTERS | changes}


# ------------------------------------------------------------- names that become paths are safe


UNSAFE = [".", "..", ".hidden", "a/b", "../up", "-rf", "a\\b", ""]


@pytest.mark.parametrize("name", UNSAFE)
@pytest.mark.parametrize("cfg, key", [
    (lambda n: _counters(benchmarks=["mcf", n]), "counters.benchmarks.1"),
    (lambda n: _counters(generations={"old": n, "new": "g3"}), "counters.generations.old"),
    (lambda n: _counters(generations={"old": "g2", "new": n}), "counters.generations.new"),
    (lambda n: {"predict": {"benchmarks": [n]}}, "predict.benchmarks.0"),
    (lambda n: {"warmup": {"workloads": {n: {"command": "true {work}",
                                                      "work_max": 10}}}}, "warmup.workloads"),
    (lambda n: {"sensitivity": {"programs": {n: {"command": "true"}}}},
     "sensitivity.programs"),
    (lambda n: {"sensitivity": {"cgroup": {"prefix": n}}}, "sensitivity.cgroup.prefix"),
    (lambda n: {"sweep": {"campaigns": {n: {"command": "true {n}",
                                            "parameters": {"n": [1, 2]}}}}}, "sweep.campaigns"),
])
def test_a_name_that_becomes_a_path_is_a_safe_name(cfg, key, name):
    with pytest.raises(InputError, match=rf"config: {re.escape(key)}: .*does not match"):
        validate(cfg(name), "config")
    validate(cfg("a.b-c1"), "config")  # the same place takes an ordinary name


@pytest.mark.parametrize("parent", ["..", "../x", "a/../b", "/abs", "a//b", ".hidden/a"])
def test_the_cgroup_parent_is_a_relative_path_of_safe_names(parent):
    with pytest.raises(InputError, match=r"config: sensitivity\.cgroup\.parent: .*does not match"):
        validate({"sensitivity": {"cgroup": {"parent": parent}}}, "config")
    validate({"sensitivity": {"cgroup": {"parent": "perfcast/jobs"}}}, "config")


def test_the_refusal_says_why_a_name_must_be_safe():
    with pytest.raises(InputError, match=r"'\.\.' does not match .*never '\.', '\.\.', hidden"):
        validate(_counters(benchmarks=[".."]), "config")


# ------------------------------------------------------- a truncated group run is caught, always

BASE = BaseEvents("instructions", "cycles")
SIM_EVENTS_USED = ["l1d_cache_refill", "br_mis_pred", "stall_backend", "l2d_cache"]


def _groups(tmp_path: Path, bench: str = "gcc") -> list[Path]:
    files = []
    for k, g in enumerate(make_groups(SIM_EVENTS_USED, 2, BASE)):
        f = tmp_path / f"{bench}.group{k}.csv"
        collect_simulated(bench, "old", k, g, f, seed=11, interval_ms=100, base=BASE.names,
                          clock_ghz=None, scale=0.2, noise=0.05, jitter=0.02,
                          run_variation=0.03)
        files.append(f)
    return files


def _cut(path: Path, keep: float, *, at_end: bool = False) -> Path:
    """The group file with only its first (or last) ``keep`` of intervals, as a run killed
    (or attached late) writes it."""
    lines = path.read_text().splitlines()
    data = [ln for ln in lines if ln and not ln.startswith("#")]
    times = sorted({ln.split(",")[0] for ln in data}, key=float)
    n = int(round(len(times) * keep))
    kept = set(times[-n:] if at_end else times[:n])
    out = path.with_name(f"cut.{path.name}")
    out.write_text("\n".join(ln for ln in data if ln.split(",")[0] in kept) + "\n")
    return out


def _pp(files: list[Path], **over) -> object:
    return postprocess(files, from_section(PostprocessSettings,
                                           {"events": SIM_EVENTS_USED, **over},
                                           "counters_postprocess"))


@pytest.mark.parametrize("bench", ["gcc", "mcf", "omnetpp"])
@pytest.mark.parametrize("keep, at_end, cut_group", [(0.9, False, 1), (0.95, False, 1),
                                                     (0.9, False, 0), (0.9, True, 1)])
def test_a_truncated_group_run_fails_naming_it_whatever_the_tolerance(tmp_path, bench, keep,
                                                                      at_end, cut_group):
    files = _groups(tmp_path, bench)
    assert len(_pp(files)) > 20  # the whole runs join, with the default tolerance
    files[cut_group] = _cut(files[cut_group], keep, at_end=at_end)
    part = "last" if at_end else "first"
    with pytest.raises(InputError, match=rf"{re.escape(str(files[cut_group]))}: this group run "
                                         rf"covers only about the {part} [89]\d\.\d% of the "
                                         "program"):
        _pp(files, run_tolerance=1.0)  # a tolerance that would admit it: the trace refuses it


def test_the_default_tolerance_is_tight_for_instructions_and_wide_for_software(tmp_path,
                                                                              caplog):
    from perfcast.counters.postprocess import run_tolerance

    hw = from_section(PostprocessSettings, {"events": ["a"]}, "counters_postprocess")
    sw = from_section(PostprocessSettings, {"events": ["a"], "base_events": {
        "instructions": "task-clock", "cycles": "cpu-clock"}}, "counters_postprocess")
    with caplog.at_level(logging.INFO, logger="perfcast.counters.postprocess"):
        assert run_tolerance(hw) == 0.05
        assert run_tolerance(sw) == 1.0
    assert "0.05: 'instructions' is a hardware instruction count" in caplog.text
    assert "1: the software event 'task-clock' stands in for instructions" in caplog.text
    # the probe: a group run stopped at 90 % of the program fails by its totals by default
    files = _groups(tmp_path)
    files[1] = _cut(files[1], 0.9)
    with pytest.raises(InputError, match=r"\(expected group runs of one program within the run "
                                         r"tolerance \(0\.05"):
        _pp(files)
