"""Rule trainset: old-generation PKI counters -> IPC ratio, benchmark as group."""

from perfcast.model.run import trainset_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    trainset_files(list(s.input.aligned), list(s.input.old), s.output.table, s.output.figure,
                   benchmarks=list(s.params.benchmarks), phases=list(s.input.phases) or None)
