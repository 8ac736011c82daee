"""Rule sensitivity_replay_figures: error vs epsilon and vs runs, sampling at equal counts,
steps, surfaces."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import replay_figures
from perfcast.sensitivity.settings import FigureSettings
from perfcast.settings import build

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    replay_figures(i.results, i.table, i.summary, i.cells, o.error, o.lhs, o.steps, o.surfaces,
                   o.runs, settings=build(FigureSettings, snakemake.params.settings))
