"""Campaign definitions: ranges, placeholders, programs, derived expressions, the schema as the one
rule for what a config may say."""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys

import numpy as np
import pytest
import yaml
from snakemake.utils import Paramspace

from perfcast.errors import InputError
from perfcast.settings import as_params, schema_path, validate
from perfcast.sweep import campaign as cp
from perfcast.sweep import campaign_parser as cpp
from perfcast.sweep import expressions, runner, sensors
from perfcast.sweep import settings as st
from perfcast.sweep.space import expand_range, parameter_values, point_id, product_points

PY = shlex.quote(sys.executable)
#: the workflow seed the campaigns are parsed with (their {seed})
SEED = 7


@pytest.fixture(scope="module")
def sweep_schema():
    return yaml.safe_load(schema_path("sweep").read_text())


def campaign(**overrides):
    spec = {"command": "prog --a {a} --b {b}", "parameters": {"a": [1, 2], "b": [10, 20, 30]}}
    spec.update(overrides)
    return spec


def sweep(campaigns=None, programs=None, **section):
    """The campaigns as the workflow checks them: the schema (defaults filled), then the
    package."""
    return cpp.parse_sweep(validate({"campaigns": campaigns or {}, **section}, "sweep"), programs,
                           seed=SEED)


def parse(spec, programs=None, name="demo"):
    return sweep({name: spec}, programs).campaigns[name]


def run(c, pid, iteration):
    """The settings of rule sweep_run for one run of campaign ``c``."""
    return c.run_settings(pid, iteration, stop_marker="STOPPED.json", failed_record="f.json")


# --- ranges -----------------------------------------------------------------------------------


def test_linear_range_includes_stop_and_keeps_integers():
    assert expand_range(0, 7, 1, log=False) == list(range(8))  # ARPE "0 to 7"
    assert expand_range(10, 1, -3, log=False) == [10, 7, 4, 1]
    assert all(isinstance(v, int) for v in expand_range(1, 9, 2, log=False))


def test_float_range_has_no_binary_noise():
    values = expand_range(0.1, 0.5, 0.1, log=False)
    assert values == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert str(values[2]) == "0.3"  # not 0.30000000000000004: it names a directory


def test_log_range_multiplies_by_step():
    assert expand_range(128, 1024, 2, log=True) == [128, 256, 512, 1024]
    assert expand_range(1, 1000, 10, log=True) == [1, 10, 100, 1000]
    assert expand_range(0.5, 4, 2, log=True) == [0.5, 1.0, 2.0, 4.0]


@pytest.mark.parametrize("args, log, words", [
    ((5, 1, 1), False, "empty"),
    ((1, 5, 0), False, "step is 0"),
    ((1, 8, 1), True, "factor step > 1"),
    ((0, 8, 2), True, "start > 0"),
    ((16, 8, 2), True, "empty"),
    ((1, float("inf"), 1), False, "not a finite number"),
])
def test_bad_ranges_are_refused(args, log, words):
    with pytest.raises(InputError, match=words):
        expand_range(*args, log=log, where="parameter 'x'")


def test_parameter_values_refuse_what_the_schema_cannot():
    with pytest.raises(InputError, match="duplicate"):
        parameter_values("x", [1, 2, 1])
    with pytest.raises(InputError, match="duplicate"):
        parameter_values("x", [1, "1"])  # one run directory
    with pytest.raises(InputError, match="not finite"):
        parameter_values("x", [1.0, float("nan")])
    assert parameter_values("mode", ["fast", "slow"]) == ["fast", "slow"]
    assert parameter_values("n", 4) == [4]
    assert parameter_values("n", {"start": 1, "stop": 3, "step": 1, "log": False}) == [1, 2, 3]


