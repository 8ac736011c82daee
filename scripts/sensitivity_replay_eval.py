"""Rule sensitivity_replay_eval: the paper's measurements replayed, every program x epsilon."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sensitivity.rules import replay_evaluation
from perfcast.sensitivity.settings import EvaluationSettings

with rule_logging(snakemake):
    o = snakemake.output
    replay_evaluation(rule_settings(snakemake, EvaluationSettings), data=snakemake.input.data,
                      results=o.results, table=o.table, summary=o.summary, cells=o.cells,
                      markdown=o.markdown)
