"""Rule warmup_paper: phases figure (a panel per workload) and stable-throughput table."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.artifacts import write_paper

with rule_logging(snakemake):  # noqa: F821
    i, out = snakemake.input, snakemake.output  # noqa: F821
    write_paper(list(snakemake.params.names), list(i.summaries), list(i.rounds),  # noqa: F821
                list(i.readings), out.figure, out.table)
