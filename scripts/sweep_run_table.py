"""Rule sweep_run_table: a campaign's run records -> its run table."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import RunTableSettings
from perfcast.sweep.rules import run_table

with rule_logging(snakemake):
    run_table(rule_settings(snakemake, RunTableSettings), records=list(snakemake.input),
              out=snakemake.output[0])
