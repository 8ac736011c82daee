"""Rule sensitivity_arcp_table: the workbooks of the paper's raw data.zip as one tidy table."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.rules import convert_measurements

with rule_logging(snakemake):
    convert_measurements(zip=snakemake.input[0], table=snakemake.output[0])
