# Shared helpers for every stage's rules.
RESULTS = config.get("results_dir", "results")
LOGS = f"{RESULTS}/logs"
BENCH = f"{RESULTS}/benchmarks"


def stage_enabled(stage):
    """A stage runs when its config section exists and is not switched off."""
    section = config.get(stage)
    return bool(section) and section.get("enabled", True)


def stage_config(stage):
    return config.get(stage, {})
CONDA_ENV = "../envs/perfcast.yaml"


include: "common/counters.smk"
include: "common/model.smk"
include: "common/paper.smk"
