"""Rule model_evaluate: leave-one-benchmark-out error of predicted new-generation cycles."""

from perfcast.model.rules import evaluate_files
from perfcast.model.settings import KnnSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    evaluate_files(s.input.trainset, list(s.input.old), list(s.input.new), s.output.table,
                   s.output.csv, s.output.md, s.output.figure,
                   build(KnnSettings, s.params.settings), benchmarks=list(s.params.benchmarks),
                   clock_new_ghz=s.params.clock_new_ghz, simulated=s.params.simulated,
                   phases=list(s.input.phases) or None, stable_not_run=s.params.stable_not_run)
