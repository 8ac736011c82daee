"""The one renderer of command templates (perfcast.program): placeholders, quoting, literal
braces, resolution against the top-level programs map; the commands really run in a shell."""

from __future__ import annotations

import subprocess
import sys

import pytest

from perfcast.errors import InputError
from perfcast.program import Program, check_placeholders, placeholders, render


def sh(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True,
                          check=True).stdout


def test_literal_braces_reach_the_shell_untouched():
    cmd = render("printf '3 4\\n' | awk '{print $1 * {work}}'", {"work": 5})
    assert cmd == "printf '3 4\\n' | awk '{print $1 * 5}'"
    assert sh(cmd) == "15\n"


def test_python_is_this_interpreter_and_quoted():
    cmd = render("{python} -c 'import sys; print(sys.executable)'", {})
    assert sh(cmd).strip() == sys.executable
    assert render("{python}", {"python": "/opt/my python/bin/python"}) == \
        "'/opt/my python/bin/python'"


def test_values_are_one_shell_word_but_env_values_are_not_quoted():
    cmd = render("printf '%s|' {x}", {"x": "a b; echo injected"})
    assert sh(cmd) == "a b; echo injected|"
    assert render("{x}/bin", {"x": "a b"}, shell=False) == "a b/bin"


def test_whole_floats_lose_their_point_and_escaped_braces_stay():
    assert render("n={work} m={size}", {"work": 384.0, "size": 0.5}) == "n=384 m=0.5"
    assert render("echo {{work}} ${HOME} {work}", {"work": 2}) == "echo {work} ${HOME} 2"
    assert placeholders("echo {{work}} {a} {b_2} { c } {9x}") == {"a", "b_2"}


def test_unknown_placeholder_is_named():
    with pytest.raises(InputError, match=r"unknown placeholder \{sise\}"):
        render("matmul --size {sise}", {"size": 3}, where="campaign 'mm', command")
    with pytest.raises(InputError, match=r"\{work\}"):
        Program("p", "run {work}").render()  # no work amount set
    with pytest.raises(InputError, match=r"unknown placeholder\(s\) \{b\}"):
        check_placeholders("{a} {b} {python}", {"a"}, where="x")


def test_program_from_config_resolves_and_overrides():
    programs = {"hash": {"command": "{python} -m hash --mb {work}", "work": 64,
                         "env": {"OMP": "2"}, "description": "cpu"}}
    p = Program.from_config("hash", {}, programs)
    assert p.render() == f"{sys.executable} -m hash --mb 64"
    q = Program.from_config("mine", {"program": "hash", "work": 8, "metric": {}}, programs)
    assert (q.name, q.work, q.env, q.description) == ("mine", 8, {"OMP": "2"}, "cpu")
    assert q.render(work=16).endswith("--mb 16")
    own = Program.from_config("own", {"command": "echo {seed}", "env": {"S": "{seed}"}})
    assert own.render(seed=3) == "echo 3" and own.render_env(seed=3) == {"S": "3"}
    with pytest.raises(InputError, match="refers to 'nope'"):
        Program.from_config("x", {"program": "nope"}, programs, stage="sweep")
    with pytest.raises(InputError, match="has no command"):
        Program.from_config("lonely", {"command": "  "}, {"lonely": {"command": ""}})


# --------------------------------------------------------------------------- one placeholder set


def test_every_stage_supplies_the_same_placeholders():
    from perfcast.program import PLACEHOLDERS, STAGE_PLACEHOLDERS, stage_placeholders

    assert set(STAGE_PLACEHOLDERS) == {"counters", "warmup", "sensitivity", "sweep"}
    for stage in STAGE_PLACEHOLDERS:
        assert stage_placeholders(stage)[:3] == PLACEHOLDERS == ("python", "work", "seed")
    assert stage_placeholders("sweep", ["n"]) == ("python", "work", "seed", "iteration", "n")
    with pytest.raises(ValueError, match="unknown stage 'model'"):
        stage_placeholders("model")


