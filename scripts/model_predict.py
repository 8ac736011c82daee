"""Rule model_predict: new-generation IPC and runtime of a benchmark measured on the old one."""

from perfcast.model.rules import predict_files
from perfcast.model.settings import PredictRunSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    predict_files(rule_settings(snakemake, PredictRunSettings), model=snakemake.input.model,
                  counters=snakemake.input.counters, out=snakemake.output.table,
                  summary=snakemake.output.summary)
