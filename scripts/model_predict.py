"""Rule predict: new-generation IPC and runtime of a benchmark measured on the old one."""

from perfcast.model.run import predict_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    predict_files(s.input.model, s.input.counters, s.output.table, s.output.summary,
                  bench=s.wildcards.bench, clock_new_ghz=s.params.clock_new_ghz)