@pytest.mark.parametrize("parameters, words", [
    ({"x": []}, "parameters.x"),                        # empty list
    ({"x": ["a b"]}, "parameters.x"),                   # a value that cannot name a directory
    ({"1x": [1]}, "'1x'"),                              # a name that is not an identifier
    ({"x": {"start": 1, "stop": 5}}, "parameters.x"),   # a range without step
    ({"x": [True]}, "parameters.x"),                    # not a number or a word
])
def test_schema_refuses_unusable_parameters(parameters, words):
    with pytest.raises(InputError, match=words):
        sweep({"demo": {"command": "prog {x}", "parameters": parameters}})


def test_point_ids_match_snakemake_paramspace():
    """A run directory is named exactly as Paramspace(filename_params='*') names it."""
    import pandas as pd

    pts = product_points({"size": [64, 128], "mode": ["a", "b"], "f": [0.5]})
    assert len(pts) == 4 and pts[0] == {"size": 64, "mode": "a", "f": 0.5}
    space = Paramspace(pd.DataFrame(pts), filename_params="*")
    assert list(space.instance_patterns) == [point_id(p) for p in pts]


# --- campaigns --------------------------------------------------------------------------------


def test_campaign_expands_and_renders():
    c = parse(campaign(iterations=2, env={"N": "{b}"}))
    assert c.point_ids()[:2] == ["a~1_b~10", "a~1_b~20"]
    assert len(c.points()) == 6
    rp = run(c, "a~2_b~30", 2)
    assert rp.command == "prog --a 2 --b 30"
    assert rp.env == {"N": "30"} and rp.iteration == 2
    assert rp.parameters == {"a": 2, "b": 30}
    assert rp.timeout_s == 600.0 and rp.before == "" and rp.fail_fast is False


def test_run_settings_do_not_depend_on_other_configurations():
    """Adding a value must not change the params of existing runs (Snakemake reruns on a
    params change)."""
    small = parse(campaign())
    grown = parse(campaign(parameters={"a": [1, 2, 3], "b": [10, 20, 30]}))
    for pid in small.point_ids():
        assert as_params(run(small, pid, 1)) == as_params(run(grown, pid, 1))


def test_float_values_render_as_their_directory_names():
    c = parse(campaign(parameters={"a": {"start": 0.5, "stop": 1.5, "step": 0.5}, "b": [1]}))
    assert c.point_ids() == ["a~0.5_b~1", "a~1.0_b~1", "a~1.5_b~1"]
    assert run(c, "a~1.0_b~1", 1).command == "prog --a 1.0 --b 1"


def test_unknown_placeholder_is_refused_with_its_name():
    with pytest.raises(InputError, match=r"unknown placeholder\(s\) \{c\}") as err:
        parse(campaign(command="prog {a} {b} {c}"))
    assert "campaign 'demo', command" in str(err.value) and "'a', 'b'" in str(err.value)
    with pytest.raises(InputError, match=r"before: unknown placeholder\(s\) \{nope\}"):
        parse(campaign(before="echo {nope}"))
    with pytest.raises(InputError, match=r"sensor s: unknown placeholder\(s\) \{typo\}"):
        parse(campaign(sensors={"custom": {"s": "echo {typo}"}}))


def test_literal_braces_and_reserved_placeholders():
    c = parse(campaign(command="{python} x {a} {b} ${{HOME}} {{b}} {iteration}"))
    assert run(c, "a~1_b~10", 3).command == f"{PY} x 1 10 ${{HOME}} {{b}} 3"
    # braces around anything but a name are literal: shell and awk need no escaping
    c = parse(campaign(command="prog {a} {b} ${HOME} {a.real} {}"))
    assert run(c, "a~1_b~10", 1).command == "prog 1 10 ${HOME} {a.real} {}"


