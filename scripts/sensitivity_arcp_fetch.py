"""Rule sensitivity_arcp_fetch: the paper's raw data.zip, downloaded (or copied) and verified."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sensitivity.rules import fetch_measurements
from perfcast.sensitivity.settings import SourceSettings

with rule_logging(snakemake):
    fetch_measurements(rule_settings(snakemake, SourceSettings),
                       zip=snakemake.input.zip or None, out=snakemake.output[0])
