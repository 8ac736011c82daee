"""Config to settings: one validation that fills the schema's defaults (through $ref too), and
frozen settings objects built from the result without defaults of their own."""

from __future__ import annotations

import os
import re
from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path

import pytest
import yaml

from perfcast.errors import InputError
from perfcast.settings import (
    NAME_MAX,
    as_params,
    build,
    require_results_dir,
    require_writable_dir,
    schema_default,
    schema_path,
    validate,
)


def test_defaults_are_filled_inside_referenced_section_schemas():
    cfg = validate({"warmup": {"workloads": {}}, "sensitivity": {"replay": {}}}, "config")
    replay = cfg["sensitivity"]["replay"]
    assert replay["enabled"] is True and len(replay["source"]["sha256"]) == 64
    assert cfg["paper"] == {"enabled": True}
    assert cfg["sensitivity"]["cgroup"]["if_unavailable"] == "report"
    # (warmup.edm is a $ref to definitions.schema.yaml: a default two references deep)
    assert cfg["warmup"]["edm"]["alpha"] == schema_default("warmup", "edm.alpha") == \
        yaml.safe_load(schema_path("definitions").read_text())["$defs"]["warmup_edm"][
            "properties"]["alpha"]["default"]


def test_the_default_config_is_valid_and_the_input_is_not_modified():
    raw = yaml.safe_load((Path(__file__).parents[2] / "config" / "config.yaml").read_text())
    before = yaml.safe_dump(raw)
    cfg = validate(raw, "config")
    assert yaml.safe_dump(raw) == before and cfg != raw


def test_a_typo_is_named_with_its_key_path():
    with pytest.raises(InputError, match=r"my\.yaml: config: sensitivity\.replay: Additional "
                                         r"properties are not allowed \('epsilon' was"):
        validate({"sensitivity": {"replay": {"epsilon": [0.3]}}}, "config", where="my.yaml")
    with pytest.raises(InputError, match=r"sensitivity\.epsilon: -1 is less than"):
        validate({"sensitivity": {"epsilon": -1}}, "config")


@dataclass(frozen=True)
class Inner:
    a: int
    b: str | None


@dataclass(frozen=True)
class Outer:
    inner: Inner
    names: tuple[str, ...]
    table: dict[str, Inner]


def test_build_makes_nested_frozen_objects_and_refuses_missing_keys():
    o = build(Outer, {"inner": {"a": 1, "b": None}, "names": ["x", "y"], "extra": 3,
                      "table": {"k": {"a": 2, "b": "z"}}})
    assert o == Outer(Inner(1, None), ("x", "y"), {"k": Inner(2, "z")})
    with pytest.raises(FrozenInstanceError):
        o.names = ()  # type: ignore[misc]
    assert as_params(o) == {"inner": {"a": 1, "b": None}, "names": ["x", "y"],
                            "table": {"k": {"a": 2, "b": "z"}}}
    with pytest.raises(InputError, match=r"Outer\.inner: missing setting 'b'"):
        build(Outer, {"inner": {"a": 1}, "names": [], "table": {}})


def test_schema_default_reads_the_schema_through_refs():
    """The one default of a setting, as the command line's help names it: read from the schema
    (through the config schema's $ref to a section schema) and equal to what validation fills."""
    from perfcast.settings import help_default, schema_default

    filled = validate({}, "sweep")
    assert schema_default("sweep", "fit.max_order") == filled["fit"]["max_order"] == 4
    assert schema_default("config", "sweep.fit.alpha") == filled["fit"]["alpha"]
    assert help_default("sweep", "fit.cv_folds") == "(default: 10)"
    with pytest.raises(KeyError, match="no setting"):
        schema_default("sweep", "fit.no_such_key")


# --- results_dir and the names that become files ----------------------------------------------


