"""Rule warmup_counter_phases: setup / warm-up / stable / cool-down of one counter trace, and
its stable IPC."""

from perfcast.rulekit import rule_logging
from perfcast.settings import build
from perfcast.warmup.rules import run_counter_phases
from perfcast.warmup.settings import CounterPhaseSettings

with rule_logging(snakemake):
    wc, out = snakemake.wildcards, snakemake.output
    run_counter_phases(snakemake.input[0],
                       build(CounterPhaseSettings, snakemake.params.settings),
                       gen=wc.gen, bench=wc.bench, phases=out.phases, summary=out.summary)