def test_awk_braces_render_and_run():
    """A campaign command with awk's literal braces (no {{ }} needed) renders and runs: the
    heartbeat sensor sees what awk printed."""
    c = parse({"command": "echo {n} 5 | awk '{print \"heartbeat\", $1 * $2}'",
               "parameters": {"n": [3]}, "iterations": 1, "timeout_s": 30,
               "sensors": {"heartbeat": r"^heartbeat (?P<value>\d+)",
                           "custom": {"first": "echo {n} 9 | awk '{print $2}'"}}})
    rp = run(c, "n~3", 1)
    assert rp.command == "echo 3 5 | awk '{print \"heartbeat\", $1 * $2}'"
    assert rp.sensors.custom["first"].command == "echo 3 9 | awk '{print $2}'"
    rec = runner.run_point(rp)
    assert rec["status"] == "ok", rec["errors"]
    assert rec["heartbeat"]["hb_value_mean"] == 15.0
    assert rec["custom"]["first"] == 9.0


def test_values_are_shell_quoted_in_commands_not_in_env(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/my python/bin/python")
    c = parse(campaign(command="{python} -m x {a} {b}", env={"PY": "{python}"}))
    rp = run(c, "a~1_b~10", 1)
    assert rp.command == "'/opt/my python/bin/python' -m x 1 10"
    assert rp.env == {"PY": "/opt/my python/bin/python"}


def test_unused_parameter_and_empty_range_refused():
    with pytest.raises(InputError, match=r"parameter\(s\) \['b'\] appear in no"):
        parse(campaign(command="prog {a}"))
    with pytest.raises(InputError, match="range is empty"):
        parse(campaign(parameters={"a": {"start": 3, "stop": 1, "step": 1}, "b": [1]}))


def test_reserved_parameter_names_refused():
    with pytest.raises(InputError, match="'iteration' is reserved"):
        parse({"command": "prog {iteration}", "parameters": {"iteration": [1]}})
    with pytest.raises(InputError, match="'python' is reserved"):
        parse({"command": "prog {python}", "parameters": {"python": [1]}})


def test_seed_and_work_as_in_every_stage():
    """{seed} is the workflow's seed (a parameter named seed sweeps it); {work} is the
    campaign's or its program's work (a parameter named work sweeps it), else refused."""
    c = parse({"command": "prog {n} --seed {seed}", "env": {"S": "{seed}"},
               "parameters": {"n": [1]}})
    rp = run(c, "n~1", 1)
    assert rp.command == f"prog 1 --seed {SEED}" and rp.env == {"S": str(SEED)}
    swept = parse({"command": "prog --seed {seed}", "parameters": {"seed": [1, 2]}})
    assert run(swept, "seed~2", 1).command == "prog --seed 2"
    own = parse({"command": "prog {n} {work}", "work": 4, "parameters": {"n": [1]}})
    assert run(own, "n~1", 1).command == "prog 1 4"
    with pytest.raises(InputError, match=r"\{work\} is used but has no value"):
        parse({"command": "prog {n} {work}", "parameters": {"n": [1]}})


def test_cwd_from_the_campaign_or_its_program_is_where_the_run_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a" / "b").mkdir(parents=True)
    programs = {"pwd": {"command": "pwd > out.txt; echo {n} > /dev/null", "cwd": "a"}}
    c = parse({"program": "pwd", "parameters": {"n": [1]}, "iterations": 1,
               "before": "touch before.txt", "after": "touch after.txt"}, programs)
    assert c.cwd == "a"
    rec = runner.run_point(run(c, "n~1", 1))
    assert rec["status"] == "ok", rec["errors"]
    assert (tmp_path / "a" / "out.txt").read_text().strip() == str((tmp_path / "a").resolve())
    assert {p.name for p in (tmp_path / "a").glob("*.txt")} == {"out.txt", "before.txt",
                                                                "after.txt"}
    over = parse({"program": "pwd", "cwd": "a/b", "parameters": {"n": [1]}}, programs)
    assert over.cwd == "a/b"
    gone = parse({"program": "pwd", "cwd": "nowhere", "parameters": {"n": [1]}}, programs)
    with pytest.raises(InputError, match="campaign 'demo': cwd 'nowhere' is not a directory"):
        runner.run_point(run(gone, "n~1", 1))


def test_program_from_programs_map():
    programs = {"mm": {"command": "mm --n {n} --work {work}", "env": {"X": 1}, "work": 5}}
    c = parse({"program": "mm", "parameters": {"n": [1, 2]}, "env": {"Y": "{n}"}}, programs)
    rp = run(c, "n~2", 1)
    assert rp.command == "mm --n 2 --work 5" and rp.env == {"X": "1", "Y": "2"}
    swept = parse({"program": "mm", "parameters": {"n": [1], "work": [7]}}, programs)
    assert run(swept, "n~1_work~7", 1).command == "mm --n 1 --work 7"
    own = parse({"program": "mm", "command": "other {n}", "parameters": {"n": [1]}}, programs)
    assert run(own, "n~1", 1).command == "other 1" and own.env == {"X": "1"}
    with pytest.raises(InputError, match="refers to 'nope', which is not in the top-level"):
        parse({"program": "nope", "parameters": {"n": [1]}}, programs)
    with pytest.raises(InputError, match="no command"):
        parse({"parameters": {"n": [1]}}, programs)
    # a campaign named like a program, with no command of its own, runs that program
    named = parse({"parameters": {"n": [4]}}, programs, name="mm")
    assert run(named, "n~4", 1).command == "mm --n 4 --work 5"


def test_threads_from_a_parameter():
    c = parse(campaign(threads="{a}"))
    assert [c.job_threads(p) for p in c.points()[::3]] == [1, 2]
    with pytest.raises(InputError, match="threads"):
        parse(campaign(threads="{zzz}"))  # not a parameter
    with pytest.raises(InputError, match="threads"):
        parse(campaign(threads="a"))  # the schema: "{name}"
    with pytest.raises(InputError, match="threads"):
        parse(campaign(threads=0))


def test_models_and_derived_columns_are_checked_before_running():
    c = parse(campaign(
        sensors={"perf_events": ["task-clock"], "custom": {"watts": "echo 3"}},
        derived={"ab": "a * b", "energy": "wall_s * watts"},
        models=[{"y": "energy", "x": ["ab"]}], predict=[{"a": 3, "b": 40}]))
    assert c.analysis.models[0].name == "energy~ab"
    assert "perf_task_clock" in c.sensors.columns()
    assert c.sensors.custom["watts"] == cp.CustomSensor(command="echo 3", mode="after")
    with pytest.raises(InputError, match=r"unknown column\(s\) \['power_w'\]"):
        parse(campaign(derived={"e": "wall_s * power_w"}))
    with pytest.raises(InputError, match="unknown column 'nope'"):
        parse(campaign(models=[{"y": "nope"}]))
    with pytest.raises(InputError, match="predict"):
        parse(campaign(predict=[{"a": 1}]))
    with pytest.raises(InputError, match="not a new column name"):
        parse(campaign(derived={"wall_s": "a * 2"}))


def test_default_models_are_arpe_time_effects():
    c = parse(campaign())
    assert [m.y for m in c.analysis.models] == ["wall_s", "user_s", "sys_s"]
    assert all(m.x == ("a", "b") for m in c.analysis.models)


def test_import_spec():
    s = sweep(imports={"old": {"path": "x", "parameters": ["threads"],
                               "derived": {"tp": "wall_s * threads"}}}).imports["old"]
    assert s.analysis.models[0].x == ("threads",)
    with pytest.raises(InputError, match="parameters"):
        sweep(imports={"old": {"path": "x", "parameters": []}})
    with pytest.raises(InputError, match="are columns of the run table"):
        sweep(imports={"old": {"path": "x", "parameters": ["wall_s"]}})


def test_paper_campaigns_checked_at_parse_time():
    assert sweep({"b": campaign(), "a": campaign()}).paper_campaigns == ("a", "b")
    chosen = sweep({"b": campaign(), "a": campaign()}, paper={"campaigns": ["b"]})
    assert chosen.paper_campaigns == ("b",)
    with pytest.raises(InputError, match=r"sweep.paper.campaigns: \['zz'\]"):
        sweep({"a": campaign()}, paper={"campaigns": ["zz"]})


# --- perf event names: the schema's rule -------------------------------------------------------


def test_perf_event_names_may_hold_commas():
    """PMU events such as cha/event=0x34,umask=0x1fe001/ hold commas: the schema (the one rule,
    as the counters stage's) allows them, and the run reads their value by name."""
    event = "cha/event=0x34,umask=0x1fe001/"
    c = parse(campaign(sensors={"perf_events": ["task-clock", event]}))
    assert c.sensors.perf_events == ("task-clock", event)
    assert cp.perf_column(event) in c.sensors.columns()
    text = (f"12.5,msec,task-clock,12500,100.00,0.9,CPUs utilized\n"
            f"4321,,{event},12500,100.00,,\n")
    # by name, whichever order perf printed them in
    assert sensors.parse_perf_csv(text, [event, "task-clock"]) == {event: 4321.0,
                                                                   "task-clock": 12.5}
    assert sensors.perf_support(text, [event]) == {event: "supported"}
    with pytest.raises(InputError, match="perf_events"):
        parse(campaign(sensors={"perf_events": ["bad event"]}))
    with pytest.raises(InputError, match="duplicate perf events"):
        parse(campaign(sensors={"perf_events": ["a-b", "a_b"]}))


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


@pytest.mark.parametrize("cls, path", [
    (st.SweepSettings, []),
    (st.SweepCampaignSettings, ["$defs", "campaign"]),
    (st.ImportSettings, ["$defs", "import"]),
    (st.ModelSettings, ["$defs", "model"]),
    (st.FitSettings, ["properties", "fit"]),
    (st.NormalFormSettings, ["properties", "fit", "properties", "normal_form"]),
    (st.PaperSettings, ["properties", "paper"]),
    (st.SensorSettings, ["$defs", "campaign", "properties", "sensors"]),
])
def test_settings_are_the_schemas_keys_without_defaults(sweep_schema, cls, path):
    """One way from config to package: a settings field per schema key, no default of its own
    (every default is the schema's)."""
    node = sweep_schema
    for key in path:
        node = node[key]
    fields = dataclasses.fields(cls)
    assert {f.name for f in fields} == set(node["properties"])
    assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
               for f in fields)


