"""Rule sensitivity_profile: one program's campaign (ceiling, sampling, runs, interpolation)."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import profile_program
from perfcast.sensitivity.settings import ProfileSettings
from perfcast.settings import build

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    settings = build(ProfileSettings, snakemake.params.settings)
    profile_program(settings, o.grid, o.runs, o.summary, data=i.data if len(i) else None)
