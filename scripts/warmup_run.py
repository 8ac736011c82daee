"""Rule warmup: run (or resume) one workload's rounds; rounds, readings (Parquet), summary."""

from perfcast.rulekit import rule_logging
from perfcast.warmup.session import run_workload

with rule_logging(snakemake):  # noqa: F821
    p, out = snakemake.params, snakemake.output  # noqa: F821
    run_workload(p.name, dict(p.workload), dict(p.stage), dict(p.programs), journal=p.journal,
                 rounds_out=out.rounds, readings_out=out.readings, summary_out=out.summary,
                 seed=p.seed)
