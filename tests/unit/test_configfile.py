"""YAML config files read strictly: a key given twice is refused at any depth, naming the file,
the key and both lines (YAML's loaders keep the last one silently)."""

from __future__ import annotations

import pytest

from perfcast.configfile import check_config_files, load_config_file
from perfcast.errors import InputError


def _file(tmp_path, text, name="my.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, key, first, second", [
    ("seed: 1\nresults_dir: r\nseed: 2\n", "seed", 1, 3),
    ("counters:\n  benchmarks: [a]\n  simulate:\n    scale: 1\n    noise: 0\n    scale: 9\n",
     "counters.simulate.scale", 4, 6),
    ("sweep:\n  campaigns:\n    c:\n      parameters: {a: [1], a: [2]}\n",
     "sweep.campaigns.c.parameters.a", 4, 4),
    ("models:\n- y: wall_s\n  y: user_s\n", "models[0].y", 2, 3),
    ("flags:\n  yes: 1\n  true: 2\n", "flags.True", 2, 3),  # one key as loaded (YAML 1.1)
])
def test_a_key_given_twice_is_refused_naming_the_file_key_and_lines(tmp_path, text, key, first,
                                                                    second):
    path = _file(tmp_path, text)
    with pytest.raises(InputError) as err:
        load_config_file(path)
    assert str(err.value) == (f"{path}, line {second}: key {key!r} is given twice, at lines "
                              f"{first} and {second} (expected each key once in a mapping)")


def test_a_merge_key_may_be_overridden_and_aliases_are_walked_once(tmp_path):
    path = _file(tmp_path, "base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\n"
                           "list: &l [*b, *b]\nagain: [*l, *l]\n")
    cfg = load_config_file(path)
    assert cfg["other"] == {"x": 3, "y": 2} and cfg["again"][1][0] == {"x": 1, "y": 2}


def test_json_config_files_are_read_and_checked_too(tmp_path):
    """Snakemake reads a --configfile as JSON first; one YAML can parse is checked as YAML (with
    lines), one it cannot (an escaped surrogate pair) as JSON."""
    with pytest.raises(InputError, match=r"c\.json, line 1: key 'a\.b' is given twice"):
        load_config_file(_file(tmp_path, '{"a": {"b": 1, "b": 2}}', "c.json"))
    smiley = '"\\ud83d\\ude00"'
    assert load_config_file(_file(tmp_path, f'{{"a": {smiley}}}', "c.json")) == {"a": "\U0001f600"}
    with pytest.raises(InputError, match=r"c\.json: key 'b' is given twice in one object"):
        load_config_file(_file(tmp_path, f'{{"a": {smiley}, "b": 1, "b": 2}}', "c.json"))


def test_invalid_yaml_and_missing_files_name_the_file(tmp_path):
    with pytest.raises(InputError, match=r"my\.yaml, line 2: not valid YAML"):
        load_config_file(_file(tmp_path, "a: [1\n"))
    with pytest.raises(InputError, match=r"none\.yaml: cannot be read"):
        load_config_file(tmp_path / "none.yaml")


def test_check_config_files_reads_each_file(tmp_path):
    good = _file(tmp_path, "seed: 1\n", "good.yaml")
    bad = _file(tmp_path, "seed: 1\nseed: 2\n", "bad.yaml")
    check_config_files([good])
    with pytest.raises(InputError, match=r"bad\.yaml, line 2: key 'seed' is given twice"):
        check_config_files([good, bad])


def test_the_shipped_grid_command_refuses_a_config_with_a_key_twice(tmp_path):
    """perfcast.sensitivity.shipped reads a config of its own (yaml.safe_load kept the last)."""
    from perfcast.sensitivity import shipped

    cfg = _file(tmp_path, "sensitivity:\n  repeats: 1\n  repeats: 3\n")
    with pytest.raises(InputError, match=r"my\.yaml, line 3: key 'sensitivity\.repeats' is "
                                         r"given twice, at lines 2 and 3"):
        shipped.main([str(cfg), str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
