"""Rule counter_phases: setup / warm-up / stable / cool-down of one counter trace, stable IPC."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.counters import run_counter_phases

with rule_logging(snakemake):  # noqa: F821
    wc, out = snakemake.wildcards, snakemake.output  # noqa: F821
    run_counter_phases(snakemake.input[0], out.phases, out.summary,  # noqa: F821
                       dict(snakemake.params.settings), wc.gen, wc.bench)  # noqa: F821
