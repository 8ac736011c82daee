"""Rule warmup_run: run (or resume) one workload's rounds; rounds, readings (Parquet), summary."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.warmup.rules import run_workload
from perfcast.warmup.settings import RunSettings

with rule_logging(snakemake):
    run_workload(rule_settings(snakemake, RunSettings), rounds=snakemake.output.rounds,
                 readings=snakemake.output.readings, summary=snakemake.output.summary)
