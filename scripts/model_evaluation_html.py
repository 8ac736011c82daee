"""Rule model_evaluation_html: the evaluation's Markdown as an HTML page the report shows."""

from perfcast.model.rules import evaluation_html
from perfcast.model.settings import EvaluationPageSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    evaluation_html(rule_settings(snakemake, EvaluationPageSettings),
                    markdown=snakemake.input[0], out=snakemake.output[0])
