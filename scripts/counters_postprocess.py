"""Rule counters_postprocess: group runs -> per-interval PKI / IPC Parquet."""

from perfcast.counters.rules import postprocess_files
from perfcast.counters.settings import PostprocessSettings
from perfcast.rulekit import rule_logging
from perfcast.settings import build

with rule_logging(snakemake):
    postprocess_files(list(snakemake.input), snakemake.output[0],
                      build(PostprocessSettings, snakemake.params.settings),
                      provenance={"generation": snakemake.wildcards.gen,
                                  "benchmark": snakemake.wildcards.bench,
                                  **snakemake.params.provenance})