def test_embedded_default_config_validates_and_parses(repo):
    cfg = validate(yaml.safe_load((repo / "config" / "config.yaml").read_text()), "config")
    parsed = cpp.parse_sweep(cfg["sweep"], cfg["programs"], seed=cfg["seed"])
    (name, c), = parsed.campaigns.items()
    assert len(c.parameters) >= 2 and len(c.points()) * c.iterations <= 24
    assert dataclasses.replace(parsed.fit, normal_form=None) == st.FitSettings(
        max_order=3, cv_folds=10, alpha=0.05,
        forms=("linear", "interaction", "quadratic", "purequadratic"), normal_form=None)
    assert parsed.fit.normal_form.enabled and parsed.fit.normal_form.aggregate == "mean"


def test_every_jobs_settings_survive_the_rule_params(repo):
    """What common/sweep.smk passes (as_params, a plain dict compared by Snakemake) is what
    the rule script rebuilds (rulekit.rule_settings: build): the same object, for every job of
    a campaign with every kind of sensor, an import and the paper; no job setting has a
    default of its own."""
    import json

    from perfcast.settings import build
    from perfcast.sweep import job_settings as js

    for cls in (js.SensorCheckSettings, js.RunSettings, js.RunTableSettings,
                js.ImportTableSettings, js.ModelsSettings, js.PaperTableSettings):
        assert all(f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                   for f in dataclasses.fields(cls)), cls
    parsed = sweep({"c": campaign(
        env={"N": "{b}"}, sensors={"perf_events": ["task-clock"], "rapl": True,
                                   "custom": {"w": "echo {a}", "d": {"command": "echo 1",
                                                                    "mode": "delta"}},
                                   "heartbeat": True},
        derived={"ab": "a * b"}, models=[{"y": "wall_s", "x": ["ab"]}],
        predict=[{"a": 3, "b": 40}])},
        imports={"old": {"path": "/nowhere", "parameters": ["t"]}})
    c = parsed.campaigns["c"]
    jobs = [c.sensor_check_settings(), parsed.run_table_settings("c"),
            parsed.import_settings("old"), parsed.models_settings("c"),
            parsed.models_settings("old"), parsed.paper_table_settings()]
    jobs += [c.run_settings(pid, i, stop_marker="S", failed_record="F")
             for pid in c.point_ids() for i in (1, 2)]
    for job in jobs:
        params = json.loads(json.dumps(as_params(job)))  # plain data, as a rule's params
        assert build(type(job), params) == job, type(job).__name__
    assert parsed.paper_table_settings().campaigns == ("c", "old")
    assert c.sensor_check_settings().sensors.custom["w"].command == "echo 1"  # first run's


