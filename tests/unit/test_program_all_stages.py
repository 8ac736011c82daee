"""One program definition through every stage: the same placeholders, environment and ``cwd``.

A single top-level ``programs:`` entry (``{python}``, ``{work}`` and ``{seed}`` in its command,
an environment value with placeholders, a ``cwd`` relative to the working directory) is run by
the warm-up stage (one measured round), the sensitivity stage (one run of the cgroup backend,
as root), the sweep stage (one run of a campaign that names it) and the counters stage (the
``perf`` backend, counting the software event ``task-clock``). Each run appends what it saw
(its arguments, its environment value, its working directory) to ``seen.jsonl`` -- a path
relative to where it runs, so the file is found only in ``cwd``. The test asserts that every
stage rendered the same values and ran in the same directory.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.errors import HostCapabilityError
from perfcast.settings import validate

SEED = 4242
WORK = 3
#: a program that records what it was given, where it ran, then prints {work} unit readings
PROBE = (
    "{python} -c 'import json, os, sys, time; time.sleep(0.2); "
    "print(json.dumps({\"argv\": sys.argv[1:], \"env\": os.environ[\"PROBE_SEEN\"], "
    "\"cwd\": os.getcwd()}), file=open(\"seen.jsonl\", \"a\")); "
    "print(*[0.001] * int(sys.argv[1]), sep=chr(10))' {work} {seed}"
)
#: the top-level config every stage reads: one program, the workflow's seed
CONFIG = {
    "seed": SEED,
    "programs": {"probe": {"command": PROBE, "env": {"PROBE_SEEN": "seed={seed} work={work}"},
                           "work": WORK, "cwd": "runs/probe",
                           "description": "records its placeholders and working directory"}},
}


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The workflow's working directory (the test's cwd) holding the program's ``cwd``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "runs" / "probe").mkdir(parents=True)
    return tmp_path


@pytest.fixture
def config():
    """The top-level config as the workflow validates it (programs with cwd accepted)."""
    return validate(CONFIG, "config")


def seen(workdir: Path) -> list[dict]:
    """What the runs recorded since the last call (the file is emptied)."""
    path = workdir / "runs" / "probe" / "seen.jsonl"
    assert path.is_file(), f"no run wrote {path}: the program did not run in its cwd"
    assert not (workdir / "seen.jsonl").exists(), "a run wrote in the working directory"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.unlink()
    return lines


def assert_same_run(records: list[dict], workdir: Path, *, work: int = WORK) -> None:
    """Every record: {work} and {seed} as arguments, the same in the environment, in cwd."""
    assert records
    for r in records:
        assert r["argv"] == [str(work), str(SEED)]
        assert r["env"] == f"seed={SEED} work={work}"
        assert Path(r["cwd"]).resolve() == (workdir / "runs" / "probe").resolve()


def test_warmup_round(workdir, config):
    from perfcast.warmup.rules import run_workload
    from perfcast.warmup.settings import RunSettings, session_settings

    section = validate({"session": {"max_rounds": 1, "min_rounds": 1},
                        "workloads": {"probe": {"program": "probe", "work_min": 2,
                                                "work_max": 8}}}, "warmup")
    settings = session_settings("probe", section, config["programs"], seed=config["seed"])
    out = workdir / "out"
    out.mkdir()
    run_workload(RunSettings(settings, journal=str(out / "journal.jsonl")),
                 rounds=out / "rounds.parquet", readings=out / "readings.parquet",
                 summary=out / "summary.json")
    records = seen(workdir)
    # the planner, not the program's work, chooses the round's work: its first round's
    assert_same_run(records, workdir, work=2)


@pytest.mark.skipif(os.geteuid() != 0, reason="the cgroup backend restricts runs as root only")
def test_sensitivity_cgroup_run(workdir, config):
    from perfcast.sensitivity.backends import CgroupBackend
    from perfcast.sensitivity.settings import profile_settings

    section = validate({"dimensions": {"cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5}},
                        "programs": {"probe": {"program": "probe"}}, "timeout_s": 30},
                       "sensitivity")
    backend = CgroupBackend(profile_settings(section, "probe", config["programs"],
                                             seed=config["seed"]))
    try:
        result = backend.run({"cpu_quota": 1.0})
    except HostCapabilityError as exc:
        pytest.skip(f"this host cannot restrict a run: {exc}")
    assert result.ok, result.reason
    assert_same_run(seen(workdir), workdir)


def test_sweep_run(workdir, config):
    from perfcast.sweep import runner
    from perfcast.sweep.campaign_parser import parse_sweep

    section = validate({"campaigns": {"probe": {
        "program": "probe", "parameters": {"n": [1]}, "env": {"POINT": "{n}"},
        "iterations": 1, "timeout_s": 30}}}, "sweep")
    campaign = parse_sweep(section, config["programs"], seed=config["seed"]).campaigns["probe"]
    record = runner.run_point(campaign.run_settings("n~1", 1, stop_marker="STOP.json",
                                                    failed_record="failed.json"))
    assert record["status"] == "ok", record["errors"]
    assert_same_run(seen(workdir), workdir)


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_counters_perf_run(workdir, config):
    from perfcast.counters.rules import collect_group
    from perfcast.counters.settings import collect_settings

    if subprocess.run(["perf", "stat", "-e", "task-clock", "true"],
                      capture_output=True).returncode != 0:
        pytest.skip("perf cannot count task-clock here (perf_event_paranoid?)")
    counters = validate({"backend": "perf", "benchmarks": ["probe"],
                         "generations": {"old": "a", "new": "b"}, "interval_ms": 100,
                         "events": ["task-clock"]},
                        "counters")
    settings = collect_settings(counters, generation="a", benchmark="probe",
                                events=("task-clock",), programs=config["programs"],
                                seed=config["seed"])
    collect_group(settings, workdir / "group0.csv", generation="a", benchmark="probe", group=0)
    assert (workdir / "group0.csv").is_file()
    assert_same_run(seen(workdir), workdir)


def test_the_program_is_valid_as_written_for_every_stage(config):
    """The definition itself: one set of placeholders, the same for every stage."""
    from perfcast.program import Program, check_program

    program = Program.from_config("probe", {}, config["programs"])
    assert program.cwd == "runs/probe"
    used = {stage: check_program(program, stage, where="probe")
            for stage in ("counters", "warmup", "sensitivity", "sweep")}
    assert all(u == {"python", "work", "seed"} for u in used.values()), used
    assert program.render(seed=SEED).startswith(f"{sys.executable} -c ")


def test_a_missing_cwd_is_named_before_anything_runs(workdir, config):
    """Each runner checks the program's cwd (perfcast.program.run_dir) and names it."""
    from perfcast.errors import InputError
    from perfcast.sensitivity.backends import CgroupBackend
    from perfcast.sensitivity.settings import profile_settings
    from perfcast.warmup.rules import run_workload
    from perfcast.warmup.settings import RunSettings, session_settings

    programs = {"probe": {**config["programs"]["probe"], "cwd": "runs/gone"}}
    section = validate({"session": {"max_rounds": 1, "min_rounds": 1},
                        "workloads": {"probe": {"program": "probe", "work_max": 8}}}, "warmup")
    settings = session_settings("probe", section, programs, seed=SEED)
    with pytest.raises(InputError, match="warmup workload 'probe': cwd 'runs/gone' is not a"):
        run_workload(RunSettings(settings, journal=str(workdir / "journal.jsonl")),
                     rounds=workdir / "r.parquet", readings=workdir / "d.parquet",
                     summary=workdir / "s.json")
    section = validate({"dimensions": {"cpu_quota": {"lower": 0.5, "upper": 1.0, "step": 0.5}},
                        "programs": {"probe": {"program": "probe"}}}, "sensitivity")
    with pytest.raises(InputError, match="sensitivity program 'probe': cwd 'runs/gone' is not"):
        CgroupBackend(profile_settings(section, "probe", programs, seed=SEED))
