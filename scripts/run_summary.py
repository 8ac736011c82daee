"""Rule run_summary: the run's summary (JSON, Markdown, HTML) from the stages' outputs."""

from perfcast.rulekit import rule_logging, rule_settings
from perfcast.summary import SummarySettings, write_summary

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    write_summary(rule_settings(snakemake, SummarySettings), out_json=o.json, out_md=o.md,
                  out_html=o.html, out_fragment=o.fragment, evaluation_md=i.get("evaluation_md"),
                  prediction_figures=list(i.get("figures", [])), counters=i.get("counters"),
                  evaluation=i.get("evaluation"), predictions=list(i.get("predictions", [])),
                  warmup=list(i.get("warmup", [])), sensitivity=list(i.get("sensitivity", [])),
                  sweep=list(i.get("sweep", [])), sweep_sensors=list(i.get("sweep_sensors", [])),
                  replay=i.get("replay"))
