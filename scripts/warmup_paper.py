"""Rule warmup_paper: phases figure (a panel per workload) and stable-throughput table."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.artifacts import write_paper

with rule_logging(snakemake):
    i, out = snakemake.input, snakemake.output
    write_paper(list(snakemake.params.names), list(i.summaries), list(i.rounds),
                list(i.readings), out.figure, out.table)
