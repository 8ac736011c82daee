# Inputs of the run summary (rule: ../summary.smk): every stage's own outputs it reads, only
# those of the stages that run.


def summary_stages_off():
    """The stages the config switches off (named in the summary)."""
    stages = ("counters", "model", "warmup", "sensitivity", "sweep")
    return [s for s in stages if not is_activated(s)]


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


def summary_predicted():
    """The old-only benchmarks whose prediction figures the home page shows, in input order."""
    return PREDICT_BENCHMARKS if model_enabled() else []
