"""Rule sweep_import: an ARPE results directory -> a run table."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import ImportTableSettings
from perfcast.sweep.rules import import_table

with rule_logging(snakemake):
    import_table(rule_settings(snakemake, ImportTableSettings), out=snakemake.output[0])
