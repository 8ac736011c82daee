"""perfcast used the two ways it is deployed outside its own clone.

1. Its wheel, built from the repository's files and installed (not editable) in a fresh virtual
   environment, runs every sub-command of the command line from an unrelated folder, with the
   validation that reads the schemas (package data): the same answers as the development install.
2. The workflow imported as a Snakemake module by a consumer workflow in a temporary folder
   (``module perfcast: snakefile: .../workflow/Snakefile`` and ``use rule * from perfcast as
   perfcast_*``), run for real on ``tests/configs/small.yaml``: the same tables, byte for byte, as
   the direct run of the same config (the session's ``small_run``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from harness import REPO, differing, load_config, result_hashes

PERF_DATA = REPO / "tests" / "data" / "perf"


#: the environment of the installed wheel's commands: Python may cache the bytecode of what it
#: imports in the test's own venv (where PYTHONDONTWRITEBYTECODE is set, as on this project's
#: machines, each command would compile pandas, scipy and scikit-learn anew: 5-10 s of CPU)
WHEEL_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(argv: list[str], cwd: Path, timeout: float = 600, stdin: str | None = None,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, input=stdin or "", env=env)
    assert proc.returncode == 0, f"{argv}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _uv() -> str:
    uv = shutil.which("uv", path=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
    if uv is None:
        pytest.skip("uv is not installed (make venv installs it): the wheel is built and "
                    "installed with it")
    return uv


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``perfcast`` command of a fresh venv holding perfcast's wheel (not editable), built
    from a copy of the repository's files (tracked and new, not ignored ones)."""
    uv = _uv()
    base = tmp_path_factory.mktemp("installed")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO,
                           capture_output=True, check=True).stdout.decode().split("\0")
    src = base / "src"
    for name in filter(None, files):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    _run([uv, "build", "--wheel", "--out-dir", base / "dist", src], cwd=base)
    wheel = next((base / "dist").glob("perfcast-*.whl"))
    venv = base / "venv"
    _run([uv, "venv", "--python", sys.executable, venv], cwd=base)
    _run([uv, "pip", "install", "--python", venv / "bin" / "python", wheel], cwd=base)
    return venv / "bin" / "perfcast"


#: the sub-commands, each run by one test below on the inputs of ``inputs``
SUBCOMMANDS = ("edm", "ci", "stable", "wps", "watch", "fit", "sensitivity-eval", "sweep-import",
               "postprocess", "align", "predict")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, small_run) -> tuple[Path, dict[str, list]]:
    """A folder outside the repository with a small input of every sub-command, and each
    sub-command's arguments (``{out}`` stands for its output's path without suffix)."""
    work = tmp_path_factory.mktemp("elsewhere")
    rng = np.random.default_rng(7)
    series = work / "readings.txt"
    series.write_text("\n".join(f"{v:.6f}" for v in np.r_[rng.normal(2.0, 0.05, 60),
                                                          rng.normal(1.0, 0.05, 240)]) + "\n")
    wps = work / "wps.csv"
    wps.write_text("work,duration_s\n" + "".join(f"{w},{0.01 + w / 1e4 + rng.normal(0, 1e-4):.6f}\n"
                                                  for w in range(100, 2100, 100)))
    sweep = work / "sweep.csv"
    sweep.write_text("p,t\n" + "".join(f"{p},{3 + 0.5 * p * np.log2(p):.6f}\n"
                                       for p in (2, 4, 8, 16, 32, 64) for _ in range(2)))
    grid = work / "grid.csv"
    grid.write_text("program,cpu_cores,mem_gb,net_code,io_mbps,metric,value\n" + "".join(
        f"toy,{c},{m},,,throughput,{min(c, 4) * 10 * min(m, 3) / 3:.3f}\n"
        for c in range(1, 7) for m in range(1, 7)))
    arpe = work / "arpe" / "128" / "1"
    arpe.mkdir(parents=True)
    (arpe / "APRE_timed.txt").write_text("1.5 0.5 0.1 128\n")  # real user sys size
    counters = small_run / "results" / "counters"
    old, new = sorted(counters.glob("g2/*.parquet"))[0], sorted(counters.glob("g3/*.parquet"))[0]
    model = next(p for p in (small_run / "results" / "model").iterdir()
                 if p.suffix in {".joblib", ".parquet"} and "evaluation" not in p.name)
    commands = {
        "edm": ["edm", series],
        "ci": ["ci", series],
        "stable": ["stable", series],
        "wps": ["wps", wps],
        "watch": ["watch"],  # reads its readings on stdin
        "fit": ["fit", sweep, "--y", "t", "--x", "p"],
        "sensitivity-eval": ["sensitivity-eval", "--data", grid, "--program", "toy",
                             "--epsilon", "0.3", "--ceiling", "none"],
        "sweep-import": ["sweep-import", work / "arpe", "--parameters", "size", "-o", "{out}.csv"],
        "postprocess": ["postprocess", "--events", "task-clock,page-faults",
                        "--instructions-event", "task-clock", "--cycles-event", "task-clock",
                        PERF_DATA / "no_aggr.csv", "-o", "{out}.parquet"],
        "align": ["align", old, new, "-o", "{out}.parquet"],
        "predict": ["predict", old, "--model", model, "-o", "{out}.parquet"],
    }
    return work, commands


