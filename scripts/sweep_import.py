"""Rule sweep_import: an ARPE results directory -> a run table."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import import_arpe

with rule_logging(snakemake):
    s = snakemake
    import_arpe(dict(s.params.settings), s.wildcards.campaign, s.output[0])
