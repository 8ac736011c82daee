"""Rule sensitivity_profile: one program's campaign (ceiling, sampling, runs, interpolation)."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sensitivity.rules import profile_program
from perfcast.sensitivity.settings import ProfileSettings

with rule_logging(snakemake):
    profile_program(rule_settings(snakemake, ProfileSettings), data=snakemake.input.data or None,
                    grid=snakemake.output.grid, runs=snakemake.output.runs,
                    summary=snakemake.output.summary)
