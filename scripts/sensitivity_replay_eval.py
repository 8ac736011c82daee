"""Rule sensitivity_replay_eval: the paper's measurements replayed, every program x epsilon."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import replay_evaluation
from perfcast.sensitivity.settings import EvaluationSettings
from perfcast.settings import build

with rule_logging(snakemake):
    o = snakemake.output
    replay_evaluation(
        snakemake.input.data, o.results, o.table, o.summary, o.cells, o.markdown,
        settings=build(EvaluationSettings, snakemake.params.settings),
    )
