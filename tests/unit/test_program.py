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
