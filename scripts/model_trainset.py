"""Rule model_trainset: old-generation PKI counters -> IPC ratio, benchmark as group."""

from perfcast.model.rules import trainset_files
from perfcast.model.settings import TrainsetSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    trainset_files(rule_settings(snakemake, TrainsetSettings),
                   aligned=list(snakemake.input.aligned), old_counters=list(snakemake.input.old),
                   out=snakemake.output.table, figure=snakemake.output.figure,
                   phases=list(snakemake.input.phases) or None)