@pytest.mark.parametrize("value", ["", "   ", "res{x}", "res\nults", "r" * 1025])
def test_a_blank_or_wildcard_results_dir_is_refused_by_the_schema(value):
    """An empty results_dir put every output at the file system's root (/raw, /logs, ...)."""
    with pytest.raises(InputError, match=r"my\.yaml: config: results_dir: .*\(expected a "
                                         r"directory path of 1 to 1024 characters"):
        validate({"results_dir": value}, "config", where="my.yaml")
    assert validate({"results_dir": "r/" * 512}, "config")["results_dir"] == "r/" * 512  # 1024


@pytest.mark.parametrize("value", ["/", "//", "/.", "/tmp/..", "///./"])
def test_the_root_as_results_dir_is_refused(value):
    with pytest.raises(InputError, match=r"my\.yaml: config: results_dir: .* is the file "
                                         r"system's root \(expected a directory path other "
                                         r"than /"):
        require_results_dir(value, where="my.yaml")


def test_a_results_dir_that_is_or_is_under_a_file_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match=r"results_dir: '.*/f' is not a directory"):
        require_results_dir(str(tmp_path / "f"))
    with pytest.raises(InputError, match=r"results_dir: '.*/f/sub/res' is under '.*/f', which "
                                         r"is not a directory"):
        require_results_dir(str(tmp_path / "f" / "sub" / "res"))
    assert require_results_dir(f"{tmp_path}/new/results//") == f"{tmp_path}/new/results"


def test_results_dir_names_are_at_most_name_max_bytes(tmp_path):
    assert NAME_MAX == 255
    ok = f"{tmp_path}/{'r' * 255}"
    assert require_results_dir(ok) == ok
    with pytest.raises(InputError, match=r"results_dir: the name 'rrr.* is 256 bytes long "
                                         r"\(expected each name of the path at most 255 bytes"):
        require_results_dir(f"{tmp_path}/{'r' * 256}/x")
    with pytest.raises(InputError, match=r"is 256 bytes long"):  # bytes, not characters
        require_results_dir(f"{tmp_path}/{'é' * 128}")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a folder without write permission")
