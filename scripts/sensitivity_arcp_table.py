"""Rule sensitivity_arcp_table: the workbooks of the paper's raw data.zip as one tidy table."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.arcp import convert

with rule_logging(snakemake):
    convert(snakemake.input[0], snakemake.output[0])
