"""Rule model_predict: new-generation IPC and runtime of a benchmark measured on the old one."""

from perfcast.model.rules import predict_files
from perfcast.model.settings import PredictSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    s = snakemake
    predict_files(s.input.model, s.input.counters, s.output.table, s.output.summary,
                  benchmark=s.wildcards.bench, clock_new_ghz=s.params.clock_new_ghz,
                  settings=build(PredictSettings, s.params.settings))