def test_a_read_only_results_dir_is_named_when_the_run_starts(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    require_writable_dir(str(ro / "results"))
    ro.chmod(0o555)
    try:
        with pytest.raises(InputError, match=r"/ro: cannot be written \(config: results_dir: "
                                             r"'.*/ro/results'\)"):
            require_writable_dir(str(ro / "results"))
    finally:
        ro.chmod(0o755)


#: every config name that becomes a file or folder name: (section, key path) -> a config with
#: ``name`` in that place (counters need generations and benchmarks)
def _counters(gens=("g1", "g2"), benchmarks=("b",)):
    return {"generations": {"old": gens[0], "new": gens[1]}, "benchmarks": list(benchmarks),
            "events": ["e"]}


NAMED = {
    "counters.generations.old": lambda n: {"counters": _counters(gens=(n, "g2"))},
    "counters.generations.new": lambda n: {"counters": _counters(gens=("g1", n))},
    "counters.benchmarks.0": lambda n: {"counters": _counters(benchmarks=(n,))},
    "predict.benchmarks.0": lambda n: {"predict": {"benchmarks": [n]}},
    "warmup.workloads": lambda n: {"warmup": {"workloads": {n: {"command": "x {work}",
                                                                "work_max": 2}}}},
    "sensitivity.programs": lambda n: {"sensitivity": {"programs": {n: {"command": "x"}}}},
    "sensitivity.cgroup.prefix": lambda n: {"sensitivity": {"cgroup": {"prefix": n}}},
    "sweep.campaigns": lambda n: {"sweep": {"campaigns": {n: {"command": "x {a}",
                                                              "parameters": {"a": [1]}}}}},
    "sweep.imports": lambda n: {"sweep": {"imports": {n: {"path": "d", "parameters": ["a"]}}}},
}


@pytest.mark.parametrize("key", sorted(NAMED))
def test_names_that_become_files_have_a_length_bound(key):
    """A 255-character benchmark or program name passed the schema, and its files (a
    ``<name>_figure.log``, a ``<name>.runs.parquet``) failed with ENAMETOOLONG: each such name
    is at most 128 characters (the longest file built from one, 13 characters more, stays far
    within 255 bytes: tests/workflow/test_config_checks.py plans them)."""
    name = "n" + "0123456789abcdef" * 8  # 129 characters
    validate(NAMED[key](name[:128]), "config")
    with pytest.raises(InputError, match=rf"config: {re.escape(key.rsplit('.', 1)[0])}"
                                         rf"(\.{key.rsplit('.', 1)[-1]})?: '{name}' is too long"):
        validate(NAMED[key](name), "config")


def test_a_network_interface_is_a_short_safe_name():
    """The interface names a lock file (perfcast-tc-<interface>.lock in the temporary folder):
    a path there was written wherever it pointed."""
    for bad in ("../../etc/x", "a" * 16, ""):
        with pytest.raises(InputError, match=r"sensitivity\.network\.interface"):
            validate({"sensitivity": {"network": {"interface": bad}}}, "config")
    validate({"sensitivity": {"network": {"interface": "eth0.100"}}}, "config")


# --- numeric knobs that drive loop counts, sizes and waits --------------------------------------


BOUNDED = [
    ("counters.simulate.scale", 1e300, 100),
    ("counters.simulate.noise", 1e300, 1),
    ("counters.simulate.jitter", 1e300, 1),
    ("counters.interval_ms", 10**12, 3_600_000),
    ("counters.group_size", 10**6, 64),
    ("counters.perf.timeout_s", 1e300, 604_800),
    ("sensitivity.repeats", 10**9, 1000),
    ("sensitivity.baseline_repeats", 10**9, 1000),
    ("sensitivity.timeout_s", 1e300, 604_800),
    ("sensitivity.budget", 10**12, 1_000_000),
    ("sensitivity.replay.lhs_repeats", 10**9, 10_000),
    ("warmup.session.max_rounds", 10**12, 100_000),
    ("warmup.session.max_time_s", 1e300, 604_800),
    ("warmup.session.first_estimate_rounds", 10**12, 100_000),
]


def _nested(key: str, value) -> dict:
    """``{"a": {"b": value}}`` for ``"a.b"``, with the counters section's required keys."""
    out: dict = {}
    node = out
    *parents, last = key.split(".")
    for p in parents:
        node = node.setdefault(p, _counters() if p == "counters" and node is out else {})
    node[last] = value
    return out


@pytest.mark.parametrize("key, huge, highest", BOUNDED)
def test_numeric_knobs_that_drive_loops_are_bounded(key, huge, highest):
    """counters.simulate.scale: 1e300 was accepted and the collect job never ended; each knob
    that sets a loop count, a size or a wait is refused above its bound, naming the key and the
    bound (config/README.md lists them)."""
    validate(_nested(key, highest), "config")
    with pytest.raises(InputError, match=rf"my\.yaml: config: {re.escape(key)}: .* is greater "
                                         rf"than the maximum of {highest}"):
        validate(_nested(key, huge), "config", where="my.yaml")


@pytest.mark.parametrize("key, tiny, lowest", [("counters.clock_ghz.g1", 1e-300, 0.1),
                                               ("sensitivity.monitor_interval_s", 1e-300, 0.001)])
def test_knobs_that_divide_a_time_are_bounded_below(key, tiny, lowest):
    """A clock of 1e-300 GHz makes the simulator's interval a fraction of a cycle (a run of
    1e310 intervals); a monitor interval of 1e-300 s only spins."""
    validate(_nested(key, lowest), "config")
    with pytest.raises(InputError, match=rf"config: {re.escape(key)}: .* is less than the "
                                         rf"minimum of {lowest}"):
        validate(_nested(key, tiny), "config")
