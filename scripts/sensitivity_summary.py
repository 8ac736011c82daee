"""Rule sensitivity_summary: one row per profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import summarize

with rule_logging(snakemake):  # noqa: F821
    out = snakemake.output  # noqa: F821
    summarize(list(snakemake.input), out.table, out.csv)  # noqa: F821
