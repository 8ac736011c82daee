"""Rule sensitivity_figure: curves and surface of one profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import plot_program

with rule_logging(snakemake):
    plot_program(grid=snakemake.input.grid, summary=snakemake.input.summary,
                 out=snakemake.output[0])
