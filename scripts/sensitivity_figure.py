"""Rule sensitivity_figure: curves and surface of one profiled program."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.run import plot_program

with rule_logging(snakemake):  # noqa: F821
    plot_program(snakemake.input.grid, snakemake.input.summary, snakemake.output[0])  # noqa: F821