def test_schema_refuses_unknown_keys():
    with pytest.raises(InputError, match="iteratons"):
        sweep({"x": {**campaign(), "iteratons": 2}})


def test_unvalidated_section_is_refused():
    with pytest.raises(InputError, match="missing setting"):
        cpp.parse_sweep({"campaigns": {"demo": campaign()}}, seed=SEED)


def test_a_run_folder_name_longer_than_name_max_is_refused_before_any_run():
    """Each configuration's runs go to runs/<name~value_...>/: parameters whose longest such
    name passes 255 bytes failed each run with ENAMETOOLONG."""
    names = [f"p{k}{'x' * 62}" for k in range(3)]  # 64-character names (the schema's most)
    params = {names[0]: [1, 2], names[1]: ["v" * 60], names[2]: ["w" * 60, "w"]}
    # (64 + 1 + 1) + 2 x (64 + 1 + 60) + 2 separators = 318 bytes
    with pytest.raises(InputError, match=r"campaign 'demo': the longest run folder name .* is "
                                         r"318 bytes \(expected at most 255 bytes"):
        parse(campaign(command="prog " + " ".join(f"{{{n}}}" for n in names),
                       parameters=params))
    params.pop(names[2])  # 66 + 125 + 1 = 192 bytes
    c = parse(campaign(command="prog " + " ".join(f"{{{n}}}" for n in params),
                       parameters=params))
    assert max(len(p.encode()) for p in c.point_ids()) == 192


