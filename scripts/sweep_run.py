"""Rule sweep_run: the record of one measured run of one configuration x iteration."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import RunSettings
from perfcast.sweep.rules import run_record

with rule_logging(snakemake):
    run_record(rule_settings(snakemake, RunSettings), out=snakemake.output[0])
