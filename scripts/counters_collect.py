"""Rule counters_collect: one perf CSV of one group run."""

from perfcast.counters.rules import collect_group
from perfcast.counters.settings import CollectSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    w = snakemake.wildcards
    collect_group(build(CollectSettings, snakemake.params.settings), snakemake.output[0],
                  generation=w.gen, benchmark=w.bench, group=int(w.group),
                  source=snakemake.input.source or None)