def test_check_program_refuses_what_no_stage_supplies():
    from perfcast.program import check_program

    p = Program("p", "run {work} {seed} {iteration}", work=2)
    assert check_program(p, "sweep", where="p") == {"work", "seed", "iteration"}
    with pytest.raises(InputError, match=r"p: unknown placeholder\(s\) \{iteration\}"):
        check_program(p, "sensitivity", where="p")
    env = Program("p", "run", env={"X": "{sise}"})
    with pytest.raises(InputError, match=r"p: env X: unknown placeholder\(s\) \{sise\}"):
        check_program(env, "counters", where="p")
    nowork = Program("p", "run {work}")
    with pytest.raises(InputError, match=r"\{work\} in 'run \{work\}' but no work amount"):
        check_program(nowork, "counters", where="p")
    assert check_program(nowork, "warmup", where="p") == {"work"}  # the planner supplies it
    assert check_program(nowork, "sweep", parameters=["work"], where="p") == {"work"}


def test_run_dir_names_a_missing_directory(tmp_path, monkeypatch):
    from perfcast.program import run_dir

    monkeypatch.chdir(tmp_path)
    (tmp_path / "here").mkdir()
    assert run_dir("here", where="x") == "here" and run_dir(None, where="x") is None
    with pytest.raises(InputError, match=r"campaign 'c': cwd 'gone' is not a directory"):
        run_dir("gone", where="campaign 'c'")


# --------------------------------------------------------------------------- the one definition


def _refused(section, schema, match):
    from perfcast.settings import validate

    with pytest.raises(InputError, match=match):
        validate(section, schema)


def test_top_level_programs_take_the_shared_definition():
    from perfcast.settings import validate

    entry = {"command": "{python} x {seed}", "env": {"A": 1}, "work": 2, "cwd": "d",
             "description": "x"}
    assert validate({"programs": {"p": entry}}, "config")["programs"] == {"p": entry}
    _refused({"programs": {"p": {"command": "x", "cwdd": "d"}}}, "config",
             r"programs\.p: Unevaluated properties are not allowed \('cwdd'")
    _refused({"programs": {"p": {"env": {}}}}, "config", "'command' is a required property")
    _refused({"programs": {"p": {"command": None}}}, "config", "None is not of type 'string'")
    _refused({"programs": {"p": {"command": "x", "work": 0}}}, "config", r"programs\.p\.work")
    _refused({"programs": {"p": {"command": "x", "cwd": ""}}}, "config", r"programs\.p\.cwd")


def test_stage_entries_take_the_definition_fill_defaults_and_refuse_unknown_keys():
    from perfcast.settings import validate

    w = validate({"workloads": {"w": {"command": "r {work}", "work_max": 4, "cwd": "d",
                                      "description": "x"}}}, "warmup")["workloads"]["w"]
    assert (w["cwd"], w["env"], w["program"], w["work_min"]) == ("d", {}, None, 1)
    assert validate({"workloads": {"w": {"command": "r {work}", "work_max": 4}}},
                    "warmup")["workloads"]["w"]["cwd"] is None
    _refused({"workloads": {"w": {"command": "r {work}", "work_max": 4, "bogus": 1}}},
             "warmup", r"workloads\.w: Unevaluated properties are not allowed \('bogus'")
    _refused({"workloads": {"w": {"command": "r {work}", "work_max": 4, "work": 3}}},
             "warmup", r"workloads\.w\.work: 3 is not accepted here: the planner chooses")
    c = validate({"campaigns": {"c": {"command": "r {n}", "parameters": {"n": [1]},
                                      "cwd": "d"}}}, "sweep")["campaigns"]["c"]
    assert (c["cwd"], c["work"], c["env"], c["iterations"]) == ("d", None, {}, 3)
    _refused({"campaigns": {"c": {"command": "r {n}", "parameters": {"n": [1]}, "cmd": 1}}},
             "sweep", r"campaigns\.c: Unevaluated properties are not allowed \('cmd'")
    s = validate({"programs": {"a": {"command": "r", "cwd": "d"}}},
                 "sensitivity")["programs"]["a"]
    assert (s["cwd"], s["replay_program"], s["metric"]["name"]) == ("d", None, "runtime_s")
    _refused({"programs": {"a": {"command": "r", "cwdx": "d"}}}, "sensitivity",
             r"programs\.a: Unevaluated properties are not allowed \('cwdx'")
    _refused({"programs": {"a": {"command": "r", "env": {"X": [1]}}}}, "sensitivity",
             r"programs\.a\.env\.X")
