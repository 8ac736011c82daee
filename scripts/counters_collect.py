"""Rule counters_collect: the perf CSVs of one benchmark's group runs on one generation."""

from perfcast.counters.rules import collect_groups
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    w = snakemake.wildcards
    collect_groups(snakemake.params.settings, snakemake.output, generation=w.gen,
                   benchmark=w.bench, sources=snakemake.input or None)
