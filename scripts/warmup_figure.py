"""Rule warmup_figure: the Fig. 2-like phases figure of one workload."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.rules import write_phase_figure

with rule_logging(snakemake):
    write_phase_figure(rounds=snakemake.input.rounds, readings=snakemake.input.readings,
                       summary=snakemake.input.summary, figure=snakemake.output.figure)
