"""Rule counters_figure: IPC over time, both generations, every benchmark."""

from perfcast.counters.rules import ipc_figure
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    p = snakemake.params
    ipc_figure(list(snakemake.input), [tuple(r) for r in p.runs], tuple(p.generations),
               snakemake.output[0], p.note)
