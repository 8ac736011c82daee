"""Rule sensitivity_arcp_fetch: the paper's raw data.zip, downloaded (or copied) and verified."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.arcp import fetch
from perfcast.sensitivity.settings import SourceSettings
from perfcast.settings import build

with rule_logging(snakemake):
    source = build(SourceSettings, snakemake.params.settings)
    inp = snakemake.input
    fetch(source.url, source.sha256, snakemake.output[0],
          local_zip=inp.zip if len(inp) else None)
