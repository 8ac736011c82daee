"""Rule train: KNN pipeline tuned by GroupKFold on benchmark."""

from perfcast.model.run import train_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    train_files(s.input[0], s.output.model, s.output.card, settings=dict(s.params.settings))
