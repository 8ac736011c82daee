"""Rule sweep_check: try every sensor of a campaign once; refuse the campaign if one is missing."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import check

with rule_logging(snakemake):
    s = snakemake
    check(dict(s.params.settings), s.output[0])
