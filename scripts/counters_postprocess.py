"""Rule postprocess: group runs -> per-interval PKI / IPC Parquet."""

from perfcast.counters.run import postprocess_files
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):  # noqa: F821
    p = snakemake.params  # noqa: F821
    postprocess_files(list(snakemake.input), snakemake.output[0], events=list(p.events),  # noqa: F821
                      base=tuple(p.base), join=p.join, meta=dict(p.meta))
