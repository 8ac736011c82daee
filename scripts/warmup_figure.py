"""Rule warmup_figure: the Fig. 2-like phases figure of one workload."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.rules import write_phase_figure

with rule_logging(snakemake):
    i = snakemake.input
    write_phase_figure(i.rounds, i.readings, i.summary, snakemake.output[0])
