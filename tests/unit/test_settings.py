"""Config to settings: one validation that fills the schema's defaults (through $ref too), and
frozen settings objects built from the result without defaults of their own."""

from __future__ import annotations

import os
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


# --- results_dir ----------------------------------------------


@pytest.mark.parametrize("value", ["", "   ", "res{x}", "res\nults"])
def test_a_blank_or_wildcard_results_dir_is_refused_by_the_schema(value):
    """An empty results_dir put every output at the file system's root (/raw, /logs, ...)."""
    with pytest.raises(InputError, match=r"my\.yaml: config: results_dir: .*\(expected a "
                                         r"directory path of 1 to 1024 characters"):
        validate({"results_dir": value}, "config", where="my.yaml")


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
