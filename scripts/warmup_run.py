"""Rule warmup_run: run (or resume) one workload's rounds; rounds, readings (Parquet), summary."""

from perfcast.rulekit import rule_logging
from perfcast.settings import build
from perfcast.warmup.rules import run_workload
from perfcast.warmup.settings import SessionSettings

with rule_logging(snakemake):
    out = snakemake.output
    run_workload(build(SessionSettings, snakemake.params.settings),
                 journal=snakemake.params.journal,
                 rounds=out.rounds, readings=out.readings, summary=out.summary)
