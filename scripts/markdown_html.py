"""Rules *_html: a Markdown table as an HTML page, which the report shows in place."""

from perfcast.mdhtml import convert_file
from perfcast.rulekit import rule_logging

with rule_logging(snakemake):
    convert_file(snakemake.input[0], snakemake.output[0], snakemake.params.title)
