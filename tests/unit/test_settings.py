"""Config to settings: one validation that fills the schema's defaults (through $ref too), and
frozen settings objects built from the result without defaults of their own."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass
from pathlib import Path

import pytest
import yaml

from perfcast.errors import InputError
from perfcast.settings import as_params, build, schema_default, schema_path, validate


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
