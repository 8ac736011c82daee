"""Rule warmup_paper_counters: stable IPC with its CI and phase lengths per counter trace."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.artifacts import write_counters_paper

with rule_logging(snakemake):
    write_counters_paper(summaries=list(snakemake.input.summaries), table=snakemake.output.table)
