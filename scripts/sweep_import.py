"""Rule sweep_import: an ARPE results directory -> a run table."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.steps import import_arpe

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    import_arpe(s.params.path, list(s.params.parameters), s.wildcards.campaign, s.output[0])
