"""Rule model_align: map old- to new-generation intervals on cumulative instructions."""

from perfcast.model.rules import align_files
from perfcast.model.settings import AlignRunSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    align_files(rule_settings(snakemake, AlignRunSettings), old=snakemake.input.old,
                new=snakemake.input.new, out=snakemake.output.pairs,
                figure=snakemake.output.figure)
