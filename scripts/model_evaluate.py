"""Rule model_evaluate: leave-one-benchmark-out error of predicted new-generation cycles."""

from perfcast.model.rules import evaluate_files
from perfcast.model.settings import EvaluateSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    evaluate_files(rule_settings(snakemake, EvaluateSettings), trainset=snakemake.input.trainset,
                   old=list(snakemake.input.old), new=list(snakemake.input.new),
                   out=snakemake.output.table, csv=snakemake.output.csv, md=snakemake.output.md,
                   figure=snakemake.output.figure, phases=list(snakemake.input.phases) or None)
