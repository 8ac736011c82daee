"""Rule sensitivity_arcp_fetch: the paper's raw data.zip, downloaded (or copied) and verified."""

from perfcast.rulekit import rule_logging
from perfcast.sensitivity.arcp import fetch

with rule_logging(snakemake):  # noqa: F821
    p, inp = snakemake.params, snakemake.input  # noqa: F821
    fetch(p.url, p.sha256, snakemake.output[0],  # noqa: F821
          local_zip=inp.zip if len(inp) else None)
