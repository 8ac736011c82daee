"""Rule sweep_paper_table: the sweep model table (CSV, Markdown) and figure for the paper."""
from perfcast.rulekit import rule_logging, rule_settings
from perfcast.sweep.job_settings import PaperTableSettings
from perfcast.sweep.rules import paper_table

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    paper_table(rule_settings(snakemake, PaperTableSettings), models=list(i.models),
                predictions=list(i.predictions), runs=list(i.runs), out_csv=o.csv,
                out_md=o.md, out_png=o.png)
