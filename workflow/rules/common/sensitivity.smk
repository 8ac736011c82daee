# Settings and input functions of the sensitivity stage (rules: ../sensitivity.smk).
import re

from perfcast.sensitivity.programs import resolve_program

SENS = stage_config("sensitivity")
SENS_PROGRAMS = sorted(SENS.get("programs") or {}) if stage_enabled("sensitivity") else []
SENS_REPLAY = SENS.get("replay") or {}
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
    return (
        stage_enabled("sensitivity")
        and SENS_REPLAY.get("enabled", True)
        and bool(SENS_REPLAY.get("data"))
    )


def sensitivity_paper_targets():
    """The replay evaluation's tables and figures, beside the paper's (results/paper/)."""
    if not sensitivity_replay_enabled():
        return []
    return [f"{RESULTS}/paper/sensitivity_{name}" for name in SENS_PAPER]


def sensitivity_targets():
    if not stage_enabled("sensitivity"):
        return []
    out = [f"{RESULTS}/sensitivity/{p}.parquet" for p in SENS_PROGRAMS]
    out += [f"{RESULTS}/sensitivity/figures/{p}.png" for p in SENS_PROGRAMS]
    if SENS_PROGRAMS:
        out.append(f"{RESULTS}/sensitivity/summary.parquet")
    return out + sensitivity_paper_targets()


def _sens_program(wildcards):
    return resolve_program(
        wildcards.sprog, SENS["programs"][wildcards.sprog], config.get("programs") or {}
    )


def _sens_replay_settings():
    keys = ["data", "ceiling", "peaks", "layouts"]
    return {k: SENS_REPLAY[k] for k in keys if k in SENS_REPLAY}


SPROG = "|".join(map(re.escape, SENS_PROGRAMS)) or "(?!x)x"
