"""Rule sweep_check: try every sensor of a campaign once; refuse the campaign if one is missing."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.steps import check

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    check(dict(s.params.sensors), dict(s.params.env), s.output[0])
