"""The warmup stage's config schema: defaults filled in, bad settings refused, and the settings
built from it (no workflow run; the stage through Snakemake:
``tests/workflow/test_warmup_workflow.py``)."""

from __future__ import annotations

import pytest

from perfcast.errors import InputError
from perfcast.settings import as_params, validate
from perfcast.warmup.settings import SESSION_KEYS, session_settings, warmup_settings


def test_schema_fills_defaults_and_rejects_bad_settings():
    cfg = validate({"workloads": {"kv": {"command": "run {work}", "work_max": 10}}}, "warmup")
    assert cfg["edm"] == {"mode": "robust", "min_size": None, "alpha": 0.01, "min_effect": 0.05}
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
