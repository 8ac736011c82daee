"""Rule counters_summary: one row per run, multiplexed intervals counted."""

from perfcast.counters.rules import summary_file
from perfcast.counters.settings import CountersSummarySettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    summary_file(rule_settings(snakemake, CountersSummarySettings),
                 counter_files=list(snakemake.input), out=snakemake.output[0])
