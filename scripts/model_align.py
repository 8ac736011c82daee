"""Rule align: map old- to new-generation intervals on cumulative instructions."""

from perfcast.model.run import align_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    align_files(s.input.old, s.input.new, s.output.pairs, s.output.figure,
                bench=s.wildcards.bench, method=s.params.method, radius=s.params.radius,
                gens=tuple(s.params.gens))
