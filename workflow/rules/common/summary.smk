# Inputs and settings of the run summary (rule: ../summary.smk): every stage's own outputs it
# reads, only those of the stages that run.
from perfcast.settings import as_params
from perfcast.summary import SummarySettings


def summary_settings():
    """Rule run_summary's settings: simulated counters, the stages switched off, the benchmarks
    whose prediction figures the home page shows."""
    stages = ("counters", "model", "warmup", "sensitivity", "sweep")
    return as_params(
        SummarySettings(
            simulated=bool(SIMULATED),
            stages_off=tuple(s for s in stages if not is_activated(s)),
            predicted=tuple(PREDICT_BENCHMARKS if model_enabled() else ()),
        )
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
    if sensitivity_paper_targets(network=False):  # the replay runs offline: in `all`
        out["replay"] = f"{RESULTS}/paper/sensitivity_summary.csv"
    if is_activated("sweep"):
        out["sweep"] = [f"{SWEEP_DIR}/{n}/models.json"
                        for n in sorted([*SWEEP.campaigns, *SWEEP.imports])]
    return out


def summary_targets():
    return [f"{RESULTS}/summary.json", f"{RESULTS}/summary.md", f"{RESULTS}/summary.html",
            f"{RESULTS}/summary.fragment.html"]
