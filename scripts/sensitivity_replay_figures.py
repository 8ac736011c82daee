"""Rule sensitivity_replay_figures: error vs epsilon, binary vs LHS, steps, surfaces."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import replay_figures

with rule_logging(snakemake):  # noqa: F821
    i, o, p = snakemake.input, snakemake.output, snakemake.params  # noqa: F821
    replay_figures(i.results, i.table, i.summary, i.cells, o.error, o.lhs, o.steps, o.surfaces,
                   epsilon=p.epsilon, surfaces=list(p.surfaces))
