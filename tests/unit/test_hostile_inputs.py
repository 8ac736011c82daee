"""What a hostile or unlucky user gives: names that would become paths outside their folder,
numbers beyond what a counter can hold, repeated columns, truncated runs, program templates with
shell metacharacters, huge configs. Each is refused with one line naming the file, line or key,
or gives the right result; none runs code, loses data or writes a wrong number."""

from __future__ import annotations

import re

import pytest

from perfcast.errors import InputError
from perfcast.settings import validate

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
