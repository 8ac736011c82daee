# Shared helpers of every stage's rules (included first by the Snakefile).
RESULTS = config["results_dir"]
LOGS = f"{RESULTS}/logs"
#: Snakemake's `benchmark:` records of every job (wall time, memory): not the benchmarks a
#: stage measures ({bench} and counters.benchmarks)
JOB_TIMINGS = f"{RESULTS}/benchmarks"
CONDA_ENV = "../envs/perfcast.yaml"
#: the job group of the small per-benchmark jobs on a cluster: profiles/slurm assigns rules to it
#: (groups:) and sets how many benchmarks one group job takes (group-components:)
SMALL_JOBS_GROUP = "small"
#: a wildcard constraint that matches nothing (a stage with no names of that kind)
MATCH_NOTHING = "(?!)"


def is_activated(section):
    """Whether a stage (or a stage's subsection, e.g. ``"sensitivity/replay"``) runs: its config
    section exists and its ``enabled`` is not false (the schema defaults it to true)."""
    node = config
    for key in section.split("/"):
        node = (node or {}).get(key)
        if not node or not node.get("enabled", True):
            return False
    return True


def section(name):
    """A stage's validated config section (empty when the stage is not configured)."""
    return config.get(name) or {}


def alternatives(names):
    """A wildcard constraint matching exactly these names (none: matches nothing)."""
    import re

    return "|".join(re.escape(n) for n in sorted(names)) or MATCH_NOTHING
