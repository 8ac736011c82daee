"""Rule evaluate: leave-one-benchmark-out error of predicted new-generation cycles."""

from perfcast.model.run import evaluate_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    evaluate_files(s.input.trainset, list(s.input.old), list(s.input.new), s.output.table,
                   s.output.csv, s.output.md, s.output.figure,
                   benchmarks=list(s.params.benchmarks), settings=dict(s.params.settings),
                   clock_new_ghz=s.params.clock_new_ghz, phases=list(s.input.phases) or None,
                   simulated=s.params.simulated)
