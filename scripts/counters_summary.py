"""Rule counters_summary: one row per run, multiplexed intervals counted."""

from perfcast.counters.rules import summary_file
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    summary_file(list(snakemake.input), [tuple(r) for r in snakemake.params.runs],
                 snakemake.output[0])
