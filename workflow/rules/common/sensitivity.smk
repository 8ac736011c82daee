# Settings and input functions of the sensitivity stage (rules: ../sensitivity.smk).
import re

from perfcast.sensitivity.programs import resolve_program

SENS = stage_config("sensitivity")
SENS_PROGRAMS = sorted(SENS.get("programs") or {}) if stage_enabled("sensitivity") else []
SENS_REPLAY = SENS.get("replay") or {}
SENS_SOURCE = SENS_REPLAY.get("source") or {}
ARCP = f"{RESULTS}/data/arcp"
SENS_PAPER = [
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


def sensitivity_replay_enabled():
    return stage_enabled("sensitivity") and SENS_REPLAY.get("enabled", True)


def sensitivity_replay_table():
    """The measurement table: the configured local one, else the one converted from the zip."""
    return SENS_SOURCE.get("table") or f"{ARCP}/arcp_measurements.csv"


def sensitivity_replay_needs_network():
    """The table comes from a download (neither a local table nor a local zip is configured)."""
    return not (SENS_SOURCE.get("table") or SENS_SOURCE.get("zip"))


def sensitivity_paper_targets(network=True):
    """The replay evaluation's tables and figures, beside the paper's (results/paper/).

    network=False leaves them out when they need a download (the default target `all`)."""
    if not sensitivity_replay_enabled():
        return []
    if not network and sensitivity_replay_needs_network():
        return []
    return [f"{RESULTS}/paper/sensitivity_{name}" for name in SENS_PAPER]


def sensitivity_targets():
    if not stage_enabled("sensitivity"):
        return []
    out = [f"{RESULTS}/sensitivity/{p}.parquet" for p in SENS_PROGRAMS]
    out += [f"{RESULTS}/sensitivity/figures/{p}.png" for p in SENS_PROGRAMS]
    if SENS_PROGRAMS:
        out.append(f"{RESULTS}/sensitivity/summary.parquet")
    return out + sensitivity_paper_targets(network=False)


def _sens_program(wildcards):
    return resolve_program(
        wildcards.sprog, SENS["programs"][wildcards.sprog], config.get("programs") or {}
    )


def _sens_replay_settings():
    keys = ["ceiling", "peaks", "layouts"]
    return {"data": sensitivity_replay_table()} | {
        k: SENS_REPLAY[k] for k in keys if k in SENS_REPLAY
    }


def _sens_profile_data(wildcards):
    return sensitivity_replay_table() if SENS.get("backend") == "replay" else []


def _sens_arcp_local_zip(wildcards):
    return SENS_SOURCE.get("zip") or []


SPROG = "|".join(map(re.escape, SENS_PROGRAMS)) or "(?!x)x"
