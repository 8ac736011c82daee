"""Rule sweep_paper: the sweep model table (CSV, Markdown) and figure for the paper."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.rules import paper

with rule_logging(snakemake):
    s = snakemake
    paper(list(s.params.campaigns), list(s.input.models), list(s.input.predictions),
          list(s.input.runs), s.output.csv, s.output.md, s.output.png)
