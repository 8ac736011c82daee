# Inputs and settings of the run summary (rule: ../summary.smk): every stage's own outputs it
# reads, only those of the stages that run.
import os

from perfcast.runend import summary_when_nothing_to_do, unwritable_results_as_error
from perfcast.settings import as_params
from perfcast.summary import SummarySettings


def summary_settings():
    """Rule run_summary's settings: simulated counters, the stages switched off, the benchmarks
    whose prediction figures the home page shows."""
    stages = ("counters", "model", "warmup", "sensitivity", "sweep")
    return as_params(
        SummarySettings(
            simulated=SIMULATED,
            stages_off=tuple(s for s in stages if not is_activated(s)),
            predicted=tuple(PREDICT_BENCHMARKS if model_enabled() else ()),
        )
    )


def requested_targets():
    """The targets of this invocation (``snakemake all paper``: {"all", "paper"}); known when the
    DAG is built, so only from input functions (none when Snakemake does not say)."""
    settings = getattr(workflow, "dag_settings", None)
    return set(getattr(settings, "targets", None) or ())


def summary_has_replay():
    """The summary reports the replay of the sensitivity paper's measurements when it runs in
    this invocation: always when it needs no download (it is in `all`), with a download when
    `paper` is requested (`make paper` runs `all paper`), and once it has been made (a later
    `snakemake` keeps it in the summary instead of dropping what the results folder holds).
    """
    if sensitivity_paper_targets(network=False):
        return True
    replay = sensitivity_paper_targets(network=True)
    if not replay:
        return False
    return "paper" in requested_targets() or os.path.exists(
        f"{RESULTS}/paper/sensitivity_summary.csv"
    )


def get_summary_inputs(wildcards):
    """The outputs the summary reads, by kind (perfcast.summary.build_summary's arguments)."""
    out = {}
    if is_activated("counters"):
        out["counters"] = f"{RESULTS}/counters/summary.csv"
    if model_enabled():
        out["evaluation"] = f"{RESULTS}/model/evaluation.csv"
        out["predictions"] = [f"{RESULTS}/predict/{b}.json" for b in PREDICT_BENCHMARKS]
        # shown on the report's home page below the summary
        out["evaluation_md"] = f"{RESULTS}/model/evaluation.md"
        out["figures"] = [f"{RESULTS}/predict/{b}.png" for b in PREDICT_BENCHMARKS]
    out["warmup"] = [f"{RESULTS}/warmup/{w}/summary.json" for w in warmup_workloads()]
    out["sensitivity"] = [f"{RESULTS}/sensitivity/{p}.json" for p in sensitivity_programs()]
    if summary_has_replay():
        out["replay"] = f"{RESULTS}/paper/sensitivity_summary.csv"
    if is_activated("sweep"):
        out["sweep"] = [
            f"{SWEEP_DIR}/{n}/models.json" for n in sorted([*SWEEP.campaigns, *SWEEP.imports])
        ]
        out["sweep_sensors"] = [f"{SWEEP_DIR}/{n}/sensors.json" for n in sorted(SWEEP.campaigns)]
    return out


def summary_targets():
    return [
        f"{RESULTS}/summary.json",
        f"{RESULTS}/summary.md",
        f"{RESULTS}/summary.html",
        f"{RESULTS}/summary.fragment.html",
    ]


#: the run summary the workflow's handlers print (workflow/Snakefile)
SUMMARY_MD = f"{RESULTS}/summary.md"
#: when this run's jobs started (set by onstart; None while no job has started)
RUN_END = {"started": None}


def stage_outputs_by_stage():
    """Each stage's outputs (its targets of the default target, all), which a failed run's
    last words count."""
    return {
        "counters": counters_targets(),
        "model": model_targets(),
        "warmup": warmup_targets(),
        "sensitivity": sensitivity_targets(),
        "sweep": sweep_targets(),
        "paper": paper_targets(network=False),
        "summary": summary_targets(),
    }


# a rerun with nothing to do ends with the summary too (Snakemake calls no handler then)
summary_when_nothing_to_do(workflow, SUMMARY_MD, lambda: RUN_END["started"])
# results made read-only part-way: one line naming the file, not Snakemake's traceback
unwritable_results_as_error(workflow, config["results_dir"])
