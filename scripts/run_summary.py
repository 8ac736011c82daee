"""Rule run_summary: the run's summary (JSON, Markdown, HTML) from the stages' outputs."""

from perfcast.rulekit import rule_logging
from perfcast.summary import write_summary

with rule_logging(snakemake):
    i, o = snakemake.input, snakemake.output
    figures = [(f"{name}: predicted new-generation IPC over time", png)
               for name, png in zip(snakemake.params.predicted, i.get("figures", []),
                                    strict=True)]
    write_summary(o.json, o.md, o.html, o.fragment, evaluation_md=i.get("evaluation_md"),
                  figures=figures,
                  counters=i.get("counters"),
                  evaluation=i.get("evaluation"), predictions=list(i.get("predictions", [])),
                  warmup=list(i.get("warmup", [])), sensitivity=list(i.get("sensitivity", [])),
                  sweep=list(i.get("sweep", [])), replay=i.get("replay"),
                  simulated=snakemake.params.simulated,
                  off=list(snakemake.params.off))
