"""Rule model_train: the IPC-ratio model (constant, ridge or KNN, chosen leave one benchmark
out), with its interval calibration."""

from perfcast.model.rules import train_files
from perfcast.model.settings import TrainSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    train_files(rule_settings(snakemake, TrainSettings), trainset=snakemake.input.trainset,
                old=list(snakemake.input.old), new=list(snakemake.input.new),
                model_out=snakemake.output.model, card_out=snakemake.output.card)
