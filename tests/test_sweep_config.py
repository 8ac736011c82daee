"""Campaign definitions: ranges, placeholders, programs, derived expressions, schema defaults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from snakemake.utils import Paramspace, validate

from perfcast.errors import InputError
from perfcast.sweep import campaign as cp
from perfcast.sweep import expressions
from perfcast.sweep.space import expand_range, parameter_values, point_id, product_points

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "sweep.schema.yaml"


def campaign(**overrides):
    spec = {"command": "prog --a {a} --b {b}", "parameters": {"a": [1, 2], "b": [10, 20, 30]}}
    spec.update(overrides)
    return spec


# --- ranges -----------------------------------------------------------------------------------


def test_linear_range_includes_stop_and_keeps_integers():
    assert expand_range({"start": 0, "stop": 7, "step": 1}) == list(range(8))  # ARPE "0 to 7"
    assert expand_range({"start": 10, "stop": 1, "step": -3}) == [10, 7, 4, 1]
    assert all(isinstance(v, int) for v in expand_range({"start": 1, "stop": 9, "step": 2}))


def test_float_range_has_no_binary_noise():
    values = expand_range({"start": 0.1, "stop": 0.5, "step": 0.1})
    assert values == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert str(values[2]) == "0.3"  # not 0.30000000000000004: it names a directory


def test_log_range_multiplies_by_step():
    assert expand_range({"start": 128, "stop": 1024, "step": 2, "log": True}) == [128, 256, 512,
                                                                                   1024]
    assert expand_range({"start": 1, "stop": 1000, "step": 10, "log": True}) == [1, 10, 100,
                                                                                  1000]
    vals = expand_range({"start": 0.5, "stop": 4, "step": 2, "log": True})
    assert vals == [0.5, 1.0, 2.0, 4.0]


@pytest.mark.parametrize("spec, words", [
    ({"start": 5, "stop": 1, "step": 1}, "empty"),
    ({"start": 1, "stop": 5, "step": 0}, "step is 0"),
    ({"start": 1, "stop": 8, "step": 1, "log": True}, "factor step > 1"),
    ({"start": 0, "stop": 8, "step": 2, "log": True}, "start > 0"),
    ({"start": 16, "stop": 8, "step": 2, "log": True}, "empty"),
    ({"start": 1, "stop": 5}, "lacks 'step'"),
])
def test_bad_ranges_are_refused(spec, words):
    with pytest.raises(InputError, match=words):
        expand_range(spec, where="parameter 'x'")


def test_parameter_values_refuse_unusable_values():
    with pytest.raises(InputError, match="empty list"):
        parameter_values("x", [])
    with pytest.raises(InputError, match="duplicate"):
        parameter_values("x", [1, 2, 1])
    with pytest.raises(InputError, match="cannot name a run directory"):
        parameter_values("x", ["a b"])
    with pytest.raises(InputError, match="not a valid name"):
        parameter_values("1x", [1])
    assert parameter_values("mode", ["fast", "slow"]) == ["fast", "slow"]
    assert parameter_values("n", 4) == [4]


def test_point_ids_match_snakemake_paramspace():
    """A run directory is named exactly as Paramspace(filename_params='*') names it."""
    import pandas as pd

    pts = product_points({"size": [64, 128], "mode": ["a", "b"], "f": [0.5]})
    assert len(pts) == 4 and pts[0] == {"size": 64, "mode": "a", "f": 0.5}
    space = Paramspace(pd.DataFrame(pts), filename_params="*")
    assert list(space.instance_patterns) == [point_id(p) for p in pts]


# --- campaigns --------------------------------------------------------------------------------


def test_campaign_expands_and_renders():
    c = cp.parse_campaign("demo", campaign(iterations=2, env={"N": "{b}"}))
    assert c.point_ids()[:2] == ["a~1_b~10", "a~1_b~20"]
    assert len(c.points()) == 6
    rp = c.run_params("a~2_b~30", 2, "/usr/bin/python3")
    assert rp["command"] == "prog --a 2 --b 30"
    assert rp["env"] == {"N": "30"} and rp["iteration"] == 2
    assert rp["parameters"] == {"a": 2, "b": 30}


def test_run_params_do_not_depend_on_other_configurations():
    """Adding a value must not change the params of existing runs (Snakemake reruns on a
    params change)."""
    small = cp.parse_campaign("demo", campaign())
    grown = cp.parse_campaign("demo", campaign(parameters={"a": [1, 2, 3], "b": [10, 20, 30]}))
    for pid in small.point_ids():
        assert small.run_params(pid, 1, "py") == grown.run_params(pid, 1, "py")


def test_unknown_placeholder_is_refused_with_its_name():
    with pytest.raises(InputError, match=r"unknown placeholder\(s\) \{c\}"):
        cp.parse_campaign("demo", campaign(command="prog {a} {b} {c}"))
    with pytest.raises(InputError, match="before.*unknown placeholder"):
        cp.parse_campaign("demo", campaign(before="echo {nope}"))
    with pytest.raises(InputError, match="not a plain name"):
        cp.parse_campaign("demo", campaign(command="prog {a} {b} ${HOME}x{a.real}"))


def test_literal_braces_and_reserved_placeholders():
    c = cp.parse_campaign("demo", campaign(command="{python} x {a} {b} ${{HOME}} {iteration}"))
    assert c.run_params("a~1_b~10", 3, "/py")["command"] == "/py x 1 10 ${HOME} 3"


def test_unused_parameter_and_empty_range_refused():
    with pytest.raises(InputError, match=r"parameter\(s\) \['b'\] appear in no"):
        cp.parse_campaign("demo", campaign(command="prog {a}"))
    with pytest.raises(InputError, match="range is empty"):
        cp.parse_campaign("demo", campaign(parameters={"a": {"start": 3, "stop": 1, "step": 1},
                                                       "b": [1]}))


def test_program_from_programs_map():
    programs = {"mm": {"command": "mm --n {n} --work {work}", "env": {"X": 1}, "work": 5}}
    c = cp.parse_campaign("demo", {"program": "mm", "parameters": {"n": [1, 2]}}, programs)
    rp = c.run_params("n~2", 1, "py")
    assert rp["command"] == "mm --n 2 --work 5" and rp["env"] == {"X": "1"}
    swept = cp.parse_campaign("demo", {"program": "mm", "parameters": {"n": [1], "work": [7]}},
                              programs)
    assert swept.run_params("n~1_work~7", 1, "py")["command"] == "mm --n 1 --work 7"
    with pytest.raises(InputError, match="program 'nope' is not in programs"):
        cp.parse_campaign("demo", {"program": "nope", "parameters": {"n": [1]}}, programs)


def test_threads_from_a_parameter():
    c = cp.parse_campaign("demo", campaign(threads="{a}"))
    assert [c.job_threads(p) for p in c.points()[::3]] == [1, 2]
    with pytest.raises(InputError, match="threads"):
        cp.parse_campaign("demo", campaign(threads="{zzz}"))


def test_models_and_derived_columns_are_checked_before_running():
    c = cp.parse_campaign("demo", campaign(
        sensors={"perf_events": ["task-clock"], "custom": {"watts": "echo 3"}},
        derived={"ab": "a * b", "energy": "wall_s * watts"},
        models=[{"y": "energy", "x": ["ab"]}], predict=[{"a": 3, "b": 40}]))
    assert c.analysis.models[0].name == "energy~ab"
    assert "perf_task_clock" in c.sensors.columns()
    with pytest.raises(InputError, match=r"unknown column\(s\) \['power_w'\]"):
        cp.parse_campaign("demo", campaign(derived={"e": "wall_s * power_w"}))
    with pytest.raises(InputError, match="unknown column 'nope'"):
        cp.parse_campaign("demo", campaign(models=[{"y": "nope"}]))
    with pytest.raises(InputError, match="predict"):
        cp.parse_campaign("demo", campaign(predict=[{"a": 1}]))


def test_default_models_are_arpe_time_effects():
    c = cp.parse_campaign("demo", campaign())
    assert [m.y for m in c.analysis.models] == ["wall_s", "user_s", "sys_s"]
    assert all(m.x == ("a", "b") for m in c.analysis.models)


def test_import_spec():
    s = cp.parse_import("old", {"path": "x", "parameters": ["threads"],
                                "derived": {"tp": "wall_s * threads"}})
    assert s.analysis.models[0].x == ("threads",)
    with pytest.raises(InputError, match="no parameter names"):
        cp.parse_import("old", {"path": "x", "parameters": []})


# --- expressions ------------------------------------------------------------------------------


def test_expressions_compute_vectorised():
    cols = {"t": np.array([1.0, 2.0]), "p": np.array([10.0, 20.0])}
    assert np.allclose(expressions.evaluate("t * p + 1", cols), [11, 41])
    assert np.allclose(expressions.evaluate("log2(p / 5) ** 2", cols), [1, 4])
    assert expressions.expression_names("sqrt(t) * p - t") == {"t", "p"}


@pytest.mark.parametrize("expr", [
    "__import__('os').system('true')", "t.real", "[t][0]", "lambda: 1", "open('x')",
    "t if p else 1", "'a'", "exp(t, out=t)",
])
def test_expressions_refuse_anything_but_arithmetic(expr):
    with pytest.raises(InputError):
        expressions.evaluate(expr, {"t": np.ones(2), "p": np.ones(2)})


# --- the schema -------------------------------------------------------------------------------


def test_schema_defaults_equal_package_defaults():
    schema = yaml.safe_load(SCHEMA.read_text())
    props = schema["$defs"]["campaign"]["properties"]
    for key, value in cp.DEFAULTS.items():
        assert props[key]["default"] == value, key
    fit = schema["properties"]["fit"]["properties"]
    for key, value in cp.FIT_DEFAULTS.items():
        assert fit[key]["default"] == value, key


def test_embedded_default_config_validates_and_parses():
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    section = cfg["sweep"]
    validate(section, str(SCHEMA))
    sweep = cp.parse_sweep(section, cfg.get("programs"))
    (name, c), = sweep.campaigns.items()
    assert len(c.parameters) >= 2 and len(c.points()) * c.iterations <= 24


def test_schema_refuses_unknown_keys():
    from snakemake.exceptions import WorkflowError

    with pytest.raises(WorkflowError):
        validate({"campaigns": {"x": {**campaign(), "iteratons": 2}}}, str(SCHEMA))
