"""The command line starts without the scientific stack: ``--version`` and ``--help`` (of the
tool and of each sub-command) import none of numpy, pandas, scipy, numba, scikit-learn,
matplotlib. The rule and figure modules load scikit-learn, statsmodels, scipy.stats, pyplot and
numba only where a model is fitted or a figure drawn (every Snakemake job is a fresh Python).
Invariants on the modules loaded, not timings (benchmarks/bench_cli.py times the CLI).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ["numpy", "pandas", "scipy", "numba", "sklearn", "matplotlib", "pyarrow", "statsmodels",
         "tslearn", "joblib"]

# Runs the CLI's main in a fresh interpreter, then prints the top-level packages it loaded.
PROBE = """
import json, sys
from perfcast.cli import main
try:
    rc = main(sys.argv[1:])
except SystemExit as exc:
    rc = exc.code
print(json.dumps({"rc": rc, "modules": sorted({m.split(".")[0] for m in sys.modules})}),
      file=sys.stderr)
"""


def probe(code: str, *argv: str, check: bool = False) -> tuple[object, str]:
    """Runs ``code`` in a fresh interpreter with ``argv``: the JSON it printed last on stderr,
    and its stdout (``check``: the run must succeed)."""
    proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                          timeout=120)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stderr.strip().splitlines()[-1]), proc.stdout


def loaded(*argv: str) -> tuple[int, set[str], str]:
    info, out = probe(PROBE, *argv)
    return info["rc"], set(info["modules"]), out


def subcommands() -> list[str]:
    from perfcast.cli import build_parser

    action = next(a for a in build_parser()._actions if a.dest == "command")
    return sorted(action.choices)


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_import_no_scientific_stack(argv):
    rc, modules, out = loaded(*argv)
    assert rc == 0 and out.startswith("perfcast 0." if argv == ["--version"] else "usage:")
    assert "``" not in out, "reStructuredText markup in the help"
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


# Prints every sub-command's --help in one fresh interpreter (the parser is built once), and
# the top-level packages each one's help loaded beyond those loaded before it.
PROBE_EVERY_HELP = """
import contextlib, io, json, sys
from perfcast.cli import main
report = {}
for name in sys.argv[1:]:
    before = {m.split(".")[0] for m in sys.modules}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            rc = main([name, "--help"])
        except SystemExit as exc:
            rc = exc.code
    report[name] = {"rc": rc, "out": out.getvalue(),
                    "new": sorted({m.split(".")[0] for m in sys.modules} - before)}
report["(after all)"] = {"modules": sorted({m.split(".")[0] for m in sys.modules})}
print(json.dumps(report), file=sys.stderr)
"""


def test_every_subcommand_help_imports_no_scientific_stack():
    names = subcommands()
    assert {"edm", "ci", "wps", "fit", "postprocess", "align", "predict"} <= set(names)
    report, _ = probe(PROBE_EVERY_HELP, *names)
    for name in names:
        rc, out, new = report[name]["rc"], report[name]["out"], set(report[name]["new"])
        assert rc == 0 and out.startswith(f"usage: perfcast {name}")
        assert "``" not in out and ":func:`" not in out, f"reStructuredText in {name} --help"
        assert not new & set(HEAVY), (name, sorted(new & set(HEAVY)))
    assert not set(report["(after all)"]["modules"]) & set(HEAVY)


def test_python_dash_m_perfcast_is_the_same_cheap_entry_point():
    code = ("import runpy, sys, json\n"
            "sys.argv = ['perfcast', '--version']\n"
            "try:\n    runpy.run_module('perfcast', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)\n")
    modules, out = probe(code)
    assert out.strip().startswith("perfcast ")
    assert not set(modules) & set(HEAVY)


def test_warmup_choices_spelled_in_the_cli_are_the_librarys():
    """cli/warmup.py spells --mode and --preset choices to stay light; they must not drift."""
    from perfcast.cli import warmup as cli_warmup
    from perfcast.warmup.changepoint import MODES
    from perfcast.warmup.subsession import PRESETS

    assert tuple(cli_warmup.MODES) == tuple(MODES)
    assert tuple(cli_warmup.PRESET_NAMES) == tuple(sorted(PRESETS))


# The rule modules of every stage and the modules that draw or read fitted models, imported in a
# fresh interpreter: which of the libraries that only fitting or drawing needs they loaded.
FITTING_OR_DRAWING = ["sklearn", "statsmodels", "scipy.stats", "matplotlib.pyplot", "numba",
                      "tslearn"]
PROBE_IMPORTS = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_rule_and_figure_modules_load_what_only_fitting_or_drawing_needs_when_used():
    """Every Snakemake job is a fresh Python: a job that draws a figure or writes a table of
    fitted models must not pay for importing scikit-learn, statsmodels, scipy.stats (about a
    second each), pyplot (half a second) or numba at import; they load where a model is fitted
    or a figure drawn."""
    modules = ["perfcast.plotting", "perfcast.counters.rules", "perfcast.model.rules",
               "perfcast.model.evaluation", "perfcast.model.knn", "perfcast.warmup.rules",
               "perfcast.warmup.figures", "perfcast.sensitivity.rules", "perfcast.sweep.rules",
               "perfcast.sweep.figures", "perfcast.sweep.artifacts", "perfcast.sweep.ols",
               "perfcast.summary"]
    loaded_now = set(probe(PROBE_IMPORTS, *modules, check=True)[0])
    assert "perfcast.sweep.ols" in loaded_now and "pandas" in loaded_now
    assert not loaded_now & set(FITTING_OR_DRAWING), sorted(loaded_now & set(FITTING_OR_DRAWING))
    # nor the schema validator: the workflow validated the config before any job
    assert "jsonschema" not in loaded_now


def test_a_fit_and_a_figure_load_them_where_used(tmp_path):
    """The same libraries load when the code uses them: an OLS fit loads statsmodels, a figure
    pyplot (and is written)."""
    code = f"""
import json, sys
import numpy as np
from perfcast.plotting import new_figure, save_figure
from perfcast.sweep.ols import fit_terms
fit = fit_terms(np.arange(6.0).reshape(-1, 1), 2 + 3 * np.arange(6.0), [(0,), (1,)], ["x"])
fig, ax = new_figure()
ax.plot([0, 1], [0, 1])
save_figure(fig, {str(tmp_path / "f.png")!r})
print(json.dumps([fit.coefficients()[1]["coef"], sorted(sys.modules)]), file=sys.stderr)
"""
    (slope, loaded_now), _ = probe(code, check=True)
    assert slope == pytest.approx(3.0)
    assert {"statsmodels", "matplotlib.pyplot"} <= set(loaded_now)
    assert (tmp_path / "f.png").stat().st_size > 1000
