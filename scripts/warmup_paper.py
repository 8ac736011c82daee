"""Rule warmup_paper: phases figure (a panel per workload) and stable-throughput table."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.warmup.artifacts import write_paper
from perfcast.warmup.settings import PaperSettings

with rule_logging(snakemake):
    write_paper(rule_settings(snakemake, PaperSettings), summaries=list(snakemake.input.summaries),
                rounds=list(snakemake.input.rounds), readings=list(snakemake.input.readings),
                figure=snakemake.output.figure, table=snakemake.output.table)
