"""Rule warmup_counter_phases: setup / warm-up / stable / cool-down of one counter trace, and
its stable IPC."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.warmup.rules import run_counter_phases
from perfcast.warmup.settings import TraceSettings

with rule_logging(snakemake):
    run_counter_phases(rule_settings(snakemake, TraceSettings), counters=snakemake.input.counters,
                       phases=snakemake.output.phases, summary=snakemake.output.summary)
