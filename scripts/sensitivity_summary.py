"""Rule sensitivity_summary: one row per profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import summarize

with rule_logging(snakemake):
    out = snakemake.output
    summarize(list(snakemake.input), out.table, out.csv)