def test_a_campaign_of_more_than_max_runs_is_refused():
    """Three ranges of 10,000 values each were 1e12 jobs to plan."""
    big = {"start": 1, "stop": 10_000, "step": 1}
    with pytest.raises(InputError, match=r"campaign 'demo': 1,000,000,000,000 runs \(1 "
                                         r"iterations .*\(expected at most 100,000 runs"):
        parse(campaign(parameters={"a": big, "b": big, "c": big}, iterations=1,
                       command="prog {a} {b} {c}"))
    assert cpp.MAX_RUNS == 100_000
    parse(campaign(parameters={"a": big, "b": [1, 2, 3, 4, 5]}, iterations=2,
                   command="prog {a} {b}"))  # exactly 100,000


def test_sweep_knobs_are_bounded_by_the_schema():
    for spec, message in [({"iterations": 1001}, "iterations: 1001 is greater than the maximum "
                                                 "of 1000"),
                          ({"timeout_s": 1e300}, "timeout_s: 1e+300 is greater than the maximum"),
                          ({"parameters": {"a" * 65: [1]}}, "is too long"),
                          ({"parameters": {"a": ["v" * 65]}}, "parameters.a: ")]:
        with pytest.raises(InputError, match=re.escape(message)):
            parse(campaign(**spec))
