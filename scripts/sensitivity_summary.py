"""Rule sensitivity_summary: one row per profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import summarize

with rule_logging(snakemake):  # noqa: F821
    summarize(list(snakemake.input), snakemake.output[0])  # noqa: F821
