"""Rule model_train: KNN pipeline tuned by GroupKFold on benchmark, with its interval
calibration."""

from perfcast.model.rules import train_files
from perfcast.model.settings import KnnSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    train_files(s.input.trainset, list(s.input.old), list(s.input.new), s.output.model,
                s.output.card, build(KnnSettings, s.params.settings),
                benchmarks=list(s.params.benchmarks), clock_new_ghz=s.params.clock_new_ghz)
