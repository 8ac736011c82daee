"""Rule counters_postprocess: group runs -> per-interval PKI / IPC Parquet."""

from perfcast.counters.rules import postprocess_files
from perfcast.counters.settings import PostprocessRunSettings
from perfcast.rulekit import rule_logging, rule_settings

with rule_logging(snakemake):
    postprocess_files(rule_settings(snakemake, PostprocessRunSettings),
                      group_files=list(snakemake.input), out=snakemake.output[0])
