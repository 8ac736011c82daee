"""Rule sweep_paper: the sweep model table (CSV, Markdown) and figure for the paper."""

from perfcast.rulekit import rule_logging
from perfcast.sweep.steps import paper_outputs

with rule_logging(snakemake):  # noqa: F821
    s = snakemake  # noqa: F821
    paper_outputs(list(s.params.campaigns), list(s.input.models), list(s.input.predictions),
                  list(s.input.runs), s.output.csv, s.output.md, s.output.png)
