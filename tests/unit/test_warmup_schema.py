"""The warmup stage's config schema: defaults filled in, bad settings refused, and the settings
built from it (no workflow run; the stage through Snakemake:
``tests/workflow/test_warmup_workflow.py``)."""

from __future__ import annotations

import pytest

from perfcast.errors import InputError
from perfcast.settings import as_params, build, validate
from perfcast.warmup.settings import (
    SESSION_KEYS,
    PaperSettings,
    RunSettings,
    TraceSettings,
    session_settings,
    warmup_settings,
)


def test_schema_fills_defaults_and_rejects_bad_settings():
    cfg = validate({"workloads": {"kv": {"command": "run {work}", "work_max": 10}}}, "warmup")
    assert cfg["edm"] == {"mode": "robust", "min_size": None, "alpha": 0.01, "min_effect": 0.05,
                          "cycles": True}
    assert cfg["session"]["max_rounds"] == 200 and cfg["round_lower_bound_s"] == 3.0
    kv = cfg["workloads"]["kv"]
    assert kv["work_min"] == 1 and cfg["counters"]["fallback"] == "edges"
    assert kv["session"] == {}  # no default override of the stage's session
    assert kv["program"] is None and kv["env"] == {}
    assert validate(cfg, "warmup") == cfg  # a validated section stays valid
    for bad in (
        {"edm": {"mode": "fancy"}},
        {"workloads": {"kv": {"command": "no placeholder", "work_max": 10}}},
        {"workloads": {"counters": {"command": "x {work}", "work_max": 10}}},
        {"workloads": {"kv": {"command": "x {work}", "program": "p", "work_max": 10}}},
        {"workloads": {"kv": {"work_max": 10}}},
        {"workloads": {"kv": {"command": "x {work}"}}},
        {"session": {"stop_on": ["luck"]}},
        {"surprise": 1},
    ):
        with pytest.raises(InputError):
            validate(bad, "warmup")


def test_settings_are_the_schema_defaults():
    s = warmup_settings({"workloads": {"kv": {"command": "run {work}", "work_max": 10,
                                              "session": {"max_rounds": 7}}}})
    assert s.session.max_rounds == 200 and s.session.stop_on == ("readings", "wps")
    assert s.ci.limit == 0.2 and s.counters.edm.min_effect == 0.05
    assert s.workloads["kv"].session == {"max_rounds": 7}


def test_a_session_depends_on_its_workload_and_program_only():
    programs = {"p": {"command": "p {work}"}, "q": {"command": "q {work}"}}
    section = validate({"workloads": {"a": {"program": "p", "work_max": 10},
                                      "b": {"command": "b {work}", "work_max": 10}}}, "warmup")
    a = as_params(session_settings("a", section, programs, 1))
    assert set(a) == {"name", "seed", "workload", "programs", *SESSION_KEYS}
    assert a["programs"] == {"p": programs["p"]}  # a change of q reruns nothing of a
    assert session_settings("b", section, programs, 1).programs == {}


def test_the_change_point_settings_are_one_definition():
    # warmup.edm, warmup.counters.edm and perfcast edm's flags: one schema fragment
    workflow, cli = validate({}, "warmup"), validate({}, "warmup_cli")
    assert workflow["edm"] == workflow["counters"]["edm"] == cli["edm"] == {
        "mode": "robust", "min_size": None, "alpha": 0.01, "min_effect": 0.05, "cycles": True}
    assert cli["stable"]["cycles"] is cli["watch"]["cycles"] is True
    from perfcast.warmup.cli_settings import command_settings

    for command in ("watch", "stable"):  # --keep-cycles reaches the detector
        assert command_settings(command, {"cycles": False}).edm.cycles is False
        assert command_settings(command, {}).edm.cycles is True
    with pytest.raises(InputError, match="cycles"):
        validate({"edm": {"cycles": "yes"}}, "warmup")
    for name, section in (("warmup", {"edm": {"min_effect": 1.5}}),
                          ("warmup", {"counters": {"edm": {"min_effect": 1.5}}}),
                          ("warmup_cli", {"edm": {"min_effect": 1.5}}),
                          ("warmup_cli", {"stable": {"min_effect": 1.5}})):
        with pytest.raises(InputError, match="min_effect"):
            validate(section, name)


def test_job_settings_survive_the_rule_params_round_trip():
    # what a rule script receives (perfcast.rulekit.rule_settings builds the dataclass from the
    # plain dict of perfcast.settings.as_params) is the object the workflow built
    programs = {"p": {"command": "p {work} {seed}", "env": {"A": "1"}}}
    section = validate({"workloads": {"a": {"program": "p", "work_max": 10, "env": {"B": 2},
                                            "session": {"stop_on": ["wps"]}}}}, "warmup")
    run = RunSettings(session_settings("a", section, programs, 3), "results/warmup/a/j.jsonl")
    back = build(RunSettings, as_params(run))
    assert back == run and back.session.limits.stop_on == ("wps",)
    assert back.session.measurement_key() == run.session.measurement_key()
    assert back.session.program.env == {"A": "1", "B": "2"}
    trace = TraceSettings(warmup_settings(section).counters, "g1", "mcf")
    assert build(TraceSettings, as_params(trace)) == trace
    paper = PaperSettings(("a", "b"))
    assert build(PaperSettings, as_params(paper)) == paper
