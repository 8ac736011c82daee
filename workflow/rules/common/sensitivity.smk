# Functions of the sensitivity stage's rules (../sensitivity.smk): targets, input functions and
# each rule's settings: one frozen dataclass of perfcast.sensitivity.settings, built here from the
# validated section with perfcast.settings.build and passed as the rule's one `settings` param
# (its plain dict: Snakemake reruns exactly the jobs whose settings changed).
from snakemake.exceptions import WorkflowError

from perfcast.sensitivity.settings import (
    EvaluationSettings,
    FigureSettings,
    SensitivitySettings,
    SourceSettings,
    profile_settings,
)
from perfcast.settings import as_params, build

#: the validated sensitivity section (empty when the config has none)
SENSITIVITY = section("sensitivity")
#: the stage's settings (None when the config has no sensitivity section)
SENSITIVITY_SETTINGS = (
    build(SensitivitySettings, SENSITIVITY, where="sensitivity") if SENSITIVITY else None
)
#: the paper's measurements, downloaded and converted (sensitivity.replay.source)
SENSITIVITY_DATA_DIR = f"{RESULTS}/data/arcp"
#: the replay evaluation's tables and figures in results/paper/, as sensitivity_<name>
SENSITIVITY_PAPER_OUTPUTS = [
    "eval.parquet",
    "cells.parquet",
    "table.csv",
    "table.md",
    "summary.csv",
    "error_vs_epsilon.png",
    "binary_vs_lhs.png",
    "steps.png",
    "surfaces.png",
]


def sensitivity_settings():
    """The stage's validated settings; an error when the config has no sensitivity section."""
    if SENSITIVITY_SETTINGS is None:
        raise WorkflowError("the sensitivity rules need a sensitivity: section in the config")
    return SENSITIVITY_SETTINGS


def sensitivity_programs():
    """The programs profiled (sensitivity.programs; none while the stage is off)."""
    return sorted(sensitivity_settings().programs) if is_activated("sensitivity") else []


def sensitivity_replay_table():
    """The measurement table: the configured local one, else the one converted from the zip."""
    source = SENSITIVITY_SETTINGS.replay.source if SENSITIVITY_SETTINGS else None
    return (source and source.table) or f"{SENSITIVITY_DATA_DIR}/arcp_measurements.csv"


def sensitivity_replay_needs_network():
    """The table comes from a download (neither a local table nor a local zip is configured)."""
    source = sensitivity_settings().replay.source
    return not (source.table or source.zip)


def sensitivity_paper_targets(network=True):
    """The replay evaluation's tables and figures, beside the paper's (results/paper/).

    network=False leaves them out when they need a download (the default target `all`).
    """
    if not is_activated("sensitivity/replay"):
        return []
    if not network and sensitivity_replay_needs_network():
        return []
    return [f"{RESULTS}/paper/sensitivity_{name}" for name in SENSITIVITY_PAPER_OUTPUTS]


def sensitivity_targets():
    """Every profiled program's grid and figure, the summary, and the replay evaluation when it
    needs no download."""
    if not is_activated("sensitivity"):
        return []
    programs = sensitivity_programs()
    out = [f"{RESULTS}/sensitivity/{p}.parquet" for p in programs]
    out += [f"{RESULTS}/sensitivity/figures/{p}.png" for p in programs]
    if programs:
        out.append(f"{RESULTS}/sensitivity/summary.parquet")
    return out + sensitivity_paper_targets(network=False)


def get_sensitivity_profile_data(wildcards):
    """Backend replay: the measurement table the profile's runs are answered from."""
    return sensitivity_replay_table() if sensitivity_settings().backend == "replay" else []


def get_sensitivity_profile_settings(wildcards):
    """The settings of one program's profile (perfcast.sensitivity.settings.ProfileSettings,
    built by profile_settings): the section's campaign keys without the program list and the
    replay evaluation's keys, this program only, resolved against the top-level programs map (a
    change to another program does not rerun this one), the grid keys of sensitivity.replay
    with backend replay, and the workflow's seed."""
    sensitivity_settings()  # a clear error without a sensitivity section
    return as_params(
        profile_settings(SENSITIVITY, wildcards.program, config["programs"], config["seed"])
    )


def get_sensitivity_arcp_zip(wildcards):
    """A local copy of the paper's raw data.zip (sensitivity.replay.source.zip), if any."""
    return sensitivity_settings().replay.source.zip or []


def sensitivity_arcp_fetch_settings():
    """Where the paper's measurements are downloaded from, and their checksum
    (sensitivity.replay.source: perfcast.sensitivity.settings.SourceSettings)."""
    if not SENSITIVITY:
        return {}
    return as_params(build(SourceSettings, SENSITIVITY["replay"]["source"]))


def sensitivity_replay_eval_settings():
    """The replay evaluation's settings (perfcast.sensitivity.settings.EvaluationSettings):
    sensitivity.replay's keys it uses (not the figures', not the source's) and the seed.
    """
    if not SENSITIVITY:
        return {}
    replay = {**SENSITIVITY["replay"], "seed": config["seed"]}
    return as_params(build(EvaluationSettings, replay, where="sensitivity.replay"))


def sensitivity_replay_figures_settings():
    """The replay evaluation's figures' settings (sensitivity.replay's figure keys:
    perfcast.sensitivity.settings.FigureSettings)."""
    if not SENSITIVITY:
        return {}
    return as_params(build(FigureSettings, SENSITIVITY["replay"], where="sensitivity.replay"))
