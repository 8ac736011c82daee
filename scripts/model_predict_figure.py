"""Rule model_predict_figure: an old-only benchmark's predicted new-generation IPC over time."""

from perfcast.model.rules import predict_figure_file
from perfcast.model.settings import PredictFigureSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    predict_figure_file(rule_settings(snakemake, PredictFigureSettings),
                        table=snakemake.input.table, summary=snakemake.input.summary,
                        out=snakemake.output[0])
