"""Rule counters_figure: IPC over time, both generations, every benchmark."""

from perfcast.counters.rules import ipc_figure
from perfcast.counters.settings import CountersFigureSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    ipc_figure(rule_settings(snakemake, CountersFigureSettings),
               counter_files=list(snakemake.input), out=snakemake.output[0])
