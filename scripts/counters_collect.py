"""Rule counters_collect: the perf CSVs of one benchmark's group runs on one generation."""

from perfcast.counters.rules import collect_groups
from perfcast.counters.settings import CollectGroupsSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    collect_groups(rule_settings(snakemake, CollectGroupsSettings), outs=list(snakemake.output),
                   sources=list(snakemake.input) or None)
