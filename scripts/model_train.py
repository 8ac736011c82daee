"""Rule model_train: KNN pipeline tuned by GroupKFold on benchmark."""

from perfcast.model.rules import train_files
from perfcast.model.settings import KnnSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    train_files(s.input[0], s.output.model, s.output.card, build(KnnSettings, s.params.settings))
