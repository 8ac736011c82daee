"""What a config may not say, refused by the workflow before any job (dry runs): a results_dir
that is the root or a file, a key given twice in a config file, a name too long for the files
made of it, a simulator knob without bound."""

from __future__ import annotations

import hashlib
import re
import subprocess

import harness
import pytest
import yaml

STAGES = harness.load_config("stages.yaml")
TINY = harness.load_config("tiny.yaml")


def _output(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


def _refused(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """The run failed before any job, with no traceback, its message holding ``needles``."""
    out = _output(proc)
    assert proc.returncode != 0, out
    assert "Traceback" not in out and "Building DAG" not in out, out
    for needle in needles:
        assert needle in out, (needle, out)
    return out


@pytest.mark.parametrize("results_dir, message", [
    ("", "config: results_dir: '' should be non-empty"),
    ("/", "config: results_dir: '/' is the file system's root"),
    ("//.", "config: results_dir: '//.' is the file system's root"),
])
def test_a_results_dir_at_the_root_is_refused_before_any_job(tmp_path, snakemake_run,
                                                             results_dir, message):
    """results_dir "" wrote /raw, /logs and /benchmarks; a dry run planned /counters, /model."""
    proc = snakemake_run(tmp_path, {**TINY, "results_dir": results_dir}, ["all"], extra=["-n"],
                         check=False)
    out = _refused(proc, message, "expected")
    assert not re.search(r"output: /(summary|counters|raw|model)", out)


def test_a_results_dir_that_is_a_file_is_refused_before_any_job(tmp_path, snakemake_run):
    """A results_dir naming an existing file gave a traceback."""
    (tmp_path / "taken").write_text("a file\n")
    proc = snakemake_run(tmp_path, {**TINY, "results_dir": "taken"}, ["all"], extra=["-n"],
                         check=False)
    _refused(proc, "config: results_dir: 'taken' is not a directory")
    proc = snakemake_run(tmp_path, {**TINY, "results_dir": "taken/results"}, ["all"],
                         extra=["-n"], check=False)
    _refused(proc, "'taken/results' is under 'taken', which is not a directory")
    assert (tmp_path / "taken").read_text() == "a file\n"


def test_a_key_given_twice_in_a_configfile_is_refused(tmp_path):
    """YAML kept the last of two equal keys: ``seed`` given twice ran with the second."""
    cfg = tmp_path / "my.yaml"
    text = yaml.safe_dump(TINY, sort_keys=False)
    cfg.write_text(text + "counters:\n  group_size: 2\n")
    line = text.count("\n") + 1
    first = text.splitlines().index("counters:") + 1
    proc = subprocess.run(harness.snakemake_cmd(tmp_path, cfg, extra=["-n"]),
                          capture_output=True, text=True, timeout=300)
    _refused(proc, f"{cfg}, line {line}: key 'counters' is given twice, at lines {first} and "
                   f"{line}")
    cfg.write_text(text.replace("  group_size: 4\n", "  group_size: 4\n  group_size: 2\n"))
    proc = subprocess.run(harness.snakemake_cmd(tmp_path, cfg, extra=["-n"]),
                          capture_output=True, text=True, timeout=300)
    _refused(proc, "key 'counters.group_size' is given twice")
    assert not (tmp_path / "results").exists()


def test_a_key_given_twice_in_the_default_configfile_is_refused(tmp_path):
    """The ``configfile:`` directive's file (config/config.yaml of the working directory) is
    read by Snakemake too: it is checked like a --configfile."""
    (tmp_path / "config").mkdir()
    text = yaml.safe_dump(TINY, sort_keys=False)
    (tmp_path / "config" / "config.yaml").write_text(f"seed: 1\n{text}")
    proc = subprocess.run(harness.snakemake_cmd(tmp_path, None, extra=["-n"]),
                          capture_output=True, text=True, timeout=300)
    _refused(proc, "config/config.yaml, line 2: key 'seed' is given twice, at lines 1 and 2")


def _name(tag: str, length: int) -> str:
    """A name of ``length`` characters that Snakemake does not take for a repeated wildcard."""
    digest = "".join(hashlib.sha256(f"{tag}{i}".encode()).hexdigest() for i in range(4))
    return (tag + digest)[:length]


def _named(length: int) -> dict:
    """stages.yaml with every name that becomes a file or folder ``length`` characters long."""
    cfg = yaml.safe_load(yaml.safe_dump(STAGES))
    old, new = _name("o", length), _name("n", length)
    counters = cfg["counters"]
    counters["generations"] = {"old": old, "new": new}
    counters["clock_ghz"] = {old: 2.5, new: 2.6}
    counters["benchmarks"] = [_name(t, length) for t in "abc"]
    cfg["predict"]["benchmarks"] = [_name("p", length)]
    cfg["warmup"]["workloads"] = {_name("w", length): cfg["warmup"]["workloads"]["kvstore"]}
    programs = cfg["sensitivity"]["programs"]
    cfg["sensitivity"]["programs"] = {_name("s", length): programs["cpuhash"]}
    cfg["sensitivity"]["cgroup"] = {"prefix": _name("g", length)}
    cfg["sweep"]["campaigns"] = {_name("m", length): cfg["sweep"]["campaigns"]["matmul"]}
    return cfg


def test_names_at_their_longest_plan_files_within_name_max(tmp_path, snakemake_run):
    """A 255-character benchmark or program name passed the schema and its files failed with
    ENAMETOOLONG. Every name that becomes a file or folder name is at most 128 characters, and
    at 128 every file the whole workflow plans has names of at most 255 bytes; at 129 each is
    refused before any job, naming its key."""
    proc = snakemake_run(tmp_path / "ok", _named(128), ["all"], extra=["-n"],
                         workflow_profile="none")
    paths = {p.strip() for m in re.finditer(r"^\s+(?:output|log|benchmark): (.*)$",
                                            _output(proc), re.M) for p in m.group(1).split(",")}
    assert len(paths) > 100
    longest = max(len(part.encode()) for p in paths for part in p.split("/"))
    assert 128 < longest <= 255  # (a name and its longest suffix, .runs.parquet: 141)
    proc = snakemake_run(tmp_path / "long", _named(129), ["all"], extra=["-n"], check=False)
    _refused(proc, "is too long")


def test_a_simulator_scale_without_bound_is_refused_before_any_job(tmp_path, snakemake_run):
    """counters.simulate.scale: 1e300 was accepted and the collect job never ended."""
    cfg = yaml.safe_load(yaml.safe_dump(TINY))
    cfg["counters"]["simulate"] = {"scale": 1e300}
    proc = snakemake_run(tmp_path, cfg, ["all"], extra=["-n"], check=False)
    _refused(proc, "counters.simulate.scale: 1e+300 is greater than the maximum of 100")
