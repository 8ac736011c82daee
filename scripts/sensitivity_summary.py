"""Rule sensitivity_summary: one row per profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import summarize

with rule_logging(snakemake):
    summarize(summaries=list(snakemake.input), table=snakemake.output.table,
              csv=snakemake.output.csv)
