"""Rule sweep_aggregate: a campaign's run records -> its run table."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import aggregate

with rule_logging(snakemake):
    s = snakemake
    aggregate(list(s.input), list(s.params.parameters), s.wildcards.campaign, s.output[0])
