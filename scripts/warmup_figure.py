"""Rule warmup_figure: the Fig. 2-like phases figure of one workload."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.artifacts import write_phase_figure

with rule_logging(snakemake):  # noqa: F821
    i = snakemake.input  # noqa: F821
    write_phase_figure(i.rounds, i.readings, i.summary, snakemake.output[0])  # noqa: F821