def test_every_subcommand_is_tested_here():
    from perfcast.cli import build_parser

    action = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(SUBCOMMANDS) == set(action.choices), "a sub-command without a test here"


def test_the_wheel_ships_its_schemas(installed, tmp_path):
    """The installed package reads its schemas from itself, and validation through them refuses
    a bad flag naming the flag and its config key."""
    work = tmp_path
    (work / "sweep.csv").write_text("p,t\n" + "".join(f"{p},{p * 1.5}\n" for p in (2, 4, 8, 16)))
    where = _run([installed.parent / "python", "-c",
                  "import perfcast.settings as s; print(s.SCHEMA_DIR)"], cwd=work,
                 env=WHEEL_ENV).stdout.strip()
    assert REPO not in Path(where).parents and Path(where, "config.schema.yaml").is_file()
    bad = subprocess.run([str(installed), "fit", str(work / "sweep.csv"), "--y", "t", "--x", "p",
                          "--max-order", "20"], cwd=work, capture_output=True, text=True,
                         env=WHEEL_ENV)
    assert bad.returncode == 2 and "--max-order 20" in bad.stderr, bad.stderr
    assert "sweep.fit.max_order" in bad.stderr, bad.stderr


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_the_wheel_runs_a_subcommand_as_the_development_install(installed, inputs, name):
    """One sub-command of the installed wheel, from a folder outside the repository: its answer
    equals the development install's (``python -m perfcast``)."""
    work, commands = inputs
    outs = []
    for tag, cmd, env in (("wheel", [installed], WHEEL_ENV),
                          ("dev", [sys.executable, "-m", "perfcast"], None)):
        args = [str(a).replace("{out}", str(work / f"{name}-{tag}")) for a in commands[name]]
        stdin = (work / "readings.txt").read_text() if name == "watch" else None
        outs.append(_run([*cmd, *args], cwd=work, stdin=stdin, env=env).stdout
                    .replace(str(work / f"{name}-{tag}"), "OUT"))
    assert outs[0] == outs[1]
    if name in {"edm", "ci", "stable", "wps", "fit", "sensitivity-eval"}:
        assert json.loads(outs[0])  # a JSON answer, not empty


@pytest.fixture(scope="module")
def module_run(tmp_path_factory) -> Path:
    """tests/configs/small.yaml run through a consumer workflow that imports perfcast as a
    Snakemake module."""
    work = tmp_path_factory.mktemp("consumer")
    (work / "config.yaml").write_text(yaml.safe_dump(load_config("small.yaml"), sort_keys=False))
    (work / "Snakefile").write_text(f'''configfile: "config.yaml"


module perfcast:
    snakefile:
        "{REPO / "workflow" / "Snakefile"}"
    config:
        config


use rule * from perfcast as perfcast_*


rule all:
    default_target: True
    input:
        rules.perfcast_all.input,
''')
    _run([sys.executable, "-m", "snakemake", "--cores", "2", "--nolock"], cwd=work, timeout=900)
    return work


def test_perfcast_as_a_snakemake_module_gives_the_direct_runs_tables(module_run, small_run):
    """Every table the module run writes, byte for byte as the direct run's; its rules carry the
    consumer's prefix."""
    mine, direct = result_hashes(module_run), result_hashes(small_run)
    assert len(mine) >= 10 and sorted(mine) == sorted(direct)
    assert differing(mine, direct) == []
    logs = "".join(p.read_text() for p in (module_run / ".snakemake" / "log").glob("*.log"))
    assert "perfcast_model_train" in logs and "perfcast_counters_collect" in logs
