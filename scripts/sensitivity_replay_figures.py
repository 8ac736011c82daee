"""Rule sensitivity_replay_figures: error vs epsilon and vs runs, sampling at equal counts,
steps, surfaces."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sensitivity.rules import replay_figures
from perfcast.sensitivity.settings import FigureSettings

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    replay_figures(rule_settings(snakemake, FigureSettings), results=i.results, table=i.table,
                   summary=i.summary, cells=i.cells, error=o.error, lhs=o.lhs, steps=o.steps,
                   surfaces=o.surfaces, runs=o.runs)
