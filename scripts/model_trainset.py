"""Rule model_trainset: old-generation PKI counters -> IPC ratio, benchmark as group."""

from perfcast.model.rules import trainset_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    s = snakemake
    trainset_files(list(s.input.aligned), list(s.input.old), s.output.table, s.output.figure,
                   benchmarks=list(s.params.benchmarks), phases=list(s.input.phases) or None)
